"""`teir-split{axis=ID factor=N inner=ID2}`: one axis becomes an outer and an inner one.

Axis `a` of extent n (strides S, offsets O) becomes the outer axis `a` (extent
n // N, strides S * N, offsets O) and the inner axis `inner` (extent N,
strides S, no offsets), so that index i = N * outer + inner addresses exactly
what it did. When N does not divide n, the last n mod N indices become a
remainder axis `a_rem` (strides S, offsets O + S * N * (n // N)), iterated by a
sibling branch after the main one (the spec's "sibling branches partition
remainder tiles").

Where `a` is iterated, the node keeps its id and axis and gets one child, a
node over `inner` holding its former children; the remainder branch is a copy
of the subtree (ids suffixed `_rem`) under a node over `a_rem`. Guards follow
the indices: `first(a)` becomes `first(a), first(inner)` in the main branch
and never holds in the remainder; `last(a)` becomes `last(a_rem)` there (or
`last(a), last(inner)` when N divides n) and never holds in the main branch;
nodes whose guard can no longer hold are dropped.

Where `a` is a role axis of a primitive, the primitive takes `inner` in its
place and each invocation is wrapped in a new iteration node over `a` (the
outer part leaves the tile: how a GEMM gets its register and cache tiles),
followed by an invocation of a remainder primitive over `a_rem`. That moves
`a`'s outer loop outside the primitive's loop nest, which is exact only when
no out element sees its contributions in another order (`role_split_problem`);
otherwise the pass refuses.

Every index runs the same calls in the same order as before, so results are
bit-identical.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from teir_dialect.dialect import (
    AxisOp,
    ConfigOp,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    fresh_id,
    id_text,
    make_id,
)
from teir_dialect.strided import Box, Undecided, box_pair_overlap, parallel_overlap
from teir_dialect.vocabulary import GuardKind, Policy
from teir_passes.legality import role_split_problem
from teir_passes.schedule_edit import (
    Taken,
    TransformError,
    add_axis,
    check_still_valid,
    clone_subtree,
    configs_with_axis,
    iterations_over,
    primitives_using,
    refresh_kernels,
    replace_role_axis,
    rewrite_terms,
    taken_ids,
)

NAME = "teir-split"


@dataclass(frozen=True)
class SplitResult:
    """The ids a split created (for scripts that refer to them next)."""

    inner: str
    remainder: str | None


def split_axis(config: ConfigOp, axis_id: str, factor: int, inner: str | None = None,
               pass_name: str = NAME) -> SplitResult:
    """Splits `axis_id` of `config` by `factor` (see the module docstring)."""
    axis = config.axis(axis_id)
    extent = axis.size
    if factor <= 0:
        raise TransformError(pass_name, f"factor must be a positive integer, got {factor}")
    if factor > extent:
        raise TransformError(
            pass_name, f"factor {factor} exceeds the extent {extent} of axis '{axis_id}'"
        )
    loops = iterations_over(config, axis_id)
    prims = primitives_using(config, axis_id)
    if not loops and not prims:
        raise TransformError(
            pass_name, f"axis '{axis_id}' is neither iterated nor used by a primitive"
        )
    taken = taken_ids(config)
    if inner is not None:
        if inner in taken.axes:
            raise TransformError(pass_name, f"inner axis id '{inner}' is already an axis")
        taken.axes.add(inner)
    else:
        inner = fresh_id(f"{axis_id}_in", taken.axes)
    for prim in prims:
        if (problem := role_split_problem(prim, axis)) is not None:
            raise TransformError(pass_name, f"cannot split axis '{axis_id}': {problem}")
    outer_extent, rest = divmod(extent, factor)
    remainder = fresh_id(f"{axis_id}_rem", taken.axes) if rest else None

    strides, offsets = axis.stride_values, axis.offset_values
    inner_axis = add_axis(config, axis, inner, factor, strides, [0] * len(strides))
    if remainder is not None:
        tail = [o + s * factor * outer_extent for s, o in zip(strides, offsets)]
        add_axis(config, inner_axis, remainder, rest, strides, tail)
    _resize(axis, outer_extent, [s * factor for s in strides])

    for loop in loops:
        _split_loop(loop, axis_id, inner, remainder, taken)
    if prims:
        _split_roles(config, prims, axis, inner, remainder, factor, taken)
    refresh_kernels(config)
    check_still_valid(config, pass_name, f"splitting axis '{axis_id}'")
    return SplitResult(inner, remainder)


def _resize(axis: AxisOp, extent: int, strides: list[int]) -> None:
    axis.properties["extent"] = IntegerAttr(extent, i64)
    axis.properties["strides"] = DenseArrayBase.from_list(i64, strides)


def _split_loop(loop: IterOp, axis_id: str, inner: str, remainder: str | None,
                taken: Taken) -> None:
    children = loop.children
    first_, last_ = GuardKind.FIRST, GuardKind.LAST
    if remainder is not None:
        copies = [clone_subtree(c, lambda i: fresh_id(f"{i}_rem", taken.nodes))
                  for c in children]
        tail = IterOp(fresh_id(remainder, taken.nodes), remainder, copies,
                      policy=loop.policy.data, guard=loop.guard)
        loop.parent_block().insert_op_after(tail, loop)  # pyright: ignore[reportOptionalMemberAccess]

        def in_tail(term: GuardTermAttr) -> list[GuardTermAttr] | None:
            if term.axis_text != axis_id:
                return [term]
            return None if term.kind.data == first_ else [GuardTermAttr(last_, make_id(remainder))]

        for copy in tail.children:
            rewrite_terms(copy, in_tail)
    for child in children:
        child.detach()
    body = IterOp(fresh_id(inner, taken.nodes), inner, children, policy=loop.policy.data)
    loop.body.block.add_op(body)

    def in_main(term: GuardTermAttr) -> list[GuardTermAttr] | None:
        if term.axis_text != axis_id:
            return [term]
        if term.kind.data == last_ and remainder is not None:
            return None
        return [term, GuardTermAttr(term.kind.data, make_id(inner))]

    for child in body.children:
        rewrite_terms(child, in_main)


def _split_roles(config: ConfigOp, prims: list[PrimitiveOp], axis: AxisOp, inner: str,
                 remainder: str | None, factor: int, taken: Taken) -> None:
    """Every primitive using `axis` takes `inner` in its place; its invocations are
    wrapped in loops over `axis` (the outer part), with remainder invocations after."""
    axis_id = axis.axis_id
    tails: dict[str, PrimitiveOp] = {}
    for prim in prims:
        if remainder is not None:
            tails[prim.primitive_id] = replace_role_axis(
                prim, axis_id, StringAttr(remainder),
                fresh_id(f"{prim.primitive_id}_rem", taken.primitives),
            )
        prim.properties["roles"] = builtin.DictionaryAttr({
            role: builtin.ArrayAttr(
                [StringAttr(inner) if id_text(a) == axis_id else a for a in ids.data]  # pyright: ignore
            )
            for role, ids in prim.roles.data.items()
        })
    users = {prim.primitive_id for prim in prims}
    for group in _sibling_groups(config, users):
        if len(group) > 1 and not _group_is_exact(group, axis, tails):
            groups = [[invoke] for invoke in group]
        else:
            groups = [group]
        for members in groups:
            wrapper = IterOp(fresh_id(axis_id, taken.nodes), 0, [], policy=Policy.SEQUENTIAL)
            wrapper.properties["axis"] = axis.id
            block = members[0].parent_block()
            assert block is not None
            block.insert_op_before(wrapper, members[0])
            anchor: Operation = wrapper
            for invoke in members:
                invoke.detach()
                wrapper.body.block.add_op(invoke)
            for invoke in members:
                if (tail_prim := tails.get(invoke.primitive_id)) is not None:
                    tail = InvokeOp(fresh_id(f"{invoke.node_id}_rem", taken.nodes), 0,
                                    guard=invoke.guard)
                    tail.properties["primitive"] = tail_prim.id
                    block.insert_op_after(tail, anchor)
                    anchor = tail


def _sibling_groups(config: ConfigOp, users: set[str]) -> list[list[InvokeOp]]:
    """Runs of adjacent sibling invocations of the primitives in `users`."""
    groups: list[list[InvokeOp]] = []
    for node in config.schedule.walk_nodes():
        if not isinstance(node, InvokeOp) or node.primitive_id not in users:
            continue
        previous = node.prev_op
        if groups and previous is groups[-1][-1]:
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


def _group_is_exact(group: list[InvokeOp], axis: AxisOp,
                    tails: dict[str, PrimitiveOp]) -> bool:
    """Whether one loop over the outer part may hold the whole group: no out byte is
    written at two different outer indices, nor by a remainder invocation (after
    the loop) and the loop, so each byte still sees the group's calls in their
    order."""
    stride = axis.stride_on("out")

    def box(prim: PrimitiveOp, at: int | None = None) -> Box:
        # a call in the loop writes at the outer axis's offset too (its inner axis
        # starts at 0); a remainder's axis holds the whole offset already
        base = sum(a.offset_on("out") for a in prim.all_role_axes) - (at or 0) * stride
        if at is None:
            base += axis.offset_on("out")
        axes = tuple((a.size, a.stride_on("out")) for a in prim.all_role_axes)
        return Box(base, axes, prim.element_width, at)

    boxes = [box(invoke.primitive_op()) for invoke in group]
    rest = [box(tail, axis.size) for invoke in group
            if (tail := tails.get(invoke.primitive_id)) is not None]
    try:
        return parallel_overlap(boxes, axis.size, stride) is None and not any(
            box_pair_overlap(x, y, axis.size + 1, stride) for x in boxes for y in rest)
    except Undecided:
        return False


@dataclass(frozen=True)
class SplitPass(ModulePass):
    """Splits an axis into outer and inner axes, with a remainder branch when needed."""

    name = NAME

    axis: str | int
    factor: int
    inner: str | None = None

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.axis), self.name):
            split_axis(config, str(self.axis), self.factor, self.inner)
