"""`teir-canonicalize-guards`: guards in canonical form, and hoisted where possible.

Every rewrite keeps the sequence of primitive calls each output byte sees, so
results are bit-identical (§10.2.1 guards, §10.4 addressing):

1. Terms are sorted by their axis's position on the root-to-node path (outer
   first; `first` before `last` on one axis); duplicates go. Conjunction
   commutes, so only the spelling changes.
2. A term on an extent-1 axis is always true and goes; an empty guard is none.
3. `first(x)` with `last(x)` and |x| > 1 never holds: the node never runs and
   is erased, and so is every iteration node this leaves without children.
4. An invocation guarded by `first(k)` that is the first child of the
   (unguarded) iteration node over k, and whose primitive sees neither stride
   nor offset of k on any tensor it touches, runs exactly once, before
   anything else of the loop: it moves just before the loop, without the term.
   `last(k)` on the last child moves just after the loop.
5. An unguarded sequential loop k over a single-child chain of unguarded
   sequential loops ending in N, where N's first child is an invocation that
   rule 4 could hoist out of k (`first(k)`; or N's last child with
   `last(k)`), is sunk to wrap N's children (a loop interchange), after which
   rule 4 applies: §10.7.3 becomes §10.7.4. Legal when the output bytes one
   iteration of the chain writes (over k and everything below N) are
   disjoint across chain iterations (mixed-radix check on the chain's out
   strides); then every output byte sees the same calls in the same order,
   and inputs are never written. Tensors are assumed not to alias (we refuse
   when the same SSA value is passed twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from teir_dialect.analysis import disjoint_windows
from teir_dialect.dialect import (
    AxisOp,
    GuardAttr,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    ScheduleNode,
)
from teir_dialect.vocabulary import GuardKind

KIND_ORDER = {GuardKind.FIRST: 0, GuardKind.LAST: 1}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def terms_of(node: ScheduleNode) -> list[GuardTermAttr]:
    return list(node.guard.terms) if node.guard is not None else []


def set_terms(
    node: ScheduleNode, terms: Sequence[GuardTermAttr], rewriter: PatternRewriter
) -> None:
    """Replaces the guard (removing the property when no term is left)."""
    if terms:
        node.properties["guard"] = GuardAttr(terms)
    else:
        node.properties.pop("guard", None)
    rewriter.notify_op_modified(node)


def kinds_on(node: ScheduleNode, axis_id: str) -> set[str]:
    """The term kinds ("first"/"last") the node's own guard puts on `axis_id`."""
    return {t.kind.data for t in terms_of(node) if t.axis_text == axis_id}


def erase_node(node: ScheduleNode, rewriter: PatternRewriter) -> None:
    """Erases a node and every iteration node left without children above it."""
    parent = node.parent_op()
    rewriter.erase(node)
    while isinstance(parent, IterOp) and parent.first_child is None:
        grand = parent.parent_op()
        rewriter.erase(parent)
        parent = grand


def move_node(node: Operation, point: InsertPoint, rewriter: PatternRewriter) -> None:
    node.detach()
    rewriter.insert(node, point)


def invariant_in(invoke: InvokeOp, axis: AxisOp) -> bool:
    """True when `axis` adds nothing (stride and offset 0) to the primitive's tiles."""
    prim = invoke.config.find_primitive(invoke.primitive_id)
    if prim is None:
        return False
    return all(
        axis.stride_on(t) == 0 and axis.offset_on(t) == 0 for t in prim.accessed_tensors
    )


def hoistable_out_of(invoke: InvokeOp, loop: IterOp, kind: str) -> bool:
    """Whether `invoke`, once a child of `loop`, would be hoisted by rule 4 for `kind`."""
    config = invoke.config
    axis = config.find_axis(loop.axis_id)
    return (
        axis is not None
        and axis.size > 1
        and loop.guard is None
        and not loop.parallel
        and kinds_on(invoke, loop.axis_id) == {kind}
        and invariant_in(invoke, axis)
    )


def end_child(parent: IterOp, kind: str) -> ScheduleNode | None:
    """The first child for `first`, the last child for `last`."""
    return parent.first_child if kind == GuardKind.FIRST else parent.last_child


def out_span(loop: IterOp, below: IterOp) -> int | None:
    """Bytes of out [low, high) one iteration of `below` may touch under `loop`.

    Counts `loop`'s axis and every axis iterated under `below` or used by a
    primitive there (guards ignored: they only shrink it). None if unknown.
    """
    config = loop.config
    axis_k = config.find_axis(loop.axis_id)
    if axis_k is None:
        return None
    low: int | None = None
    high: int | None = None
    for op in below.body.walk():
        if not isinstance(op, InvokeOp):
            continue
        prim = config.find_primitive(op.primitive_id)
        if prim is None:
            return None
        if "out" not in prim.accessed_tensors:
            continue
        axes = [axis_k, *prim.all_role_axes]
        inner = op.ancestors()
        inner = inner[inner.index(below) + 1 :]
        for anc in inner:
            if (axis := config.find_axis(anc.axis_id)) is None:
                return None
            axes.append(axis)
        lo = sum(a.offset_on("out") for a in axes)
        hi = (
            lo + sum(a.stride_on("out") * (a.size - 1) for a in axes) + prim.element_width
        )
        low = lo if low is None else min(low, lo)
        high = hi if high is None else max(high, hi)
    if low is None or high is None:
        return 0
    return high - low


