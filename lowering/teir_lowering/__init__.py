"""Lowering of teir to scf/arith/memref, on to LLVM, and the JIT (`compile_kernel`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.passes import ModulePass

from teir_passes import lazy_pass

LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-to-scf": lazy_pass("teir_lowering.codegen.convert_teir_to_scf", "TeirToScfPass"),
    "teir-to-llvm": lazy_pass("teir_lowering.runtime.kernel", "TeirToLLVMPass"),
    "teir-outline-parallel": lazy_pass("teir_lowering.codegen.outline_parallel", "OutlineParallelPass"),
    "teir-gomp-launch": lazy_pass("teir_lowering.codegen.gomp_launch", "GompLaunchPass"),
    "teir-lower-to-llvm-dialect": lazy_pass(
        "teir_lowering.llvm.pipeline", "LowerToLLVMDialectPass"
    ),
    "teir-bf16-as-i16": lazy_pass("teir_lowering.llvm.bf16", "BF16AsI16Pass"),
    "teir-f16-moves-as-i16": lazy_pass("teir_lowering.llvm.f16_moves", "F16MovesAsI16Pass"),
    "teir-convert-alloca-to-llvm": lazy_pass(
        "teir_lowering.llvm.memref", "ConvertAllocaToLLVMPass"
    ),
    "teir-convert-scf-to-cf": lazy_pass("teir_lowering.llvm.pipeline", "ConvertScfToCfPass"),
    "teir-convert-vector-to-llvm": lazy_pass(
        "teir_lowering.llvm.vector", "ConvertVectorToLLVMPass"
    ),
    "teir-convert-ptr-addressing-to-llvm": lazy_pass(
        "teir_lowering.llvm.ptr", "ConvertPtrAddressingToLLVMPass"
    ),
    "teir-convert-ptr-to-llvm": lazy_pass("teir_lowering.llvm.ptr", "ConvertPtrToLLVMPass"),
    "teir-convert-arith-to-llvm": lazy_pass(
        "teir_lowering.llvm.arith", "ConvertArithToLLVMPass"
    ),
    "teir-convert-func-to-llvm": lazy_pass("teir_lowering.llvm.func", "ConvertFuncToLLVMPass"),
    "teir-convert-cf-to-llvm": lazy_pass("teir_lowering.llvm.cf", "ConvertCfToLLVMPass"),
    "teir-convert-memref-access-to-llvm": lazy_pass(
        "teir_lowering.llvm.memref", "ConvertMemRefAccessToLLVMPass"
    ),
    "teir-hoist-allocas": lazy_pass("teir_lowering.llvm.memref", "HoistAllocasPass"),
    "teir-fence-nontemporal-stores": lazy_pass(
        "teir_lowering.llvm.fence_nontemporal", "FenceNontemporalStoresPass"
    ),
}
"""Lowering passes by name, registered with xDSL next to teir_passes.PASSES."""


_LAZY = {
    "compile_kernel": "teir_lowering.runtime.kernel",
    "einsum": "teir_lowering.frontends.einsum_semantics",
    "tensordot": "teir_lowering.frontends.einsum_semantics",
}
"""The entry points, imported on first use (compile_kernel loads llvmlite; importing
teir_lowering registers passes only): `teir_lowering.einsum` is then the function
itself, kept in this module, so that a call pays no wrapper."""


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'teir_lowering' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from teir_lowering.frontends.einsum_semantics import einsum, tensordot
    from teir_lowering.runtime.kernel import compile_kernel

__all__ = ["LOWERING_PASSES", "compile_kernel", "einsum", "tensordot"]
