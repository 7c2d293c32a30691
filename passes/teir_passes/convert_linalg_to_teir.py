"""`convert-linalg-to-teir`: linalg on static memrefs becomes `teir.config`.

What converts (memrefs with static shapes and identity or static `strided<>`
layouts, one float element type f16/bf16/f32/f64 throughout):

* a multiply-accumulate (`arith.mulf` of the two inputs, `arith.addf` with the
  output, either operand order) with projected-permutation indexing maps:
  `linalg.generic` and `linalg.matmul` (also with its `indexing_maps`, the
  transposed forms xDSL parses) -> Contraction;
* a body that yields its input (`linalg.copy`, `linalg.transpose`,
  `linalg.broadcast`, copy-like `linalg.generic`) -> Copy; so does `memref.copy`
  (one-shot bufferization copies a temporary into an out-parameter with it);
* `linalg.fill` with +0.0 (or the generic that `--linalg-generalize-named-ops`
  makes of it) -> Zero;
* `arith.maximumf(x, +0.0)` in a `linalg.generic`, or `linalg.max` against a
  buffer that a `linalg.fill` with +0.0 last wrote -> ReLU (in place on out
  when it reads and writes the same buffer);
* a zero fill just before a contraction into the same memref, and an in-place
  ReLU of that memref just after it, join the contraction's configuration as
  Zero first and ReLU last ("just": only side-effect-free ops in between).

Each becomes a `teir.config` built by `teir_dialect.builders.build_record`:
one axis `dI` per loop dimension of the op, byte strides from the memref
layouts, the free dimensions (those of the output) outermost in the output's
order, a plain scalar schedule that `teir-optimize` lifts to GEMM/BRGEMM.

Operands. The configuration takes one 1-D view per memref,
`memref.reinterpret_cast %m to offset: [0], sizes: [N], strides: [1]`, with
N the elements from the memref's base up to its last element; the layout
offset becomes the tensor's byte offset in the configuration. The verifier
would accept the memrefs themselves, but it bounds a static memref by its
element count, which a strided layout exceeds (memref<4x4xf32,
strided<[8, 1]>> spans 28 elements), and the lowering addresses 1-D memrefs.
The cast restarts from the base pointer, so it is taken of the buffer a
subview (cast, ...) views, whose base the subview's layout offset counts from;
a lowered function takes each memref argument as the pointer to its base.

What stays: everything else, untouched, with a discardable attribute
`teir.not_converted = "reason"` on the linalg op (xDSL has no remarks; an
attribute survives printing, so tests and tools read it): tensor semantics,
dynamic shapes or strides, other layouts, integer or mixed element types,
non-projected maps, other bodies, fills with other values, a ReLU against a
buffer not proven zero, an output that overlaps itself or aliases an input.

Aliasing. Memrefs derived (through side-effect-free view ops) from different
function arguments or allocations are taken to be different buffers, as TEIR's
tensors are; an output derived from the same one as an input is refused, except
for the ReLU in place that TEIR expresses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    FillOp,
    GenericOp,
    IndexOp,
    MaxOp,
    YieldOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from teir_dialect.builders import Dimension, build_config, build_record
from teir_dialect.dialect import ConfigOp
from teir_dialect.linalg_ops import MemrefCopyOp
from teir_dialect.records import TeirError
from teir_dialect.vocabulary import DataType, OperationKind

REMARK = "teir.not_converted"
"""The discardable attribute naming why a linalg op was left as it was."""

ZERO, COPY, RELU, CONTRACTION = (
    OperationKind.ZERO,
    OperationKind.COPY,
    OperationKind.RELU,
    OperationKind.CONTRACTION,
)

DATA_TYPES: dict[type[Attribute], DataType] = {
    Float16Type: DataType.FP16,
    BFloat16Type: DataType.BF16,
    Float32Type: DataType.FP32,
    Float64Type: DataType.FP64,
}

STRUCTURED = (LinalgStructuredOperation, BroadcastOp)

MEMREF_COPY = (memref.CopyOp, MemrefCopyOp)
"""xDSL's memref.copy (generic form) and TEIR's (teir_dialect.linalg_ops)."""


class NotConvertible(Exception):
    """Why an op has no TEIR counterpart (the text of its remark)."""


# --------------------------------------------------------------------------
# Memrefs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A memref value with static shape, element strides and offset."""

    value: SSAValue
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    @property
    def span(self) -> int:
        """Elements from the base up to and including the last element."""
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides)) + 1


