"""Primitive bookkeeping shared by the lifting passes."""

from __future__ import annotations

from collections import Counter
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

Signature = tuple[str, Attribute, tuple[tuple[str, tuple[str, ...]], ...]]


def _signature(kind: str, metadata: Attribute,
               roles: dict[str, Sequence[str]]) -> Signature:
    return kind, metadata, tuple(sorted((role, tuple(ids)) for role, ids in roles.items()))


def signature(prim: PrimitiveOp) -> Signature:
    """What makes two primitives interchangeable: operation, metadata, role axes."""
    return _signature(prim.kind, prim.metadata, {
        role: [id_text(a) for a in prim.role_ids(role)] for role in prim.roles.data
    })


class Primitives:
    """The primitives of one configuration as a lifting pass edits them: by
    signature, by id and by use count, so that retargeting one invocation
    costs the same however many invocations and primitives there are.

    Invocations must change their primitive through `retarget` (or `count`)."""

    def __init__(self, config: ConfigOp):
        self.config = config
        self.by_signature: dict[Signature, PrimitiveOp] = {}
        for prim in config.primitives:
            self.by_signature.setdefault(signature(prim), prim)
        self.taken = {prim.primitive_id for prim in config.primitives}
        self.uses = Counter(
            n.primitive_id for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)
        )

    def with_roles(self, prim: PrimitiveOp, extra: dict[str, Sequence[Attribute]],
                   kind: str | None = None) -> PrimitiveOp:
        """A primitive like `prim` with `extra` axes prepended to its roles (shared when equal).

        A new one is named `kind_<role axes>`; without `kind`, a Contraction is named
        after the kernel Table 10.6.1 gives it (`gemm_`, `brgemm_`, else
        `contraction_`), like the spec's `gemm_squ` and `brgemm_sqtu`.
        """
        roles = {
            role: [*extra.get(role, ()), *prim.role_ids(role)]
            for role in ("M", "N", "K")
            if role in prim.roles.data or extra.get(role)
        }
        wanted = {role: [id_text(a) for a in axes] for role, axes in roles.items()}
        key = _signature(prim.kind, prim.metadata, wanted)
        if (found := self.by_signature.get(key)) is not None and found.parent is not None:
            return found
        new = PrimitiveOp(0, prim.kind, {}, prim.metadata)
        new.properties["roles"] = DictionaryAttr({r: ArrayAttr(a) for r, a in roles.items()})
        self.config.body.block.insert_op_after(new, prim)
        if kind is None:
            kind = prim.kind.lower()
            if prim.kind is OperationKind.CONTRACTION:
                matched = new.matched_kernel()
                kind = matched.kind_name if matched.is_gemm else kind
        ids = [i for axes in wanted.values() for i in axes]
        base = f"{kind}_" + ("" if all(len(i) == 1 for i in ids) else "_").join(ids)
        new.properties["id"] = make_id(fresh_id(base, self.taken))
        self.by_signature[key] = new
        self.config.register(new)
        return new

    def count(self, old: str | None, new: str | None) -> None:
        """Records that an invocation moved from primitive `old` to `new` (None: no
        invocation before or after)."""
        if old is not None:
            self.uses[old] -= 1
        if new is not None:
            self.uses[new] += 1

    def retarget(self, invoke: InvokeOp, prim: PrimitiveOp) -> None:
        """`invoke` invokes `prim` from now on."""
        self.count(invoke.primitive_id, prim.primitive_id)
        invoke.properties["primitive"] = prim.id

    def erase_unused(self, prims: Sequence[PrimitiveOp]) -> None:
        """Drops those of `prims` that no invocation uses any more."""
        for prim in prims:
            if prim.parent is None or self.uses[prim.primitive_id] > 0:
                continue
            key = signature(prim)
            if self.by_signature.get(key) is prim:
                del self.by_signature[key]
            self.taken.discard(prim.primitive_id)
            prim.detach()
            prim.erase()


class PrimitiveTables:
    """A `Primitives` per configuration, built when a pass first edits it."""

    def __init__(self) -> None:
        self.tables: dict[ConfigOp, Primitives] = {}

    def __getitem__(self, config: ConfigOp) -> Primitives:
        if (table := self.tables.get(config)) is None:
            table = self.tables[config] = Primitives(config)
        return table
