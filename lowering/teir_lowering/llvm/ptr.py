"""
Lowers `ptr_xdsl` (what `convert-memref-to-ptr` and `convert-vector-to-ptr` leave) to
the `llvm` dialect, in two passes around xDSL's `convert-ptr-type-offsets`:

- `teir-convert-ptr-addressing-to-llvm`: xDSL's `convert-ptr-to-llvm` computes
  addresses with `ptrtoint`/`add`/`inttoptr`, which hides the base pointer from LLVM's
  alias analysis and SCEV, so that no loop is vectorized. A `getelementptr i8` keeps
  it visible. The same pass gives loads and stores an explicit alignment, that of
  the element, as the vector loads of a memref of vectors would otherwise assume the
  vector's alignment, which numpy buffers do not have; and it sizes vector elements,
  which `convert-ptr-type-offsets` (run after it, for scalars) does not. Stores marked
  non-temporal (see `teir-convert-vector-to-llvm`) keep the flag, aligned to the whole
  vector; `memref.extract_aligned_pointer_as_index` becomes a `ptrtoint`.
- `teir-convert-ptr-to-llvm`: xDSL's `convert-ptr-to-llvm`, whose type rewrite
  visits only the ops that hold pointers.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref, ptr
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i8,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.convert_ptr_to_llvm import (
    ConvertFromPtrOp,
    ConvertLoadOp,
    ConvertPtrAddOp,
    ConvertStoreOp,
    ConvertToPtrOp,
)
from xdsl.utils.type import get_element_type_or_self

from teir_lowering.llvm.retype import Retype
from teir_lowering.llvm.rewriting import rewrite_once
from teir_lowering.llvm.vector import NONTEMPORAL


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


def _as_llvm_pointer(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """`value` (a `!ptr_xdsl.ptr`) as an `!llvm.ptr`: the pointer a cast made it from
    when it is one (an address computed by `ConvertPtrAddToGEP`), else a new cast."""
    owner = value.owner
    if (isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1
            and isinstance(owner.inputs[0].type, llvm.LLVMPointerType)):
        return [], owner.inputs[0]
    cast_op = UnrealizedConversionCastOp.get((value,), (llvm.LLVMPointerType(),))
    return [cast_op], cast_op.results[0]


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
        cast, base = _as_llvm_pointer(op.addr)
        offset = arith.IndexCastOp(op.offset, i64)
        gep = llvm.GEPOp.from_mixed_indices(base, (offset.result,), i8)
        result = UnrealizedConversionCastOp.get(gep.results, (op.result.type,))
        rewriter.replace(op, (*cast, offset, gep, result))


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
        cast, address = _as_llvm_pointer(op.addr)
        load = llvm.LoadOp(address, op.res.type, alignment=_element_alignment(op.res.type))
        rewriter.replace(op, (*cast, load))


@dataclass
class ConvertAlignedStore(RewritePattern):
    """
    `ptr_xdsl.store` -> `llvm.store` aligned to the element (see the module doc).

    A store marked `nontemporal` (teir_lowering.llvm.vector) keeps the flag
    and is aligned to its whole value: x86 only streams aligned vectors, and the code
    that emits such stores puts them at aligned addresses.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ptr.StoreOp, rewriter: PatternRewriter, /):
        if op.syncscope or op.ordering:
            return
        nontemporal = NONTEMPORAL in op.attributes
        cast, address = _as_llvm_pointer(op.addr)
        store = llvm.StoreOp(
            op.value,
            address,
            alignment=(
                _value_size(op.value.type) if nontemporal else _element_alignment(op.value.type)
            ),
            volatile=op.volatile is not None,
            nontemporal=nontemporal,
        )
        rewriter.replace(op, (*cast, store))




@dataclass(frozen=True)
class ConvertPtrAddressingToLLVMPass(ModulePass):
    """
    Lowers `ptr_xdsl` address arithmetic, loads and stores to llvm ops that LLVM can
    vectorize; `convert-ptr-to-llvm` does the rest (casts and types).
    """

    name = "teir-convert-ptr-addressing-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(
            op,
            [
                ConvertVectorTypeOffset(),
                ConvertExtractAlignedPointer(),
                ConvertPtrAddToGEP(),
                ConvertAlignedLoad(),
                ConvertAlignedStore(),
            ],
            dce=False,
        )


@dataclass(frozen=True)
class ConvertPtrToLLVMPass(ModulePass):
    """xDSL's `convert-ptr-to-llvm`, the same patterns, with the pointer type rewrite
    limited to the ops that hold pointers (`Retype`): the same result in a
    fraction of the time on large kernels."""

    name = "teir-convert-ptr-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(
            op,
            [
                ConvertStoreOp(),
                ConvertLoadOp(),
                ConvertPtrAddOp(),
                ConvertToPtrOp(),
                ConvertFromPtrOp(),
                Retype(ptr.PtrType, llvm.LLVMPointerType()),
            ]
        )
