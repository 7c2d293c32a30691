"""`teir-lift-brgemm`: a K loop around a GEMM-shaped Contraction becomes one BRGEMM.

§10.7.6 iterates t around `gemm_squ` (M=[s], N=[q], K=[u]); §10.7.7 invokes
`brgemm_sqtu` (K=[t, u]) instead. The rewrite applies to a sequential,
unguarded iteration node over axis k whose only child is an unguarded
invocation of a Contraction with one M, one N and one K axis, when k has
stride 0 on `out` (k is a reduction axis) and the primitive does not already
use k. The invocation of the new primitive (K = [k, K[0]], k as the
batch-reduce axis) takes the node's place.

Results are bit-identical: each output element receives the same products
in the same order (k outer, the GEMM's K inner), and every axis still adds
its offsets to the addresses. That needs each element's products to come from
one (M, N) tuple of the GEMM (`legality.k_fold_problem`): with an M axis of
stride 0 on out, say, k would move inside the M loop and reorder the sum.
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

from teir_dialect.dialect import InvokeOp, IterOp, id_text
from teir_passes.legality import k_fold_problem
from teir_passes.primitives import PrimitiveTables


class LiftBrgemm(RewritePattern):
    """iter k { invoke gemm } -> invoke brgemm(K = [k, ...])."""

    def __init__(self) -> None:
        self.primitives = PrimitiveTables()

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IterOp, rewriter: PatternRewriter) -> None:
        if op.parallel or op.guard is not None:
            return
        child = op.only_child
        if not isinstance(child, InvokeOp) or child.guard is not None:
            return
        gemm = child.primitive_op()
        if gemm.kind != "Contraction" or [
            len(gemm.role_ids(role)) for role in ("M", "N", "K")
        ] != [1, 1, 1] or k_fold_problem(gemm):
            return
        axis = op.axis_op()
        if axis.stride_on("out") != 0:
            return
        if any(id_text(a) == axis.axis_id for a in gemm.role_ids("K")):
            return
        table = self.primitives[op.config]
        brgemm = table.with_roles(gemm, {"K": [op.axis]}, "brgemm")
        invoke = InvokeOp(0, 0)
        invoke.properties["id"] = child.id
        invoke.properties["primitive"] = brgemm.id
        rewriter.replace(op, invoke, [])
        table.count(gemm.primitive_id, brgemm.primitive_id)
        table.erase_unused([gemm])


@dataclass(frozen=True)
class LiftBrgemmPass(ModulePass):
    """Absorbs reduction loops around GEMM-shaped Contractions into BRGEMM primitives."""

    name = "teir-lift-brgemm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(LiftBrgemm(), apply_recursively=False).rewrite_module(op)
