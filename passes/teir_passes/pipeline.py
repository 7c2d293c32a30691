"""`teir-optimize`: the default pass pipeline that `compile_kernel` runs first.

    teir-auto-schedule{threads}  normalize, fuse contiguous loops, lift GEMM/BRGEMM and
                                 element-wise tiles, cache tiles, parallel loops
                                 (teir_passes.auto_schedule; its script is recorded)
    teir-canonicalize-guards     clean-up
    teir-match-gemm              record Table 10.6.1's decision and parameters
    teir-fuse-epilogues          record the Zero/ReLU each GEMM/BRGEMM kernel performs

With `auto-schedule=false` the schedule is kept as written, only lifted:

    teir-canonicalize-guards     canonical guards; guarded Zero/ReLU hoisted out of K loops
    teir-drop-unit-iterations    no loops over extent-1 axes
    teir-lift-gemm               GEMM-shaped loops around scalar Contractions -> GEMM
    teir-fold-guarded-reduction  K loops (with first/last Zero, ReLU) -> the K role
    teir-lift-brgemm             K loops around GEMMs -> BRGEMM
    teir-lift-elementwise        loops around scalar Zero/Copy/ReLU -> tile primitives
    teir-canonicalize-guards     clean-up after lifting
    teir-match-gemm              record Table 10.6.1's decision and parameters
    teir-fuse-epilogues          record the Zero/ReLU each GEMM/BRGEMM kernel performs

Each pass can also run alone (`teir-opt -p NAME`); every one of them preserves
results exactly, so the pipeline does too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.host import host

DEFAULT_PIPELINE: tuple[str, ...] = (
    "teir-auto-schedule",
    "teir-canonicalize-guards",
    "teir-match-gemm",
    "teir-fuse-epilogues",
)
"""The default pipeline by pass name, in order."""

LIFTING_PIPELINE: tuple[str, ...] = (
    "teir-canonicalize-guards",
    "teir-drop-unit-iterations",
    "teir-lift-gemm",
    "teir-fold-guarded-reduction",
    "teir-lift-brgemm",
    "teir-lift-elementwise",
    "teir-canonicalize-guards",
    "teir-match-gemm",
    "teir-fuse-epilogues",
)
"""teir-optimize{auto-schedule=false}: the schedule as written, lifted into primitives."""


def default_passes(auto_schedule: bool = True, threads: int = 0) -> list[ModulePass]:
    from teir_passes.auto_schedule import AutoSchedulePass
    from teir_passes.registry import PASSES

    if not auto_schedule:
        return [PASSES[name]()() for name in LIFTING_PIPELINE]
    return [
        AutoSchedulePass(threads) if name == "teir-auto-schedule" else PASSES[name]()()
        for name in DEFAULT_PIPELINE
    ]


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """Runs DEFAULT_PIPELINE (or LIFTING_PIPELINE): what compile_kernel does before lowering."""

    name = "teir-optimize"

    auto_schedule: bool = True
    threads: int = 0
    """Threads the auto-scheduler plans for; 0: every core this process may use."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for pipeline_pass in default_passes(self.auto_schedule, self.threads):
            pipeline_pass.apply(ctx, op)


_SCHEDULED: OrderedDict[tuple[str, bool, int, str], builtin.ModuleOp] = OrderedDict()
_SCHEDULED_LOCK = threading.Lock()
SCHEDULED_KEPT = 64
"""Scheduled modules `optimize` keeps (the most recently used)."""


def optimize(module: builtin.ModuleOp, ctx: Context, pipeline: OptimizePass | None = None,
             ) -> None:
    """`pipeline` (teir-optimize by default) on `module` in place, or the result it gave
    on the same IR, options and host description before in this process: the
    einsum frontend asks whether a record gets a microkernel before it compiles
    the record, and the schedule is a good part of a first call's time."""
    pipeline = pipeline or OptimizePass()
    key = (str(module), pipeline.auto_schedule, pipeline.threads, host().fingerprint())
    with _SCHEDULED_LOCK:
        done = _SCHEDULED.get(key)
        if done is not None:
            _SCHEDULED.move_to_end(key)
    if done is None:
        pipeline.apply(ctx, module)
        with _SCHEDULED_LOCK:
            _SCHEDULED[key] = module.clone()
            while len(_SCHEDULED) > SCHEDULED_KEPT:
                _SCHEDULED.popitem(last=False)
        return
    for op in list(module.ops):
        op.detach()
        op.erase()
    for op in done.clone().ops:
        op.detach()
        module.body.block.add_op(op)


__all__ = ["DEFAULT_PIPELINE", "LIFTING_PIPELINE", "OptimizePass", "default_passes",
           "optimize"]
