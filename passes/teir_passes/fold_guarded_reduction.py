"""`teir-fold-guarded-reduction`: a reduction loop around a Contraction joins its K role.

§10.2.2's guarded reduction iterates k around a Zero guarded by `first(k)`, a
Contraction that does not use k, and a ReLU guarded by `last(k)`. When k has
neither stride nor offset on out (every index accumulates into the same tile,
so the Zero and ReLU tiles do not depend on k either), that is the same as
Zero, then a Contraction with K = [k, K...], then ReLU: per out element the
same operations in the same order (k outermost in the sum, the primitive's
own K axes inside it; the Zero before the first product, the ReLU after the
last). The loop node goes; its guard moves onto the three invocations. The
Zero and ReLU are optional, so a bare reduction loop around a Contraction
folds too (the general form of teir-lift-brgemm). Then the GEMM/BRGEMM
matching and microkernels apply to what was a loop nest.

The primitive must write each out element from one (M, N) tuple
(`legality.k_fold_problem`): k joins K inside the M and N loops. The node
must be sequential, k must not be named by the Contraction's guard,
and the guards of the Zero/ReLU name k only as `first(k)`/`last(k)`. A fold
that would turn a GEMM or BRGEMM into a general loop nest (a third K axis)
is not done: a reduction loop around a microkernel is as exact and faster.
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

from teir_dialect.dialect import (
    GuardTermAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
)
from teir_dialect.vocabulary import GuardKind, OperationKind, Role
from teir_passes.legality import k_fold_problem
from teir_passes.primitives import PrimitiveTables
from teir_passes.schedule_edit import set_terms, terms


def _edge(node: ScheduleNode, operation: OperationKind, kind: GuardKind, axis: str) -> bool:
    """An invocation of `operation` whose guard names `axis` exactly as `kind(axis)`."""
    if not isinstance(node, InvokeOp) or node.primitive_op().kind is not operation:
        return False
    on_axis = [t for t in terms(node) if t.axis_text == axis]
    return [t.kind.data for t in on_axis] == [kind]


def _kernel_rank(prim: PrimitiveOp) -> int:
    """1 for a Contraction the microkernels take (GEMM, BRGEMM), else 0."""
    return int(prim.matched_kernel().is_gemm)


class FoldGuardedReduction(RewritePattern):
    """iter k { zero [first(k)]; contraction; relu [last(k)] } -> zero; contraction(K=[k,...]); relu."""

    def __init__(self) -> None:
        self.primitives = PrimitiveTables()

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IterOp, rewriter: PatternRewriter) -> None:
        if op.parallel:
            return
        axis = op.axis_op()
        if axis.stride_on("out") or axis.offset_on("out"):
            return
        k = op.axis_id
        children = op.children
        zero = children[0] if children and _edge(children[0], OperationKind.ZERO,
                                                 GuardKind.FIRST, k) else None
        relu = children[-1] if len(children) > 1 and _edge(children[-1], OperationKind.RELU,
                                                           GuardKind.LAST, k) else None
        middle = children[1 if zero else 0 : len(children) - (1 if relu else 0)]
        if len(middle) != 1 or not isinstance(middle[0], InvokeOp):
            return
        (contraction,) = middle
        prim = contraction.primitive_op()
        if prim.kind is not OperationKind.CONTRACTION or k_fold_problem(prim):
            return
        if any(t.axis_text == k for t in terms(contraction)):
            return
        if relu is not None and op.config.tensor_count != 3:
            return
        table = self.primitives[op.config]
        known = len(table.taken)
        folded = table.with_roles(prim, {Role.K: [op.axis]})
        if _kernel_rank(folded) < _kernel_rank(prim):
            if len(table.taken) > known:  # made for this fold: unused
                table.erase_unused([folded])
            return
        outer: list[GuardTermAttr] = terms(op)
        for node in (zero, contraction, relu):
            if node is not None:
                set_terms(node, [*outer, *(t for t in terms(node) if t.axis_text != k)])
        table.retarget(contraction, folded)
        for child in children:
            child.detach()
        rewriter.replace(op, [c for c in (zero, contraction, relu) if c is not None], [])
        table.erase_unused([prim])


@dataclass(frozen=True)
class FoldGuardedReductionPass(ModulePass):
    """Folds reduction loops (with first/last-guarded Zero and ReLU) into Contractions."""

    name = "teir-fold-guarded-reduction"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(FoldGuardedReduction()).rewrite_module(op)
