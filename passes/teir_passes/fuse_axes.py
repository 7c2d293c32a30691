"""`teir-fuse-axes{outer=a inner=b}`: two nested loops become one, the inverse of a split.

Legal when the node over `a` has the node over `b` as its only child and, on
every tensor, stride(a) = extent(b) * stride(b): then index i = extent(b) *
index(a) + index(b) of a fused axis with b's strides and the two offsets
added addresses exactly what (a, b) did, in the same order. Used to flatten
contiguous dimensions before choosing tiles. Neither node may have a guard,
and no guard below may name `a` or `b` alone (their first/last are not the
fused axis's). The fused axis is new (`fused`, by default `ab`); `a` and `b`
stay defined while something else uses them. Every such pair of nodes in the
module is fused; the fused node keeps the outer node's id and is parallel
only when both were.

`b` may also be a role axis that no node iterates: every primitive invoked
below the nodes over `a` has `b` among its role axes (not `a`: the verifier's
axis-reuse rule), and no primitive with `b` is invoked elsewhere. The fused axis then takes `b`'s place
in those roles and the nodes over `a` go (their children take their place):
each call covers what the loop's calls did, one after the other (a flat
record's parallel `p` over a BRGEMM's N axis `q` in `trus,pqtu->pqrs`: one
call per r over all of p and q, as the einsum front end builds it). The loops
below `a` then run outside its range, so the bodies at different indices of
`a` must write disjoint out bytes (`legality.sink_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.passes import ModulePass

from teir_dialect.dialect import AxisOp, ConfigOp, InvokeOp, IterOp, fresh_id, id_text
from teir_dialect.vocabulary import Policy, Role
from teir_passes.legality import sink_problem
from teir_passes.schedule_edit import (
    TransformError,
    add_axis,
    check_still_valid,
    configs_with_axis,
    drop_unused_axes,
    iterations_over,
    names_axis,
    primitives_using,
    refresh_epilogues,
    refresh_kernels,
    taken_ids,
)

NAME = "teir-fuse-axes"


def fuse_axes(config: ConfigOp, outer: str, inner: str, fused: str | None = None,
              pass_name: str = NAME) -> str:
    """Fuses every node over `outer` whose only child is a node over `inner`; returns
    the fused axis's id."""
    if config.find_axis(inner) is None:  # (config.axis: the verifier's 'axis rule')
        raise TransformError(pass_name, f"the configuration with axis '{outer}' has no "
                                        f"axis '{inner}'")
    a, b = config.axis(outer), config.axis(inner)
    pairs = [
        (node, child) for node in iterations_over(config, outer)
        if isinstance(child := node.only_child, IterOp) and child.axis_id == inner
    ]
    if not pairs and not iterations_over(config, inner) and primitives_using(config, inner):
        return _absorb(config, outer, inner, fused, pass_name)
    if not pairs:
        raise TransformError(
            pass_name,
            f"no iteration node over '{outer}' has a node over '{inner}' as its only child",
        )
    _check_contiguous(config, a, b, pass_name)
    for top, below in pairs:
        for node in (top, below):
            if node.guard is not None:
                raise TransformError(
                    pass_name, f"iteration node '{node.node_id}' has a guard ({node.guard})"
                )
        if any(names_axis(child, {outer, inner}) for child in below.children):
            raise TransformError(
                pass_name,
                f"a guard below '{below.node_id}' names '{outer}' or '{inner}', which the "
                "fused axis cannot express",
            )
    fused = _fused_axis(config, a, b, fused, pass_name)
    for top, below in pairs:
        policy = Policy.PARALLEL if top.parallel and below.parallel else Policy.SEQUENTIAL
        children = below.children
        for child in children:
            child.detach()
        node = IterOp(0, fused, children, policy=policy)
        node.properties["id"] = top.id
        block = top.parent_block()
        assert block is not None
        block.insert_op_before(node, top)
        top.detach()
        top.erase()
    drop_unused_axes(config)
    check_still_valid(config, pass_name, f"fusing '{outer}' and '{inner}'")
    return fused


def _fused_axis(config: ConfigOp, a: AxisOp, b: AxisOp, fused: str | None,
                pass_name: str) -> str:
    """Adds the axis over (a, b): b's strides, both offsets; returns its id."""
    taken = taken_ids(config)
    if fused is None:
        fused = fresh_id(f"{a.axis_id}{b.axis_id}", taken.axes)
    elif fused in taken.axes:
        raise TransformError(pass_name, f"fused axis id '{fused}' is already an axis")
    add_axis(config, b, fused, a.size * b.size, b.stride_values,
             [x + y for x, y in zip(a.offset_values, b.offset_values)])
    return fused


