"""`teir-widen-tile{axis=ID}`: a loop around a Zero, Copy or ReLU tile goes into the tile.

The counterpart of `teir-lift-elementwise` for a loop it leaves out: every
iteration node over `axis` whose only child is an invocation of an
element-wise tile primitive (one with role axes) is replaced by that
invocation, retargeted to a primitive with `axis` added to its N role axes.
The lowering then sees the tiles of the loop's indices as one: a transposing
tile whose rows of out the loop continues goes through buffers in the L1, a
run of the loop's tiles at a time (`teir_lowering.codegen.tile_primitives`,
`TileEmitter.buffered`; `teir-auto-schedule` widens such tiles when their
rows crowd the L1 sets).

Exact when the widened tile writes each out element once (mixed-radix check
over its out strides): the tile's elements may then be written in any order.
The loop must be sequential and unguarded, and the invocation must not name
the axis in its guard.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.dialect import ConfigOp, InvokeOp
from teir_dialect.strided import disjoint_windows
from teir_dialect.vocabulary import Role
from teir_passes.lift_elementwise import ELEMENTWISE
from teir_passes.primitives import Primitives
from teir_passes.schedule_edit import (
    TransformError,
    configs_with_axis,
    iterations_over,
    names_axis,
)


def widen_tile(config: ConfigOp, axis_id: str, pass_name: str) -> None:
    """Moves every loop over `axis_id` into the tile it holds (see the module doc)."""
    nodes = iterations_over(config, axis_id)
    if not nodes:
        raise TransformError(pass_name, f"no iteration node iterates axis '{axis_id}'")
    table = Primitives(config)
    axis = config.find_axis(axis_id)
    assert axis is not None
    for node in nodes:
        child = node.only_child
        if not isinstance(child, InvokeOp):
            raise TransformError(pass_name, f"the loop '{node.node_id}' over '{axis_id}' "
                                 "holds more than one invocation")
        prim = child.primitive_op()
        if prim.kind not in ELEMENTWISE or not prim.all_role_axes:
            raise TransformError(pass_name, f"'{child.node_id}' invokes '{prim.primitive_id}', "
                                 "not a Zero, Copy or ReLU tile")
        if node.parallel or node.guard is not None or names_axis(child, {axis_id}):
            raise TransformError(pass_name, f"the loop '{node.node_id}' is parallel or guarded, "
                                 f"or a guard below it names '{axis_id}'")
        axes = [*prim.all_role_axes, axis]
        if not disjoint_windows([(a.size, a.stride_on("out")) for a in axes], prim.element_width):
            raise TransformError(pass_name, f"the tile of '{prim.primitive_id}' widened by "
                                 f"'{axis_id}' writes some out elements more than once")
        table.retarget(child, table.with_roles(prim, {Role.N: [node.axis]}))
        child.detach()
        parent = node.parent
        assert parent is not None
        parent.insert_op_before(child, node)
        node.detach()
        node.erase()
        table.erase_unused([prim])


@dataclass(frozen=True)
class WidenTilePass(ModulePass):
    """Moves the loops over an axis into the Zero/Copy/ReLU tiles they hold."""

    name = "teir-widen-tile"

    axis: str | int

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.axis), self.name):
            widen_tile(config, str(self.axis), self.name)
