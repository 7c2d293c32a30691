"""The patterns lowering the `teir_lane` dialect (teir_lowering.lane) from the
arith level to the llvm level."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from teir_lowering.lane import (
    LaneCmpfOp,
    LaneDotBF16PairsOp,
    LaneFCmpOp,
    LaneLLVMSelectOp,
    LaneSelectOp,
)
from teir_lowering.llvm.common import cast_to_llvm, replace_with_llvm

# xDSL's llvmlite translation matches `case llvm.FCmpOp()` / `case llvm.SelectOp()` and
# reads the same fields (predicate, lhs, rhs, cond, res), which build vector
# instructions as well as scalar ones.
llvm.FCmpOp.register(LaneFCmpOp)
llvm.SelectOp.register(LaneLLVMSelectOp)


@dataclass
class ConvertLaneCmpf(RewritePattern):
    """`teir_lane.cmpf` -> `teir_lane.llvm_fcmp`. `false` and `true` are left alone:
    the llvmlite translation has no spelling for them."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LaneCmpfOp, rewriter: PatternRewriter, /):
        if op.predicate_name not in ("false", "true"):
            rewriter.replace(op, LaneFCmpOp(op.lhs, op.rhs, op.predicate_name))


@dataclass
class ConvertLaneSelect(RewritePattern):
    """`teir_lane.select` -> `teir_lane.llvm_select`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LaneSelectOp, rewriter: PatternRewriter, /):
        cond, lhs, rhs = cast_to_llvm(op.operands, rewriter)
        select = LaneLLVMSelectOp(cond, lhs, rhs)
        replace_with_llvm(op, (select,), select.results, rewriter)


@dataclass
class ConvertLaneDotBF16Pairs(RewritePattern):
    """`teir_lane.dot_bf16_pairs` -> the `vdpbf16ps` intrinsic of its width."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LaneDotBF16PairsOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.CallIntrinsicOp(op.intrinsic, op.operands,
                                                  (op.result.type,)))
