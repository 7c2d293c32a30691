"""Every `teir-` pass of teir_passes by name, imported on first use.

A module of its own so that the passes that need the table (the pipeline,
the script runner) import it without importing the package's other entry
points.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass


def lazy_pass(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """A factory importing the pass class `module.name` on first use (xDSL's universe
    protocol), so that listing the passes imports none of them."""
    return lambda: getattr(import_module(module), name)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-optimize": lazy_pass("teir_passes.pipeline", "OptimizePass"),
    "teir-canonicalize-guards": lazy_pass("teir_passes.canonicalize_guards", "CanonicalizeGuardsPass"),
    "teir-match-gemm": lazy_pass("teir_passes.match_gemm", "MatchGemmPass"),
    "teir-mark-streamed-out": lazy_pass("teir_passes.mark_streamed_out", "MarkStreamedOutPass"),
    "teir-fuse-epilogues": lazy_pass("teir_passes.fuse_epilogues", "FuseEpiloguesPass"),
    "teir-drop-unit-iterations": lazy_pass("teir_passes.drop_unit_iterations", "DropUnitIterationsPass"),
    "teir-lift-gemm": lazy_pass("teir_passes.lift_gemm", "LiftGemmPass"),
    "teir-lift-brgemm": lazy_pass("teir_passes.lift_brgemm", "LiftBrgemmPass"),
    "teir-split": lazy_pass("teir_passes.split", "SplitPass"),
    "teir-tile": lazy_pass("teir_passes.tile", "TilePass"),
    "teir-reorder": lazy_pass("teir_passes.reorder", "ReorderPass"),
    "teir-fuse-axes": lazy_pass("teir_passes.fuse_axes", "FuseAxesPass"),
    "teir-widen-tile": lazy_pass("teir_passes.widen_tile", "WidenTilePass"),
    "teir-parallelize": lazy_pass("teir_passes.parallelize", "ParallelizePass"),
    "teir-sequentialize": lazy_pass("teir_passes.parallelize", "SequentializePass"),
    "teir-fold-guarded-reduction": lazy_pass(
        "teir_passes.fold_guarded_reduction", "FoldGuardedReductionPass"
    ),
    "teir-lift-elementwise": lazy_pass("teir_passes.lift_elementwise", "LiftElementwisePass"),
    "teir-apply-schedule": lazy_pass("teir_passes.script", "ApplySchedulePass"),
    "teir-auto-schedule": lazy_pass("teir_passes.auto_schedule", "AutoSchedulePass"),
    "convert-linalg-to-teir": lazy_pass(
        "teir_passes.convert_linalg_to_teir", "ConvertLinalgToTeirPass"
    ),
}
"""Pass name -> factory, as xDSL's universe expects."""
