"""`teir-` transformation passes over the teir dialect, each a ModulePass of its own file.

Lowering passes live in `lowering/` (teir_lowering.LOWERING_PASSES); the
xdsl.universe entry point registers both tables.
"""

from __future__ import annotations

from teir_passes.registry import PASSES, lazy_pass

__all__ = ["PASSES", "apply_schedule", "lazy_pass"]


def apply_schedule(module: object, steps: object) -> None:
    """See teir_passes.script.apply_schedule (imported on first use)."""
    from teir_passes.script import apply_schedule as apply

    apply(module, steps)  # pyright: ignore[reportArgumentType]
