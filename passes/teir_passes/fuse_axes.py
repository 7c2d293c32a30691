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
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.dialect import ConfigOp, IterOp, fresh_id
from teir_dialect.vocabulary import Policy
from teir_passes.schedule_edit import (
    TransformError,
    add_axis,
    check_still_valid,
    configs_with_axis,
    drop_unused_axes,
    iterations_over,
    names_axis,
    taken_ids,
)

NAME = "teir-fuse-axes"


def fuse_axes(config: ConfigOp, outer: str, inner: str, fused: str | None = None,
              pass_name: str = NAME) -> str:
    """Fuses every node over `outer` whose only child is a node over `inner`; returns
    the fused axis's id."""
    a, b = config.axis(outer), config.axis(inner)
    pairs = [
        (node, child) for node in iterations_over(config, outer)
        if isinstance(child := node.only_child, IterOp) and child.axis_id == inner
    ]
    if not pairs:
        raise TransformError(
            pass_name,
            f"no iteration node over '{outer}' has a node over '{inner}' as its only child",
        )
    for tensor in config.tensor_names:
        if a.stride_on(tensor) != b.size * b.stride_on(tensor):
            raise TransformError(
                pass_name,
                f"axes '{outer}' and '{inner}' are not contiguous on {tensor}: stride "
                f"{a.stride_on(tensor)} of '{outer}' is not extent {b.size} x stride "
                f"{b.stride_on(tensor)} of '{inner}'",
            )
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
    taken = taken_ids(config)
    if fused is None:
        fused = fresh_id(f"{outer}{inner}", taken.axes)
    elif fused in taken.axes:
        raise TransformError(pass_name, f"fused axis id '{fused}' is already an axis")
    add_axis(config, b, fused, a.size * b.size, b.stride_values,
             [x + y for x, y in zip(a.offset_values, b.offset_values)])
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


@dataclass(frozen=True)
class FuseAxesPass(ModulePass):
    """Merges a loop with the contiguous loop nested directly inside it."""

    name = NAME

    outer: str | int
    inner: str | int
    fused: str | None = None

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.outer), self.name):
            fuse_axes(config, str(self.outer), str(self.inner), self.fused)
