"""teir-canonicalize-guards preserves results exactly and is idempotent.

Differential: the module before and after the pass runs in the reference
interpreter (bit-identical: the pass only reorders calls that touch disjoint
output bytes, or none at all) and compiled (allclose for FP32, whose compiled
code may contract differently; bit-identical for FP64). Inputs: every spec
example, the flat GEMM examples with prim_first Zero / prim_last ReLU added,
and random configurations from strategies.configs(). Kernels are compiled
with optimize=False so that they run exactly the IR before and after the pass
(the default pipeline would canonicalize both).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from conftest import FLAT_EXAMPLES, TREE_EXAMPLES, examples
from strategies import GeneratedConfig, _strides, configs, random_arrays
from teir_dialect import from_json, teir_context
from teir_dialect.dialect import InvokeOp
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_dialect.vocabulary import DataType
from teir_lowering.runtime.kernel import compile_kernel
from teir_passes.canonicalize_guards import CanonicalizeGuardsPass


def canonicalized(record: Any, times: int = 1) -> ModuleOp:
    module = from_json(record)
    for _ in range(times):
        CanonicalizeGuardsPass().apply(teir_context(), module)
        module.verify()
    return module


def flat_with_guarded_primitives() -> list[tuple[str, dict[str, Any]]]:
    """The flat contraction examples with prim_first Zero and/or prim_last ReLU."""
    cases = []
    for path in FLAT_EXAMPLES:
        record = json.loads(path.read_text())
        if record["prim_main"] not in ("GEMM", "BRGEMM"):
            continue
        for first, last in (("Zero", "None"), ("None", "ReLU"), ("Zero", "ReLU")):
            cases.append(
                (
                    f"{path.stem}-{first}-{last}",
                    {**record, "prim_first": first, "prim_last": last},
                )
            )
    return cases


FLAT_GUARDED = flat_with_guarded_primitives()
EXAMPLES: list[tuple[str, Any]] = [
    *((f"{p.parent.name}-{p.stem}", p) for p in TREE_EXAMPLES + FLAT_EXAMPLES),
    *FLAT_GUARDED,
]


def _arrays(module: ModuleOp, seed: int) -> list[np.ndarray]:
    kernel = compile_kernel(module, optimize=False)
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(max(1, -(-t.needed_bytes // t.dtype.itemsize)) + 3).astype(
            t.dtype
        )
        for t in kernel.tensors
    ]


def assert_same_results(record: Any, inputs: list[np.ndarray] | None = None) -> None:
    before = from_json(record)
    after = canonicalized(record)
    if inputs is None:
        inputs = _arrays(before, 0)
    reference = [[a.copy() for a in inputs] for _ in range(2)]
    run_reference(before, reference[0])
    run_reference(after, reference[1])
    for want, got in zip(*reference):
        np.testing.assert_array_equal(got, want)
    compiled = []
    for module in (before, after):
        arrays = [a.copy() for a in inputs]
        compile_kernel(module, optimize=False)(*arrays, threads=1)
        compiled.append(arrays)
    for want, got, ref in zip(*compiled, reference[0]):
        if got.dtype == np.float64:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def assert_idempotent(record: Any) -> None:
    assert str(canonicalized(record, 2)) == str(canonicalized(record, 1))


@pytest.mark.parametrize("name,record", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_spec_examples_keep_their_results(name: str, record: Any) -> None:
    assert_same_results(record)
    assert_idempotent(record)


@pytest.mark.parametrize(
    "name,record", FLAT_GUARDED, ids=[name for name, _ in FLAT_GUARDED]
)
def test_flat_zero_and_relu_are_hoisted_where_sequential_k_loops_allow(
    name: str, record: dict[str, Any]
) -> None:
    config = find_configs(canonicalized(record))[0]
    scheduled_k = [
        i
        for i, (t, e) in enumerate(zip(record["dim_types"], record["exec_types"]))
        if t == "K" and e != "prim"
    ]
    for node in config.schedule.walk_nodes():
        if isinstance(node, InvokeOp) and node.primitive_op().kind in ("Zero", "ReLU"):
            # every guarded Zero/ReLU over a sequential K loop loses its guard
            assert node.guard is None, f"{name}: {node.node_id} keeps {node.guard}"
            assert all(
                a.axis_id not in [record["dim_ids"][i] for i in scheduled_k]
                for a in node.ancestors()
            )


def test_10_7_3_becomes_10_7_4() -> None:
    spec = Path(__file__).resolve().parent.parent / "examples" / "spec" / "tree"
    got = canonicalized(spec / "10_7_3_scalar_batched_gemm.json")
    want = from_json(spec / "10_7_4_scalar_batched_gemm_reordered.json")
    assert str(got) == str(want)


@settings(max_examples=examples(100, 15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_fuzzed_configurations_keep_their_results(generated: GeneratedConfig) -> None:
    inputs = random_arrays(generated.record, np.random.default_rng(1), fill=7.0)
    assert_same_results(generated.record, inputs)
    assert_idempotent(generated.record)


@st.composite
def reduction_chains(draw: st.DrawFn) -> dict[str, Any]:
    """k -> c1 -> ... -> cm -> [zero first(k), contraction, relu last(k)], randomized.

    The shape rules 4 and 5 look for, with random extents, strides (the chain
    may or may not address disjoint out tiles; k may touch out), offsets,
    extra guard terms, guarded chain nodes, an outer loop, an inner loop and
    role axes, so that both the rewrites and their refusals are exercised.
    """
    data_type = draw(st.sampled_from(["FP32", "FP64"]))
    width = DataType(data_type).width
    chain = [f"c{i}" for i in range(draw(st.integers(0, 3)))]
    outer = ["o"] if draw(st.booleans()) else []
    inner = ["i"] if draw(st.booleans()) else []
    role = ["r"] if draw(st.booleans()) else []
    ids = [*outer, "k", *chain, *inner, *role]
    extents = [draw(st.sampled_from([1, 2, 2, 3, 4])) for _ in ids]
    strides = [_strides(draw, extents, width) for _ in range(3)]
    if draw(st.booleans()):  # out dense over everything but k and the outer loop
        step = width
        for axis in draw(st.permutations([*chain, *inner, *role])):
            strides[2][ids.index(axis)] = step
            step *= extents[ids.index(axis)]
    if draw(st.integers(0, 4)):
        strides[2][ids.index("k")] = 0  # usually a reduction axis
    axes = [
        {
            "id": a,
            "extent": extents[n],
            "strides": [strides[j][n] for j in range(3)],
            "offsets": [width * draw(st.sampled_from([0, 0, 0, 0, 1])) for _ in range(3)],
        }
        for n, a in enumerate(ids)
    ]
    meta = {"data_type": data_type}
    primitives = [
        {"id": "z", "operation": "Zero", "axes": {"M": role, "N": []}, "metadata": meta},
        {
            "id": "g",
            "operation": "Contraction",
            "axes": {"M": role, "N": [], "K": []},
            "metadata": meta,
        },
        {
            "id": "relu",
            "operation": "ReLU",
            "axes": {"M": role, "N": []},
            "metadata": meta,
        },
    ]
    path = [*outer, "k", *chain]

    def extra() -> list[str]:
        return [
            f"{draw(st.sampled_from(['first', 'last']))}({draw(st.sampled_from(path))})"
            for _ in range(draw(st.sampled_from([0, 0, 0, 1])))
        ]

    invocations = [
        {"id": "zero", "primitive": "z", "guard": ["first(k)", *extra()]},
        {"id": "acc", "primitive": "g", "guard": None},
    ]
    if draw(st.booleans()):
        invocations.append(
            {"id": "act", "primitive": "relu", "guard": ["last(k)", *extra()]}
        )
    body = [inv["id"] for inv in invocations]
    iterations = []
    if inner:
        iterations.append(
            {
                "id": "i",
                "axis": "i",
                "policy": "sequential",
                "children": ["acc"],
                "guard": None,
            }
        )
        body[1] = "i"
    if draw(st.integers(0, 3)) == 0:
        body = body[::-1] if draw(st.booleans()) else body[1:] + body[:1]
    children = body
    for axis in reversed(path):
        guard = (
            [f"last({draw(st.sampled_from(path[: path.index(axis)]))})"]
            if (axis != path[0] and draw(st.integers(0, 5)) == 0)
            else None
        )
        iterations.append(
            {
                "id": axis,
                "axis": axis,
                "policy": "sequential",
                "children": children,
                "guard": guard,
            }
        )
        children = [axis]
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": axes,
        "primitives": primitives,
        "schedule": {
            "roots": children,
            "iterations": iterations,
            "invocations": invocations,
        },
    }


@settings(max_examples=examples(150, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduction_chains())
def test_reduction_chains_keep_their_results(record: dict[str, Any]) -> None:
    inputs = random_arrays(record, np.random.default_rng(2), fill=7.0)
    assert_same_results(record, inputs)
    assert_idempotent(record)
