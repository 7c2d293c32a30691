"""The compile path's bookkeeping: the stage log benchmarks/compile_time.py reads,
the stage IR kept only on request, and the cycle collector given back."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from conftest import SPEC_EXAMPLES
from teir_lowering.llvm.pipeline import LOWER_TO_LLVM_PASSES
from teir_lowering.runtime.kernel import compile_kernel
from teir_lowering.stages import StageLog

EXAMPLE = SPEC_EXAMPLES / "tree" / "10_6_3_gemm.json"


@pytest.fixture
def fresh_kernels(monkeypatch):
    from teir_lowering.runtime import kernel as kernel_module

    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})


def test_stage_log_names_every_stage_with_its_ops(fresh_kernels) -> None:
    with StageLog() as log:
        compile_kernel(EXAMPLE, threads=1)
    names = [s.name for s in log.stages]
    for expected in ("record -> module (verified)", "teir-optimize", "teir-to-scf",
                     "teir-outline-parallel", "translate to LLVM IR",
                     "parse + verify LLVM IR", "LLVM O3", "MCJIT codegen"):
        assert expected in names
    # the scf level goes straight to LLVM IR: none of the llvm-dialect conversions runs
    assert not ({p.name for p in LOWER_TO_LLVM_PASSES} - {"teir-bf16-as-i16"}) & set(names)
    totals = log.totals()
    assert totals["teir-to-scf"].ops and totals["teir-to-scf"].ops > totals["teir-optimize"].ops
    assert all(s.cpu >= 0 and s.wall >= 0 for s in log.stages)
    with StageLog() as second:
        compile_kernel(EXAMPLE, threads=1)  # from the in-memory cache: nothing compiled
    assert "teir-to-scf" not in [s.name for s in second.stages]


def test_stage_ir_is_kept_only_on_request(fresh_kernels) -> None:
    plain = compile_kernel(EXAMPLE, threads=1)
    assert set(plain.stages) == {"teir", "optimized"}
    kept = compile_kernel(EXAMPLE, threads=1, keep_ir=True)
    assert {"teir", "optimized", "scf", "llvm"} <= set(kept.stages)
    assert "vector.fma" in kept.stages["scf"] and "@\"llvm.fma.v" in kept.stages["llvm"]
    assert kept is not plain  # compiled afresh, not the cached kernel
    arrays = [np.asarray(np.random.default_rng(0).random(t.needed_bytes // 4), np.float32)
              for t in plain.tensors]
    out = arrays[-1].copy()
    plain(*arrays)
    kept(*arrays[:-1], out)
    np.testing.assert_array_equal(arrays[-1], out)


def test_cycle_collector_is_paused_while_compiling(fresh_kernels, monkeypatch) -> None:
    from teir_lowering.runtime import kernel as kernel_module

    seen: list[bool] = []
    lower = kernel_module.lower_to_scf

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return lower(*args, **kwargs)

    monkeypatch.setattr(kernel_module, "lower_to_scf", recording)
    assert gc.isenabled()
    compile_kernel(EXAMPLE, threads=1)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:  # a caller's choice is kept
        compile_kernel(EXAMPLE, threads=1, keep_ir=True)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()


def test_a_schedule_is_made_once_per_ir_and_host(monkeypatch) -> None:
    """The einsum frontend asks teir-optimize whether a record gets a microkernel,
    then compiles it: the auto-scheduler runs once, and again only for another IR
    or host description."""
    from teir_dialect import teir_context
    from teir_dialect.host import pinned
    from teir_dialect.records import load_module
    from teir_passes import pipeline

    runs: list[str] = []
    apply = pipeline.OptimizePass.apply

    def counting(self, ctx, op):
        runs.append(str(op))
        apply(self, ctx, op)

    monkeypatch.setattr(pipeline.OptimizePass, "apply", counting)
    monkeypatch.setattr(pipeline, "_SCHEDULED", pipeline.OrderedDict())
    first, second = load_module(EXAMPLE), load_module(EXAMPLE)
    pipeline.optimize(first, teir_context())
    pipeline.optimize(second, teir_context())
    assert len(runs) == 1 and str(first) == str(second) and str(first) != runs[0]
    with pinned("avx2-small"):
        pipeline.optimize(load_module(EXAMPLE), teir_context())
    assert len(runs) == 2
