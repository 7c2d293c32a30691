"""`teir-` passes over the teir dialect, each a ModulePass of its own file."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _convert_arith_to_llvm() -> type[ModulePass]:
    from teir_lowering.convert_arith_to_llvm import ConvertArithToLLVMPass

    return ConvertArithToLLVMPass


def _convert_func_to_llvm() -> type[ModulePass]:
    from teir_lowering.convert_func_to_llvm import ConvertFuncToLLVMPass

    return ConvertFuncToLLVMPass


def _convert_cf_to_llvm() -> type[ModulePass]:
    from teir_lowering.convert_cf_to_llvm import ConvertCfToLLVMPass

    return ConvertCfToLLVMPass


def _convert_ptr_addressing_to_llvm() -> type[ModulePass]:
    from teir_lowering.llvm_pipeline import ConvertPtrAddressingToLLVMPass

    return ConvertPtrAddressingToLLVMPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-convert-arith-to-llvm": _convert_arith_to_llvm,
    "teir-convert-func-to-llvm": _convert_func_to_llvm,
    "teir-convert-cf-to-llvm": _convert_cf_to_llvm,
    "teir-convert-ptr-addressing-to-llvm": _convert_ptr_addressing_to_llvm,
}
"""Pass name -> factory, as xDSL's universe expects (filled as passes land)."""
