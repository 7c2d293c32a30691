"""Lowering of teir to scf/arith/memref, on to LLVM, and the JIT (`compile_kernel`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _teir_to_scf() -> type[ModulePass]:
    from teir_lowering.convert_teir_to_scf import TeirToScfPass

    return TeirToScfPass


LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-to-scf": _teir_to_scf,
}
"""Lowering passes by name, registered with xDSL next to teir_passes.PASSES."""
