"""
`teir-lower-to-llvm-dialect`: scf/arith/memref/vector/func/cf to the llvm dialect only.

The one definition of the pipeline's order (`LOWER_TO_LLVM_PASSES`): the pass runs
them, then checks that nothing is left that xDSL's translation to LLVM IR does not
take, so that `teir_lowering.runtime.jit.JitModule` (and `teir-opt -t llvm`) can take the
module. `teir-to-llvm` (teir_lowering.runtime.kernel) runs it after teir-to-scf; a driver
can run the passes one at a time to print the IR between stages.

Besides xDSL's own passes, the list holds TEIR's conversions, one module of
teir_lowering.llvm a dialect, and `teir-bf16-as-i16` (no bf16 reaches llvmlite;
`teir-f16-moves-as-i16` retypes f16 where a kernel only moves it),
`teir-hoist-allocas` and `teir-fence-nontemporal-stores` (on the llvm dialect),
and `teir-convert-scf-to-cf`: xDSL's `convert-scf-to-cf` walking the ops last to
first. Each lowered loop or `scf.if` splits its block, and xDSL finds the
block's position by counting the blocks before it: walking forward, that is
every block made so far (quadratic in the kernel's loops); walking backward the
split block stays near the front. The result is verified op by op
(`verify_ops`).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms.convert_memref_to_ptr import (
    ConvertCastOp,
    ConvertLoadPattern,
    ConvertMemRefToPtr,
    ConvertStorePattern,
    ConvertSubviewPattern,
)
from xdsl.transforms.convert_ptr_type_offsets import (
    ConvertPtrTypeOffsetsPass,
    ConvertTypeOffsetOp,
)
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering
from xdsl.transforms.convert_vector_to_ptr import (
    ConvertVectorToPtrPass,
    VectorLoadToPtr,
    VectorStoreToPtr,
)
from xdsl.transforms.reconcile_unrealized_casts import (
    ReconcileUnrealizedCastsPass,
    ReconcileUnrealizedCastsPattern,
)
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from teir_lowering.lane import is_llvm_level
from teir_lowering.llvm.arith import ConvertArithToLLVMPass
from teir_lowering.llvm.base_pointers import (
    FuncArgumentsFromBase,
    FuncCallArgumentsToBase,
    FuncReturnToBase,
    ReinterpretCastFromBase,
)
from teir_lowering.llvm.bf16 import BF16AsI16Pass
from teir_lowering.llvm.cf import ConvertCfToLLVMPass
from teir_lowering.llvm.f16_moves import F16MovesAsI16Pass
from teir_lowering.llvm.fence_nontemporal import FenceNontemporalStoresPass
from teir_lowering.llvm.func import ConvertFuncToLLVMPass
from teir_lowering.llvm.memref import (
    ConvertAllocaToLLVMPass,
    ConvertMemRefAccessToLLVMPass,
    HoistAllocasPass,
)
from teir_lowering.llvm.ptr import ConvertPtrAddressingToLLVMPass, ConvertPtrToLLVMPass
from teir_lowering.llvm.rewriting import rewrite_once
from teir_lowering.llvm.vector import ConvertVectorToLLVMPass


class LLVMLoweringError(DiagnosticException):
    """The module could not be lowered to the llvm dialect alone."""


@dataclass(frozen=True)
class ConvertScfToCfPass(ModulePass):
    """xDSL's `convert-scf-to-cf`, the same patterns, walking the ops last to first
    (see the module doc): linear in the number of loops rather than quadratic."""

    name = "teir-convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [SwitchLowering(), IfLowering(), ForLowering()], dce=False,
                     walk_reverse=True)


@dataclass(frozen=True)
class _VectorToPtr(ConvertVectorToPtrPass):
    """xDSL's `convert-vector-to-ptr`, its patterns in one walk (`rewrite_once`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [VectorLoadToPtr(), VectorStoreToPtr()], dce=False,
                     apply_recursively=False)


@dataclass(frozen=True)
class _MemRefToPtr(ConvertMemRefToPtr):
    """xDSL's `convert-memref-to-ptr`, its patterns in one walk each (`rewrite_once`),
    with memrefs passed as base pointers (teir_lowering.llvm.base_pointers)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [ConvertStorePattern(), ConvertLoadPattern(), ConvertSubviewPattern(),
                          ConvertCastOp(), ReinterpretCastFromBase()], dce=False)
        if self.lower_func:
            rewrite_once(op, [FuncArgumentsFromBase(), FuncCallArgumentsToBase(),
                              FuncReturnToBase()], dce=False)


@dataclass(frozen=True)
class _PtrTypeOffsets(ConvertPtrTypeOffsetsPass):
    """xDSL's `convert-ptr-type-offsets` in one walk (`rewrite_once`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [ConvertTypeOffsetOp()], dce=False)


