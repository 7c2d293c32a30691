"""`teir-fence-nontemporal-stores`: one sfence before a function with streaming stores returns.

Non-temporal stores are weakly ordered: another thread (the one that joins a
parallel region, or Python after the call) may see them late unless an sfence
drains them. The store's own thread always sees them in order, so one fence
at each return of a function that streams (the kernel, or a parallel chunk
before libgomp's barrier) is enough; a fence after every tile cost the 64^4
permutation 15-20%. Runs on the llvm dialect, after the stores are lowered.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

SFENCE = "llvm.x86.sse.sfence"


def streams(function: llvm.FuncOp) -> bool:
    return any(
        isinstance(op, llvm.StoreOp) and op.nontemporal is not None for op in function.walk()
    )


@dataclass(frozen=True)
class FenceNontemporalStoresPass(ModulePass):
    """Inserts an sfence before every return of each llvm.func that has nontemporal stores."""

    name = "teir-fence-nontemporal-stores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, llvm.FuncOp) or not streams(function):
                continue
            for ret in [o for o in function.walk() if isinstance(o, llvm.ReturnOp)]:
                Rewriter.insert_op(llvm.CallIntrinsicOp(SFENCE, [], []), InsertPoint.before(ret))
