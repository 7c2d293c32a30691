"""Lowering of teir to scf/arith/memref, on to LLVM, and the JIT (`compile_kernel`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _teir_to_scf() -> type[ModulePass]:
    from teir_lowering.convert_teir_to_scf import TeirToScfPass

    return TeirToScfPass


def _outline_parallel() -> type[ModulePass]:
    from teir_lowering.parallel import OutlineParallelPass

    return OutlineParallelPass


def _gomp_launch() -> type[ModulePass]:
    from teir_lowering.parallel import GompLaunchPass

    return GompLaunchPass


LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-to-scf": _teir_to_scf,
    "teir-outline-parallel": _outline_parallel,
    "teir-gomp-launch": _gomp_launch,
}
"""Lowering passes by name, registered with xDSL next to teir_passes.PASSES."""


def compile_kernel(config: object, **options: object):  # noqa: ANN201
    """See teir_lowering.kernel.compile_kernel (imported lazily: it loads llvmlite)."""
    from teir_lowering.kernel import compile_kernel as compile_

    return compile_(config, **options)  # pyright: ignore
