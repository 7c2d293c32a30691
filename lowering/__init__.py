"""Lowering of teir to scf/arith/memref, on to LLVM, and the JIT (`compile_kernel`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """A factory importing the pass class on first use (xDSL's universe protocol)."""
    return lambda: getattr(import_module(f"teir_lowering.{module}"), name)


LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-to-scf": _lazy("convert_teir_to_scf", "TeirToScfPass"),
    "teir-to-llvm": _lazy("kernel", "TeirToLLVMPass"),
    "teir-outline-parallel": _lazy("parallel", "OutlineParallelPass"),
    "teir-gomp-launch": _lazy("parallel", "GompLaunchPass"),
    "teir-convert-arith-to-llvm": _lazy("convert_arith_to_llvm", "ConvertArithToLLVMPass"),
    "teir-convert-func-to-llvm": _lazy("convert_func_to_llvm", "ConvertFuncToLLVMPass"),
    "teir-convert-cf-to-llvm": _lazy("convert_cf_to_llvm", "ConvertCfToLLVMPass"),
    "teir-convert-vector-to-llvm": _lazy("convert_vector_to_llvm", "ConvertVectorToLLVMPass"),
    "teir-fence-nontemporal-stores": _lazy(
        "fence_nontemporal", "FenceNontemporalStoresPass"
    ),
    "teir-convert-ptr-addressing-to-llvm": _lazy(
        "llvm_pipeline", "ConvertPtrAddressingToLLVMPass"
    ),
}
"""Lowering passes by name, registered with xDSL next to teir_passes.PASSES."""


def compile_kernel(config: object, **options: object):  # noqa: ANN201
    """See teir_lowering.kernel.compile_kernel (imported lazily: it loads llvmlite)."""
    from teir_lowering.kernel import compile_kernel as compile_

    return compile_(config, **options)  # pyright: ignore
