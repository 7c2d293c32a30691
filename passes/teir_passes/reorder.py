"""`teir-reorder{order=a,b,c}`: permute a chain of nested iteration nodes.

The chain is found by its axes: iteration nodes over exactly the axes of
`order`, each the only child of the one above (Accera's `reorder`, tinygrad's
`Swap`). Its nodes are nested again in the given order, each keeping its id,
axis and policy; what was below the innermost node stays below the new
innermost one. Only the top node may carry a guard (it names axes outside the
chain and moves to the new top); guards below the chain may name chain axes,
since every body still runs at the same indices.

The pass refuses what it cannot prove exact (`reorder_problem`): bodies that
write the same out bytes must keep their relative order, so loops that move
out must reach disjoint bytes and the reduction loops keep their order.
Every chain over these axes in the module is reordered.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.dialect import ConfigOp, IterOp
from teir_passes.legality import reorder_problem
from teir_passes.schedule_edit import (
    TransformError,
    check_still_valid,
    configs_with_axis,
    names,
    set_terms,
    terms,
)

NAME = "teir-reorder"


def find_chains(config: ConfigOp, axes: set[str]) -> list[list[IterOp]]:
    """Chains of iteration nodes over exactly `axes`, outermost first."""
    chains: list[list[IterOp]] = []
    for node in config.schedule.walk_nodes():
        if not isinstance(node, IterOp) or node.axis_id not in axes:
            continue
        parent = node.parent_op()
        if isinstance(parent, IterOp) and parent.axis_id in axes and parent.only_child is node:
            continue  # not the top of its chain
        chain = [node]
        while len(chain) < len(axes):
            child = chain[-1].only_child
            if not isinstance(child, IterOp) or child.axis_id not in axes:
                break
            chain.append(child)
        if {n.axis_id for n in chain} == axes and len(chain) == len(axes):
            chains.append(chain)
    return chains


def reorder_chain(chain: Sequence[IterOp], order: Sequence[str], pass_name: str = NAME) -> None:
    """Nests the nodes of `chain` in `order` (axis ids), if that is exact."""
    for node in chain[1:]:
        if node.guard is not None:
            raise TransformError(
                pass_name,
                f"iteration node '{node.node_id}' inside the chain has a guard "
                f"({node.guard}); only the top of the chain may have one",
            )
    if (problem := reorder_problem(chain, order)) is not None:
        raise TransformError(
            pass_name,
            f"cannot reorder the loops {', '.join(n.node_id for n in chain)} to "
            f"{', '.join(order)}: {problem}",
        )
    top = chain[0]
    guard = terms(top)
    by_axis = {node.axis_id: node for node in chain}
    nodes = [by_axis[axis] for axis in order]
    body = chain[-1].children
    block = top.parent_block()
    assert block is not None
    anchor = top.next_op
    for node in chain:
        node.detach()
    for child in body:
        child.detach()
    for outer, inner in itertools.pairwise(nodes):
        outer.body.block.add_op(inner)
    nodes[-1].body.block.add_ops(body)
    set_terms(top, [])
    set_terms(nodes[0], guard)
    if anchor is None:
        block.add_op(nodes[0])
    else:
        block.insert_op_before(nodes[0], anchor)


def reorder(module: builtin.ModuleOp, order: Sequence[str], pass_name: str = NAME) -> None:
    if len(order) < 2 or len(set(order)) != len(order):
        raise TransformError(
            pass_name, f"order must name two or more distinct axes, got {', '.join(order)}"
        )
    for config in configs_with_axis(module, order[0], pass_name):
        chains = find_chains(config, set(order))
        if not chains:
            raise TransformError(
                pass_name,
                f"no chain of nested iteration nodes over exactly {', '.join(order)} "
                "(each node the only child of the one above)",
            )
        for chain in chains:
            reorder_chain(chain, order, pass_name)
        check_still_valid(config, pass_name, f"reordering {', '.join(order)}")


@dataclass(frozen=True)
class ReorderPass(ModulePass):
    """Permutes a chain of nested iteration nodes into the order given."""

    name = NAME

    order: tuple[str | int, ...]

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        reorder(op, names(self.order))
