"""The emitter toolkit: the scf/arith/memref/vector pieces every scf-level emitter
builds with (teir-to-scf's loop nests, the microkernels, the element-wise tiles
and teir-outline-parallel's chunk functions), each written once.

- addressing: index constants, `base + value * scale` (`add`), and `Tile`, the
  element index of the current tile of each tensor;
- control flow: `for_loop` (scf.for with optional iter_args) and `if_then`;
- vectors: vector types, splat constants, broadcasts,
  FMAs, loads and stores with any element stride (a vector load/store at unit
  stride, else gathered/scattered lane by lane);
- `relu`, the reference ReLU for scalars and vectors;
- `transpose`, the in-register L x L transpose (unpack within 128-bit lanes,
  then 128-bit-lane shuffles: what x86 does fastest).

Everything here is scf level: no module of the LLVM conversions is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.builder import Builder
from xdsl.dialects import arith, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from teir_lowering.vector_ops import lane_cmpf, lane_select

# -- addressing -----------------------------------------------------------------------


def index(builder: Builder, value: int) -> SSAValue:
    """An index constant."""
    return builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def add(builder: Builder, base: SSAValue, value: int | SSAValue, scale: int = 1) -> SSAValue:
    """base + value * scale, skipping zero terms and unit scales."""
    if isinstance(value, int):
        if value * scale == 0:
            return base
        term = index(builder, value * scale)
    else:
        if scale == 0:
            return base
        term = value if scale == 1 else builder.insert(
            arith.MuliOp(value, index(builder, scale))
        ).result
    return builder.insert(arith.AddiOp(base, term)).result


@dataclass(frozen=True)
class Tile:
    """Element index of the current tile of each tensor (None: index 0)."""

    base: dict[str, SSAValue | None]

    def address(self, builder: Builder, tensor: str) -> SSAValue:
        value = self.base[tensor]
        return index(builder, 0) if value is None else value


# -- control flow -----------------------------------------------------------------------

LoopBody = Callable[[Builder, SSAValue, list[SSAValue]], Sequence[SSAValue] | None]
"""body(builder, induction variable, iter_args) -> the values to yield (None: none)."""


def for_loop(builder: Builder, lower: int | SSAValue, upper: int | SSAValue, step: int | SSAValue,
             body: LoopBody, carried: Sequence[SSAValue] = ()) -> list[SSAValue]:
    """scf.for lower..upper by step carrying `carried`; returns the loop's results.

    A loop with constant bounds and no iteration is not emitted (its results are
    `carried`, as scf.for's would be).
    """
    if isinstance(lower, int) and isinstance(upper, int) and upper <= lower:
        return list(carried)
    block = Block(arg_types=[IndexType(), *(value.type for value in carried)])
    inner = Builder(InsertPoint.at_end(block))
    results = body(inner, block.args[0], list(block.args[1:]))
    inner.insert(scf.YieldOp(*(results or ())))
    bounds = [value if isinstance(value, SSAValue) else index(builder, value)
              for value in (lower, upper, step)]
    return list(builder.insert(scf.ForOp(*bounds, carried, block)).results)


def if_then(builder: Builder, condition: SSAValue, then: Callable[[Builder], None],
            otherwise: Callable[[Builder], None] | None = None) -> None:
    """scf.if `condition`, with an else region when `otherwise` is given."""
    regions: list[Region] = []
    for body in (then, otherwise):
        if body is None:
            continue
        block = Block()
        body(Builder(InsertPoint.at_end(block)))
        block.add_op(scf.YieldOp())
        regions.append(Region(block))
    builder.insert(scf.IfOp(condition, [], *regions))


# -- vectors ----------------------------------------------------------------------------

MIN_LANES = 4
"""The fewest lanes worth a vector along a tile dimension (shorter: scalars)."""


def value_type(element: Attribute, lanes: int) -> Attribute:
    """The element itself (lanes = 1) or a vector of `lanes` of it."""
    return element if lanes == 1 else VectorType(element, [lanes])


def lanes_of(typ: Attribute) -> int:
    return typ.get_shape()[0] if isinstance(typ, VectorType) else 1


def element_of(memory: SSAValue) -> Attribute:
    memory_type = memory.type
    assert isinstance(memory_type, MemRefType)
    return memory_type.element_type


def constant(builder: Builder, typ: Attribute, value: float = 0.0) -> SSAValue:
    """A float scalar or splat vector constant, +0 by default (-0.0: IEEE's additive
    identity)."""
    if isinstance(typ, VectorType):
        attr = DenseIntOrFPElementsAttr.from_list(typ, [value])  # pyright: ignore
    else:
        attr = FloatAttr(value, typ)  # pyright: ignore
    return builder.insert(arith.ConstantOp(attr)).result


def splat(builder: Builder, scalar: SSAValue, lanes: int) -> SSAValue:
    """`scalar` in every lane (itself when lanes = 1)."""
    if lanes == 1:
        return scalar
    return builder.insert(vector.BroadcastOp(scalar, VectorType(scalar.type, [lanes]))).vector


def fma(builder: Builder, x: SSAValue, y: SSAValue, acc: SSAValue) -> SSAValue:
    """x * y + acc, fused, on scalars or vectors."""
    if isinstance(x.type, VectorType):
        return builder.insert(vector.FMAOp(x, y, acc)).res
    return builder.insert(math.FmaOp(x, y, acc)).result


def load(builder: Builder, memory: SSAValue, at: SSAValue, lanes: int = 1, stride: int = 1,
         valid: int | None = None, fill: float = 0.0) -> SSAValue:
    """`lanes` elements of `memory` at `at`, `at + stride`, ...: a scalar, a vector load
    (unit stride), or a gather of scalar loads; only the first `valid` lanes are read
    when given (the others hold `fill`)."""
    if lanes == 1:
        return builder.insert(memref.LoadOp.get(memory, [at])).res
    typ = VectorType(element_of(memory), [lanes])
    if stride == 1 and valid is None:
        return builder.insert(vector.LoadOp(memory, [at], typ)).result
    value = constant(builder, typ, fill)
    for lane in range(lanes if valid is None else valid):
        element = builder.insert(memref.LoadOp.get(memory, [add(builder, at, lane * stride)])).res
        value = builder.insert(vector.InsertOp(element, value, [lane])).result
    return value


def store(builder: Builder, value: SSAValue, memory: SSAValue, at: SSAValue, stride: int = 1,
          nontemporal: bool = False) -> None:
    """The inverse of `load`: a scalar, a vector store (non-temporal if asked), or one
    store per lane."""
    lanes = lanes_of(value.type)
    if lanes == 1:
        builder.insert(memref.StoreOp.get(value, memory, [at]))
    elif stride == 1:
        flag = BoolAttr.from_bool(True) if nontemporal else None
        builder.insert(vector.StoreOp(value, memory, [at], flag))
    else:
        element = element_of(memory)
        for lane in range(lanes):
            part = builder.insert(vector.ExtractOp(value, [lane], element)).result
            builder.insert(memref.StoreOp.get(part, memory, [add(builder, at, lane * stride)]))


def relu(builder: Builder, value: SSAValue) -> SSAValue:
    """The reference ReLU of a float scalar or 1-D vector: select(x < 0, +0, x), an
    ordered compare, so -0.0 and NaN pass unchanged (a max would not)."""
    zero = constant(builder, value.type)
    negative = builder.insert(lane_cmpf(value, zero, "olt")).result
    return builder.insert(lane_select(negative, zero, value)).result


# -- the register transpose -------------------------------------------------------------


@dataclass(frozen=True)
class TransposeStage:
    """Vectors i and i + `distance` (i without that bit) become lo(i, j) at i, hi at j."""

    distance: int
    lo: tuple[int, ...]
    hi: tuple[int, ...]


@cache
def transpose_network(lanes: int, width: int) -> tuple[tuple[TransposeStage, ...], tuple[int, ...]]:
    """The shuffle stages transposing `lanes` vectors of `lanes` elements of `width`
    bytes, and where column j ends up (`order[j]` is the index of the vector holding
    it, in row order).

    First log2(E) stages (E elements per 128-bit lane) interleave pairs of vectors
    within 128-bit lanes, at granularity 1, 2, ... elements (vunpcklps/vunpckhps,
    vunpcklpd/vunpckhpd): each 128-bit lane then holds an E x E block transposed.
    Then log2(lanes / E) stages move whole 128-bit lanes: the even lanes of both
    vectors, then the odd ones (vshuff32x4 / vperm2f128). Arbitrary two-source
    shuffles (a butterfly over whole vectors) cost x86 permute instructions with
    index registers instead.
    """
    per_lane = max(1, min(lanes, 16 // width))
    stages: list[TransposeStage] = []
    granularity = 1
    while granularity < per_lane:
        lo: list[int] = []
        hi: list[int] = []
        for base in range(0, lanes, per_lane):
            for half, target in ((0, lo), (per_lane // 2, hi)):
                for k in range(per_lane // (2 * granularity)):
                    start = base + half + k * granularity
                    target += range(start, start + granularity)
                    target += range(lanes + start, lanes + start + granularity)
        stages.append(TransposeStage(granularity, tuple(lo), tuple(hi)))
        granularity *= 2
    blocks = lanes // per_lane
    distance = per_lane
    while distance < lanes:
        lo, hi = [], []
        for parity, target in ((0, lo), (1, hi)):
            for offset in (0, lanes):
                for block in range(parity, blocks, 2):
                    start = offset + block * per_lane
                    target += range(start, start + per_lane)
        stages.append(TransposeStage(distance, tuple(lo), tuple(hi)))
        distance *= 2
    # Follow (row, column) labels through the stages to find each column.
    vectors = [[(row, column) for column in range(lanes)] for row in range(lanes)]
    for stage in stages:
        for i in range(lanes):
            if i & stage.distance:
                continue
            j = i + stage.distance
            both = vectors[i] + vectors[j]
            vectors[i], vectors[j] = [both[k] for k in stage.lo], [both[k] for k in stage.hi]
    order = [0] * lanes
    for position, labels in enumerate(vectors):
        column = labels[0][1]
        assert labels == [(row, column) for row in range(lanes)], "not a transpose"
        order[column] = position
    return tuple(stages), tuple(order)


def transpose(builder: Builder, rows: Sequence[SSAValue]) -> list[SSAValue]:
    """The L x L transpose of L vectors of L lanes (`transpose_network`): vector j of
    the result holds lane j of every row, in row order."""
    lanes = len(rows)
    typ = rows[0].type
    element = typ.element_type  # pyright: ignore
    assert isinstance(typ, VectorType) and isinstance(element, AnyFloat)
    stages, order = transpose_network(lanes, element.bitwidth // 8)
    vectors = list(rows)
    for stage in stages:
        for i in range(lanes):
            if i & stage.distance:
                continue
            j = i + stage.distance
            vectors[i], vectors[j] = (
                builder.insert(vector.ShuffleOp(
                    vectors[i], vectors[j], DenseArrayBase.from_list(i64, mask),
                    result_type=typ)).result
                for mask in (stage.lo, stage.hi)
            )
    return [vectors[position] for position in order]
