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
become vector code instead (teir_lowering.codegen.tile_primitives). The
function's tensor arguments are marked `llvm.noalias` (`_mark_noalias`).

A Contraction whose `kernel` attribute (`#teir.kernel`, written by
teir-match-gemm) says GEMM or BRGEMM (any layout) becomes a register-blocked
microkernel (teir_lowering.codegen), which also performs the Zero and ReLU
invocations its `epilogue` attribute (`#teir.epilogue`, written by
teir-fuse-epilogues) names: those emit no code of their own, and the kernel
starts from 0 / applies relu before its store under their guards and the
`at` terms. The decisions are read from the IR, not made again here: without
the attributes a Contraction gets the general loop nest / its Zero and ReLU run
as their own tiles, so run teir-match-gemm and teir-fuse-epilogues first, as
teir-optimize and compile_kernel do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IndexType, NoneAttr, UnitAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from teir_dialect.analysis import disjoint_windows
from teir_dialect.dialect import (
    EPILOGUE_ATTR,
    AxisOp,
    ConfigOp,
    EpilogueAttr,
    GuardAttr,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    KernelAttr,
    PrimitiveOp,
    ScheduleNode,
    id_text,
)
from teir_dialect.gemm import KERNEL_ATTR
from teir_dialect.host import host
from teir_dialect.records import TeirError, Unsupported
from teir_dialect.vocabulary import DataType, GuardKind, KernelKind, OperationKind, Role
from teir_lowering.codegen.emit import (
    Prologue,
    Tile,
    add,
    constant,
    for_loop,
    if_then,
    index,
    load,
    relu,
    store,
)
from teir_lowering.codegen.gemm_emitter import GemmEmitter
from teir_lowering.codegen.gemm_plan import GemmShape
from teir_lowering.codegen.segmented import emit_periodic, emit_segmented
from teir_lowering.codegen.storage import (
    STORED_DATA_TYPES,
    element_count,
    stored_data_type,
)
from teir_lowering.codegen.tile_primitives import emit_tile_primitive
from teir_passes.mark_streamed_out import streamed_in

MAX_PERIOD = 4
"""The longest sequence of sibling subtrees whose repeats become one loop."""

LANE_KERNELS = {KernelKind.SEGMENTED: emit_segmented, KernelKind.PERIODIC: emit_periodic}
"""The batched GEMVs whose batch is the matrix's unit stride (`teir_lowering.codegen.
segmented`), by kernel kind."""