def _check_contiguous(config: ConfigOp, a: AxisOp, b: AxisOp, pass_name: str) -> None:
    for tensor in config.tensor_names:
        if a.stride_on(tensor) != b.size * b.stride_on(tensor):
            raise TransformError(
                pass_name,
                f"axes '{a.axis_id}' and '{b.axis_id}' are not contiguous on {tensor}: "
                f"stride {a.stride_on(tensor)} of '{a.axis_id}' is not extent {b.size} x "
                f"stride {b.stride_on(tensor)} of '{b.axis_id}'",
            )


def _absorb(config: ConfigOp, outer: str, inner: str, fused: str | None,
            pass_name: str) -> str:
    """The nodes over `outer` into the role axis `inner` of the primitives below them
    (see the module doc)."""
    a, b = config.axis(outer), config.axis(inner)
    nodes = iterations_over(config, outer)
    if not nodes:
        raise TransformError(pass_name, f"no iteration node is over '{outer}'")
    users = {prim.primitive_id for prim in primitives_using(config, inner)}
    below: set[str] = set()
    for node in nodes:
        if node.guard is not None:
            raise TransformError(
                pass_name, f"iteration node '{node.node_id}' has a guard ({node.guard})")
        if any(names_axis(child, {outer, inner}) for child in node.children):
            raise TransformError(
                pass_name, f"a guard below '{node.node_id}' names '{outer}' or '{inner}', "
                "which the fused axis cannot express")
        for op in node.body.walk():
            if isinstance(op, InvokeOp):
                if op.primitive_id not in users:
                    raise TransformError(
                        pass_name, f"'{op.node_id}' below '{node.node_id}' invokes "
                        f"'{op.primitive_id}', which has no role axis '{inner}'")
                below.add(op.node_id)
        if (problem := sink_problem(node)) is not None:
            raise TransformError(pass_name, f"'{outer}' cannot run inside the calls: {problem}")
    elsewhere = [n.node_id for n in config.schedule.walk_nodes()
                 if isinstance(n, InvokeOp) and n.primitive_id in users
                 and n.node_id not in below]
    if elsewhere:
        raise TransformError(
            pass_name, f"'{elsewhere[0]}' invokes a primitive over '{inner}' outside "
                       f"the nodes over '{outer}'")
    free = {role for prim in config.primitives if prim.primitive_id in users
            for role in (Role.M, Role.N) if any(id_text(x) == inner for x in prim.role_ids(role))}
    if free and a.size > 1 and a.stride_on("out") == 0:
        # the loop's iterations overwrite the same out bytes (the last one's stay);
        # as rows of a free role axis they would be one call's rows on those bytes
        raise TransformError(
            pass_name, f"'{outer}' does not move on out (stride 0): its iterations "
                       f"overwrite the same elements, which the {'/'.join(sorted(free))} "
                       f"role axis '{inner}' cannot express")
    _check_contiguous(config, a, b, pass_name)
    fused = _fused_axis(config, a, b, fused, pass_name)
    for prim in config.primitives:
        if prim.primitive_id in users:
            prim.properties["roles"] = DictionaryAttr({
                role: ArrayAttr([StringAttr(fused) if id_text(x) == inner else x
                                 for x in ids.data])  # pyright: ignore
                for role, ids in prim.roles.data.items()
            })
    for node in nodes:
        block = node.parent_block()
        assert block is not None
        for child in list(node.children):
            child.detach()
            block.insert_op_before(child, node)
        node.detach()
        node.erase()
    drop_unused_axes(config)
    refresh_kernels(config)
    refresh_epilogues(config)
    check_still_valid(config, pass_name, f"fusing '{outer}' into the role axis '{inner}'")
    return fused


@dataclass(frozen=True)
class FuseAxesPass(ModulePass):
    """Merges a loop with the contiguous loop nested directly inside it, or with the
    role axis it continues."""

    name = NAME

    outer: str | int
    inner: str | int
    fused: str | None = None

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.outer), self.name):
            fuse_axes(config, str(self.outer), str(self.inner), self.fused)
