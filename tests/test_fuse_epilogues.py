"""teir-fuse-epilogues: kernels compiled with and without it agree with the reference.

Generated schedules around a GEMM/BRGEMM tile (every layout, FP32/FP64): up to
two sequential K loops around the Contraction, an optional outer loop that
moves C, and a Zero and a ReLU of the tile at any level, each with any guard
over the loops around it. Such a kernel is compiled twice, once as
compile_kernel does it and once with teir-fuse-epilogues doing nothing (no
epilogue recorded: teir-to-scf emits the Zero and ReLU as tiles of their own);
both must match the reference interpreter on every element, sentinels
included, and their code differs exactly when the pass recorded an epilogue.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_microkernel import LAYOUTS, layout_record
from xdsl.dialects.builtin import ModuleOp

from conftest import examples
from strategies import random_arrays
from teir_dialect import teir_context
from teir_dialect.dialect import EPILOGUE_ATTR, EpilogueAttr, InvokeOp
from teir_dialect.interpreter import run_reference
from teir_dialect.records import load_module
from teir_lowering.runtime import kernel as kernel_module
from teir_lowering.runtime.kernel import Kernel, compile_kernel
from teir_passes.fuse_epilogues import FuseEpiloguesPass
from teir_passes.match_gemm import MatchGemmPass
from teir_passes.parallelize import ParallelizePass
from teir_passes.pipeline import OptimizePass
from teir_passes.tile import TilePass

LOOPS = ("w", "v")
"""The sequential K loops around the Contraction, outermost first."""


def gemm_schedule(trans: str, m: int, n: int, k: int, *, dtype: str = "FP32", batch: int = 0,
                  extents: tuple[int, ...] = (), outer: bool = False,
                  zero: tuple[int, list[str] | None] | None = None,
                  relu: tuple[int, list[str] | None] | None = None) -> dict[str, Any]:
    """A GEMM/BRGEMM tile (teir_passes' test layouts) inside K loops w, v (stride 0
    on out) of `extents`, optionally inside a loop p that moves C. `zero` / `relu`:
    (level, guard) of a Zero just before / ReLU just after the node at that level
    (0: the outermost K loop, or the Contraction without K loops; len(extents):
    the Contraction inside the innermost loop)."""
    record = layout_record(trans, m, n, k, dtype=dtype, batch=batch, zero=zero is not None,
                           relu=relu is not None)
    width = {"FP32": 4, "FP64": 8}[dtype]
    stride = (m + 3) * (n + 3) * (k + 3) * max(batch, 1) * width
    loops = LOOPS[: len(extents)]
    for axis, extent in zip(loops, extents):
        record["axes"].append({"id": axis, "extent": extent, "strides": [stride, stride, 0],
                               "offsets": [0, 0, 0]})
        stride *= extent + 1
    invocations = {i["id"]: i for i in record["schedule"]["invocations"]}
    for name, placed in (("z", zero), ("r", relu)):
        if placed is not None:
            invocations[name]["guard"] = placed[1]
    levels: list[list[str]] = [[] for _ in range(len(extents) + 1)]
    levels[-1].append("c")
    for level, loop in reversed(list(enumerate(loops))):
        levels[level].append(loop)
    if zero is not None:
        levels[zero[0]].insert(0, "z")
    if relu is not None:
        levels[relu[0]].append("r")
    iterations = [{"id": loop, "axis": loop, "policy": "sequential", "children": levels[i + 1],
                   "guard": None} for i, loop in enumerate(loops)]
    roots = levels[0]
    if outer:
        record["axes"].append({"id": "p", "extent": 2, "strides": [0, 0, 160 * width],
                               "offsets": [0, 0, 0]})
        iterations.insert(0, {"id": "p", "axis": "p", "policy": "sequential", "children": roots,
                              "guard": None})
        roots = ["p"]
    record["schedule"] = {"roots": roots, "iterations": iterations,
                          "invocations": list(invocations.values())}
    return record


@st.composite
def scheduled_gemms(draw: st.DrawFn) -> dict[str, Any]:
    extents = tuple(draw(st.lists(st.integers(1, 3), max_size=len(LOOPS))))
    outer = draw(st.booleans())

    def placed() -> tuple[int, list[str] | None] | None:
        if not draw(st.booleans()):
            return None
        level = draw(st.integers(0, len(extents)))
        around = [*(["p"] if outer else []), *LOOPS[:level]]
        guard = [f"{draw(st.sampled_from(['first', 'last']))}({axis})"
                 for axis in around if draw(st.booleans())]
        return level, guard or None

    return gemm_schedule(
        draw(st.sampled_from(LAYOUTS)), *(draw(st.integers(1, 9)) for _ in range(3)),
        dtype=draw(st.sampled_from(["FP32", "FP64"])), batch=draw(st.sampled_from([0, 2])),
        extents=extents, outer=outer, zero=placed(), relu=placed(),
    )


def epilogues(module: ModuleOp) -> list[EpilogueAttr]:
    return [op.attributes[EPILOGUE_ATTR] for op in module.walk()  # pyright: ignore
            if isinstance(op, InvokeOp) and EPILOGUE_ATTR in op.attributes]


def recorded_epilogues(record: dict[str, Any], optimize: bool) -> list[EpilogueAttr]:
    """The epilogues compile_kernel's teir passes record for `record`."""
    module = load_module(record)
    for decision in [OptimizePass()] if optimize else [MatchGemmPass(), FuseEpiloguesPass()]:
        decision.apply(teir_context(), module)
    return epilogues(module)


