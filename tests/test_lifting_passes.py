"""The lifting passes (drop-unit-iterations, lift-gemm, lift-brgemm) preserve results
and are idempotent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.passes import ModulePass

from conftest import FLAT_EXAMPLES, SPEC_EXAMPLES, TREE_EXAMPLES, examples
from strategies import configs, random_arrays
from teir_dialect import from_json, teir_context, to_json
from teir_dialect.interpreter import run_reference
from teir_lowering.runtime.kernel import compile_kernel
from teir_passes.drop_unit_iterations import DropUnitIterationsPass
from teir_passes.lift_brgemm import LiftBrgemmPass
from teir_passes.lift_gemm import LiftGemmPass

PASSES = [DropUnitIterationsPass(), LiftGemmPass(), LiftBrgemmPass()]


def _apply(pass_: ModulePass, source: object):
    module = from_json(source)
    pass_.apply(teir_context(), module)
    module.verify()
    return module


def _same_results(before: object, after: object, record: object) -> None:
    rng = np.random.default_rng(0)
    inputs = random_arrays(to_json(from_json(record)), rng, fill=3.0)
    expected = [a.copy() for a in inputs]
    run_reference(before, expected)
    got = [a.copy() for a in inputs]
    run_reference(after, got)
    compiled = [a.copy() for a in inputs]
    compile_kernel(after)(*compiled)
    for e, g, c in zip(expected, got, compiled):
        if e.dtype == np.float64:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pass_", PASSES, ids=lambda p: p.name)
@pytest.mark.parametrize("path", TREE_EXAMPLES + FLAT_EXAMPLES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_spec_examples_keep_their_results(pass_: ModulePass, path: Path) -> None:
    after = _apply(pass_, path)
    _same_results(from_json(path), after, path)
    again = after.clone()
    pass_.apply(teir_context(), again)
    assert str(again) == str(after)


def test_lift_brgemm_turns_10_7_6_into_10_7_7() -> None:
    lifted = to_json(_apply(LiftBrgemmPass(), SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json"))
    target = to_json(from_json(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"))
    assert lifted["primitives"] == target["primitives"]
    assert lifted["axes"] == target["axes"]
    assert [i["id"] for i in lifted["schedule"]["iterations"]] == ["p", "r"]
    assert [i["primitive"] for i in lifted["schedule"]["invocations"]] == ["zero_sq", "brgemm_sqtu"]


@pytest.mark.parametrize("pass_", PASSES, ids=lambda p: p.name)
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=configs())
def test_fuzzed_configurations_keep_their_results(pass_: ModulePass, generated) -> None:
    after = _apply(pass_, generated.record)
    _same_results(generated.record, after, generated.record)


def test_lift_gemm_turns_10_7_5_into_10_7_6() -> None:
    lifted = to_json(_apply(LiftGemmPass(), SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json"))
    target = to_json(from_json(SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json"))
    assert lifted["primitives"] == target["primitives"]
    assert [i["id"] for i in lifted["schedule"]["iterations"]] == ["p", "r", "t"]
    assert lifted["schedule"]["iterations"][1]["children"] == ["zero", "t"]


def test_gemm_shaped_loops_are_lifted_in_fuzzed_gemms() -> None:
    """A scalar GEMM in every loop order and layout orientation is lifted and still right."""
    import itertools

    extents = {"m": 3, "n": 4, "k": 5}

    def strides(unit: str, other: str) -> dict[str, int]:
        return {unit: 8, other: 8 * extents[unit]}

    for order in itertools.permutations("mnk"):
        for a_unit, b_unit, c_unit in itertools.product("mk", "kn", "mn"):
            a = strides(a_unit, "k" if a_unit == "m" else "m")
            b = strides(b_unit, "n" if b_unit == "k" else "k")
            c = strides(c_unit, "n" if c_unit == "m" else "m")
            record = {
                "tensors": ["in0", "in1", "out"],
                "axes": [{"id": x, "extent": extents[x],
                          "strides": [a.get(x, 0), b.get(x, 0), c.get(x, 0)],
                          "offsets": [0, 0, 0]} for x in "mnk"],
                "primitives": [{"id": "fma", "operation": "Contraction",
                                "axes": {"M": [], "N": [], "K": []},
                                "metadata": {"data_type": "FP64"}}],
                "schedule": {
                    "roots": [order[0]],
                    "iterations": [
                        {"id": x, "axis": x, "policy": "sequential",
                         "children": [order[i + 1] if i < 2 else "c"], "guard": None}
                        for i, x in enumerate(order)
                    ],
                    "invocations": [{"id": "c", "primitive": "fma", "guard": None}],
                },
            }
            after = _apply(LiftGemmPass(), record)
            lifted = to_json(after)
            assert lifted["schedule"]["iterations"] == [], (order, a_unit, b_unit, c_unit)
            assert lifted["primitives"][0]["axes"] == {"M": ["m"], "N": ["n"], "K": ["k"]}
            _same_results(record, after, record)