@dataclass(frozen=True)
class _ReconcileCasts(ReconcileUnrealizedCastsPass):
    """xDSL's `reconcile-unrealized-casts` in one walk (`rewrite_once`); a cast it
    cannot remove is named by `check_llvm_dialect_only` (not a Python warning)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [ReconcileUnrealizedCastsPattern(warn_on_failure=False)], dce=False)


def verify_ops(module: ModuleOp) -> None:
    """xDSL's verifier of every op (its definition, traits and own checks) without
    `Operation.verify`'s structural walk, which counts a region's blocks once per
    block: quadratic in the loops of a kernel once they are branches. LLVM's
    verifier checks the structure when the module is compiled (teir_lowering.runtime.jit)."""
    for op in module.walk():
        op.verify_()


LOWER_TO_LLVM_PASSES: tuple[ModulePass, ...] = (
    # no bf16 reaches llvmlite: bit patterns as i16 (f16 too where only moved)
    BF16AsI16Pass(),
    F16MovesAsI16Pass(),
    ConvertScfToCfPass(),
    ConvertAllocaToLLVMPass(),
    # before convert-vector-to-ptr, which would drop the nontemporal flag of stores
    ConvertVectorToLLVMPass(),
    # vector.load/store on memrefs -> ptr loads/stores (xDSL), before memrefs go
    _VectorToPtr(),
    # scalar accesses straight to llvm; the others through ptr_xdsl
    ConvertMemRefAccessToLLVMPass(),
    # memref arguments become bare pointers (see teir_lowering.llvm.func)
    _MemRefToPtr(lower_func=True),
    ConvertPtrAddressingToLLVMPass(),
    _PtrTypeOffsets(),
    ConvertPtrToLLVMPass(),
    ConvertArithToLLVMPass(),
    ConvertFuncToLLVMPass(),
    ConvertCfToLLVMPass(),
    _ReconcileCasts(),
    HoistAllocasPass(),
    FenceNontemporalStoresPass(),
)
"""The passes of `teir-lower-to-llvm-dialect`, in order."""


def check_llvm_dialect_only(module: ModuleOp) -> None:
    """Raises `LLVMLoweringError` listing every op left that xDSL's translation to
    LLVM IR does not take (`is_llvm_level`)."""
    leftovers: dict[str, list[str]] = {}
    for op in module.walk():
        if op is module or is_llvm_level(op):
            continue
        function = _enclosing_function(op)
        name = op.name
        if isinstance(op, UnrealizedConversionCastOp):  # which conversion did not meet
            name += (f" ({', '.join(map(str, op.operand_types))} to "
                     f"{', '.join(map(str, op.result_types))})")
        leftovers.setdefault(name, [])
        if function not in leftovers[name]:
            leftovers[name].append(function)
    if leftovers:
        listing = "; ".join(
            f"{name} (in {', '.join(functions)})"
            for name, functions in sorted(leftovers.items())
        )
        raise LLVMLoweringError(
            f"lowering to the llvm dialect left ops it cannot convert: {listing}"
        )


def _enclosing_function(op: Operation) -> str:
    """`@name` of the closest enclosing symbol (func.func or llvm.func)."""
    parent = op.parent_op()
    while parent is not None:
        sym_name = parent.properties.get("sym_name")
        if isinstance(sym_name, StringAttr):
            return f"@{sym_name.data}"
        parent = parent.parent_op()
    return "the module"


@dataclass(frozen=True)
class LowerToLLVMDialectPass(ModulePass):
    """
    Lowers func.func of scf/arith/memref/vector/func/cf ops in place to llvm ops only.

    Raises `LLVMLoweringError` naming the ops that could not be converted, or the
    verifier's message if an op does not verify (`verify_ops`).
    """

    name = "teir-lower-to-llvm-dialect"

    verify: bool = True
    """Verify the result op by op. `compile_kernel` does not: LLVM verifies the
    module it is given (teir_lowering.runtime.jit), and the tests verify this stage."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from teir_lowering.stages import stage

        for lowering_pass in LOWER_TO_LLVM_PASSES:
            with stage(lowering_pass.name, op):
                lowering_pass.apply(ctx, op)
        check_llvm_dialect_only(op)
        if not self.verify:
            return
        try:
            with stage("verify llvm"):
                verify_ops(op)
        except VerifyException as error:
            raise LLVMLoweringError(
                f"the module lowered to the llvm dialect does not verify: {error}"
            ) from error
