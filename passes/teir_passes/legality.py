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


MAX_WRITERS = 64
"""Most distinct (path, primitive, guard) writers `sink_problem` compares pairwise."""


def sink_problem(top: IterOp) -> str | None:
    """Why moving loops of `top`'s subtree past each other (lifting some of them into
    the primitives below, so that they run inside all the others) could change a
    result, or None when no order of those loops can.

    Exact when bodies at different index tuples of the moving loops (stride != 0
    on out, extent > 1) write disjoint out bytes: each out byte then sees the
    writes of one tuple only, whose order the reduction loops and the sibling
    order decide, and lifting keeps both. Checked per pair of invocations over
    the moving loops above both (`tuples_overlap`, exact), their other loops and
    role axes spanning the bytes they may write.
    """
    writers: dict[tuple, tuple[list[IterOp], InvokeOp]] = {}
    for op in top.body.walk():
        if isinstance(op, InvokeOp):
            path = op.ancestors()
            path = path[path.index(top):]
            key = (tuple(id(node) for node in path), op.primitive_op().primitive_id,
                   str(op.guard))
            writers.setdefault(key, (path, op))
    if len(writers) > MAX_WRITERS:
        return f"it would have to compare more than {MAX_WRITERS} distinct writers"
    entries = list(writers.values())
    for index, (path_x, x) in enumerate(entries):
        for path_y, y in entries[index:]:
            common = [node for node in path_x if node in path_y
                      and node.axis_op().stride_on("out") and node.axis_op().size > 1]
            if not common:
                continue
            boxes = [_box(path_x, x, common), _box(path_y, y, common)]
            loops = [(n.axis_op().size, n.axis_op().stride_on("out")) for n in common]
            try:
                overlap = tuples_overlap([b for b in boxes if b is not None], loops)
            except Undecided as undecided:
                return (
                    "proving that its loops write disjoint out bytes would take "
                    f"{undecided.combinations} steps"
                )
            if overlap:
                return (
                    f"'{x.node_id}' and '{y.node_id}' write common out bytes at different "
                    f"indices of the loops {', '.join(n.node_id for n in common)}, so "
                    "moving those loops would change which write comes last"
                )
    return None


def _box(path: Sequence[IterOp], op: InvokeOp, pinned: Sequence[IterOp]) -> Box | None:
    """The out bytes `op` writes below `path[0]`'s entry with the loops `pinned` at
    index 0 (their offsets only), or None when its guards never let it run."""
    terms = guard_terms(op)
    base, axes = 0, []
    for node in path:
        axis = node.axis_op()
        base += axis.offset_on("out")
        if node in pinned:
            continue
        span = index_range(axis.size, terms.get(axis.axis_id, ()))
        if span is None:
            return None
        base += axis.stride_on("out") * span[0]
        if span[0] != span[1]:
            axes.append((span[1] - span[0] + 1, axis.stride_on("out")))
    prim = op.primitive_op()
    for axis in prim.all_role_axes:
        base += axis.offset_on("out")
        axes.append((axis.size, axis.stride_on("out")))
    return Box(base, tuple(axes), prim.element_width)


def k_move_problem(prim: PrimitiveOp) -> str | None:
    """Why a reduction loop may not move between `prim` (a Contraction) and the
    schedule, or None: in FP16/BF16 a K loop of the schedule rounds the partial
    sum at every store, a K axis of the primitive only once (records.md
    semantics), so the move would change results."""
    if prim.kind is OperationKind.CONTRACTION and prim.data_type.rounds_stores:
        return (
            f"primitive '{prim.primitive_id}' is {prim.data_type}: a reduction loop of the "
            "schedule rounds at every store and one of the primitive only once, so moving "
            "it would change the results"
        )
    return None


def writes_each_element_once(prim: PrimitiveOp) -> bool:
    """Whether distinct index tuples of `prim`'s M and N axes write disjoint out
    bytes, each over all of its K indices (a K axis may move on out too): then
    every out element is written from one (M, N) tuple only. Exact
    (`tuples_overlap`); a search past its budget counts as a no."""
    free = [a for a in prim.all_role_axes if a not in prim.role_axes(Role.K)]
    if all(a.stride_on("out") == 0 for a in prim.role_axes(Role.K)) and disjoint_windows(
        [(a.size, a.stride_on("out")) for a in free], prim.element_width
    ):
        return True  # the usual layouts, decided without a search
    if any(a.size > 1 and a.stride_on("out") == 0 for a in free):
        return False  # its indices all write the same bytes
    body = Box(0, tuple((a.size, a.stride_on("out")) for a in prim.role_axes(Role.K)),
               prim.element_width)
    try:
        return not tuples_overlap([body], [(a.size, a.stride_on("out")) for a in free])
    except Undecided:
        return False


def k_fold_problem(prim: PrimitiveOp) -> str | None:
    """Why a reduction loop around `prim` (a Contraction) may not become its
    outermost K axis, or None.

    The primitive runs M..., N..., K... (outermost first), so the loop would run
    inside its M and N loops: exact when each out element gets its products from
    one (M, N) tuple only, whose sum then keeps the loop outside the old K axes.
    """
    if (problem := k_move_problem(prim)) is not None:
        return problem
    if not writes_each_element_once(prim):
        return (
            f"primitive '{prim.primitive_id}' writes some out elements from several M/N "
            "index tuples, so a reduction loop moved inside them would reorder their sums"
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
    injective = writes_each_element_once(prim)
    outermost = all(a.size == 1 for a in loop_order[: loop_order.index(axis)])
    if not injective and not outermost:
        return (
            f"primitive '{prim.primitive_id}' writes some out elements more than once "
            f"and '{axis.axis_id}' is not its outermost role axis"
        )
    if prim.kind is OperationKind.CONTRACTION and axis in prim.role_axes(Role.K):
        if (problem := k_move_problem(prim)) is not None:
            return problem
        before = prim.role_axes(Role.K)[: prim.role_axes(Role.K).index(axis)]
        if any(a.size > 1 for a in before):
            return (
                f"'{axis.axis_id}' is not the outermost K axis of '{prim.primitive_id}' "
                "(K axes before it have extent > 1), so the order of its sum would change"
            )
    return None
