"""`teir-` transformation passes over the teir dialect, each a ModulePass of its own file.

Lowering passes live in `lowering/` (teir_lowering.LOWERING_PASSES); the
xdsl.universe entry point registers both tables.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """A factory importing the pass class on first use (xDSL's universe protocol)."""
    return lambda: getattr(import_module(f"teir_passes.{module}"), name)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-optimize": _lazy("pipeline", "OptimizePass"),
    "teir-canonicalize-guards": _lazy("canonicalize_guards", "CanonicalizeGuardsPass"),
    "teir-match-gemm": _lazy("match_gemm", "MatchGemmPass"),
    "teir-drop-unit-iterations": _lazy("drop_unit_iterations", "DropUnitIterationsPass"),
    "teir-lift-gemm": _lazy("lift_gemm", "LiftGemmPass"),
    "teir-lift-brgemm": _lazy("lift_brgemm", "LiftBrgemmPass"),
    "convert-linalg-to-teir": _lazy("convert_linalg_to_teir", "ConvertLinalgToTeirPass"),
}
"""Pass name -> factory, as xDSL's universe expects."""