def fused_and_unfused(record: dict[str, Any], optimize: bool) -> tuple[Kernel, Kernel]:
    """The kernel compiled as usual and without teir-fuse-epilogues, both fresh (no
    in-memory or disk cache: their keys are the same)."""
    kernels = []
    for fuse in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TEIR_KERNEL_CACHE", "0")
            patch.setattr(kernel_module, "_CACHE", {})
            if not fuse:
                patch.setattr(FuseEpiloguesPass, "apply", lambda self, ctx, op: None)
            kernels.append(compile_kernel(record, optimize=optimize, keep_ir=True))
    return kernels[0], kernels[1]


def check(record: dict[str, Any], optimize: bool, seed: int) -> list[EpilogueAttr]:
    """Both kernels match the reference; their code differs iff an epilogue is
    recorded. Returns the recorded epilogues."""
    fused, unfused = fused_and_unfused(record, optimize)
    inputs = random_arrays(record, np.random.default_rng(seed), fill=7.0)
    want = [a.copy() for a in inputs]
    run_reference(record, want)
    tolerance = 1e-5 if want[-1].dtype == np.float32 else 1e-12
    for kernel in (fused, unfused):
        got = [a.copy() for a in inputs]
        kernel(*got, threads=1)
        for array, expected in zip(got, want):
            np.testing.assert_allclose(array, expected, rtol=tolerance, atol=tolerance)
    epilogues = recorded_epilogues(record, optimize)
    assert (fused.stages["scf"] != unfused.stages["scf"]) == bool(epilogues)
    return epilogues


@settings(max_examples=examples(80, 4), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scheduled_gemms(), st.booleans(), st.integers(0, 2**16))
def test_kernels_with_and_without_epilogues_match_reference(record, optimize, seed) -> None:
    check(record, optimize, seed)


@pytest.mark.parametrize("trans", ["NNN", "TNT"])
def test_epilogues_sunk_through_two_loops(trans: str) -> None:
    """A guarded Zero before and ReLU after two K loops, as written (optimize=False):
    both sink into the kernel, which runs them at the loops' first / last iteration
    under their guards."""
    record = gemm_schedule(trans, 7, 5, 3, batch=2, extents=(2, 3), outer=True,
                           zero=(0, ["last(p)"]), relu=(0, ["first(p)"]))
    (epilogue,) = check(record, False, 1)
    assert str(epilogue) == (
        "#teir.epilogue<zero = z at [first(w), first(v)], relu = r at [last(w), last(v)]>"
    )


def test_zero_and_relu_guarded_in_a_k_loop() -> None:
    """Zero [first(w)] / ReLU [last(w)] in a K loop around a BRGEMM: fused as guarded
    siblings as written, and sunk into the loop after teir-optimize hoists them."""
    record = gemm_schedule("NTN", 9, 6, 4, batch=2, extents=(3,), zero=(1, ["first(w)"]),
                           relu=(1, ["last(w)"]))
    assert [str(e) for e in check(record, False, 2)] == ["#teir.epilogue<zero = z, relu = r>"]
    assert [str(e) for e in check(record, True, 3)] == [
        "#teir.epilogue<zero = z at [first(w)], relu = r at [last(w)]>"
    ]


def test_schedule_transforms_refresh_recorded_epilogues() -> None:
    """A transform after teir-fuse-epilogues re-derives the epilogues it recorded
    instead of leaving them stale (which the verifier rejects): tiling w adds the
    loop w_in to the `at` terms; a parallel loop takes none, so the Zero that
    sank into the extent-1 loop u stays a tile of its own."""
    record = gemm_schedule("NNN", 8, 4, 3, extents=(4, 1), zero=(0, None), relu=(1, None))
    record["axes"][-1]["id"] = "u"
    record["schedule"]["iterations"][1].update(id="u", axis="u")
    record["schedule"]["iterations"][0]["children"] = ["u", "r"]
    module = load_module(record)
    ctx = teir_context()
    for step in (MatchGemmPass(), FuseEpiloguesPass()):
        step.apply(ctx, module)
    assert [str(e) for e in epilogues(module)] == [
        "#teir.epilogue<zero = z at [first(w), first(u)], relu = r at [last(u)]>"
    ]
    TilePass(("w",), (2,)).apply(ctx, module)
    module.verify()
    assert [str(e) for e in epilogues(module)] == [
        "#teir.epilogue<zero = z at [first(w), first(w_in), first(u)], relu = r at [last(u)]>"
    ]
    ParallelizePass("u").apply(ctx, module)
    module.verify()
    assert epilogues(module) == []
