"""`teir-` transformation passes over the teir dialect, each a ModulePass of its own file.

Lowering passes live in `lowering/` (teir_lowering.LOWERING_PASSES); the
xdsl.universe entry point registers both tables.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass

PASSES: dict[str, Callable[[], type[ModulePass]]] = {}
"""Pass name -> factory, as xDSL's universe expects (filled as passes land)."""
