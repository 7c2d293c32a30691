"""Editing a schedule: what every schedule transformation needs.

Finding the configurations and nodes an option names, fresh ids, guards as
term lists, cloning a subtree under new ids, new axes and primitives, keeping
`#teir.kernel` and `#teir.epilogue` attributes true after an edit, and
`TransformError`, the
diagnostic a transformation raises when it refuses (naming the pass, the
node and the reason; `teir-opt` prints it, `--verify-diagnostics` checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException, VerifyException

from teir_dialect.dialect import (
    EPILOGUE_ATTR,
    AxisOp,
    ConfigOp,
    GuardAttr,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
    id_text,
    make_id,
)
from teir_dialect.gemm import KERNEL_ATTR


class TransformError(PassFailedException):
    """A schedule transformation that cannot be applied (or proven exact)."""

    def __init__(self, pass_name: str, message: str):
        super().__init__(f"{pass_name}: {message}")


class BrokenTransform(TransformError):
    """A transformation produced an ill-formed configuration: a bug, not a refusal."""


@runtime_checkable
class Rewriting(Protocol):
    """A pass that rewrites whatever its patterns match and never refuses
    (normalizing and lifting): `rewrite` applies it and says whether anything changed."""

    def rewrite(self, op: ModuleOp) -> bool: ...


def names(values: Iterable[str | int]) -> list[str]:
    """Ids from a pass option: `a,b` arrives as ("a", "b"), `"a,b"` as ("a,b",)."""
    return [part.strip() for value in values for part in str(value).split(",") if part.strip()]


def integers(values: Iterable[str | int], what: str, pass_name: str) -> list[int]:
    """Integers from a pass option given as `8,16` or `"8,16"`."""
    result: list[int] = []
    for part in names(values):
        try:
            result.append(int(part))
        except ValueError:
            raise TransformError(pass_name, f"{what} must be integers, got '{part}'") from None
    return result


def configs_with_axis(module: ModuleOp, axis_id: str, pass_name: str) -> list[ConfigOp]:
    """Every configuration that defines `axis_id`; an error when none does."""
    found = [
        op for op in module.walk()
        if isinstance(op, ConfigOp) and op.find_axis(axis_id) is not None
    ]
    if not found:
        raise TransformError(pass_name, f"no configuration has an axis '{axis_id}'")
    return found


def iterations_over(config: ConfigOp, axis_id: str) -> list[IterOp]:
    return [
        node for node in config.schedule.walk_nodes()
        if isinstance(node, IterOp) and node.axis_id == axis_id
    ]


def primitives_using(config: ConfigOp, axis_id: str) -> list[PrimitiveOp]:
    return [
        prim for prim in config.primitives
        if any(id_text(a) == axis_id for role in prim.roles.data for a in prim.role_ids(role))
    ]


def invocations_of(config: ConfigOp, prim: PrimitiveOp) -> list[InvokeOp]:
    return [
        node for node in config.schedule.walk_nodes()
        if isinstance(node, InvokeOp) and node.primitive_id == prim.primitive_id
    ]


@dataclass
class Taken:
    """The ids in use, per namespace (an iteration node may share its axis's id)."""

    axes: set[str]
    primitives: set[str]
    nodes: set[str]


def taken_ids(config: ConfigOp) -> Taken:
    return Taken(
        {axis.axis_id for axis in config.axes},
        {prim.primitive_id for prim in config.primitives},
        {node.node_id for node in config.schedule.walk_nodes()},
    )


# -- guards --------------------------------------------------------------------------


def terms(node: ScheduleNode) -> list[GuardTermAttr]:
    return list(node.guard.terms) if node.guard is not None else []


def set_terms(node: ScheduleNode, new_terms: Sequence[GuardTermAttr]) -> None:
    """Replaces the guard (no property when no term is left)."""
    if new_terms:
        node.properties["guard"] = GuardAttr(list(new_terms))
    else:
        node.properties.pop("guard", None)


def names_axis(node: ScheduleNode, axis_ids: set[str]) -> bool:
    """Whether a guard in `node`'s subtree (its own included) names one of the axes."""
    ops = [node, *node.body.walk()] if isinstance(node, IterOp) else [node]
    return any(
        isinstance(op, ScheduleNode) and any(t.axis_text in axis_ids for t in terms(op))
        for op in ops
    )


def erase_with_empty_parents(node: ScheduleNode) -> None:
    """Erases a node and every iteration node this leaves without children."""
    parent = node.parent_op()
    node.detach()
    node.erase()
    while isinstance(parent, IterOp) and parent.first_child is None:
        grand = parent.parent_op()
        parent.detach()
        parent.erase()
        parent = grand


def rewrite_terms(root: ScheduleNode,
                  rule: Callable[[GuardTermAttr], list[GuardTermAttr] | None]) -> None:
    """Maps every guard term in `root`'s subtree through `rule`: a list of terms
    replaces it, None means the term can never hold and its node is erased."""
    nodes = [root, *root.body.walk()] if isinstance(root, IterOp) else [root]
    doomed: list[ScheduleNode] = []
    for node in nodes:
        if not isinstance(node, ScheduleNode) or node.guard is None:
            continue
        new: list[GuardTermAttr] = []
        for term in node.guard.terms:
            mapped = rule(term)
            if mapped is None:
                doomed.append(node)
                break
            new.extend(t for t in mapped if t not in new)
        else:
            set_terms(node, new)
    for node in doomed:
        if node.parent is not None:  # not already gone with an erased ancestor
            erase_with_empty_parents(node)


# -- records ------------------------------------------------------------------------------


def add_axis(config: ConfigOp, after: AxisOp, axis_id: str, extent: int,
             strides: Sequence[int], offsets: Sequence[int]) -> AxisOp:
    axis = AxisOp(axis_id, extent, strides, offsets)
    config.body.block.insert_op_after(axis, after)
    return axis


def replace_role_axis(prim: PrimitiveOp, old: str, new: Attribute, primitive_id: str) -> PrimitiveOp:
    """A copy of `prim` with axis `old` replaced by `new` in its roles, inserted after it."""
    roles = {
        role: ArrayAttr([new if id_text(a) == old else a for a in ids.data])  # pyright: ignore
        for role, ids in prim.roles.data.items()
    }
    copy = PrimitiveOp(primitive_id, prim.kind, {}, prim.metadata)
    copy.properties["roles"] = DictionaryAttr(roles)
    if KERNEL_ATTR in prim.attributes:
        copy.attributes[KERNEL_ATTR] = prim.attributes[KERNEL_ATTR]
    prim.config.body.block.insert_op_after(copy, prim)
    return copy


def drop_unused_primitives(config: ConfigOp) -> None:
    used = {n.primitive_id for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)}
    for prim in config.primitives:
        if prim.primitive_id not in used:
            prim.detach()
            prim.erase()