class _Emitter:
    """Builds the loop nest of one configuration, appending to blocks."""

    def __init__(self, config: ConfigOp, microkernels: bool = True):
        self.config = config
        self.microkernels = microkernels
        self.prologue = Prologue()
        """Where the innermost enclosing scope starts: the kernel, or a parallel loop's
        body (run once per chunk)."""
        self.tensors = dict(zip(config.tensor_names, config.tensors))
        self.width = {
            name: stored_data_type(name, value.type).width for name, value in self.tensors.items()
        }
        invocations = [n for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)]
        self.invocations = {node.node_id: node for node in invocations}
        # subtrees by the code they lower to (`code_key`), as small ints
        self.keys: dict[ScheduleNode, int] = {}
        self.interned: dict[tuple, int] = {}
        self.fused = {
            fused
            for node in invocations
            if (epilogue := self.epilogue(node)) is not None
            for fused in (epilogue.zero_id, epilogue.relu_id)
            if fused is not None
        }
        """The Zero/ReLU invocations the kernels perform: they emit nothing."""

    # -- addressing -------------------------------------------------------------

    def elements(self, tensor: str, byte_count: int, what: str) -> int:
        return element_count(tensor, self.width[tensor], byte_count, what)

    def offsets(self, tensor: str, axes: Iterable[AxisOp]) -> int:
        """The offsets of `axes` on `tensor`, in elements."""
        return sum(
            self.elements(tensor, axis.offset_on(tensor), f"the offset of axis '{axis.axis_id}'")
            for axis in axes
        )

    def advance(
        self, builder: Builder, tile: Tile, axis: AxisOp, iv: SSAValue, tensors: Sequence[str]
    ) -> Tile:
        """The tile after adding `offset + stride * iv` of `axis` on each tensor."""
        base = dict(tile.base)
        for tensor in tensors:
            stride = self.elements(tensor, axis.stride_on(tensor), f"the stride of axis '{axis.axis_id}'")
            offset = self.offsets(tensor, [axis])
            if stride == 0 and offset == 0:
                continue
            value = base[tensor]
            if stride:
                step = iv if stride == 1 else builder.insert(
                    arith.MuliOp(iv, index(builder, stride))
                ).result
                value = step if value is None else builder.insert(arith.AddiOp(value, step)).result
            if offset:
                value = index(builder, offset) if value is None else add(builder, value, offset)
            base[tensor] = value
        return Tile(base)

    # -- schedule -------------------------------------------------------------

    def code_key(self, node: ScheduleNode) -> int:
        """Equal for subtrees that lower to the same code: the same structure of
        primitives, axes, policies, guards and recorded epilogues (node ids aside:
        an epilogue counts by the keys of the invocations it fuses and its terms),
        and for an invocation, whether a kernel performs it."""
        if (key := self.keys.get(node)) is None:
            if isinstance(node, InvokeOp):
                epilogue = node.attributes.get(EPILOGUE_ATTR)
                fused: tuple = () if not isinstance(epilogue, EpilogueAttr) else tuple(
                    (self.fused_key(ident), terms) for _, ident, terms, _ in epilogue.parts
                )
                shape: tuple = (node.primitive_id, node.guard, fused,
                                node.node_id in self.fused)
            else:
                assert isinstance(node, IterOp)
                shape = (node.axis_id, node.policy.data, node.guard,
                         tuple(self.code_key(child) for child in node.children))
            key = self.keys[node] = self.interned.setdefault(shape, len(self.interned))
        return key

    def fused_key(self, ident: Attribute) -> object:
        """An epilogue's part in a `code_key`: the key of the invocation it fuses (an
        unknown id stays an id: `epilogue` reports it)."""
        if isinstance(ident, NoneAttr):
            return None
        node = self.invocations.get(id_text(ident))
        return id_text(ident) if node is None else self.code_key(node)

    def repeats(self, nodes: Sequence[ScheduleNode], position: int) -> tuple[int, int]:
        """(period, count): the nodes from `position` on are `count` repeats of the
        `period` nodes there, the shortest period up to MAX_PERIOD that repeats (else
        count 1)."""
        for period in range(1, MAX_PERIOD + 1):
            end = position + period
            while end < len(nodes) and self.code_key(nodes[end]) == self.code_key(
                    nodes[end - period]):
                end += 1
            if (count := (end - position) // period) >= 2:
                return period, count
        return 1, 1

    def emit_nodes(
        self, builder: Builder, nodes: Sequence[ScheduleNode], tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        """The nodes in order. Repeats of a sequence of siblings (up to MAX_PERIOD of
        them) run the same code on the same tiles one after the other, so they
        become a loop around one copy: the code grows with the distinct parts of a
        schedule, not with its repeats. (A node the kernel of another performs
        emits nothing, in the loop as outside it; the kernels of the repeats
        perform nodes of equal keys.)"""
        position = 0
        while position < len(nodes):
            node = nodes[position]
            if node.node_id in self.fused:
                position += 1
                continue
            period, count = self.repeats(nodes, position)
            if count >= 2:
                body = nodes[position:position + period]
                for_loop(builder, 0, count, 1, lambda inner, _iv, _values, body=body: (
                    self.emit_run(inner, body, tile, ivs)))
            else:
                self.emit_guarded(builder, node, tile, ivs)
            position += period * count

    def emit_run(self, builder: Builder, nodes: Sequence[ScheduleNode], tile: Tile,
                 ivs: dict[str, SSAValue]) -> None:
        """`nodes` one after the other, none of them repeated (the body of a loop of
        repeats)."""
        for node in nodes:
            if node.node_id not in self.fused:
                self.emit_guarded(builder, node, tile, ivs)

    def at_end(self, builder: Builder, ivs: dict[str, SSAValue], axis_id: str,
               kind: GuardKind) -> SSAValue:
        """Whether the loop over `axis_id` is at its first / last index."""
        target = 0 if kind == GuardKind.FIRST else self.config.axis(axis_id).size - 1
        return builder.insert(arith.CmpiOp(ivs[axis_id], index(builder, target), "eq")).result

    @staticmethod
    def conjunction(builder: Builder, tests: Iterable[SSAValue]) -> SSAValue | None:
        """tests[0] and tests[1] and ... (None: no test, always true)."""
        result: SSAValue | None = None
        for test in tests:
            result = test if result is None else builder.insert(arith.AndIOp(result, test)).result
        return result

    def condition(self, builder: Builder, guard: GuardAttr | None,
                  ivs: dict[str, SSAValue]) -> SSAValue | None:
        """The i1 of a guard (None: no guard)."""
        terms = () if guard is None else guard.terms
        return self.conjunction(builder, (
            self.at_end(builder, ivs, term.axis_text, GuardKind(term.kind.data)) for term in terms
        ))

    def fused_condition(
        self, builder: Builder, fused: str | None, terms: Iterable[GuardTermAttr],
        ivs: dict[str, SSAValue],
    ) -> SSAValue | None:
        """When the fused Zero/ReLU invocation `fused` acts: its guard and the
        epilogue's `at` terms; None: always."""
        if fused is None:
            return None
        guard = self.condition(builder, self.invocations[fused].guard, ivs)
        return self.conjunction(builder, [
            *([] if guard is None else [guard]),
            *(self.at_end(builder, ivs, term.axis_text, GuardKind(term.kind.data))
              for term in terms),
        ])

    def epilogue(self, node: InvokeOp) -> EpilogueAttr | None:
        """The `epilogue` attribute of a Contraction that gets a microkernel (the
        verifier checks that it is the rule's result)."""
        epilogue = node.attributes.get(EPILOGUE_ATTR)
        if not isinstance(epilogue, EpilogueAttr):
            return None
        if self.microkernel_shape(node.primitive_op()) is None:
            return None
        for fused in (epilogue.zero_id, epilogue.relu_id):
            if fused is not None and fused not in self.invocations:
                raise TeirError(
                    f"lowering: invocation '{node.node_id}' fuses invocation '{fused}', "
                    "which does not exist; run teir-fuse-epilogues"
                )
        return epilogue

    def emit_guarded(
        self, builder: Builder, node: ScheduleNode, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        condition = self.condition(builder, node.guard, ivs)
        if condition is None:
            self.emit_node(builder, node, tile, ivs)
        else:
            if_then(builder, condition, lambda inner: self.emit_node(inner, node, tile, ivs))

    def emit_node(
        self, builder: Builder, node: ScheduleNode, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        if isinstance(node, InvokeOp):
            self.emit_primitive(builder, node.primitive_op(), tile, self.epilogue(node), ivs,
                                self.whole_body_loops(node, ivs))
            return
        assert isinstance(node, IterOp)
        if node.parallel:
            self.emit_parallel(builder, node, tile, ivs)
            return
        axis = node.axis_op()

        def body(inner: Builder, iv: SSAValue, _: list[SSAValue]) -> None:
            iv.name_hint = _hint(node.axis_id)
            inner_tile = self.advance(inner, tile, axis, iv, self.config.tensor_names)
            self.emit_nodes(inner, node.children, inner_tile, {**ivs, node.axis_id: iv})

        for_loop(builder, 0, axis.size, 1, body)

    def emit_parallel(
        self, builder: Builder, node: IterOp, tile: Tile, ivs: dict[str, SSAValue]
    ) -> None:
        """One scf.parallel over a chain of directly nested unguarded parallel nodes."""
        chain = [node]
        while (
            isinstance(child := chain[-1].only_child, IterOp)
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
        outer, self.prologue = self.prologue, Prologue()
        self.emit_nodes(inner, chain[-1].children, inner_tile, inner_ivs)
        ops = self.prologue.take(chunk=True)
        self.prologue = outer
        if ops:
            body.insert_ops_before(ops, body.first_op)  # pyright: ignore[reportArgumentType]
        inner.insert(scf.ReduceOp())
        builder.insert(
            scf.ParallelOp(
                [index(builder, 0) for _ in axes],
                [index(builder, a.size) for a in axes],
                [index(builder, 1) for _ in axes],
                Region(body),
            )
        )

    # -- primitives -----------------------------------------------------------

    @staticmethod
    def whole_body_loops(invoke: InvokeOp,
                         ivs: dict[str, SSAValue]) -> list[tuple[AxisOp, SSAValue]]:
        """The unguarded loops around an unguarded `invoke` whose whole body it is,
        innermost first, with their induction variables: every iteration of theirs
        runs it."""
        loops: list[tuple[AxisOp, SSAValue]] = []
        node: ScheduleNode = invoke
        parent = invoke.parent_op()
        while (node.guard is None and isinstance(parent, IterOp)
               and parent.only_child is node and parent.axis_id in ivs):
            loops.append((parent.axis_op(), ivs[parent.axis_id]))
            node, parent = parent, parent.parent_op()
        return loops

    def emit_primitive(self, builder: Builder, prim: PrimitiveOp, tile: Tile,
                       epilogue: EpilogueAttr | None = None,
                       ivs: dict[str, SSAValue] | None = None,
                       loops: Sequence[tuple[AxisOp, SSAValue]] = ()) -> None:
        data_type = DataType(prim.data_type)
        element = data_type.storage_type
        tensors = prim.accessed_tensors
        for tensor in tensors:
            if self.tensors[tensor].type.element_type != element:  # pyright: ignore
                raise TeirError(
                    f"lowering: primitive '{prim.primitive_id}' works on {prim.data_type} "
                    f"but tensor {tensor} is {self.tensors[tensor].type}"
                )
        kind = prim.kind
        if kind == OperationKind.CONTRACTION:
            if (shape := self.microkernel_shape(prim)) is not None:
                self.emit_microkernel(builder, prim, shape, tile, epilogue, ivs or {})
                return
            kernel = prim.attributes.get(KERNEL_ATTR)
            if (self.microkernels and isinstance(kernel, KernelAttr)
                    and kernel.kind_name in LANE_KERNELS):
                LANE_KERNELS[kernel.kind_name](
                    builder, kernel, *(self.tensors[t] for t in ("in0", "in1", "out")),
                    *self.role_bases(builder, prim, tile), data_type.rounds_inputs)
                return
        elif self.microkernels and emit_tile_primitive(builder, prim, element, tile, loops):
            return
        tf32 = data_type.rounds_inputs
        free = order_for_out([*prim.role_axes(Role.M), *prim.role_axes(Role.N)],
                             prim.element_width)
        reduced = list(prim.role_axes(Role.K)) if kind == OperationKind.CONTRACTION else []
        if reduced and all(axis.stride_on("out") == 0 for axis in reduced):
            self.emit_loops(builder, free, tile, tensors,
                            lambda inner, inner_tile, _: self.emit_reduction(
                                inner, reduced, inner_tile, tf32))
        else:
            self.emit_loops(builder, free + reduced, tile, tensors,
                            lambda inner, inner_tile, _: self.emit_scalar(
                                inner, kind, element, inner_tile, tf32))

    def emit_reduction(self, builder: Builder, reduced: Sequence[AxisOp], tile: Tile,
                       tf32: bool) -> None:
        """One element of out accumulated in a register across the K loops `reduced`
        (stride 0 on out; their offsets still count), in the arithmetic type: one
        rounding to the stored type, when it is stored."""
        out = self.tensors["out"]
        out_index = add(builder, tile.address(builder, "out"), self.offsets("out", reduced))
        acc = load(builder, out, out_index, widened=True)

        def product(inner: Builder, inner_tile: Tile, carried: list[SSAValue]) -> list[SSAValue]:
            (accumulator,) = carried
            a, b = (load(inner, self.tensors[name], inner_tile.address(inner, name), tf32=tf32,
                         widened=True) for name in ("in0", "in1"))
            prod = inner.insert(arith.MulfOp(a, b)).result
            return [inner.insert(arith.AddfOp(accumulator, prod)).result]

        (total,) = self.emit_loops(builder, reduced, tile, ("in0", "in1"), product, [acc])
        store(builder, total, out, out_index)

    def microkernel_shape(self, prim: PrimitiveOp) -> GemmShape | None:
        """The tile of a Contraction whose `kernel` attribute (teir-match-gemm's
        decision) is a GEMM/BRGEMM, which the microkernels take in any layout; else
        (no attribute, or another kernel) None."""
        if not self.microkernels:
            return None
        kernel = prim.attributes.get(KERNEL_ATTR)
        return GemmShape.of(kernel) if isinstance(kernel, KernelAttr) else None

    def role_bases(self, builder: Builder, prim: PrimitiveOp, tile: Tile) -> list[SSAValue]:
        """The element index in0's, in1's and out's tiles start at, their role axes'
        offsets included: where a kernel of the whole tile reads and writes."""
        return [add(builder, tile.address(builder, tensor),
                    self.offsets(tensor, prim.all_role_axes))
                for tensor in ("in0", "in1", "out")]

    def emit_microkernel(
        self,
        builder: Builder,
        prim: PrimitiveOp,
        shape: GemmShape,
        tile: Tile,
        epilogue: EpilogueAttr | None,
        ivs: dict[str, SSAValue],
    ) -> None:
        """The register-blocked GEMM/BRGEMM (teir_lowering.codegen.gemm_emitter) of a matched
        tile, with the Zero before / ReLU after it that `epilogue` names."""
        zero = relu = None
        zero_when = relu_when = None
        if epilogue is not None:
            zero, relu = epilogue.zero_id, epilogue.relu_id
            zero_when = self.fused_condition(builder, zero, epilogue.zero_at, ivs)
            relu_when = self.fused_condition(builder, relu, epilogue.relu_at, ivs)
        bases = self.role_bases(builder, prim, tile)
        data_type = DataType(prim.data_type)
        pairs = prim.pairs_bf16_products
        if pairs and "avx512bf16" not in host().features:
            raise Unsupported(
                f"lowering: primitive '{prim.primitive_id}' has metadata bf16_products = "
                f"pairs, which needs AVX512-BF16 (vdpbf16ps); this host "
                f"({host().cpu}) has none: drop the key for sequential products"
            )
        emitter = GemmEmitter(
            shape, data_type.storage_type, data_type.accumulator_type.bitwidth // 8,
            self.tensors["in0"], self.tensors["in1"], self.tensors["out"],
            zero_first=zero is not None, zero_when=zero_when,
            relu=relu is not None, relu_when=relu_when,
            tf32=data_type.rounds_inputs, pairs=pairs, prologue=self.prologue,
            from_memory=streamed_in(self.config),
        )
        emitter.emit(builder, *bases)

    def emit_loops(
        self, builder: Builder, axes: Sequence[AxisOp], tile: Tile, tensors: Sequence[str],
        body: Callable[[Builder, Tile, list[SSAValue]], Sequence[SSAValue] | None],
        carried: Sequence[SSAValue] = (),
    ) -> list[SSAValue]:
        """Nested scf.for over `axes` (outermost first) around `body(builder, tile,
        values)`, carrying `carried` through iter_args; returns the final values."""
        if not axes:
            return list(body(builder, tile, list(carried)) or ())
        axis, rest = axes[0], axes[1:]

        def step(inner: Builder, iv: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
            iv.name_hint = _hint(axis.axis_id)
            for value in values:
                value.name_hint = "acc"
            inner_tile = self.advance(inner, tile, axis, iv, tensors)
            return self.emit_loops(inner, rest, inner_tile, tensors, body, values)

        return for_loop(builder, 0, axis.size, 1, step, carried)

    def emit_scalar(self, builder: Builder, kind: OperationKind, element: Attribute,
                    tile: Tile, tf32: bool) -> None:
        """One element of a primitive (Zero/Copy/ReLU move stored values; a Contraction
        computes in the arithmetic type)."""
        out = self.tensors["out"]
        out_index = tile.address(builder, "out")
        if kind == OperationKind.ZERO:
            store(builder, constant(builder, element), out, out_index)
            return
        if kind == OperationKind.COPY:
            value = load(builder, self.tensors["in0"], tile.address(builder, "in0"))
            store(builder, value, out, out_index)
            return
        if kind == OperationKind.RELU:
            source = "in0" if self.config.tensor_count == 2 else "out"
            value = load(builder, self.tensors[source], tile.address(builder, source))
            store(builder, relu(builder, value), out, out_index)
            return
        a, b = (load(builder, self.tensors[name], tile.address(builder, name), tf32=tf32,
                     widened=True) for name in ("in0", "in1"))
        c = load(builder, out, out_index, widened=True)
        prod = builder.insert(arith.MulfOp(a, b)).result
        total = builder.insert(arith.AddfOp(c, prod)).result
        store(builder, total, out, out_index)


def order_for_out(axes: list[AxisOp], width: int) -> list[AxisOp]:
    """The free axes, the one with the smallest stride on out innermost, when that is safe.

    Reordering the loops of an element-wise tile changes nothing when every out
    element is written once (`disjoint_windows`: distinct indices, distinct
    addresses). The innermost loop then walks out contiguously and vectorizes.
    """
    if not disjoint_windows([(axis.size, axis.stride_on("out")) for axis in axes], width):
        return axes
    by_stride = sorted(axes, key=lambda axis: axis.stride_on("out"))
    return list(reversed(by_stride))  # ties keep their order, reversed


def _hint(axis_id: str) -> str | None:
    """The axis id as the loop variable's name where xDSL allows it: ASCII, and not
    only a `_N` suffix, which xDSL strips to an empty (invalid) name."""
    if not SSAValue.is_valid_name(axis_id):
        return None
    return SSAValue.extract_valid_name(axis_id) or None


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
        ops = list(block.ops)
        for new_op in ops:
            new_op.detach()
        ops = emitter.prologue.take(chunk=False) + ops
        _mark_noalias(op)
        rewriter.replace(op, ops, [])


NOALIAS = "llvm.noalias"
"""The argument attribute (as MLIR's LLVM dialect spells it) by which teir-to-scf
tells LLVM that a tensor does not overlap the others where the kernel writes."""


def _mark_noalias(config: ConfigOp) -> None:
    """Marks the function arguments that are `config`'s tensors `NOALIAS`: TEIR's
    tensors do not overlap where a kernel writes (`compile_kernel`'s kernels refuse
    an out that overlaps an input), so LLVM may drop its run-time overlap checks
    and the stores that a later one overwrites (README, Benchmarks)."""
    function = config.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    if function is None:
        return
    args = function.body.block.args
    tensors = {value for value in config.tensors if value in args}
    if not tensors:
        return
    old = function.arg_attrs.data if function.arg_attrs is not None else (
        (DictionaryAttr({}),) * len(args))
    function.arg_attrs = ArrayAttr([
        DictionaryAttr({**entry.data, NOALIAS: UnitAttr()}) if arg in tensors else entry
        for arg, entry in zip(args, old)])


@dataclass(frozen=True)
class TeirToScfPass(ModulePass):
    """Lowers every teir.config to scf/arith/memref (see the module docstring)."""

    name = "teir-to-scf"

    microkernels: bool = True
    """Register-blocked vector code for GEMM/BRGEMM tiles (as the `kernel` attribute
    says), and vector code for Zero/Copy/ReLU tiles (teir_lowering.codegen.tile_primitives);
    else scalar loops."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(
            LowerConfig(self.microkernels), apply_recursively=False
        ).rewrite_module(op)


__all__ = ["STORED_DATA_TYPES", "TeirToScfPass", "stored_data_type"]