def layout_of(value: SSAValue, output: bool = False) -> Layout:
    typ = value.type
    if isinstance(typ, TensorType):
        raise NotConvertible(
            "tensor semantics: convert-linalg-to-teir works on memrefs (bufferize first: "
            "mlir-opt --one-shot-bufferize='bufferize-function-boundaries "
            "function-boundary-type-conversion=identity-layout-map' "
            "--buffer-results-to-out-params)"
        )
    if not isinstance(typ, MemRefType):
        raise NotConvertible(f"operand of type {typ} is not a memref")
    shape = typ.get_shape()
    if any(n < 0 for n in shape):
        raise NotConvertible(f"dynamic shape in {typ}")
    if any(n == 0 for n in shape):
        raise NotConvertible(f"{typ} is empty; TEIR axes have positive extents")
    if not isinstance(typ.memory_space, NoneAttr):
        raise NotConvertible(f"memory space {typ.memory_space} in {typ}")
    if not isinstance(typ.layout, NoneAttr | StridedLayoutAttr):
        raise NotConvertible(
            f"layout {typ.layout} in {typ}; only identity and strided<> layouts"
        )
    strides, offset = typ.get_strides(), typ.get_offset()
    if strides is None or offset is None or None in strides:
        raise NotConvertible(f"dynamic stride or offset in {typ}")
    if any(s < 0 for s in strides) or offset < 0:  # pyright: ignore[reportOperatorIssue]
        raise NotConvertible(
            f"negative stride or offset in {typ}; TEIR strides are non-negative"
        )
    if output and any(s == 0 and n > 1 for s, n in zip(strides, shape)):
        raise NotConvertible(  # an input may broadcast; MLIR's layouts have no zero
            f"an output with a zero stride in {typ} writes an element many times "
            "(mlir-opt: strides must not be zero)")
    return Layout(value, shape, tuple(strides), offset)  # pyright: ignore[reportArgumentType]


def root_of(value: SSAValue) -> object | None:
    """The buffer a memref views: a block argument or an allocation, followed through
    side-effect-free ops of one memref operand (subview, cast, reinterpret_cast,
    ...); None when unknown (it may then alias anything)."""
    while True:
        if isinstance(value, BlockArgument):
            return value
        op = value.owner
        if isinstance(op, memref.AllocOp | memref.AllocaOp):
            return value
        if isinstance(op, memref.GetGlobalOp):
            return ("global", op.name_.string_value())
        sources = [o for o in op.operands if isinstance(o.type, MemRefType)]
        if not is_side_effect_free(op) or len(sources) != 1:
            return None
        value = sources[0]


VIEW_OPS = (
    memref.SubviewOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
)
"""Views whose result's layout offset counts, as in MLIR, from the base of the
buffer they view (unlike memref.view, which moves the base)."""


def base_of(value: SSAValue) -> SSAValue:
    """The memref a chain of VIEW_OPS of one element type starts from: a static
    layout of `value` addresses it from that memref's base pointer."""
    while isinstance(op := value.owner, VIEW_OPS):
        source = op.operands[0]
        if not isinstance(source.type, MemRefType) or (
            source.type.get_element_type() != value.type.get_element_type()  # pyright: ignore
        ):
            break
        value = source
    return value


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    first, second = root_of(a), root_of(b)
    return first is None or second is None or first == second


def _written(op: Operation) -> list[SSAValue] | None:
    """The memrefs `op` may write, None when unknown."""
    if is_side_effect_free(op):
        return []
    if isinstance(op, LinalgStructuredOperation):
        return list(op.outputs)
    if isinstance(op, BroadcastOp):
        return [op.init]
    if isinstance(op, ConfigOp):
        return [op.tensors[-1]]
    if isinstance(op, memref.StoreOp):
        return [op.memref]
    if isinstance(op, MEMREF_COPY):
        return [op.destination]
    return None