def chain_is_disjoint(chain: Sequence[AxisOp], span: int) -> bool:
    """Distinct index tuples of `chain` address disjoint `span`-byte windows of out
    (the mixed-radix rule, `teir_dialect.analysis.disjoint_windows`)."""
    return disjoint_windows([(axis.size, axis.stride_on("out")) for axis in chain], span)


# --------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------


class SortGuardTerms(RewritePattern):
    """Rule 1: one spelling per guard, so equal guards compare equal."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ScheduleNode) or op.guard is None:
            return
        depth = {anc.axis_id: i for i, anc in enumerate(op.ancestors())}
        unique: list[GuardTermAttr] = []
        for term in op.guard.terms:
            if term not in unique:
                unique.append(term)
        ordered = sorted(
            unique,
            key=lambda t: (depth.get(t.axis_text, len(depth)), KIND_ORDER[t.kind.data]),
        )
        if ordered != list(op.guard.terms):
            set_terms(op, ordered, rewriter)


class DropTrivialTerms(RewritePattern):
    """Rule 2: an extent-1 axis is always at its first and last index."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ScheduleNode) or op.guard is None:
            return
        config = op.config

        def trivial(term: GuardTermAttr) -> bool:
            axis = config.find_axis(term.axis_text)
            return axis is not None and axis.size == 1

        kept = [t for t in op.guard.terms if not trivial(t)]
        if len(kept) != len(op.guard.terms):
            set_terms(op, kept, rewriter)


class EraseUnsatisfiable(RewritePattern):
    """Rule 3: `first(x)` and `last(x)` with |x| > 1 never hold together."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ScheduleNode) or op.guard is None:
            return
        config = op.config
        for term in op.guard.terms:
            axis = config.find_axis(term.axis_text)
            both = kinds_on(op, term.axis_text) == {GuardKind.FIRST, GuardKind.LAST}
            if both and axis is not None and axis.size > 1:
                erase_node(op, rewriter)
                return


class EraseEmptyIteration(RewritePattern):
    """An iteration node without children does nothing (cleanup after rules 3-4)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IterOp, rewriter: PatternRewriter) -> None:
        if op.first_child is None:
            erase_node(op, rewriter)


class HoistGuardedInvocation(RewritePattern):
    """Rule 4: a `first(k)` first child (`last(k)` last child) runs once, at the loop's edge."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        loop = op.parent_op()
        if not isinstance(loop, IterOp) or op.guard is None:
            return
        for kind in GuardKind:
            if end_child(loop, kind) is op and hoistable_out_of(op, loop, kind):
                set_terms(
                    op,
                    [t for t in op.guard.terms if t.axis_text != loop.axis_id],
                    rewriter,
                )
                point = (
                    InsertPoint.before(loop)
                    if kind == GuardKind.FIRST
                    else InsertPoint.after(loop)
                )
                move_node(op, point, rewriter)
                if loop.first_child is None:
                    erase_node(loop, rewriter)
                return


class SinkLoopBelowChain(RewritePattern):
    """Rule 5: interchange loop k below its single-child chain so rule 4 can hoist."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        inner = op.parent_op()
        if not isinstance(inner, IterOp) or op.guard is None:
            return
        config = op.config
        operands = list(config.tensors)
        if len(set(operands)) != len(operands):
            return  # aliased tensors: reordering could change what an input reads
        ancestors = op.ancestors()
        for kind in GuardKind:
            if end_child(inner, kind) is not op:
                continue
            for term in op.guard.terms:
                if term.kind.data != kind:
                    continue
                loop = next((a for a in ancestors if a.axis_id == term.axis_text), None)
                if loop is None or loop is inner or not hoistable_out_of(op, loop, kind):
                    continue
                chain = ancestors[ancestors.index(loop) + 1 :]
                if self.legal(loop, chain):
                    self.interchange(loop, chain, rewriter)
                    return

    @staticmethod
    def legal(loop: IterOp, chain: Sequence[IterOp]) -> bool:
        config = loop.config
        links = [loop, *chain]
        for outer, nested in pairwise(links):
            if outer.only_child is not nested:
                return False
        if any(node.guard is not None or node.parallel for node in chain):
            return False
        axes = [config.find_axis(node.axis_id) for node in chain]
        known = [axis for axis in axes if axis is not None]
        if len(known) != len(chain):
            return False
        span = out_span(loop, chain[-1])
        return span is not None and chain_is_disjoint(known, span)

    @staticmethod
    def interchange(
        loop: IterOp, chain: Sequence[IterOp], rewriter: PatternRewriter
    ) -> None:
        """k{c1{...{N{X}}}} -> c1{...{N{k{X}}}}, keeping every node's id."""
        head, inner = chain[0], chain[-1]
        move_node(head, InsertPoint.before(loop), rewriter)
        for child in inner.children:
            move_node(child, InsertPoint.at_end(loop.body.block), rewriter)
        move_node(loop, InsertPoint.at_end(inner.body.block), rewriter)


@dataclass(frozen=True)
class CanonicalizeGuardsPass(ModulePass):
    """Canonical guards (sorted, no trivial terms, no dead nodes) and hoisted init/finalize."""

    name = "teir-canonicalize-guards"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    EraseUnsatisfiable(),
                    DropTrivialTerms(),
                    SortGuardTerms(),
                    EraseEmptyIteration(),
                    HoistGuardedInvocation(),
                    SinkLoopBelowChain(),
                ]
            )
        ).rewrite_module(op)
