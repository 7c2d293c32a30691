"""Primitive bookkeeping shared by the lifting passes."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Attribute

from teir_dialect.dialect import (
    ConfigOp,
    InvokeOp,
    PrimitiveOp,
    fresh_id,
    id_text,
    make_id,
)
from teir_dialect.vocabulary import OperationKind


def with_roles(prim: PrimitiveOp, extra: dict[str, Sequence[Attribute]],
               kind: str | None = None) -> PrimitiveOp:
    """A primitive like `prim` with `extra` axes prepended to its roles (shared when equal).

    A new one is named `kind_<role axes>`; without `kind`, a Contraction is named
    after the kernel Table 10.6.1 gives it (`gemm_`, `brgemm_`, else
    `contraction_`), like the spec's `gemm_squ` and `brgemm_sqtu`.
    """
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
    taken = {p.primitive_id for p in config.primitives}
    new = PrimitiveOp(0, prim.kind, {}, prim.metadata)
    new.properties["roles"] = DictionaryAttr({r: ArrayAttr(a) for r, a in roles.items()})
    config.body.block.insert_op_after(new, prim)
    if kind is None:
        kind = prim.kind.lower()
        if prim.kind is OperationKind.CONTRACTION:
            matched = new.matched_kernel().kind_name
            kind = matched if matched in ("gemm", "brgemm") else kind
    ids = [i for axes in wanted.values() for i in axes]
    base = f"{kind}_" + ("" if all(len(i) == 1 for i in ids) else "_").join(ids)
    new.properties["id"] = make_id(fresh_id(base, taken))
    return new


def erase_unused(config: ConfigOp, prims: Sequence[PrimitiveOp]) -> None:
    """Drops those of `prims` that no invocation uses any more."""
    used = {n.primitive_id for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)}
    for prim in prims:
        if prim.primitive_id not in used and prim.parent is not None:
            prim.detach()
            prim.erase()