# --------------------------------------------------------------------------
# What one op computes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """A tensor of the configuration: its memref and the loop dimension of each of
    its dimensions (unused: a tensor slot the operations never touch)."""

    layout: Layout
    dims: tuple[int, ...]
    used: bool = True


@dataclass(frozen=True)
class Plan:
    """One configuration: operations, loop extents and tensors (in0, [in1,] out)."""

    kinds: tuple[OperationKind, ...]
    extents: tuple[int, ...]
    tensors: tuple[Operand, ...]
    data_type: DataType

    @property
    def out(self) -> Operand:
        return self.tensors[-1]

    def record(self) -> dict:
        """The tree-form record (build_record); a TeirError names what it refuses."""
        width = self.data_type.width
        order = [*self.out.dims, *(d for d in range(len(self.extents)) if d not in self.out.dims)]
        dimensions = [
            Dimension(f"d{d}", self.extents[d], tuple(
                sum(s * width for i, s in zip(t.dims, t.layout.strides) if i == d)
                for t in self.tensors
            ))
            for d in order
        ]
        base = [t.layout.offset * width if t.used else 0 for t in self.tensors]
        return build_record(dimensions, self.kinds, self.data_type, base_offsets=base)


def _data_type(values: Sequence[SSAValue], block: Block | None) -> DataType:
    """The one float type of the memrefs' elements and of the body's arguments."""
    elements = {v.type.get_element_type() for v in values}  # pyright: ignore
    if block is not None:
        elements |= {arg.type for arg in block.args}
    if len(elements) != 1:
        names = ", ".join(sorted(map(str, elements)))
        raise NotConvertible(f"mixed element types ({names}); TEIR computes in one type")
    element = elements.pop()
    if not isinstance(element, AnyFloat) or type(element) not in DATA_TYPES:
        raise NotConvertible(
            f"element type {element}: TEIR primitives work on f16, bf16, f32 and f64"
        )
    return DATA_TYPES[type(element)]


@dataclass(frozen=True)
class Structure:
    """A structured op's inputs, output, loop count, the loop dimension of each
    operand dimension (projected permutations only) and its body."""

    inputs: list[SSAValue]
    output: SSAValue
    loops: int
    dims: list[tuple[int, ...]]
    block: Block


def _structure(op: Operation) -> Structure:
    if isinstance(op, BroadcastOp):
        rank = len(op.init.type.get_shape())  # pyright: ignore
        added = set(op.dimensions.get_values())
        kept = tuple(d for d in range(rank) if d not in added)
        return Structure([op.input], op.init, rank, [kept, tuple(range(rank))],
                         op.hidden_region.block)
    assert isinstance(op, LinalgStructuredOperation)
    if len(op.outputs) != 1:
        raise NotConvertible(f"{len(op.outputs)} outputs; TEIR writes one tensor")
    dims: list[tuple[int, ...]] = []
    for index, attr in enumerate(op.get_indexing_maps()):
        amap = attr.data
        if amap.num_symbols or not all(isinstance(e, AffineDimExpr) for e in amap.results):
            raise NotConvertible(
                f"indexing map #{index} {amap} is not a projected permutation; TEIR "
                "axes advance each tensor by a stride per loop dimension"
            )
        positions = tuple(e.position for e in amap.results)  # pyright: ignore
        if len(set(positions)) != len(positions):
            raise NotConvertible(
                f"indexing map #{index} {amap} repeats a loop dimension (a diagonal)"
            )
        dims.append(positions)
    for value in op.inputs:
        if not isinstance(value.type, MemRefType | TensorType):
            raise NotConvertible(f"scalar input of type {value.type}")
    return Structure(list(op.inputs), op.outputs[0], op.get_num_loops(), dims, op.body.block)


def _extents(operands: Sequence[tuple[Layout, tuple[int, ...]]], loops: int) -> tuple[int, ...]:
    extents: dict[int, int] = {}
    for layout, dims in operands:
        for dim, extent in zip(dims, layout.shape):
            if extents.setdefault(dim, extent) != extent:
                raise NotConvertible(f"loop d{dim} has extents {extents[dim]} and {extent}")
    if len(extents) != loops:
        raise NotConvertible("a loop dimension indexes no operand")
    return tuple(extents[d] for d in range(loops))


def _is_positive_zero(value: SSAValue) -> bool:
    op = value.owner
    if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, FloatAttr):
        return False
    number = op.value.value.data
    return number == 0.0 and math.copysign(1.0, number) > 0


def _body_ops(block: Block) -> tuple[list[Operation], SSAValue]:
    ops = list(block.ops)
    terminator = ops[-1]
    if not isinstance(terminator, YieldOp) or len(terminator.operands) != 1:
        count = len(terminator.operands) if isinstance(terminator, YieldOp) else 0
        raise NotConvertible(f"the body yields {count} values, not the output's one")
    result = terminator.operands[0]
    out = block.args[-1].type if block.args else None
    if result.type != out:
        raise NotConvertible(f"the body yields a {result.type}, not the output's {out}")
    return ops[:-1], result


def _is_mac(block: Block) -> bool:
    """mulf of the two inputs, addf with the output (either order), yielded."""
    ops, result = _body_ops(block)
    if len(block.args) != 3 or len(ops) != 2:
        return False
    mul, add = ops
    a, b, c = block.args
    return (
        isinstance(mul, arith.MulfOp)
        and {mul.lhs, mul.rhs} == {a, b}
        and isinstance(add, arith.AddfOp)
        and {add.lhs, add.rhs} == {mul.result, c}
        and result is add.result
    )


def _relu_argument(block: Block) -> BlockArgument | None:
    """x when the body yields maximumf(x, +0.0) (either order) of a block argument."""
    ops, result = _body_ops(block)
    ops = [op for op in ops if not (isinstance(op, arith.ConstantOp) and op.result.uses)]
    if len(ops) != 1 or not isinstance(maximum := ops[0], arith.MaximumfOp):
        return None
    if result is not maximum.result:
        return None
    for x, zero in ((maximum.lhs, maximum.rhs), (maximum.rhs, maximum.lhs)):
        if isinstance(x, BlockArgument) and x.block is block and _is_positive_zero(zero):
            return x
    return None


def _body_text(block: Block) -> str:
    names = [op.name for op in block.ops if not isinstance(op, YieldOp)]
    return ", ".join(names) if names else "only a linalg.yield"


def zero_filled(value: SSAValue, before: Operation) -> bool:
    """Whether the last write to `value`'s buffer before `before` (same block) is a
    linalg.fill with +0.0 of `value` itself."""
    op = before.prev_op
    while op is not None:
        if isinstance(op, FillOp | GenericOp) and is_fill(op) and op.outputs[0] is value:
            return _is_positive_zero(op.inputs[0])
        written = _written(op)
        if written is None or any(may_alias(w, value) for w in written):
            return False
        op = op.prev_op
    return False


def is_fill(op: Operation | None) -> bool:
    """linalg.fill, or the linalg.generic that `mlir-opt --linalg-generalize-named-ops`
    makes of it: one scalar input yielded to every element of one output."""
    if isinstance(op, FillOp):
        return True
    if not isinstance(op, GenericOp) or len(op.inputs) != 1 or len(op.outputs) != 1:
        return False
    if isinstance(op.inputs[0].type, MemRefType | TensorType):
        return False
    ops, result = _body_ops(op.body.block)
    out_map = op.get_indexing_maps().data[-1].data
    # every element of out, once: its map a permutation of the loops (a constant or
    # compound result, `(i) -> (i, 0)`, writes a part of out)
    loops = [e.position for e in out_map.results if isinstance(e, AffineDimExpr)]
    return (not ops and result is op.body.block.args[0] and not out_map.num_symbols
            and len(loops) == len(out_map.results)
            and sorted(loops) == list(range(op.get_num_loops())))


def _fill_plan(op: FillOp | GenericOp) -> Plan:
    if len(op.outputs) != 1:
        raise NotConvertible("a fill of several outputs")
    out = layout_of(op.outputs[0], output=True)
    data_type = _data_type([out.value], None)
    if op.inputs[0].type != op.outputs[0].type.get_element_type():  # pyright: ignore
        raise NotConvertible(f"a fill with a {op.inputs[0].type} value (a conversion)")
    if not _is_positive_zero(op.inputs[0]):
        value = op.inputs[0].owner
        shown = value.value if isinstance(value, arith.ConstantOp) else "a computed value"
        raise NotConvertible(
            f"a fill with {shown}, not the constant +0.0 that TEIR's Zero writes"
        )
    dims = tuple(range(len(out.shape)))
    target = Operand(out, dims)
    return Plan((ZERO,), out.shape, (Operand(out, (), used=False), target), data_type)


def plan_of(op: Operation) -> Plan:
    """The configuration `op` alone becomes, or NotConvertible with the reason
    (also when the builder refuses its record, e.g. an output overlapping itself)."""
    plan = _plan(op)
    try:
        plan.record()
    except TeirError as err:
        raise NotConvertible(str(err)) from None
    return plan


def _copy_plan(op: memref.CopyOp | MemrefCopyOp) -> Plan:
    source, target = layout_of(op.source), layout_of(op.destination, output=True)
    data_type = _data_type([op.source, op.destination], None)
    dims = tuple(range(len(target.shape)))
    operands = (Operand(source, dims), Operand(target, dims))
    _check_no_alias(operands[:1], operands[1])
    return Plan((COPY,), target.shape, operands, data_type)


def _plan(op: Operation) -> Plan:
    if isinstance(op, FillOp | GenericOp) and is_fill(op):
        return _fill_plan(op)
    if isinstance(op, MEMREF_COPY):
        return _copy_plan(op)
    if not isinstance(op, STRUCTURED):
        raise NotConvertible(f"{op.name} has no TEIR counterpart")
    structure = _structure(op)
    inputs, output, block = structure.inputs, structure.output, structure.block
    out = layout_of(output, output=True)
    ins = [layout_of(value) for value in inputs]
    data_type = _data_type([*inputs, output], block)
    layouts = [*ins, out]
    extents = _extents(list(zip(layouts, structure.dims)), structure.loops)
    operands = [Operand(layout, d) for layout, d in zip(layouts, structure.dims)]
    target = operands[-1]

    if _is_mac(block):
        _check_no_alias(operands[:-1], target)
        return Plan((CONTRACTION,), extents, tuple(operands), data_type)
    if len(set(target.dims)) != len(extents):
        raise NotConvertible(
            f"a reduction (the output is indexed by {len(target.dims)} of "
            f"{len(extents)} loops) with body {_body_text(block)}; TEIR reduces only "
            "by multiply-accumulate (arith.mulf, arith.addf)"
        )
    ops, result = _body_ops(block)
    if not ops and len(inputs) == 1 and result is block.args[0]:
        _check_no_alias(operands[:-1], target)
        return Plan((COPY,), extents, (operands[0], target), data_type)
    if isinstance(op, MaxOp) or (x := _relu_argument(block)) is None:
        return _max_plan(op, operands, extents, data_type, block)
    source = operands[x.index]
    return _relu_plan(source, target, extents, data_type)


def _max_plan(
    op: Operation, operands: list[Operand], extents: tuple[int, ...],
    data_type: DataType, block: Block,
) -> Plan:
    """linalg.max of a buffer against a zero-filled one is a ReLU."""
    ops, result = _body_ops(block)
    maximum = ops[0] if len(ops) == 1 else None
    if (
        not isinstance(op, MaxOp)
        or not isinstance(maximum, arith.MaximumfOp)
        or {maximum.lhs, maximum.rhs} != set(block.args[:2])
        or result is not maximum.result
        or len(operands) != 3
    ):
        raise NotConvertible(
            f"the body computes {_body_text(block)}; TEIR has multiply-accumulate, "
            "copy, zero (fill 0.0) and ReLU (maximumf with +0.0)"
        )
    target = operands[-1]
    for source, zero in ((operands[0], operands[1]), (operands[1], operands[0])):
        if zero_filled(zero.layout.value, op):
            return _relu_plan(source, target, extents, data_type)
    raise NotConvertible(
        "linalg.max against a buffer that is not known to hold +0.0 (no linalg.fill "
        "with 0.0 of it earlier in the block without writes in between)"
    )


def _relu_plan(
    source: Operand, target: Operand, extents: tuple[int, ...], data_type: DataType
) -> Plan:
    if source.layout.value is target.layout.value and source.dims == target.dims:
        unused = Operand(target.layout, (), used=False)
        return Plan((RELU,), extents, (unused, unused, target), data_type)
    _check_no_alias([source], target)
    return Plan((RELU,), extents, (source, target), data_type)


def _check_no_alias(inputs: Sequence[Operand], out: Operand) -> None:
    for index, operand in enumerate(inputs):
        if may_alias(out.layout.value, operand.layout.value):
            raise NotConvertible(
                f"the output may alias input #{index} (the same buffer or one of "
                "unknown origin); TEIR reads its inputs while it writes out"
            )


def try_plan(op: Operation) -> Plan | None:
    try:
        return plan_of(op)
    except NotConvertible:
        return None


# --------------------------------------------------------------------------
# Merging: Zero first and ReLU last around a contraction
# --------------------------------------------------------------------------


def _neighbour(op: Operation, forward: bool) -> Operation | None:
    """The next (previous) op in the block that is not side-effect free."""
    step = (lambda o: o.next_op) if forward else (lambda o: o.prev_op)
    current = step(op)
    while current is not None and is_side_effect_free(current):
        current = step(current)
    return current


def _contraction(op: Operation | None) -> Plan | None:
    plan = try_plan(op) if isinstance(op, STRUCTURED) else None
    return plan if plan is not None and plan.kinds == (CONTRACTION,) else None


def fill_before(op: Operation, plan: Plan) -> Operation | None:
    """A zero fill of the contraction's output memref just before it."""
    previous = _neighbour(op, forward=False)
    if (
        isinstance(previous, FillOp | GenericOp)
        and is_fill(previous)
        and previous.outputs[0] is plan.out.layout.value
        and try_plan(previous) is not None
    ):
        return previous
    return None


