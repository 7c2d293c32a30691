"""When a schedule transformation keeps results exactly.

Inputs are only read and `out` is read only where it is written (a
Contraction accumulates, an in-place ReLU rewrites), so a transformation is
exact when every out byte sees the same primitive calls in the same order.
Moving loops changes the order in which whole loop bodies run; that is
harmless between bodies that write disjoint out bytes, and must keep the
relative order of bodies that write the same bytes (the reduction loops).
These helpers decide it from strides (`teir_dialect.strided`).
"""

from __future__ import annotations

from collections.abc import Sequence

from teir_dialect.analysis import guard_terms
from teir_dialect.dialect import AxisOp, InvokeOp, IterOp, PrimitiveOp, ScheduleNode
from teir_dialect.strided import (
    Box,
    Undecided,
    disjoint_windows,
    index_range,
    tuples_overlap,
)
from teir_dialect.vocabulary import OperationKind, Role


def _inside(node: IterOp, top: ScheduleNode) -> bool:
    """Whether `node` is `top` or below it."""
    current: object = node
    while isinstance(current, IterOp):
        if current is top:
            return True
        current = current.parent_op()
    return False


def body_boxes(body: Sequence[ScheduleNode]) -> list[Box]:
    """The out bytes each invocation in `body` writes over its loops, relative to the
    tile address at the body's entry (guards inside pin their axes; the others
    are taken as always true, which can only add bytes)."""
    boxes: list[Box] = []
    for top in body:
        ops = [top, *top.body.walk()] if isinstance(top, IterOp) else [top]
        for op in ops:
            if not isinstance(op, InvokeOp):
                continue
            prim = op.primitive_op()
            path = [a for a in op.ancestors() if _inside(a, top)]
            pins = guard_terms(op)
            base, axes = 0, []
            for node in path:
                axis = node.axis_op()
                span = index_range(axis.size, pins.get(axis.axis_id, ()))
                if span is None:
                    break  # never runs
                base += axis.offset_on("out") + axis.stride_on("out") * span[0]
                if span[0] != span[1]:
                    axes.append((axis.size, axis.stride_on("out")))
            else:
                for axis in prim.all_role_axes:
                    base += axis.offset_on("out")
                    axes.append((axis.size, axis.stride_on("out")))
                boxes.append(Box(base, tuple(axes), prim.element_width))
    return boxes


def reorder_problem(chain: Sequence[IterOp], order: Sequence[str]) -> str | None:
    """Why running the loops of `chain` (outermost first, each the only child of the
    one above) in `order` (axis ids) could change a result, or None when it cannot.

    Exact when bodies at index tuples that differ in a loop moving out (stride
    != 0 on out) write disjoint bytes (`tuples_overlap`, exact), so that they
    commute, and the loops that do not move out (reduction loops: every index
    writes the same bytes) keep their relative order.
    """
    axes = [node.axis_op() for node in chain]
    moving = [(a.size, a.stride_on("out")) for a in axes if a.stride_on("out")]
    try:
        overlap = tuples_overlap(body_boxes(chain[-1].children), moving)
    except Undecided as undecided:
        return (
            "proving that its loops write disjoint out bytes would take "
            f"{undecided.combinations} steps"
        )
    if overlap:
        return (
            "bodies at different indices of its loops that move out write common out "
            "bytes, so they would run in another order"
        )
    reductions = [a.axis_id for a in axes if not a.stride_on("out") and a.size > 1]
    if [a for a in order if a in reductions] != reductions:
        return (
            f"it changes the order of the reduction loops {', '.join(reductions)} "
            "(stride 0 on out), and with it the order of the sums"
        )
    return None


def role_split_problem(prim: PrimitiveOp, axis: AxisOp) -> str | None:
    """Why moving the outer part of role axis `axis` out of `prim`'s loop nest (into an
    iteration around its invocations) could change a result, or None.

    The primitive's loop nest runs M..., N..., K... (outermost first). With the
    free axes taking distinct index tuples to distinct out elements, each
    element's contributions come from its own tuple: an M/N axis may then move
    outside, and a K axis may when every K axis before it has extent 1 (its
    part of the sum then still comes first). A primitive that writes an
    element several times keeps its order only when the axis is its outermost.
    """
    loop_order = list(prim.all_role_axes)
    free = [a for a in loop_order if a not in prim.role_axes(Role.K)]
    injective = disjoint_windows(
        [(a.size, a.stride_on("out")) for a in free], prim.element_width
    )
    outermost = all(a.size == 1 for a in loop_order[: loop_order.index(axis)])
    if not injective and not outermost:
        return (
            f"primitive '{prim.primitive_id}' writes some out elements more than once "
            f"and '{axis.axis_id}' is not its outermost role axis"
        )
    if prim.kind is OperationKind.CONTRACTION and axis in prim.role_axes(Role.K):
        before = prim.role_axes(Role.K)[: prim.role_axes(Role.K).index(axis)]
        if any(a.size > 1 for a in before):
            return (
                f"'{axis.axis_id}' is not the outermost K axis of '{prim.primitive_id}' "
                "(K axes before it have extent > 1), so the order of its sum would change"
            )
    return None
