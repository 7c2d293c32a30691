"""`teir-tile{axes=a,b sizes=8,16}`: Accera's `tile`, a split of each axis with every
outer part before every inner part, remainders included.

Each axis is split by its size (`teir-split`): a size that does not divide the
extent leaves a remainder branch over `a_rem` after the main one (for a role
axis, a remainder primitive invoked after the loop over the outer part). Then
every nest gets the tiled order `a, b, ..., a_in, b_in`: outer parts first,
loops that sat between them next in their order, inner parts last, a
remainder axis in its inner part's place, and an axis a branch no longer has
left out: the tail tiles of Halide and Accera. Tiling a=3, b=2 over extents 5
and 5 gives (node ids shortened)

    a { b { a_in { b_in } }        the full tiles
        a_in { b_rem } }           the b tail of each a tile
    b { a_rem { b_in } }           the a tail, tiled over b
    a_rem { b_rem }                the corner

Going down a nest, a loop that comes first among the tile loops below it (and
the loops between them) stays where it is, shared by its branches. A loop that
must move inward heads a chain of loops down to the last tile loop, which
`reorder_chain` (`teir-reorder`, with its exactness check) reorders. Where
that chain forks (a main tile and its remainder, or a child that holds no
tile loop beside one that does), the loops from the fork up to the moving
loop are first distributed, innermost first: a loop becomes one loop per
branch, in their order (each child holding tile loops a branch of its own,
the other children in runs). That runs a later branch at earlier indices
after an earlier branch at later ones, which is exact when bodies at
different indices in different branches write disjoint out bytes
(`_distribute_problem`). A role axis keeps its inner part in the primitive;
only its outer part joins the order. Where exactness cannot be proven (the
split, a distribution or a reorder), the pass refuses and says why.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.dialect import IterOp, ScheduleNode, fresh_id
from teir_dialect.strided import Undecided, box_pair_overlap
from teir_passes.legality import body_boxes
from teir_passes.reorder import reorder_chain
from teir_passes.schedule_edit import (
    Taken,
    TransformError,
    check_still_valid,
    configs_with_axis,
    integers,
    names,
    taken_ids,
)
from teir_passes.split import split_axis

NAME = "teir-tile"

BETWEEN = (1, 0)
"""The rank of a loop that is not over a tile axis: after the outer parts (0, i),
before the inner parts and remainders (2, i); equal ranks keep their order."""


def tile(module: builtin.ModuleOp, axes: list[str], sizes: list[int],
         pass_name: str = NAME) -> None:
    if not axes or len(axes) != len(sizes) or len(set(axes)) != len(axes):
        raise TransformError(
            pass_name,
            f"axes and sizes must be lists of the same length with distinct axes, got "
            f"axes={','.join(axes)} sizes={','.join(map(str, sizes))}",
        )
    for config in configs_with_axis(module, axes[0], pass_name):
        rank: dict[str, tuple[int, int]] = {}
        for index, (axis, size) in enumerate(zip(axes, sizes)):
            split = split_axis(config, axis, size, pass_name=pass_name)
            rank[axis] = (0, index)
            rank[split.inner] = (2, index)
            if split.remainder is not None:
                rank[split.remainder] = (2, index)
        tiling = _Tiling(rank, taken_ids(config), pass_name)
        tops = [
            node for node in config.schedule.walk_nodes()
            if tiling.is_tile_loop(node) and not any(map(tiling.is_tile_loop, node.ancestors()))
        ]
        for top in tops:
            _arrange(top, tiling)
        check_still_valid(config, pass_name, f"tiling {', '.join(axes)}")


@dataclass
class _Tiling:
    """The tile loops of one configuration and their ranks in the tiled order."""

    rank: dict[str, tuple[int, int]]
    taken: Taken
    pass_name: str

    def rank_of(self, node: IterOp) -> tuple[int, int]:
        return self.rank.get(node.axis_id, BETWEEN)

    def is_tile_loop(self, op: object) -> TypeGuard[IterOp]:
        return isinstance(op, IterOp) and op.axis_id in self.rank

    def tile_axes(self, node: ScheduleNode) -> frozenset[str]:
        """The tile axes that loops in `node`'s subtree (itself included) iterate."""
        ops = [node, *node.body.walk()] if isinstance(node, IterOp) else [node]
        return frozenset(op.axis_id for op in ops if self.is_tile_loop(op))

    def chain_loops(self, node: IterOp) -> list[IterOp]:
        """The loops strictly below `node` that are or hold a tile loop: those a chain
        from `node` down to its last tile loop passes."""
        return [op for op in node.body.walk()
                if isinstance(op, IterOp) and self.tile_axes(op)]

    def branches(self, node: IterOp) -> list[list[ScheduleNode]]:
        """`node`'s children as branches: each child that holds a tile loop alone, the
        others in maximal runs (remainder invocations stay together)."""
        return [list(run) for _, run in itertools.groupby(
            node.children, key=lambda child: id(child) if self.tile_axes(child) else None
        )]


