"""
The pipeline from scf/arith/memref/func to the llvm dialect only.

`lower_to_llvm_dialect(module, ctx)` runs `LOWER_TO_LLVM_PASSES` in order and checks
that nothing but llvm ops is left, so that `teir_lowering.jit.JitModule` (xDSL's
llvmlite translation) can take the module. A driver can run the passes one at a time
to print the IR between stages.

Besides xDSL's own passes and TEIR's three conversions, the list holds:

- `teir-bf16-as-i16` (teir_lowering.convert_bf16_to_i16): bf16 as its i16 bit
  patterns, as llvmlite has no bfloat type;
- `teir-convert-scf-to-cf` (below): xDSL's `convert-scf-to-cf` walking the ops
  last to first. Each lowered loop or `scf.if` splits its block, and xDSL finds
  the block's position by counting the blocks before it: walking forward, that is
  every block made so far (quadratic in the kernel's loops); walking backward the
  split block stays near the front;
- `teir-convert-ptr-to-llvm` (below): xDSL's `convert-ptr-to-llvm`, whose type
  rewrite visits only the ops that hold pointers;
- `convert-ptr-type-offsets` (xDSL): `convert-memref-to-ptr` sizes elements with
  `ptr_xdsl.type_offset`, which `convert-ptr-to-llvm` does not lower;
- `teir-convert-ptr-addressing-to-llvm` (below): `convert-ptr-to-llvm` computes
  addresses with `ptrtoint`/`add`/`inttoptr`, which hides the base pointer from LLVM's
  alias analysis and SCEV, so that no loop is vectorized. A `getelementptr i8` keeps
  it visible. The same pass gives loads and stores an explicit alignment, that of
  the element, as the vector loads of a memref of vectors would otherwise assume the
  vector's alignment, which numpy buffers do not have; and it sizes vector elements,
  which `convert-ptr-type-offsets` (run after it, for scalars) does not. Stores marked
  non-temporal (see `teir-convert-vector-to-llvm`) keep the flag, aligned to the whole
  vector; `memref.extract_aligned_pointer_as_index` becomes a `ptrtoint`;
- `teir-convert-alloca-to-llvm` (below): the microkernels' scratch buffers for
  packed panels, `memref.alloca` of a static shape, become `llvm.alloca`s, and
  `teir-hoist-allocas` moves every `llvm.alloca` of a constant size to its
  function's entry block. The microkernels allocate where they pack, inside the
  loop nest, and each buffer is dead between two kernel calls; an alloca left in
  a loop body would grow the stack on every iteration, while one in the entry
  block is a fixed slot of the frame. After teir-outline-parallel each thread
  runs its chunk function on its own stack, so the buffers are per thread.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref, ptr
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i8,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.convert_memref_to_ptr import ConvertMemRefToPtr
from xdsl.transforms.convert_ptr_to_llvm import (
    ConvertFromPtrOp,
    ConvertLoadOp,
    ConvertPtrAddOp,
    ConvertStoreOp,
    ConvertToPtrOp,
    RewritePtrTypes,
)
from xdsl.transforms.convert_ptr_type_offsets import ConvertPtrTypeOffsetsPass
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering
from xdsl.transforms.convert_vector_to_ptr import ConvertVectorToPtrPass
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.type import get_element_type_or_self

from teir_lowering.convert_arith_to_llvm import ConvertArithToLLVMPass, RetypeWhere
from teir_lowering.convert_bf16_to_i16 import BF16AsI16Pass
from teir_lowering.convert_cf_to_llvm import ConvertCfToLLVMPass
from teir_lowering.convert_func_to_llvm import ConvertFuncToLLVMPass
from teir_lowering.convert_vector_to_llvm import NONTEMPORAL, ConvertVectorToLLVMPass
from teir_lowering.fence_nontemporal import FenceNontemporalStoresPass


class LLVMLoweringError(DiagnosticException):
    """The module could not be lowered to the llvm dialect alone."""


def _element_alignment(typ: Attribute) -> int | None:
    """The byte alignment of one (vector) element of `typ`: its size, a power of two."""
    element = get_element_type_or_self(typ)
    if not isinstance(element, FixedBitwidthType):
        return None
    size = max(1, element.size)
    return 1 << (size - 1).bit_length()


def _value_size(typ: Attribute) -> int | None:
    """The bytes of a scalar or 1-D vector of fixed-width elements."""
    element = get_element_type_or_self(typ)
    if not isinstance(element, FixedBitwidthType):
        return None
    lanes = typ.get_shape()[0] if isinstance(typ, VectorType) else 1
    return lanes * element.size


@dataclass
class ConvertExtractAlignedPointer(RewritePattern):
    """`memref.extract_aligned_pointer_as_index` -> the base pointer as an integer
    (`ptrtoint`), for code that checks alignment at run time."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.ExtractAlignedPointerAsIndexOp, rewriter: PatternRewriter, /
    ):
        base = ptr.ToPtrOp(op.source)
        address = UnrealizedConversionCastOp.get((base.res,), (llvm.LLVMPointerType(),))
        integer = llvm.PtrToIntOp(address.results[0], i64)
        index = arith.IndexCastOp(integer.results[0], IndexType())
        rewriter.replace(op, (base, address, integer, index))


