"""Passes and compile_kernel take time linear in the size of a schedule.

A wide record (`wide_record`) has every kind of node in numbers: invocations
side by side under one loop, many root loops that the lifting passes turn into
tiles and GEMMs, guards to canonicalize. The checks time it at two sizes and
compare: CPU seconds of this process, so that other load on the machine
counts little, and a ratio rather than seconds, so that the machine's speed
does not count. Quadratic steps, as `teir-lift-elementwise` had (listing all
children of a loop per invocation), show as a ratio near the square of the
size ratio.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import SPEC_EXAMPLES, TREE_EXAMPLES, load
from teir_dialect.interpreter import run_reference
from teir_lowering.runtime import kernel as kernel_module
from teir_lowering.runtime.kernel import compile_kernel


def wide_record(invocations: int) -> dict:
    """A schedule of `invocations` invocations (a multiple of 4): half of them under
    one loop over i, Zeros then ReLUs guarded by last(i); a quarter in root loops
    over i around a ReLU (teir-lift-elementwise makes tiles of them); a quarter in
    root i, j, k nests around a scalar Contraction with its Zero under first(k)
    (teir-lift-gemm makes GEMMs of them). Equal neighbours make a loop of the code
    generator, so the code is small whatever the count."""
    assert invocations % 4 == 0
    quarter = invocations // 4
    iterations: list[dict] = []
    calls: list[dict] = []

    def node(id: str, axis: str, children: list[str]) -> str:
        iterations.append({"id": id, "axis": axis, "policy": "sequential",
                           "children": children, "guard": None})
        return id

    def call(id: str, primitive: str, guard: list[str] | None = None) -> str:
        calls.append({"id": id, "primitive": primitive, "guard": guard})
        return id

    roots = [node("wide", "i", [
        call(f"w{x}", "zero") if x < quarter else call(f"w{x}", "relu", ["last(i)"])
        for x in range(2 * quarter)
    ])]
    roots += [node(f"r{x}", "i", [call(f"relu{x}", "relu")]) for x in range(quarter)]
    roots += [
        node(f"g{x}", "i", [node(f"gj{x}", "j", [node(f"gk{x}", "k", [
            call(f"z{x}", "zero", ["first(k)"]), call(f"c{x}", "mac")])])])
        for x in range(quarter)
    ]
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": [
            {"id": "i", "extent": 8, "strides": [4, 0, 4], "offsets": [0, 0, 0]},
            {"id": "j", "extent": 4, "strides": [0, 4, 32], "offsets": [0, 0, 0]},
            {"id": "k", "extent": 3, "strides": [32, 16, 0], "offsets": [0, 0, 0]},
        ],
        "primitives": [
            {"id": "zero", "operation": "Zero", "axes": {"M": [], "N": []},
             "metadata": {"data_type": "FP32"}},
            {"id": "relu", "operation": "ReLU", "axes": {"M": [], "N": []},
             "metadata": {"data_type": "FP32"}},
            {"id": "mac", "operation": "Contraction", "axes": {"M": [], "N": [], "K": []},
             "metadata": {"data_type": "FP32"}},
        ],
        "schedule": {"roots": roots, "iterations": iterations, "invocations": calls},
    }


def compile_seconds(invocations: int) -> float:
    """CPU seconds of compile_kernel (teir-optimize included) on `wide_record`, with
    both kernel caches out of the way (the slow tier's test after the default one
    took the default's invocations from the cache: 0.9 against 27.7 s for
    20,480, "quadratic")."""
    record = wide_record(invocations)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEIR_KERNEL_CACHE", "0")
        patch.setattr(kernel_module, "_CACHE", {})
        start = time.process_time()
        compile_kernel(record, threads=2)
        return time.process_time() - start


def test_wide_record_runs_as_its_schedule_says() -> None:
    record = wide_record(64)
    kernel = compile_kernel(record, threads=2, keep_ir=True)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(-(-t.needed_bytes // 4)).astype(np.float32)
              for t in kernel.tensors]
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    kernel(*arrays)
    np.testing.assert_allclose(arrays[-1], expected[-1], rtol=1e-6, atol=1e-6)
    # repeats are loops: the code does not grow with them
    assert kernel.stages["scf"].count("memref.store") < 40
    four_times = compile_kernel(wide_record(256), threads=2, keep_ir=True).stages["scf"]
    assert four_times.count("\n") <= kernel.stages["scf"].count("\n") + 4


def test_compile_takes_linear_time() -> None:
    compile_seconds(4)  # imports, first compilations
    small, large = compile_seconds(320), compile_seconds(1_280)
    # linear: 4 (3.2-4.4 measured, as at twice these sizes); quadratic: 16 (the
    # slow tier checks 5,000 against 20,000)
    assert large / small < 7, (small, large)


@pytest.mark.slow
def test_compile_takes_linear_time_at_scale() -> None:
    # sizes of their own: a record compiled before in the process (the default
    # tier's sizes) compiled again in a third of the time, caches aside
    compile_seconds(4)
    small, large = compile_seconds(5_000), compile_seconds(20_000)
    assert large / small < 7, (small, large)


@pytest.mark.slow
def test_a_hundred_thousand_invocations_compile() -> None:
    assert compile_seconds(102_400) < 300


def repeated(record: dict, times: int, interleave: bool) -> dict:
    """`record` with every list of children (and the roots) repeated `times` times:
    each child in turn (a a b b) or the whole list (a b a b); subtrees are copied
    under new ids."""
    schedule = record["schedule"]
    iterations = {node["id"]: node for node in schedule["iterations"]}
    invocations = {node["id"]: node for node in schedule["invocations"]}
    new_iterations: list[dict] = []
    new_invocations: list[dict] = []

    def copy(node_id: str, suffix: str) -> str:
        new_id = f"{node_id}{suffix}"
        if node_id in invocations:
            new_invocations.append({**invocations[node_id], "id": new_id})
        else:
            node = iterations[node_id]
            new_iterations.append({**node, "id": new_id,
                                   "children": expand(node["children"], suffix)})
        return new_id

    def expand(children: list[str], suffix: str) -> list[str]:
        if interleave:
            return [copy(c, f"{suffix}_{k}") for c in children for k in range(times)]
        return [copy(c, f"{suffix}_{k}") for k in range(times) for c in children]

    roots = expand(schedule["roots"], "")
    return {**record, "schedule": {"roots": roots, "iterations": new_iterations,
                                   "invocations": new_invocations}}


FUSING = ["10_2_2_guarded_reduction", "10_2_3_branches", "10_7_3_scalar_batched_gemm",
          "10_7_7_parallel_brgemm"]
"""Examples with Zeros and ReLUs that fuse into the GEMMs next to them, repeated in
the default tier; the slow tier repeats every example, optimized too."""


@pytest.mark.parametrize("interleave", [False, True])
@pytest.mark.parametrize("name, optimize", [
    pytest.param(path.stem, optimize, marks=() if path.stem in FUSING and not optimize
                 else pytest.mark.slow)
    for path in TREE_EXAMPLES for optimize in (False, True)
])
def test_repeats_become_loops_with_the_same_results(name: str, optimize: bool,
                                                    interleave: bool) -> None:
    record = repeated(load(SPEC_EXAMPLES / "tree" / f"{name}.json"), 3, interleave)
    kernel = compile_kernel(record, threads=2, optimize=optimize, keep_ir=True)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(-(-t.needed_bytes // t.dtype.itemsize)).astype(t.dtype)
              for t in kernel.tensors]
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    # The FP32 sums differ from the reference's by rounding, a few ulps of the sum
    # of their terms' magnitudes, which cancellation can leave far above the
    # result (the interleaved repeats of §10.7.5 add three sums into one out).
    magnitudes = [np.abs(a) for a in arrays]
    run_reference(record, magnitudes)
    kernel(*arrays)
    error = np.abs(arrays[-1].astype(np.float64) - expected[-1])
    assert np.all(error <= 1e-5 * (magnitudes[-1] + np.abs(expected[-1]))), error.max()
    assert "scf.for" in kernel.stages["scf"]