def _arrange(node: IterOp, tiling: _Tiling) -> None:
    """Gives the nest under `node` the tiled order (see the module docstring)."""
    below = tiling.chain_loops(node)
    if not below:
        return
    if tiling.rank_of(node) <= min(map(tiling.rank_of, below)):
        for child in node.children:
            if isinstance(child, IterOp):
                _arrange(child, tiling)
        return
    chain = [node]
    while tiling.chain_loops(chain[-1]):
        branches = tiling.branches(chain[-1])
        if len(branches) > 1:
            for top in _distribute(chain, branches, tiling):
                _arrange(top, tiling)
            return
        (child,) = chain[-1].children  # one branch holding a tile loop: a loop
        assert isinstance(child, IterOp)
        chain.append(child)
    order = sorted(chain, key=tiling.rank_of)
    reorder_chain(chain, [n.axis_id for n in order], tiling.pass_name)


def _distribute(chain: Sequence[IterOp], branches: list[list[ScheduleNode]],
                tiling: _Tiling) -> list[IterOp]:
    """Distributes the loops of `chain` (each the only child of the one above) over
    `branches` of the last one's children, innermost first; returns the loops that
    take `chain[0]`'s place, one per branch."""
    parts: Sequence[Sequence[ScheduleNode]] = branches
    copies: list[IterOp] = []
    for loop in reversed(chain):
        if (problem := _distribute_problem(loop, parts)) is not None:
            raise TransformError(
                tiling.pass_name,
                f"cannot distribute the loop '{loop.node_id}' over its branches "
                f"({'; '.join(', '.join(n.node_id for n in p) for p in parts)}): {problem}",
            )
        copies = [loop]
        for part in parts[1:]:
            copy = IterOp(fresh_id(loop.node_id, tiling.taken.nodes), 0, [],
                          policy=loop.policy.data, guard=loop.guard)
            copy.properties["axis"] = loop.axis
            for node in part:
                node.detach()
                copy.body.block.add_op(node)
            block = loop.parent_block()
            assert block is not None
            block.insert_op_after(copy, copies[-1])
            copies.append(copy)
        parts = [[copy] for copy in copies]
    return copies


def _distribute_problem(loop: IterOp, parts: Sequence[Sequence[ScheduleNode]]) -> str | None:
    """Why running `loop` once per part of its children (in their order) could change a
    result, or None.

    Part i at index x then runs before a later part j at an index x' < x, where
    it ran after it: exact when bodies at different indices in different parts
    write disjoint out bytes (`box_pair_overlap`, exact; with a stride of 0 on
    out every index writes the same bytes, so the parts must be disjoint).
    """
    axis = loop.axis_op()
    boxes = [body_boxes(part) for part in parts]
    try:
        for (i, xs), (j, ys) in itertools.combinations(enumerate(boxes), 2):
            for x in xs:
                for y in ys:
                    if box_pair_overlap(x, y, axis.size, axis.stride_on("out")) is not None:
                        return (
                            f"'{', '.join(n.node_id for n in parts[i])}' and "
                            f"'{', '.join(n.node_id for n in parts[j])}' write common out "
                            "bytes at different indices of it, so they would run in "
                            "another order"
                        )
    except Undecided as undecided:
        return (
            "proving that its branches write disjoint out bytes would take "
            f"{undecided.combinations} steps"
        )
    return None


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Splits each axis by its size and orders the outer loops before the inner ones,
    remainder branches in the order of the axes they still have."""

    name = NAME

    axes: tuple[str | int, ...]
    sizes: tuple[int | str, ...]

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        tile(op, names(self.axes), integers(self.sizes, "sizes", self.name))
