"""
Lowers the `cf` dialect to `llvm` branches.

`cf.br` and `cf.cond_br` map one to one (block arguments become the phis of the LLVM
translation). The successors' arguments are retyped like values everywhere else
(`index` -> `i64`), so the pass also works when run before the func conversion.

xDSL's LLVM dialect has no `switch`, so `cf.switch` becomes a chain of compares and
conditional branches, one per case. `cf.assert` branches to a block that traps; its
message is dropped, as LLVM has nowhere to keep it without a runtime to print it.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from teir_lowering.llvm.common import (
    cast_to_llvm,
    convert_block_arguments,
)
from teir_lowering.llvm.rewriting import rewrite_once


def _branch_operands(
    dest: Block, operands: tuple[SSAValue, ...], rewriter: PatternRewriter
) -> list[SSAValue]:
    """Retypes the arguments of `dest` and returns `operands` cast to match them."""
    convert_block_arguments(dest, rewriter)
    return cast_to_llvm(operands, rewriter)


@dataclass
class ConvertBranchOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        args = _branch_operands(op.successor, tuple(op.arguments), rewriter)
        rewriter.replace(op, llvm.BrOp(op.successor, *args))


@dataclass
class ConvertConditionalBranchOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter, /
    ):
        then_args = _branch_operands(op.then_block, tuple(op.then_arguments), rewriter)
        else_args = _branch_operands(op.else_block, tuple(op.else_arguments), rewriter)
        rewriter.replace(
            op,
            llvm.CondBrOp(op.cond, op.then_block, then_args, op.else_block, else_args),
        )


@dataclass
class ConvertSwitchOp(RewritePattern):
    """
    `cf.switch` -> one `llvm.icmp eq` + `llvm.cond_br` per case, in case order, the
    last one falling through to the default destination.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.SwitchOp, rewriter: PatternRewriter, /):
        default_args = _branch_operands(
            op.default_block, tuple(op.default_operands), rewriter
        )
        case_values = op.case_values.get_values() if op.case_values else ()
        if not case_values:
            rewriter.replace(op, llvm.BrOp(op.default_block, *default_args))
            return

        case_args = [
            _branch_operands(dest, tuple(operands), rewriter)
            for dest, operands in zip(op.case_blocks, op.case_operand, strict=True)
        ]
        (flag,) = cast_to_llvm((op.flag,), rewriter)
        block = op.parent_block()
        region = block.parent if block is not None else None
        assert block is not None and region is not None

        insert_block = block
        last = len(case_values) - 1
        for i, (value, dest, args) in enumerate(
            zip(case_values, op.case_blocks, case_args, strict=True)
        ):
            if i == last:
                else_block, else_args = op.default_block, default_args
            else:
                else_block, else_args = Block(), []
                region.insert_block_after(else_block, insert_block)
            constant = llvm.ConstantOp(IntegerAttr(value, flag.type), flag.type)
            compare = llvm.ICmpOp(
                flag,
                constant.result,
                IntegerAttr(llvm.ICmpPredicateFlag.EQ.to_int(), i64),
            )
            branch = llvm.CondBrOp(compare, dest, args, else_block, else_args)
            new_ops: tuple[Operation, ...] = (constant, compare, branch)
            if insert_block is block:
                rewriter.insert(new_ops)
            else:
                rewriter.insert(new_ops, InsertPoint.at_end(insert_block))
            insert_block = else_block
        rewriter.erase(op)


@dataclass
class ConvertAssertOp(RewritePattern):
    """`cf.assert` -> `llvm.cond_br` to the rest of the block or to `llvm.trap`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter, /):
        block = op.parent_block()
        next_op = op.next_op
        assert block is not None and block.parent is not None and next_op is not None
        continue_block = block.split_before(next_op)
        failure_block = Block()
        block.parent.insert_block_after(failure_block, block)
        rewriter.insert(
            (llvm.CallIntrinsicOp("llvm.trap", (), ()), llvm.UnreachableOp()),
            InsertPoint.at_end(failure_block),
        )
        rewriter.replace(
            op, llvm.CondBrOp(op.arg, continue_block, (), failure_block, ())
        )


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """Lowers cf branches, switches and asserts to llvm branches."""

    name = "teir-convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(
            op,
            [
                ConvertBranchOp(),
                ConvertConditionalBranchOp(),
                ConvertSwitchOp(),
                ConvertAssertOp(),
            ],
            dce=False,
        )
