"""`teir-convert-vector-to-llvm`: the vector ops of the microkernels, in llvm.

`vector.load`/`vector.store` go through xDSL's `convert-vector-to-ptr`; this
pass covers the rest the microkernels use: `vector.broadcast` of a scalar
(insertelement into lane 0, then a shufflevector with an all-zero mask, the
form LLVM turns into one `vbroadcastss`) and `vector.fma` (`llvm.intr.fma`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, VectorType, i32, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


@dataclass
class ConvertBroadcast(RewritePattern):
    """Scalar -> 1-D vector broadcast as insertelement + zero-mask shufflevector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter, /):
        result = op.vector.type
        if isinstance(op.source.type, VectorType) or result.get_num_dims() != 1:
            return  # only scalar sources; others are reported as leftovers
        lanes = result.get_shape()[0]
        undef = llvm.UndefOp(result)
        zero = llvm.ConstantOp(IntegerAttr(0, i64), i64)
        first = llvm.InsertElementOp(undef.res, op.source, zero.result)
        splat = llvm.ShuffleVectorOp(
            first.res, undef.res, DenseArrayBase.from_list(i32, [0] * lanes), result
        )
        rewriter.replace(op, (undef, zero, first, splat), splat.results)


@dataclass
class ConvertFMA(RewritePattern):
    """vector.fma -> llvm.intr.fma (fused: one rounding)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.FMAOp(op.lhs, op.rhs, op.acc))


@dataclass(frozen=True)
class ConvertVectorToLLVMPass(ModulePass):
    """Lowers vector.broadcast and vector.fma to the llvm dialect."""

    name = "teir-convert-vector-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ConvertBroadcast(), ConvertFMA()]),
            apply_recursively=False,
        ).rewrite_module(op)
