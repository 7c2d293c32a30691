"""Lowering of teir to scf/arith/memref, on to LLVM, and the JIT (`compile_kernel`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass

from teir_passes import lazy_pass

LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "teir-to-scf": lazy_pass("teir_lowering.codegen.convert_teir_to_scf", "TeirToScfPass"),
    "teir-to-llvm": lazy_pass("teir_lowering.runtime.kernel", "TeirToLLVMPass"),
    "teir-outline-parallel": lazy_pass("teir_lowering.codegen.parallel", "OutlineParallelPass"),
    "teir-gomp-launch": lazy_pass("teir_lowering.codegen.parallel", "GompLaunchPass"),
    "teir-lower-to-llvm-dialect": lazy_pass(
        "teir_lowering.llvm.pipeline", "LowerToLLVMDialectPass"
    ),
    "teir-bf16-as-i16": lazy_pass("teir_lowering.llvm.bf16", "BF16AsI16Pass"),
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


def compile_kernel(config: object, **options: object):
    """See teir_lowering.runtime.kernel.compile_kernel (imported lazily: it loads llvmlite)."""
    from teir_lowering.runtime.kernel import compile_kernel as compile_

    return compile_(config, **options)  # pyright: ignore


def einsum(subscripts: object, *operands: object, **options: object):
    """See teir_lowering.frontends.einsum_semantics.einsum: np.einsum on compiled TEIR kernels."""
    from teir_lowering.frontends.einsum_semantics import einsum as einsum_

    return einsum_(subscripts, *operands, **options)  # pyright: ignore


def tensordot(a: object, b: object, axes: object = 2, **options: object):
    """See teir_lowering.frontends.einsum_tree.tensordot: np.tensordot as one TEIR contraction."""
    from teir_lowering.frontends.einsum_tree import tensordot as tensordot_

    return tensordot_(a, b, axes, **options)  # pyright: ignore
