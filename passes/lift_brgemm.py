"""`teir-lift-brgemm`: a K loop around a GEMM-shaped Contraction becomes one BRGEMM.

§10.7.6 iterates t around `gemm_squ` (M=[s], N=[q], K=[u]); §10.7.7 invokes
`brgemm_sqtu` (K=[t, u]) instead. The rewrite applies to a sequential,
unguarded iteration node over axis k whose only child is an unguarded
invocation of a Contraction with one M, one N and one K axis, when k has
stride 0 on `out` (k is a reduction axis) and the primitive does not already
use k. The invocation of the new primitive (K = [k, K[0]], k as the
batch-reduce axis) takes the node's place.

Results are bit-identical: each output element receives the same products
in the same order (k outer, the GEMM's K inner), and every axis still adds
its offsets to the addresses.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_dialect.dialect import InvokeOp, IterOp, PrimitiveOp, id_text


def _fresh_id(taken: set[str], base: str) -> str:
    candidate, suffix = base, 1
    while candidate in taken:
        candidate, suffix = f"{base}_{suffix}", suffix + 1
    return candidate


def brgemm_primitive(gemm: PrimitiveOp, batch_axis: Attribute) -> PrimitiveOp:
    """The primitive with `batch_axis` prepended to K, reusing an identical one if any."""
    config = gemm.config
    roles: dict[str, list[Attribute]] = {
        "M": list(gemm.role_ids("M")),
        "N": list(gemm.role_ids("N")),
        "K": [batch_axis, *gemm.role_ids("K")],
    }
    wanted = {role: [id_text(a) for a in axes] for role, axes in roles.items()}
    for prim in config.primitives:
        if prim.kind == "Contraction" and prim.metadata == gemm.metadata and all(
            [id_text(a) for a in prim.role_ids(role)] == axes for role, axes in wanted.items()
        ):
            return prim
    axes = "".join(wanted["M"] + wanted["N"] + wanted["K"])
    name = _fresh_id({p.primitive_id for p in config.primitives}, f"brgemm_{axes}")
    new = PrimitiveOp(name, "Contraction", {}, gemm.metadata)
    new.properties["roles"] = DictionaryAttr({r: ArrayAttr(a) for r, a in roles.items()})
    config.body.block.insert_op_after(new, gemm)
    return new


class LiftBrgemm(RewritePattern):
    """iter k { invoke gemm } -> invoke brgemm(K = [k, ...])."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IterOp, rewriter: PatternRewriter) -> None:
        if op.parallel or op.guard is not None or len(op.children) != 1:
            return
        (child,) = op.children
        if not isinstance(child, InvokeOp) or child.guard is not None:
            return
        gemm = child.primitive_op()
        if gemm.kind != "Contraction" or [
            len(gemm.role_ids(role)) for role in ("M", "N", "K")
        ] != [1, 1, 1]:
            return
        axis = op.axis_op()
        if axis.stride_on("out") != 0:
            return
        if any(id_text(a) == axis.axis_id for a in gemm.role_ids("K")):
            return
        brgemm = brgemm_primitive(gemm, op.axis)
        invoke = InvokeOp(0, 0)
        invoke.properties["id"] = child.id
        invoke.properties["primitive"] = brgemm.id
        rewriter.replace_op(op, invoke, [])
        _erase_if_unused(gemm)


def _erase_if_unused(prim: PrimitiveOp) -> None:
    config = prim.config
    if not any(
        isinstance(node, InvokeOp) and node.primitive_id == prim.primitive_id
        for node in config.schedule.walk_nodes()
    ):
        prim.detach()
        prim.erase()


@dataclass(frozen=True)
class LiftBrgemmPass(ModulePass):
    """Absorbs reduction loops around GEMM-shaped Contractions into BRGEMM primitives."""

    name = "teir-lift-brgemm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(LiftBrgemm(), apply_recursively=False).rewrite_module(op)
