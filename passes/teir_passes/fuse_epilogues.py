"""`teir-fuse-epilogues`: record the Zero and ReLU each GEMM/BRGEMM kernel performs.

A Zero of a Contraction's tile just before it and an in-place ReLU of the tile
just after it need not run as passes of their own over out: the kernel can
start its accumulators at 0 and apply relu to each final value before its
store. The pass records that decision on the Contraction's invocation as the
discardable attribute `epilogue`, e.g.

    teir.invoke z -> zero_sq [first(p)]
    teir.iter w over w {
      teir.invoke gemm -> gemm_sq attributes {epilogue = #teir.epilogue<zero = z
          at [first(w)], relu = r at [last(w)]>}
    }
    teir.invoke r -> relu_sq

(the Zero runs in the kernel of w's first iteration, under its own guard
first(p); the ReLU in that of w's last). teir-to-scf reads the attribute: it
emits no code for z and r and hands the conditions to the kernel. Only a
Contraction whose `kernel` attribute (teir-match-gemm) is a GEMM or BRGEMM
gets one, so run teir-match-gemm first.

The attribute only annotates: the schedule keeps every invocation, the
configuration's results are unchanged, and the JSON record does not hold it
(it is a compiler decision, like `kernel`). The pass recomputes the attribute
on every invocation, dropping a stale one, so it is idempotent. The rule is
`InvokeOp.fused_epilogue` in the dialect, where the verifier checks a recorded
attribute against it.
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

from teir_dialect.dialect import EPILOGUE_ATTR, InvokeOp

__all__ = ["FuseEpiloguesPass"]


class RecordEpilogue(RewritePattern):
    """Sets, refreshes or drops the `epilogue` attribute of an invocation."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        epilogue = op.fused_epilogue()
        if op.attributes.get(EPILOGUE_ATTR) == epilogue:
            return
        if epilogue is None:
            del op.attributes[EPILOGUE_ATTR]
        else:
            op.attributes[EPILOGUE_ATTR] = epilogue
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class FuseEpiloguesPass(ModulePass):
    """Records the epilogues of every Contraction invocation (see the module docstring)."""

    name = "teir-fuse-epilogues"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(RecordEpilogue(), apply_recursively=False).rewrite_module(op)
