"""Primitive bookkeeping shared by the lifting passes."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Attribute

from teir_dialect.dialect import ConfigOp, InvokeOp, PrimitiveOp, id_text


def with_roles(prim: PrimitiveOp, extra: dict[str, Sequence[Attribute]], kind: str) -> PrimitiveOp:
    """A primitive like `prim` with `extra` axes prepended to its roles (shared when equal)."""
    config = prim.config
    roles = {
        role: [*extra.get(role, ()), *prim.role_ids(role)]
        for role in ("M", "N", "K")
        if role in prim.roles.data or extra.get(role)
    }
    wanted = {role: [id_text(a) for a in axes] for role, axes in roles.items()}
    for other in config.primitives:
        if (
            other.kind == prim.kind
            and other.metadata == prim.metadata
            and set(other.roles.data) == set(wanted)
            and all([id_text(a) for a in other.role_ids(r)] == ids for r, ids in wanted.items())
        ):
            return other
    base = f"{kind}_" + "".join(ids for axes in wanted.values() for ids in axes)
    taken = {p.primitive_id for p in config.primitives}
    name, suffix = base, 1
    while name in taken:
        name, suffix = f"{base}_{suffix}", suffix + 1
    new = PrimitiveOp(name, prim.kind, {}, prim.metadata)
    new.properties["roles"] = DictionaryAttr({r: ArrayAttr(a) for r, a in roles.items()})
    config.body.block.insert_op_after(new, prim)
    return new


def erase_unused(config: ConfigOp, prims: Sequence[PrimitiveOp]) -> None:
    """Drops those of `prims` that no invocation uses any more."""
    used = {n.primitive_id for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)}
    for prim in prims:
        if prim.primitive_id not in used and prim.parent is not None:
            prim.detach()
            prim.erase()