def relu_after(op: Operation, plan: Plan) -> Operation | None:
    """A ReLU in place on the contraction's output memref just after it."""
    following = _neighbour(op, forward=True)
    if not isinstance(following, STRUCTURED):
        return None
    relu = try_plan(following)
    if (
        relu is not None
        and relu.kinds == (RELU,)
        and len(relu.tensors) == 3
        and relu.out.layout.value is plan.out.layout.value
    ):
        return following
    return None


def absorbed(op: Operation) -> bool:
    """Whether a neighbouring contraction takes `op` in as Zero first or ReLU last."""
    before = _neighbour(op, forward=False)
    if (plan := _contraction(before)) is not None and relu_after(before, plan) is op:  # pyright: ignore
        return True
    after = _neighbour(op, forward=True)
    return (plan := _contraction(after)) is not None and fill_before(after, plan) is op  # pyright: ignore


# --------------------------------------------------------------------------
# Rewriting
# --------------------------------------------------------------------------


def replace_with_config(
    rewriter: PatternRewriter, anchor: Operation, plan: Plan, replaced: Sequence[Operation]
) -> None:
    """Puts the 1-D views and the configuration in place of `anchor` and erases
    `replaced` (which includes `anchor`). Each view is cast from the buffer the
    memref views (`base_of`): its layout offset counts from that buffer's base, and
    a cast of the buffer itself lowers the same way in MLIR and in xDSL's
    memref-to-ptr (which misplaces a reinterpret_cast of a memref with an offset)."""
    record = plan.record()
    views: dict[SSAValue, SSAValue] = {}
    new_ops: list[Operation] = []
    for tensor in plan.tensors:
        layout = tensor.layout
        if layout.value in views:
            continue
        base = base_of(layout.value)
        view_type = MemRefType(layout.value.type.get_element_type(), [layout.span])  # pyright: ignore
        if base.type == view_type:
            views[layout.value] = base
            continue
        cast = memref.ReinterpretCastOp.from_dynamic(base, [0], [layout.span], [1], view_type)
        new_ops.append(cast)
        views[layout.value] = cast.result
    config = build_config(record, [views[t.layout.value] for t in plan.tensors])
    rewriter.insert([*new_ops, config], InsertPoint.before(anchor))
    for op in replaced:
        rewriter.erase(op)