@dataclass
class ConvertPtrAddToGEP(RewritePattern):
    """`ptr_xdsl.ptradd` -> `llvm.getelementptr i8`, a byte offset from the base."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ptr.PtrAddOp, rewriter: PatternRewriter, /):
        base = UnrealizedConversionCastOp.get((op.addr,), (llvm.LLVMPointerType(),))
        offset = arith.IndexCastOp(op.offset, i64)
        gep = llvm.GEPOp.from_mixed_indices(base.results[0], (offset.result,), i8)
        result = UnrealizedConversionCastOp.get(gep.results, (op.result.type,))
        rewriter.replace(op, (base, offset, gep, result))


@dataclass
class ConvertVectorTypeOffset(RewritePattern):
    """
    `ptr_xdsl.type_offset` of a 1-D vector whose size is a power of two -> a constant.

    `convert-ptr-type-offsets` only sizes scalars. Other vector sizes are left to it,
    hence reported: LLVM pads them to a power of two in memory.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ptr.TypeOffsetOp, rewriter: PatternRewriter, /):
        vector = op.elem_type
        if not isinstance(vector, VectorType) or vector.get_num_dims() != 1:
            return
        element = vector.element_type
        if not isinstance(element, FixedBitwidthType) or element.bitwidth % 8:
            return
        size = vector.get_shape()[0] * element.size
        if size & (size - 1):
            return
        rewriter.replace(op, arith.ConstantOp(IntegerAttr(size, op.offset.type)))


@dataclass
class ConvertAlignedLoad(RewritePattern):
    """`ptr_xdsl.load` -> `llvm.load` aligned to the element (see the module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ptr.LoadOp, rewriter: PatternRewriter, /):
        if op.volatile or op.syncscope or op.ordering or op.invariant:
            return
        address = UnrealizedConversionCastOp.get((op.addr,), (llvm.LLVMPointerType(),))
        load = llvm.LoadOp(
            address.results[0], op.res.type, alignment=_element_alignment(op.res.type)
        )
        rewriter.replace(op, (address, load))


@dataclass
class ConvertAlignedStore(RewritePattern):
    """
    `ptr_xdsl.store` -> `llvm.store` aligned to the element (see the module doc).

    A store marked `nontemporal` (teir_lowering.convert_vector_to_llvm) keeps the flag
    and is aligned to its whole value: x86 only streams aligned vectors, and the code
    that emits such stores puts them at aligned addresses.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ptr.StoreOp, rewriter: PatternRewriter, /):
        if op.syncscope or op.ordering:
            return
        nontemporal = NONTEMPORAL in op.attributes
        address = UnrealizedConversionCastOp.get((op.addr,), (llvm.LLVMPointerType(),))
        store = llvm.StoreOp(
            op.value,
            address.results[0],
            alignment=(
                _value_size(op.value.type) if nontemporal else _element_alignment(op.value.type)
            ),
            volatile=op.volatile is not None,
            nontemporal=nontemporal,
        )
        rewriter.replace(op, (address, store))


@dataclass
class ConvertAlloca(RewritePattern):
    """`memref.alloca` of a static shape -> `llvm.alloca` of as many elements, cast
    back to the memref type (its loads and stores go through convert-memref-to-ptr,
    and reconcile-unrealized-casts removes the casts)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter, /):
        memref_type = op.memref.type
        if op.dynamic_sizes or not memref_type.has_static_shape():
            return
        count = 1
        for extent in memref_type.get_shape():
            count *= extent
        size = arith.ConstantOp(IntegerAttr(count, i64))
        alignment = op.alignment.value.data if op.alignment is not None else 16
        alloca = llvm.AllocaOp(size, memref_type.element_type, alignment)
        # llvmlite types an alloca's pointer by its element; the rest of the code
        # addresses memory through opaque pointers (getelementptr i8)
        opaque = llvm.BitcastOp(alloca.res, llvm.LLVMPointerType())
        cast = UnrealizedConversionCastOp.get(opaque.results, (memref_type,))
        rewriter.replace(op, (size, alloca, opaque, cast))


@dataclass(frozen=True)
class ConvertAllocaToLLVMPass(ModulePass):
    """`memref.alloca` -> `llvm.alloca` (see the module doc)."""

    name = "teir-convert-alloca-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ConvertAlloca()).rewrite_module(op)


@dataclass(frozen=True)
class HoistAllocasPass(ModulePass):
    """Every `llvm.alloca` of a constant size moves to its function's entry block."""

    name = "teir-hoist-allocas"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, llvm.FuncOp) or not function.body.blocks:
                continue
            entry = function.body.blocks[0]
            for alloca in [a for a in function.walk() if isinstance(a, llvm.AllocaOp)]:
                size = alloca.size.owner
                if alloca.parent_block() is entry or not isinstance(size, llvm.ConstantOp):
                    continue
                constant = size.clone()
                alloca.detach()
                entry.insert_ops_before([constant, alloca], entry.first_op)  # pyright: ignore
                alloca.operands[0] = constant.result


