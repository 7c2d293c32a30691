"""`teir-tile{axes=a,b sizes=8,16}`: Accera's `tile`, a split of each axis with every
outer part before every inner part.

Each axis is split by its size (`teir-split`, remainders included), then the
chain of iteration nodes from the outermost new loop to the innermost one is
reordered to `a, b, ..., a_in, b_in` (`teir-reorder`, with its exactness
check): outer parts first, loops that sat between them next in their order,
inner parts last. An axis that is a primitive's role axis keeps its inner
part in the tile and only its outer part joins the order. When a remainder
branch sits between the loops (a size that does not divide the extent of an
axis with loops below it), they are no longer a chain and the pass says so:
use sizes that divide, or `teir-split` and `teir-reorder` on the main branch.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass

from teir_dialect.dialect import ConfigOp, IterOp
from teir_passes.reorder import reorder_chain
from teir_passes.schedule_edit import (
    TransformError,
    check_still_valid,
    configs_with_axis,
    integers,
    iterations_over,
    names,
)
from teir_passes.split import split_axis

NAME = "teir-tile"


def tile(module: builtin.ModuleOp, axes: list[str], sizes: list[int],
         pass_name: str = NAME) -> None:
    if not axes or len(axes) != len(sizes) or len(set(axes)) != len(axes):
        raise TransformError(
            pass_name,
            f"axes and sizes must be lists of the same length with distinct axes, got "
            f"axes={','.join(axes)} sizes={','.join(map(str, sizes))}",
        )
    for config in configs_with_axis(module, axes[0], pass_name):
        inners = [split_axis(config, axis, size, pass_name=pass_name).inner
                  for axis, size in zip(axes, sizes)]
        tiled = [a for a in [*axes, *inners] if iterations_over(config, a)]
        if len(tiled) < 2:
            continue
        for chain in _chains_spanning(config, tiled, pass_name):
            between = [n.axis_id for n in chain if n.axis_id not in tiled]
            outer = [a for a in axes if a in tiled]
            inner = [a for a in inners if a in tiled]
            reorder_chain(chain, [*outer, *between, *inner], pass_name)
        check_still_valid(config, pass_name, f"tiling {', '.join(axes)}")


def _chains_spanning(config: ConfigOp, tiled: list[str], pass_name: str) -> list[list[IterOp]]:
    """For each topmost loop over a tiled axis, the chain of single-child loops down
    to the last loop over a tiled axis; it must hold every tiled axis."""
    chains: list[list[IterOp]] = []
    for node in config.schedule.walk_nodes():
        if not isinstance(node, IterOp) or node.axis_id not in tiled:
            continue
        if any(a.axis_id in tiled for a in node.ancestors()):
            continue
        chain = [node]
        while isinstance(child := chain[-1].only_child, IterOp):
            chain.append(child)
        while chain[-1].axis_id not in tiled:
            chain.pop()
        if {n.axis_id for n in chain} >= set(tiled):
            chains.append(chain)
        else:
            raise TransformError(
                pass_name,
                f"after splitting, the loops over {', '.join(tiled)} are not one chain "
                "(a remainder branch or another child sits between them); use sizes "
                "that divide the extents, or teir-split and teir-reorder on the main "
                "branch",
            )
    return chains


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Splits each axis by its size and orders the outer loops before the inner ones."""

    name = NAME

    axes: tuple[str | int, ...]
    sizes: tuple[int | str, ...]

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        tile(op, names(self.axes), integers(self.sizes, "sizes", self.name))