class ConvertContraction(RewritePattern):
    """A multiply-accumulate, with a zero fill just before and an in-place ReLU just
    after on the same memref merged in."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (plan := _contraction(op)) is None:
            return
        fill, relu = fill_before(op, plan), relu_after(op, plan)
        kinds = (*((ZERO,) if fill else ()), CONTRACTION, *((RELU,) if relu else ()))
        merged = Plan(kinds, plan.extents, plan.tensors, plan.data_type)
        replace_with_config(rewriter, op, merged, [o for o in (fill, op, relu) if o])


class ConvertElementwise(RewritePattern):
    """A copy, zero fill or ReLU that no neighbouring contraction takes in."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (*STRUCTURED, FillOp, *MEMREF_COPY)):
            return
        plan = try_plan(op)
        if plan is None or plan.kinds == (CONTRACTION,) or absorbed(op):
            return
        replace_with_config(rewriter, op, plan, [op])


class RemarkUnconverted(RewritePattern):
    """Names, on a linalg op no pattern converts, why not."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (op.name.startswith("linalg.") or isinstance(op, MEMREF_COPY)) or isinstance(
            op, YieldOp | IndexOp
        ):
            return
        if REMARK in op.attributes:
            return
        try:
            plan_of(op)
        except NotConvertible as reason:
            op.attributes[REMARK] = StringAttr(str(reason))


@dataclass(frozen=True)
class ConvertLinalgToTeirPass(ModulePass):
    """Rewrites linalg ops on static memrefs into teir.config (see the module docstring)."""

    name = "convert-linalg-to-teir"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        # Bottom-up, so that a linalg.max is judged while the fill that zeroes its
        # other operand is still a linalg.fill; merging does not depend on the order.
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [ConvertContraction(), ConvertElementwise(), RemarkUnconverted()]
            ),
            walk_reverse=True,
        ).rewrite_module(op)
