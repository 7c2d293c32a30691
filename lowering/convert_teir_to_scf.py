"""`teir-to-scf`: lower each `teir.config` to scf/arith/memref loops in place.

Iteration nodes become `scf.for` (sequential) or `scf.parallel` (parallel; a
parallel node whose only child is an unguarded parallel node joins it as one
multi-dimensional loop). Guards become `scf.if` on index comparisons. Tile
addresses follow §10.4: each axis adds `offset + stride * index` bytes, here
divided by the tensor's element width, because tensors are 1-D memrefs of their
element type addressed by element. Primitives become loops over their role
axes (M..., N..., K..., outermost first) around a scalar body; a Contraction
whose K axes all have stride 0 on `out` keeps its accumulator in a register
across the K loops. Zero/Copy/ReLU tiles that are contiguous or transposing
become vector code instead (teir_lowering.tile_primitives).

A Contraction that teir-match-gemm's rule makes a GEMM/BRGEMM (any layout)
becomes a register-blocked microkernel (teir_lowering.microkernel). The Zero
and the in-place ReLU of exactly its tile fuse into it (`fuses_zero`,
`fuses_relu`) when they are its siblings just before / after it, the
Contraction unguarded (a guard of the Zero/ReLU becomes the condition under
which the kernel starts from 0 / applies relu before its store), or when they
sit just before / after a sequential K loop whose first / last node is that
Contraction (`sunk_into`: into the loop's first / last iteration). In every
case nothing runs between the two and the kernel writes each element of the
tile once, so the fused code computes the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from teir_dialect.dialect import (
    AxisOp,
    ConfigOp,
    GuardAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
    id_text,
)
from teir_dialect.records import TeirError

if TYPE_CHECKING:
    from teir_lowering.microkernel import GemmShape

SUPPORTED_DATA_TYPES = {"FP32": Float32Type(), "TF32": Float32Type(), "FP64": Float64Type()}
"""Data types the lowering compiles (TF32 is computed as FP32)."""


@dataclass(frozen=True)
class Tile:
    """Element index of the current tile of each tensor (None: index 0)."""

    base: dict[str, SSAValue | None]


class _Emitter:
    """Builds the loop nest of one configuration, appending to blocks."""

    def __init__(self, config: ConfigOp, microkernels: bool = True):
        self.config = config
        self.microkernels = microkernels
        self.tensors = dict(zip(config.tensor_names, config.tensors))
        self.width: dict[str, int] = {}
        for name, value in self.tensors.items():
            self.width[name] = _element_width(name, value.type)
        # Zero/ReLU nodes fused into a Contraction inside loops (see `sunk_into`),
        # by id of the Contraction's node: (the Zero/ReLU, the loops' axis ids)
        self.sunk_zero: dict[int, tuple[InvokeOp, tuple[str, ...]]] = {}
        self.sunk_relu: dict[int, tuple[InvokeOp, tuple[str, ...]]] = {}

    # -- small builders -----------------------------------------------------

    @staticmethod
    def index(builder: Builder, value: int) -> SSAValue:
        return builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def elements(self, tensor: str, byte_count: int, what: str) -> int:
        width = self.width[tensor]
        if byte_count % width:
            raise TeirError(
                f"lowering: {what} is {byte_count} bytes on {tensor}, not a multiple of "
                f"its {width}-byte elements; byte-misaligned tiles are not supported yet"
            )
        return byte_count // width

    def advance(
        self, builder: Builder, tile: Tile, axis: AxisOp, iv: SSAValue, tensors: Sequence[str]
    ) -> Tile:
        """The tile after adding `offset + stride * iv` of `axis` on each tensor."""
        base = dict(tile.base)
        for tensor in tensors:
            stride = self.elements(tensor, axis.stride_on(tensor), f"the stride of axis '{axis.axis_id}'")
            offset = self.elements(tensor, axis.offset_on(tensor), f"the offset of axis '{axis.axis_id}'")
            if stride == 0 and offset == 0:
                continue
            value = base[tensor]
            if stride:
                step = iv if stride == 1 else builder.insert(
                    arith.MuliOp(iv, self.index(builder, stride))
                ).result
                value = step if value is None else builder.insert(arith.AddiOp(value, step)).result
            if offset:
                shift = self.index(builder, offset)
                value = shift if value is None else builder.insert(arith.AddiOp(value, shift)).result
            base[tensor] = value
        return Tile(base)

    def address(self, builder: Builder, tile: Tile, tensor: str) -> SSAValue:
        value = tile.base[tensor]
        return self.index(builder, 0) if value is None else value

    # -- schedule -------------------------------------------------------------

    def emit_nodes(
        self, builder: Builder, nodes: Sequence[ScheduleNode], tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        index = 0
        while index < len(nodes):
            node = nodes[index]
            after = nodes[index + 1] if index + 1 < len(nodes) else None
            if after is not None:
                # A Zero just before / a ReLU just after a sequential K loop whose
                # first / last node is a GEMM/BRGEMM of its tile: fused into the
                # kernel's first / last iteration (see `sunk_into`).
                if (sunk := self.sunk_into(after, node, "first")) is not None:
                    self.sunk_zero[id(sunk[0])] = (node, sunk[1])
                    index += 1
                    continue
                if (sunk := self.sunk_into(node, after, "last")) is not None:
                    self.sunk_relu[id(sunk[0])] = (after, sunk[1])
                    self.emit_guarded(builder, node, tile, ivs)
                    index += 2
                    continue
            # A GEMM/BRGEMM with the Zero just before and/or the ReLU just after
            # it, of its tile, fused into the kernel (see fuses_zero, fuses_relu).
            zero = node if after is not None and self.fuses_zero(node, after) else None
            at = index + 1 if zero is not None else index
            contraction = nodes[at]
            relu = nodes[at + 1] if at + 1 < len(nodes) else None
            if relu is not None and not self.fuses_relu(contraction, relu):
                relu = None
            stop = at + (2 if relu is not None else 1)
            zero_loops: tuple[str, ...] = ()
            relu_loops: tuple[str, ...] = ()
            if id(contraction) in self.sunk_zero:
                zero, zero_loops = self.sunk_zero.pop(id(contraction))
            if id(contraction) in self.sunk_relu:
                relu, relu_loops = self.sunk_relu.pop(id(contraction))
            if zero is not None or relu is not None:
                assert isinstance(contraction, InvokeOp)
                prim = contraction.primitive_op()
                element = SUPPORTED_DATA_TYPES.get(prim.data_type)
                if element is not None and self.microkernel_shape(prim) is not None:
                    self.emit_microkernel(
                        builder, prim, element, tile,
                        zero_first=zero is not None,
                        zero_when=self.fused_condition(builder, zero, zero_loops, "first", ivs),
                        relu=relu is not None,
                        relu_when=self.fused_condition(builder, relu, relu_loops, "last", ivs),
                    )
                    index = stop
                    continue
                assert not zero_loops and not relu_loops, "sunk_into checked the kernel"
            self.emit_guarded(builder, node, tile, ivs)
            index += 1

    def fused_condition(
        self, builder: Builder, node: ScheduleNode | None, loops: tuple[str, ...], kind: str,
        ivs: dict[str, SSAValue],
    ) -> SSAValue | None:
        """When a fused Zero/ReLU acts: its guard and, if it was sunk into the loops
        `loops`, their first (kind "first") or last iteration; None: always."""
        if node is None:
            return None
        result = None if node.guard is None else self.condition(builder, node.guard, ivs)
        for axis_id in loops:
            target = 0 if kind == "first" else self.config.axis(axis_id).size - 1
            test = builder.insert(
                arith.CmpiOp(ivs[axis_id], self.index(builder, target), "eq")
            ).result
            result = test if result is None else builder.insert(arith.AndIOp(result, test)).result
        return result

    def sunk_into(
        self, loop: ScheduleNode, elementwise: ScheduleNode, kind: str
    ) -> tuple[InvokeOp, tuple[str, ...]] | None:
        """The Contraction, and the loops down to it, into whose first (kind "first",
        `elementwise` a Zero just before `loop`) or last (kind "last", a ReLU just
        after `loop`) iteration the Zero/ReLU fuses; else None.

        `loop` must be an unguarded sequential loop over an axis with neither stride
        nor offset on out, whose first / last child is such a loop again or a
        Contraction that `fuses_zero` / `fuses_relu` with the Zero / ReLU and that
        gets a microkernel. The Zero then runs exactly before the Contraction's
        first execution and the ReLU exactly after its last one, on the same tile
        (the loops do not move out): the inverse of teir-canonicalize-guards'
        hoisting (rule 4), so the fused kernel starts from +0 when all the loops
        are at their first index, and applies relu at its store when all are at
        their last (and the Zero's / ReLU's own guard holds).
        """
        if not (isinstance(loop, IterOp) and not loop.parallel and loop.guard is None
                and loop.children and isinstance(elementwise, InvokeOp)):
            return None
        axis = loop.axis_op()
        if axis.stride_on("out") or axis.offset_on("out"):
            return None
        inner = loop.children[0 if kind == "first" else -1]
        if isinstance(inner, InvokeOp):
            fuses = (self.fuses_zero(elementwise, inner) if kind == "first"
                     else self.fuses_relu(inner, elementwise))
            if fuses and self.microkernel_shape(inner.primitive_op()) is not None:
                return inner, (loop.axis_id,)
            return None
        found = self.sunk_into(inner, elementwise, kind)
        return None if found is None else (found[0], (loop.axis_id, *found[1]))

    @staticmethod
    def same_tile(elementwise: PrimitiveOp, contraction: PrimitiveOp) -> bool:
        """A Zero/ReLU covers exactly the out elements of a Contraction's tile: the
        same M, N axes (so the same out addresses, role-axis offsets included) and
        no K axis of the Contraction shifts out by an offset."""
        return (
            elementwise.data_type == contraction.data_type
            and all(
                [id_text(a) for a in elementwise.role_ids(role)]
                == [id_text(a) for a in contraction.role_ids(role)]
                for role in ("M", "N")
            )
            and all(axis.offset_on("out") == 0 for axis in contraction.role_axes("K"))
        )

    def fuses_zero(self, zero: ScheduleNode, contraction: ScheduleNode) -> bool:
        """A Zero of the tile of the next, unguarded Contraction (a guarded Zero
        fuses under its guard, evaluated at the same loop indices)."""
        if not (isinstance(zero, InvokeOp) and isinstance(contraction, InvokeOp)):
            return False
        if contraction.guard is not None:
            return False
        z, c = zero.primitive_op(), contraction.primitive_op()
        return z.kind == "Zero" and c.kind == "Contraction" and self.same_tile(z, c)

    def fuses_relu(self, contraction: ScheduleNode, relu: ScheduleNode) -> bool:
        """An (in place) ReLU of the tile of the unguarded Contraction just before it.

        The rule: the ReLU is the next sibling of an unguarded Contraction in the
        same node and covers exactly its out tile (`same_tile`). Both then run at
        the same loop indices, nothing runs between them, and the kernel writes
        each element of the tile once, after its final accumulation (the matched
        GEMM/BRGEMM has distinct C addresses). So relu applied to each final value
        before that store is exactly the ReLU pass after it; a guarded ReLU is the
        same under the guard, evaluated at the same indices (`relu_when`). Whatever
        the guard says (`last(k)`: the final accumulation; or anything else) the
        two orders agree. A ReLU after a guarded Contraction is left alone; one
        after a loop is `sunk_into` it when it can be.
        """
        if not (isinstance(contraction, InvokeOp) and isinstance(relu, InvokeOp)):
            return False
        if contraction.guard is not None or self.config.tensor_count != 3:
            return False
        c, r = contraction.primitive_op(), relu.primitive_op()
        return c.kind == "Contraction" and r.kind == "ReLU" and self.same_tile(r, c)

    def emit_guarded(
        self, builder: Builder, node: ScheduleNode, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        if node.guard is None:
            self.emit_node(builder, node, tile, ivs)
            return
        condition = self.condition(builder, node.guard, ivs)
        body = Block()
        self.emit_node(Builder(InsertPoint.at_end(body)), node, tile, ivs)
        body.add_op(scf.YieldOp())
        builder.insert(scf.IfOp(condition, [], Region(body)))

    def condition(self, builder: Builder, guard: GuardAttr, ivs: dict[str, SSAValue]) -> SSAValue:
        result: SSAValue | None = None
        for term in guard.terms:
            axis = self.config.axis(term.axis_text)
            target = 0 if term.kind.data == "first" else axis.size - 1
            test = builder.insert(
                arith.CmpiOp(ivs[term.axis_text], self.index(builder, target), "eq")
            ).result
            result = test if result is None else builder.insert(arith.AndIOp(result, test)).result
        assert result is not None
        return result

    def emit_node(
        self, builder: Builder, node: ScheduleNode, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        if isinstance(node, InvokeOp):
            self.emit_primitive(builder, node.primitive_op(), tile)
            return
        assert isinstance(node, IterOp)
        if node.parallel:
            self.emit_parallel(builder, node, tile, ivs)
            return
        axis = node.axis_op()
        body = Block(arg_types=[IndexType()])
        iv = body.args[0]
        iv.name_hint = _hint(node.axis_id)
        inner = Builder(InsertPoint.at_end(body))
        inner_tile = self.advance(inner, tile, axis, iv, self.config.tensor_names)
        self.emit_nodes(inner, node.children, inner_tile, {**ivs, node.axis_id: iv})
        inner.insert(scf.YieldOp())
        builder.insert(
            scf.ForOp(self.index(builder, 0), self.index(builder, axis.size), self.index(builder, 1), [], body)
        )

    def emit_parallel(
        self, builder: Builder, node: IterOp, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        """One scf.parallel over a chain of directly nested unguarded parallel nodes."""
        chain = [node]
        while (
            len(chain[-1].children) == 1
            and isinstance(child := chain[-1].children[0], IterOp)
            and child.parallel
            and child.guard is None
        ):
            chain.append(child)
        axes = [n.axis_op() for n in chain]
        body = Block(arg_types=[IndexType()] * len(chain))
        inner = Builder(InsertPoint.at_end(body))
        inner_ivs = dict(ivs)
        inner_tile = tile
        for axis, iv, n in zip(axes, body.args, chain):
            iv.name_hint = _hint(n.axis_id)
            inner_tile = self.advance(inner, inner_tile, axis, iv, self.config.tensor_names)
            inner_ivs[n.axis_id] = iv
        self.emit_nodes(inner, chain[-1].children, inner_tile, inner_ivs)
        inner.insert(scf.ReduceOp())
        builder.insert(
            scf.ParallelOp(
                [self.index(builder, 0) for _ in axes],
                [self.index(builder, a.size) for a in axes],
                [self.index(builder, 1) for _ in axes],
                Region(body),
            )
        )

    # -- primitives -----------------------------------------------------------

    def emit_primitive(self, builder: Builder, prim: PrimitiveOp, tile: Tile) -> None:
        if prim.data_type not in SUPPORTED_DATA_TYPES:
            raise TeirError(
                f"lowering: primitive '{prim.primitive_id}' uses {prim.data_type}, which "
                f"is not supported yet (supported: {', '.join(SUPPORTED_DATA_TYPES)})"
            )
        element = SUPPORTED_DATA_TYPES[prim.data_type]
        tensors = prim.accessed_tensors
        for tensor in tensors:
            if self.tensors[tensor].type.element_type != element:  # pyright: ignore
                raise TeirError(
                    f"lowering: primitive '{prim.primitive_id}' works on {prim.data_type} "
                    f"but tensor {tensor} is {self.tensors[tensor].type}"
                )
        if prim.kind == "Contraction" and self.emit_microkernel(builder, prim, element, tile):
            return
        if prim.kind != "Contraction" and self.microkernels:
            from teir_lowering.tile_primitives import emit_tile_primitive

            if emit_tile_primitive(self, builder, prim, element, tile):
                return
        free = order_for_out([*prim.role_axes("M"), *prim.role_axes("N")], prim.element_width)
        reduced = list(prim.role_axes("K")) if prim.kind == "Contraction" else []
        keep_accumulator = prim.kind == "Contraction" and bool(reduced) and all(
            axis.stride_on("out") == 0 for axis in reduced
        )

        def scalar(b: Builder, t: Tile) -> None:
            self.emit_scalar(b, prim.kind, element, t)

        def reduction(b: Builder, t: Tile) -> None:
            out = self.tensors["out"]
            # K axes have stride 0 on out but their offsets still count.
            shift = sum(
                self.elements("out", axis.offset_on("out"), f"the offset of axis '{axis.axis_id}'")
                for axis in reduced
            )
            out_index = self.address(b, t, "out")
            if shift:
                out_index = b.insert(arith.AddiOp(out_index, self.index(b, shift))).result
            acc = b.insert(memref.LoadOp.get(out, [out_index])).res

            def product(bb: Builder, tt: Tile, accumulator: SSAValue) -> SSAValue:
                a = bb.insert(memref.LoadOp.get(self.tensors["in0"], [self.address(bb, tt, "in0")])).res
                c = bb.insert(memref.LoadOp.get(self.tensors["in1"], [self.address(bb, tt, "in1")])).res
                prod = bb.insert(arith.MulfOp(a, c)).result
                return bb.insert(arith.AddfOp(accumulator, prod)).result

            total = self.emit_accumulating_loops(b, reduced, t, ("in0", "in1"), acc, product)
            b.insert(memref.StoreOp.get(total, out, [out_index]))

        if keep_accumulator:
            self.emit_loops(builder, free, tile, tensors, reduction)
        else:
            self.emit_loops(builder, free + reduced, tile, tensors, scalar)

    def microkernel_shape(self, prim: PrimitiveOp) -> GemmShape | None:
        """The GemmShape of a Contraction the microkernels take (every GEMM/BRGEMM
        that teir-match-gemm's rule accepts, in any layout), else None."""
        from teir_lowering.microkernel import GemmShape

        if not self.microkernels or prim.data_type not in SUPPORTED_DATA_TYPES:
            return None
        kernel = prim.matched_kernel()
        kind = kernel.kind_name
        if kind not in ("gemm", "brgemm"):
            return None
        return GemmShape(
            m=kernel.get("m"), n=kernel.get("n"), k=kernel.get("k"),
            lda=kernel.get("lda"), ldb=kernel.get("ldb"), ldc=kernel.get("ldc"),
            batch=kernel.get("br_size") if kind == "brgemm" else 1,
            batch_a=kernel.get("br_stride_a") if kind == "brgemm" else 0,
            batch_b=kernel.get("br_stride_b") if kind == "brgemm" else 0,
            trans=kernel.trans.data,
        )

    def emit_microkernel(
        self,
        builder: Builder,
        prim: PrimitiveOp,
        element: Attribute,
        tile: Tile,
        zero_first: bool = False,
        relu: bool = False,
        relu_when: SSAValue | None = None,
        zero_when: SSAValue | None = None,
    ) -> bool:
        """A register-blocked GEMM/BRGEMM (teir_lowering.microkernel) for a matched
        tile, with a fused Zero before / ReLU after it; False: not a matched tile."""
        from teir_lowering.microkernel import GemmEmitter

        shape = self.microkernel_shape(prim)
        if shape is None:
            return False
        bases: list[SSAValue] = []
        for tensor in ("in0", "in1", "out"):
            shift = sum(
                self.elements(tensor, axis.offset_on(tensor), f"the offset of axis '{axis.axis_id}'")
                for axis in prim.all_role_axes
            )
            base = self.address(builder, tile, tensor)
            if shift:
                base = builder.insert(arith.AddiOp(base, self.index(builder, shift))).result
            bases.append(base)
        emitter = GemmEmitter(
            shape, element, prim.element_width,
            self.tensors["in0"], self.tensors["in1"], self.tensors["out"],
            zero_first=zero_first, zero_when=zero_when, relu=relu, relu_when=relu_when,
        )
        emitter.emit(builder, *bases)
        return True

    def emit_loops(self, builder, axes, tile, tensors, body_fn) -> None:  # noqa: ANN001
        """Nested scf.for over `axes` (outermost first) around `body_fn(builder, tile)`."""
        if not axes:
            body_fn(builder, tile)
            return
        axis, rest = axes[0], axes[1:]
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = _hint(axis.axis_id)
        inner = Builder(InsertPoint.at_end(body))
        inner_tile = self.advance(inner, tile, axis, body.args[0], tensors)
        self.emit_loops(inner, rest, inner_tile, tensors, body_fn)
        inner.insert(scf.YieldOp())
        builder.insert(
            scf.ForOp(self.index(builder, 0), self.index(builder, axis.size), self.index(builder, 1), [], body)
        )

    def emit_accumulating_loops(self, builder, axes, tile, tensors, acc, step_fn) -> SSAValue:  # noqa: ANN001
        """Nested scf.for carrying `acc` through iter_args; returns the final value."""
        if not axes:
            return step_fn(builder, tile, acc)
        axis, rest = axes[0], axes[1:]
        body = Block(arg_types=[IndexType(), acc.type])
        body.args[0].name_hint = _hint(axis.axis_id)
        body.args[1].name_hint = "acc"
        inner = Builder(InsertPoint.at_end(body))
        inner_tile = self.advance(inner, tile, axis, body.args[0], tensors)
        result = self.emit_accumulating_loops(inner, rest, inner_tile, tensors, body.args[1], step_fn)
        inner.insert(scf.YieldOp(result))
        loop = builder.insert(
            scf.ForOp(self.index(builder, 0), self.index(builder, axis.size), self.index(builder, 1), [acc], body)
        )
        return loop.results[0]

    def emit_scalar(self, builder: Builder, kind: str, element: Attribute, tile: Tile) -> None:
        out = self.tensors["out"]
        out_index = self.address(builder, tile, "out")
        if kind == "Zero":
            zero = builder.insert(arith.ConstantOp(FloatAttr(0.0, element))).result  # pyright: ignore
            builder.insert(memref.StoreOp.get(zero, out, [out_index]))
            return
        if kind == "Copy":
            value = builder.insert(memref.LoadOp.get(self.tensors["in0"], [self.address(builder, tile, "in0")])).res
            builder.insert(memref.StoreOp.get(value, out, [out_index]))
            return
        if kind == "ReLU":
            source = "in0" if self.config.tensor_count == 2 else "out"
            from teir_lowering.microkernel import relu

            value = builder.insert(memref.LoadOp.get(self.tensors[source], [self.address(builder, tile, source)])).res
            builder.insert(memref.StoreOp.get(relu(builder, value), out, [out_index]))
            return
        assert kind == "Contraction"
        a = builder.insert(memref.LoadOp.get(self.tensors["in0"], [self.address(builder, tile, "in0")])).res
        b = builder.insert(memref.LoadOp.get(self.tensors["in1"], [self.address(builder, tile, "in1")])).res
        c = builder.insert(memref.LoadOp.get(out, [out_index])).res
        prod = builder.insert(arith.MulfOp(a, b)).result
        total = builder.insert(arith.AddfOp(c, prod)).result
        builder.insert(memref.StoreOp.get(total, out, [out_index]))


def writes_out_once(axes: Sequence[tuple[int, int]], width: int) -> bool:
    """Whether axes given as (extent, out stride) reach distinct out elements of
    `width` units: sorted by stride, each stride of an axis with extent > 1 is at
    least the span of the smaller ones."""
    span = width
    for size, stride in sorted(axes, key=lambda axis: axis[1]):
        if size > 1:
            if stride < span:
                return False
            span = stride * (size - 1) + span
    return True


def order_for_out(axes: list[AxisOp], width: int) -> list[AxisOp]:
    """The free axes, the one with the smallest stride on out innermost, when that is safe.

    Reordering the loops of an element-wise tile changes nothing when every out
    element is written once (`writes_out_once`: distinct indices, distinct
    addresses). The innermost loop then walks out contiguously and vectorizes.
    """
    if not writes_out_once([(axis.size, axis.stride_on("out")) for axis in axes], width):
        return axes
    by_stride = sorted(axes, key=lambda axis: axis.stride_on("out"))
    return list(reversed(by_stride))  # ties keep their order, reversed


def _hint(axis_id: str) -> str | None:
    return axis_id if axis_id.isidentifier() else None


def _element_width(tensor: str, tensor_type: Attribute) -> int:
    if not isinstance(tensor_type, MemRefType) or tensor_type.get_num_dims() != 1:
        raise TeirError(
            f"lowering: tensor {tensor} must be a 1-D memref of its element type, got "
            f"{tensor_type}; other memref shapes are not supported yet"
        )
    element = tensor_type.element_type
    if isinstance(element, Float32Type):
        return 4
    if isinstance(element, Float64Type):
        return 8
    raise TeirError(
        f"lowering: tensor {tensor} holds {element}; only f32 and f64 tensors are "
        "supported yet"
    )


@dataclass
class LowerConfig(RewritePattern):
    """Replaces one teir.config by the loop nest that executes it."""

    microkernels: bool = True

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConfigOp, rewriter: PatternRewriter) -> None:
        emitter = _Emitter(op, self.microkernels)
        block = Block()
        builder = Builder(InsertPoint.at_end(block))
        tile = Tile({name: None for name in op.tensor_names})
        emitter.emit_nodes(builder, op.schedule.roots, tile, {})
        ops: list[Operation] = list(block.ops)
        for new_op in ops:
            new_op.detach()
        rewriter.replace(op, ops, [])


@dataclass(frozen=True)
class TeirToScfPass(ModulePass):
    """Lowers every teir.config to scf/arith/memref (see the module docstring)."""

    name = "teir-to-scf"

    microkernels: bool = True
    """Register-blocked vector code for matched GEMM/BRGEMM tiles, and vector code for
    Zero/Copy/ReLU tiles (teir_lowering.tile_primitives); else scalar loops."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(
            LowerConfig(self.microkernels), apply_recursively=False
        ).rewrite_module(op)
