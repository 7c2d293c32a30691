"""`teir-lift-elementwise`: loops around a scalar Zero, Copy or ReLU become a tile primitive.

§10.7.1 copies one element under a, b, c, d; §10.7.2 iterates b, c and
invokes `copy_da` (M = [d], N = [a]), a |d| x |a| tile. This pass looks at
the loops whose whole subtree is one invocation X of a scalar element-wise
primitive and moves into the primitive the ones with unit stride: for Copy
and the unary ReLU the loop with unit stride on in0 (M) and the one with unit
stride on out (N) — a transposing tile when they differ, as in §10.7.2; for
Zero and the in-place ReLU (out only) the unit-stride loop on out (M) and the
loop that continues it contiguously (N). The element-wise counterpart of
teir-lift-gemm; the lowering then emits vector or register-transpose code
for the tile.

Exact when every out element is written once by the loops around X
(mixed-radix check over their out strides): then the order in which the
elements are visited does not matter, and moving loops into the tile only
changes that order. The lifted loops must be sequential and unguarded, and
no guard below them may name their axes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_dialect.dialect import InvokeOp, IterOp
from teir_dialect.strided import disjoint_windows
from teir_dialect.vocabulary import OperationKind, Role
from teir_passes.primitives import PrimitiveTables
from teir_passes.schedule_edit import names_axis

ELEMENTWISE = (OperationKind.ZERO, OperationKind.COPY, OperationKind.RELU)


def exclusive_loops(invoke: InvokeOp) -> list[IterOp]:
    """The iteration nodes above `invoke` whose subtree is `invoke` alone, innermost first."""
    loops: list[IterOp] = []
    node: object = invoke
    parent = invoke.parent_op()
    while isinstance(parent, IterOp) and parent.only_child is node:
        loops.append(parent)
        node, parent = parent, parent.parent_op()
    return loops


class LiftElementwise(RewritePattern):
    """iter ... { invoke scalar_copy } -> iter ... { invoke copy_<M><N> }."""

    def __init__(self) -> None:
        self.primitives = PrimitiveTables()

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        prim = op.primitive_op()
        if prim.kind not in ELEMENTWISE or prim.all_role_axes:
            return
        loops = exclusive_loops(op)
        width = prim.element_width
        axes = [loop.axis_op() for loop in loops]
        if not disjoint_windows([(a.size, a.stride_on("out")) for a in axes], width):
            return
        movable = [
            loop for loop in loops
            if not loop.parallel and loop.guard is None
            and not any(names_axis(child, {loop.axis_id}) for child in loop.children)
        ]

        def unit_on(tensor: str) -> IterOp | None:
            return next((n for n in movable if n.axis_op().stride_on(tensor) == width), None)

        on_out = unit_on("out")
        if prim.kind is OperationKind.ZERO or op.config.tensor_count == 3:
            rows = on_out
            columns = None if on_out is None else next(
                (n for n in movable if n is not on_out and n.axis_op().stride_on("out")
                 == on_out.axis_op().size * width), None)
        else:
            rows = unit_on("in0") or on_out
            columns = on_out if on_out is not rows else None
        if rows is None:
            return
        lifted = [n for n in (rows, columns) if n is not None]
        roles: dict[str, list[Attribute]] = {Role.M: [rows.axis]}
        roles[Role.N] = [columns.axis] if columns is not None else []
        table = self.primitives[op.config]
        tile = table.with_roles(prim, roles)
        table.retarget(op, tile)
        for loop in lifted:
            (child,) = loop.children
            child.detach()
            rewriter.replace(loop, [child], [])
        table.erase_unused([prim])


@dataclass(frozen=True)
class LiftElementwisePass(ModulePass):
    """Turns loops of scalar Zero/Copy/ReLU invocations into tile primitives."""

    name = "teir-lift-elementwise"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(LiftElementwise(), apply_recursively=False).rewrite_module(op)
