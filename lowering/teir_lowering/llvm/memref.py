"""
The microkernels' scratch buffers for packed panels, and scalar memref accesses,
in the llvm dialect.

`teir-convert-alloca-to-llvm`: `memref.alloca` of a static shape becomes an
`llvm.alloca`; `teir-hoist-allocas` moves every `llvm.alloca` of a constant size
to its function's entry block. The microkernels allocate where they pack, inside
the loop nest, and each buffer is dead between two kernel calls; an alloca left in
a loop body would grow the stack on every iteration, while one in the entry block
is a fixed slot of the frame. After teir-outline-parallel each thread runs its
chunk function on its own stack, so the buffers are per thread.

`teir-convert-memref-access-to-llvm`: `memref.load`/`memref.store` of a scalar on
a 1-D memref without layout (the kernels' tensors and buffers) becomes the code
`convert-memref-to-ptr`, `teir-convert-ptr-addressing-to-llvm` and
`teir-convert-arith-to-llvm` make of it together (the byte offset `i * size`, a
`getelementptr i8`, an access aligned to the element), in one step: the
scalar accesses are the most numerous ops of the edge code, and the chain built
five ops for each only to convert them again. Other accesses are left to the chain.
`teir_lane.prefetch` takes the same address, plus its bytes ahead, to
`llvm.prefetch`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnrealizedConversionCastOp,
    i8,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_lowering.lane import PREFETCH_INTRINSIC, LanePrefetchOp, prefetch_arguments
from teir_lowering.llvm.common import cast_to_llvm
from teir_lowering.llvm.rewriting import rewrite_once


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
        rewrite_once(op, [ConvertAlloca()], dce=False)


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


def _element_address(
    op: memref.LoadOp | memref.StoreOp | LanePrefetchOp, rewriter: PatternRewriter
) -> tuple[list[Operation], SSAValue, int] | None:
    """The ops computing the address of the element `op` accesses, the address and
    the element's size; None unless a scalar of a 1-D memref without layout."""
    memref_type = op.memref.type
    if not (isinstance(memref_type, MemRefType) and memref_type.get_num_dims() == 1
            and isinstance(memref_type.layout, NoneAttr)):
        return None
    element = memref_type.element_type
    if not isinstance(element, FixedBitwidthType) or element.bitwidth % 8:
        return None
    size = element.size
    position = op.index if isinstance(op, LanePrefetchOp) else op.indices[0]
    base, position = cast_to_llvm((op.memref, position), rewriter)
    scale = llvm.ConstantOp(IntegerAttr(size, i64), i64)
    offset = llvm.MulOp(position, scale.result)
    address = llvm.GEPOp.from_mixed_indices(base, (offset.res,), i8)
    return [scale, offset, address], address.result, size


@dataclass
class ConvertMemRefLoad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /):
        if (found := _element_address(op, rewriter)) is None:
            return
        ops, address, size = found
        rewriter.insert(ops)
        rewriter.replace(op, llvm.LoadOp(address, op.res.type, alignment=size))


@dataclass
class ConvertMemRefStore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /):
        if (found := _element_address(op, rewriter)) is None:
            return
        ops, address, size = found
        rewriter.insert(ops)
        rewriter.replace(op, llvm.StoreOp(op.value, address, alignment=size))


@dataclass
class ConvertLanePrefetch(RewritePattern):
    """`teir_lane.prefetch` -> the element's address and `llvm.prefetch`'s call."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LanePrefetchOp, rewriter: PatternRewriter, /):
        if (found := _element_address(op, rewriter)) is None:
            return
        ops, address, size = found
        bytes_ahead = llvm.ConstantOp(IntegerAttr(op.ahead.value.data * size, i64), i64)
        ahead = llvm.GEPOp.from_mixed_indices(address, (bytes_ahead.result,), i8)
        flags = [llvm.ConstantOp(IntegerAttr(value, i32), i32) for value in prefetch_arguments(op)]
        rewriter.insert([*ops, bytes_ahead, ahead, *flags])
        rewriter.replace(op, llvm.CallIntrinsicOp(
            PREFETCH_INTRINSIC, [ahead.result, *(flag.result for flag in flags)], []))


@dataclass(frozen=True)
class ConvertMemRefAccessToLLVMPass(ModulePass):
    """Scalar `memref.load`/`memref.store` and `teir_lane.prefetch` on 1-D memrefs ->
    llvm (see the module doc)."""

    name = "teir-convert-memref-access-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [ConvertMemRefLoad(), ConvertMemRefStore(), ConvertLanePrefetch()],
                     dce=False)
