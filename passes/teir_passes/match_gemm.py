"""`teir-match-gemm`: record the kernel each Contraction primitive lowers to.

For every `teir.primitive ... Contraction` the pass decides the row of Table
10.6.1 the primitive matches and derives Table 10.6.2's runtime parameters,
then stores the decision as the discardable attribute `kernel`, e.g.

    teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]}
        {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 16,
        n = 8, k = 8, lda = 16, ldb = 16, ldc = 48, br_size = 2,
        br_stride_a = 384, br_stride_b = 8, trans = "NNN">}

The attribute only annotates: nothing else changes, so the configuration's
results are unchanged. The pass recomputes and overwrites the attribute, so it
is idempotent (and a stale `kernel` after another pass is simply replaced).
Other primitives are left alone.

The rule itself (Table 10.6.1, parameters of Table 10.6.2) is
`teir_dialect.gemm.match_contraction`.
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

from teir_dialect.dialect import PrimitiveOp
from teir_dialect.gemm import KERNEL_ATTR
from teir_dialect.vocabulary import OperationKind

__all__ = ["MatchGemmPass"]


class MatchContraction(RewritePattern):
    """Sets (or refreshes) the `kernel` attribute of a Contraction primitive."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrimitiveOp, rewriter: PatternRewriter) -> None:
        if op.kind != OperationKind.CONTRACTION:
            return
        kernel = op.matched_kernel()
        if op.attributes.get(KERNEL_ATTR) == kernel:
            return
        op.attributes[KERNEL_ATTR] = kernel
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class MatchGemmPass(ModulePass):
    """Annotates every Contraction with its kernel (see the module docstring)."""

    name = "teir-match-gemm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(MatchContraction(), apply_recursively=False).rewrite_module(op)
