"""`teir-drop-unit-iterations`: iteration nodes over extent-1 axes go away.

An axis of extent 1 takes only index 0, so its iteration node runs its
children once; the node can be replaced by its children when the axis adds
nothing to any address (all its offsets are 0: `offset + stride * 0`).
Its guard moves onto each child (conjoined with the child's own), and guard
terms naming the axis below it (`first(x)`/`last(x)` of an extent-1 axis are
always true) are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_dialect.dialect import GuardAttr, IterOp, ScheduleNode


def without_terms(guard: GuardAttr | None, axis_id: str) -> GuardAttr | None:
    """The guard minus terms on `axis_id` (None when nothing is left)."""
    if guard is None:
        return None
    terms = [t for t in guard.terms if t.axis_text != axis_id]
    return GuardAttr(terms) if terms else None


def conjoin(first: GuardAttr | None, second: GuardAttr | None) -> GuardAttr | None:
    if first is None:
        return second
    if second is None:
        return first
    return GuardAttr([*first.terms, *second.terms])


def set_guard(node: ScheduleNode, guard: GuardAttr | None) -> None:
    if guard is None:
        node.properties.pop("guard", None)
    else:
        node.properties["guard"] = guard


class DropUnitIteration(RewritePattern):
    """Splices the children of an iteration node over an extent-1 axis into its place."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IterOp, rewriter: PatternRewriter) -> None:
        axis = op.axis_op()
        if axis.size != 1 or any(axis.offset_values):
            return
        for descendant in op.body.walk():
            if isinstance(descendant, ScheduleNode):
                set_guard(descendant, without_terms(descendant.guard, axis.axis_id))
        children = op.children
        for child in children:
            set_guard(child, conjoin(op.guard, child.guard))
            child.detach()
        rewriter.replace(op, children, [])


@dataclass(frozen=True)
class DropUnitIterationsPass(ModulePass):
    """Removes iteration nodes whose axis has extent 1 and no offsets."""

    name = "teir-drop-unit-iterations"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(DropUnitIteration()).rewrite_module(op)
