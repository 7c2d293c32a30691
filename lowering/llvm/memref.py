"""
The microkernels' scratch buffers for packed panels, in the llvm dialect.

`teir-convert-alloca-to-llvm`: `memref.alloca` of a static shape becomes an
`llvm.alloca`; `teir-hoist-allocas` moves every `llvm.alloca` of a constant size
to its function's entry block. The microkernels allocate where they pack, inside
the loop nest, and each buffer is dead between two kernel calls; an alloca left in
a loop body would grow the stack on every iteration, while one in the entry block
is a fixed slot of the frame. After teir-outline-parallel each thread runs its
chunk function on its own stack, so the buffers are per thread.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnrealizedConversionCastOp, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

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