@dataclass(frozen=True)
class ConvertPtrAddressingToLLVMPass(ModulePass):
    """
    Lowers `ptr_xdsl` address arithmetic, loads and stores to llvm ops that LLVM can
    vectorize; `convert-ptr-to-llvm` does the rest (casts and types).
    """

    name = "teir-convert-ptr-addressing-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ConvertVectorTypeOffset(),
                    ConvertExtractAlignedPointer(),
                    ConvertPtrAddToGEP(),
                    ConvertAlignedLoad(),
                    ConvertAlignedStore(),
                ]
            )
        ).rewrite_module(op)


@dataclass(frozen=True)
class ConvertScfToCfPass(ModulePass):
    """xDSL's `convert-scf-to-cf`, the same patterns, walking the ops last to first
    (see the module doc): linear in the number of loops rather than quadratic."""

    name = "teir-convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([SwitchLowering(), IfLowering(), ForLowering()]),
            walk_reverse=True,
        ).rewrite_module(op)


@dataclass(frozen=True)
class ConvertPtrToLLVMPass(ModulePass):
    """xDSL's `convert-ptr-to-llvm`, the same patterns, with the pointer type rewrite
    limited to the ops that hold pointers (`RetypeWhere`): the same result in a
    fraction of the time on large kernels."""

    name = "teir-convert-ptr-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ConvertStoreOp(),
                    ConvertLoadOp(),
                    ConvertPtrAddOp(),
                    ConvertToPtrOp(),
                    ConvertFromPtrOp(),
                    RetypeWhere(RewritePtrTypes(recursive=True), ptr.PtrType),
                ]
            )
        ).rewrite_module(op)


LOWER_TO_LLVM_PASSES: tuple[ModulePass, ...] = (
    # no bf16 reaches llvmlite: bit patterns as i16 (teir_lowering.convert_bf16_to_i16)
    BF16AsI16Pass(),
    ConvertScfToCfPass(),
    ConvertAllocaToLLVMPass(),
    # before convert-vector-to-ptr, which would drop the nontemporal flag of stores
    ConvertVectorToLLVMPass(),
    # vector.load/store on memrefs -> ptr loads/stores (xDSL), before memrefs go
    ConvertVectorToPtrPass(),
    # memref arguments become bare pointers (see teir_lowering.convert_func_to_llvm)
    ConvertMemRefToPtr(lower_func=True),
    ConvertPtrAddressingToLLVMPass(),
    ConvertPtrTypeOffsetsPass(),
    ConvertPtrToLLVMPass(),
    ConvertArithToLLVMPass(),
    ConvertFuncToLLVMPass(),
    ConvertCfToLLVMPass(),
    ReconcileUnrealizedCastsPass(),
    HoistAllocasPass(),
    FenceNontemporalStoresPass(),
)
"""The passes of `lower_to_llvm_dialect`, in order."""


def check_llvm_dialect_only(module: ModuleOp) -> None:
    """Raises `LLVMLoweringError` listing every op left that is not an llvm op."""
    leftovers: dict[str, list[str]] = {}
    for op in module.walk():
        if op is module or op.dialect_name() == "llvm":
            continue
        function = _enclosing_function(op)
        leftovers.setdefault(op.name, [])
        if function not in leftovers[op.name]:
            leftovers[op.name].append(function)
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


def verify_ops(module: ModuleOp) -> None:
    """xDSL's verifier of every op (its definition, traits and own checks) without
    `Operation.verify`'s structural walk, which counts a region's blocks once per
    block: quadratic in the loops of a kernel once they are branches. LLVM's
    verifier checks the structure when the module is compiled (teir_lowering.jit)."""
    for op in module.walk():
        op.verify_()


def lower_to_llvm_dialect(module: ModuleOp, ctx: Context) -> None:
    """
    Lowers `module` (func.func of scf/arith/memref/func ops) in place to llvm ops only.

    Raises `LLVMLoweringError` naming the ops that could not be converted, or the
    verifier's message if an op does not verify (`verify_ops`).
    """
    for lowering_pass in LOWER_TO_LLVM_PASSES:
        lowering_pass.apply(ctx, module)
    check_llvm_dialect_only(module)
    try:
        verify_ops(module)
    except VerifyException as error:
        raise LLVMLoweringError(
            f"the module lowered to the llvm dialect does not verify: {error}"
        ) from error