def drop_unused_axes(config: ConfigOp) -> None:
    used = {n.axis_id for n in config.schedule.walk_nodes() if isinstance(n, IterOp)}
    used |= {id_text(a) for p in config.primitives for r in p.roles.data for a in p.role_ids(r)}
    for axis in config.axes:
        if axis.axis_id not in used:
            axis.detach()
            axis.erase()


def refresh_kernels(config: ConfigOp) -> None:
    """Re-derives every recorded `#teir.kernel` (axes may have changed under it)."""
    for prim in config.primitives:
        if KERNEL_ATTR in prim.attributes:
            prim.attributes[KERNEL_ATTR] = prim.matched_kernel()


def refresh_epilogues(config: ConfigOp) -> None:
    """Re-derives every recorded `#teir.epilogue` (the schedule may have changed
    around it), dropping the ones the rule no longer gives."""
    for node in config.schedule.walk_nodes():
        if isinstance(node, InvokeOp) and EPILOGUE_ATTR in node.attributes:
            if (epilogue := node.fused_epilogue()) is None:
                del node.attributes[EPILOGUE_ATTR]
            else:
                node.attributes[EPILOGUE_ATTR] = epilogue


def clone_subtree(node: ScheduleNode, rename: Callable[[str], str]) -> ScheduleNode:
    """A copy of `node`'s subtree whose node ids go through `rename`."""
    copy = node.clone()
    for op in [copy, *copy.body.walk()] if isinstance(copy, IterOp) else [copy]:
        if isinstance(op, ScheduleNode):
            op.properties["id"] = make_id(rename(op.node_id))
    return copy


def check_still_valid(config: ConfigOp, pass_name: str, what: str) -> None:
    """Verifies the edited configuration, its recorded epilogues refreshed first.
    Transformations check their conditions first, so a failure here is a bug; it
    still becomes a diagnostic, not a crash."""
    refresh_epilogues(config)
    try:
        config.verify()
    except VerifyException as err:
        raise BrokenTransform(pass_name, f"internal error after {what}: {err}") from None
