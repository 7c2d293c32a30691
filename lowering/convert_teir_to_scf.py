"""`teir-to-scf`: lower each `teir.config` to scf/arith/memref loops in place.

Iteration nodes become `scf.for` (sequential) or `scf.parallel` (parallel; a
parallel node whose only child is an unguarded parallel node joins it as one
multi-dimensional loop). Guards become `scf.if` on index comparisons. Tile
addresses follow §10.4: each axis adds `offset + stride * index` bytes, here
divided by the tensor's element width, because tensors are 1-D memrefs of their
element type addressed by element. Primitives become loops over their role
axes (M..., N..., K..., outermost first) around a scalar body; a Contraction
whose K axes all have stride 0 on `out` keeps its accumulator in a register
across the K loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
            following = nodes[index + 1] if index + 1 < len(nodes) else None
            if following is not None and self.fuses_zero(node, following):
                # Zero then GEMM/BRGEMM of the same tile: the kernel starts from 0.
                assert isinstance(following, InvokeOp)
                prim = following.primitive_op()
                element = SUPPORTED_DATA_TYPES[prim.data_type]
                if self.emit_microkernel(builder, prim, element, tile, zero_first=True):
                    index += 2
                    continue
            self.emit_guarded(builder, node, tile, ivs)
            index += 1

    @staticmethod
    def fuses_zero(zero: ScheduleNode, contraction: ScheduleNode) -> bool:
        """An unguarded Zero over exactly the M, N axes of the next, unguarded Contraction."""
        if not (isinstance(zero, InvokeOp) and isinstance(contraction, InvokeOp)):
            return False
        if zero.guard is not None or contraction.guard is not None:
            return False
        z, c = zero.primitive_op(), contraction.primitive_op()
        if z.kind != "Zero" or c.kind != "Contraction" or z.data_type != c.data_type:
            return False
        return all(
            [id_text(a) for a in z.role_ids(role)] == [id_text(a) for a in c.role_ids(role)]
            for role in ("M", "N")
        )

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

    def emit_microkernel(
        self,
        builder: Builder,
        prim: PrimitiveOp,
        element: Attribute,
        tile: Tile,
        zero_first: bool = False,
    ) -> bool:
        """A register-blocked GEMM/BRGEMM for matched tiles with column-major A and C."""
        from teir_lowering.microkernel import MIN_LANES, GemmEmitter, GemmShape
        from teir_passes.match_gemm import match_contraction

        if not self.microkernels:
            return False
        kernel = match_contraction(prim)
        kind = kernel.kind_name
        width = prim.element_width
        if kind not in ("gemm", "brgemm") or kernel.trans.data[0] + kernel.trans.data[2] != "NN":
            return False
        if kernel.get("m") < MIN_LANES:
            return False
        shape = GemmShape(
            m=kernel.get("m"), n=kernel.get("n"), k=kernel.get("k"),
            lda=kernel.get("lda"), ldb=kernel.get("ldb"), ldc=kernel.get("ldc"),
            batch=kernel.get("br_size") if kind == "brgemm" else 1,
            batch_a=kernel.get("br_stride_a") if kind == "brgemm" else 0,
            batch_b=kernel.get("br_stride_b") if kind == "brgemm" else 0,
            b_transposed=kernel.trans.data[1] == "T",
        )
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
        if prim.data_type not in SUPPORTED_DATA_TYPES:
            return False
        emitter = GemmEmitter(
            shape, element, width, self.tensors["in0"], self.tensors["in1"], self.tensors["out"],
            zero_first=zero_first,
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
            value = builder.insert(memref.LoadOp.get(self.tensors[source], [self.address(builder, tile, source)])).res
            zero = builder.insert(arith.ConstantOp(FloatAttr(0.0, element))).result  # pyright: ignore
            negative = builder.insert(arith.CmpfOp(value, zero, "olt")).result
            result = builder.insert(arith.SelectOp(negative, zero, value)).result
            builder.insert(memref.StoreOp.get(result, out, [out_index]))
            return
        assert kind == "Contraction"
        a = builder.insert(memref.LoadOp.get(self.tensors["in0"], [self.address(builder, tile, "in0")])).res
        b = builder.insert(memref.LoadOp.get(self.tensors["in1"], [self.address(builder, tile, "in1")])).res
        c = builder.insert(memref.LoadOp.get(out, [out_index])).res
        prod = builder.insert(arith.MulfOp(a, b)).result
        total = builder.insert(arith.AddfOp(c, prod)).result
        builder.insert(memref.StoreOp.get(total, out, [out_index]))


def order_for_out(axes: list[AxisOp], width: int) -> list[AxisOp]:
    """The free axes, the one with the smallest stride on out innermost, when that is safe.

    Reordering the loops of an element-wise tile changes nothing when every out
    element is written once (distinct indices, distinct addresses), which holds
    if each stride, smallest first, exceeds the span of the smaller ones. The
    innermost loop then walks out contiguously and vectorizes.
    """
    by_stride = sorted(axes, key=lambda axis: axis.stride_on("out"))
    span = width
    for axis in by_stride:
        if axis.size > 1:
            if axis.stride_on("out") < span:
                return axes
            span = axis.stride_on("out") * (axis.size - 1) + span
    return list(reversed(by_stride))


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
    """Register-blocked vector code for matched GEMM/BRGEMM tiles (else scalar loops)."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(
            LowerConfig(self.microkernels), apply_recursively=False
        ).rewrite_module(op)
