"""`teir-` transformation passes over the teir dialect, each a ModulePass of its own file.

Lowering passes live in `lowering/` (teir_lowering.LOWERING_PASSES); the
xdsl.universe entry point registers both tables.
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
    "teir-canonicalize-guards": lazy_pass(
        "teir_passes.canonicalize_guards", "CanonicalizeGuardsPass"
    ),
    "teir-match-gemm": lazy_pass("teir_passes.match_gemm", "MatchGemmPass"),
    "teir-drop-unit-iterations": lazy_pass(
        "teir_passes.drop_unit_iterations", "DropUnitIterationsPass"
    ),
    "teir-lift-gemm": lazy_pass("teir_passes.lift_gemm", "LiftGemmPass"),
    "teir-lift-brgemm": lazy_pass("teir_passes.lift_brgemm", "LiftBrgemmPass"),
}
"""Pass name -> factory, as xDSL's universe expects."""
