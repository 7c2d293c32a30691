"""The emitter toolkit: the scf/arith/memref/vector pieces every scf-level emitter
builds with (teir-to-scf's loop nests, the microkernels, the element-wise tiles
and teir-outline-parallel's chunk functions), each written once.

- addressing: index constants, `base + value * scale` (`add`), and `Tile`, the
  element index of the current tile of each tensor;
- control flow: `for_loop` (scf.for with optional iter_args), `if_then`, and
  `Prologue` / `memoized`: work done once per scope (the kernel, or one chunk
  of a parallel loop) and skipped while its key repeats;
- vectors: vector types, splat constants, broadcasts,
  FMAs, loads and stores with any element stride (a vector load/store at unit
  stride, else gathered/scattered lane by lane);
- data types: `widen` (storage -> arithmetic type, exact), `narrow` (back,
  rounding to nearest even) and `round_tf32`, applied where `load` and `store`
  meet memory, so that every emitter converts alike (below);
- `relu`, the reference ReLU for scalars and vectors;
- `transpose`, the in-register L x L transpose (unpack within 128-bit lanes,
  then 128-bit-lane shuffles: what x86 does fastest), and `select_lanes`, any
  choice of lanes from several vectors (two-source permutes).

Data types. Memory holds each data type's storage type (f16, bf16, f32 for
FP32 and TF32, f64); Contractions compute in `arithmetic_type` (f32 for f16 and
bf16: the hosts have no FMA on them, and products of 16-bit values are exact
in f32). `load(..., widened=True)` widens what it reads: f16 by `arith.extf`
(LLVM's fpext, one vcvtph2ps per vector with F16C), bf16 by a 16-bit shift of
its bits (a bf16 is the upper half of an f32), both exact. `store` narrows a
wider value to the memory's type: f16 by `arith.truncf` (vcvtps2ph, round to
nearest even, overflow to Inf, subnormals kept, NaN stays NaN), bf16 with
integer ops (round to nearest even by adding 0x7FFF plus the lowest kept bit,
NaN kept quiet). `load(..., tf32=True)` rounds an f32 operand to TF32 (10
explicit mantissa bits, nearest even, NaN kept) the same way: Contractions of
TF32 round what they load, once per loaded value, and every FMA that uses it
shares it. Element-wise primitives move storage values unconverted (`relu`
compares a widened copy, exact), so they are exact for every type.

bf16 appears here only in loads, stores, bitcasts, shuffles and constants,
never in float arithmetic: the LLVM pipeline types it as i16
(`teir-bf16-as-i16`; the direct translation writes it so), since LLVM's
bfloat is missing from llvmlite.

Everything here is scf level: no module of the LLVM conversions is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from math import copysign

from xdsl.builder import Builder
from xdsl.dialects import arith, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from teir_lowering.lane import UNROLLED, lane_cmpf, lane_select

# -- addressing -----------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _index_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, IndexType())


@lru_cache(maxsize=4096, typed=True)
def _splat_attr(typ: Attribute, value: float, negative: bool) -> Attribute:
    """A scalar or splat constant's attribute, shared by the constants that repeat it:
    attributes are immutable, and building and verifying one was most of the cost of
    a constant. `negative` is part of the key so that -0.0 is not taken for +0.0."""
    if isinstance(typ, VectorType):
        return DenseIntOrFPElementsAttr.from_list(typ, [value])  # pyright: ignore
    if isinstance(value, float):
        return FloatAttr(value, typ)  # pyright: ignore
    return IntegerAttr(value, typ)  # pyright: ignore


@lru_cache(maxsize=4096)
def _mask_attr(mask: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, mask)


def shuffle_mask(mask: Sequence[int]) -> DenseArrayBase:
    """A vector.shuffle's mask (its attribute shared by the shuffles that repeat it)."""
    return _mask_attr(tuple(mask))


def index(builder: Builder, value: int) -> SSAValue:
    """An index constant."""
    return builder.insert(arith.ConstantOp(_index_attr(value))).result


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
             body: LoopBody, carried: Sequence[SSAValue] = (), *,
             unrolled: bool = False, rolled: bool = False) -> list[SSAValue]:
    """scf.for lower..upper by step carrying `carried`; returns the loop's results.

    A loop with constant bounds and no iteration is not emitted (its results are
    `carried`, as scf.for's would be). `unrolled`: the caller unrolled its vector
    code itself, so a loop whose body holds vector loads or stores is marked
    `UNROLLED` (LLVM then leaves it as it is); `rolled`: marked whatever its body,
    a loop that runs too seldom to pay for the code LLVM's unrolling would add.
    """
    if isinstance(lower, int) and isinstance(upper, int) and upper <= lower:
        return list(carried)
    block = Block(arg_types=[IndexType(), *(value.type for value in carried)])
    inner = Builder(InsertPoint.at_end(block))
    results = body(inner, block.args[0], list(block.args[1:]))
    inner.insert(scf.YieldOp(*(results or ())))
    bounds = [value if isinstance(value, SSAValue) else index(builder, value)
              for value in (lower, upper, step)]
    loop = builder.insert(scf.ForOp(*bounds, carried, block))
    if rolled or (unrolled and any(isinstance(op, (vector.LoadOp, vector.StoreOp))
                                   for op in block.walk())):
        loop.attributes[UNROLLED] = UnitAttr()
    return list(loop.results)


def multiple_below(builder: Builder, count: SSAValue | int, step: int) -> SSAValue | int:
    """`count` rounded down to a multiple of `step` (emitted when it is a value)."""
    if isinstance(count, int):
        return count // step * step
    blocks = builder.insert(arith.DivUIOp(count, index(builder, step))).result
    return builder.insert(arith.MuliOp(blocks, index(builder, step))).result


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


def switch(builder: Builder, value: SSAValue, cases: Sequence[int],
           body: Callable[[Builder, int], None]) -> None:
    """`body(builder, case)` for the case `value` equals, compiled once per case so
    that the body knows it as a constant; the last case is taken without a test
    (the caller knows `value` is one of `cases`)."""
    if len(cases) == 1:
        body(builder, cases[0])
        return
    equal = builder.insert(arith.CmpiOp(value, index(builder, cases[0]), "eq")).result
    if_then(builder, equal, lambda b: body(b, cases[0]),
            lambda b: switch(b, value, cases[1:], body))


CHUNK_PROLOGUE = "teir.chunk_prologue"
"""Marks the ops at the start of an scf.parallel body that set up state for the
iterations after them: teir-outline-parallel runs them once per chunk, before its
loop, instead of once per iteration."""


class Prologue:
    """Ops that run once where a scope starts (a kernel, or each chunk of a parallel
    loop), collected while the scope's body is built and put in front of it by
    `take`: scratch that the tiles within the scope share, and its state."""

    def __init__(self) -> None:
        self.block = Block()
        self.builder = Builder(InsertPoint.at_end(self.block))

    def take(self, chunk: bool) -> list[Operation]:
        """The ops, detached, in order; marked `CHUNK_PROLOGUE` when the scope is a
        parallel loop's body."""
        ops = list(self.block.ops)
        for op in ops:
            op.detach()
            if chunk:
                op.attributes[CHUNK_PROLOGUE] = UnitAttr()
        return ops


def memoized(builder: Builder, prologue: Prologue, key: SSAValue,
             fill: Callable[[Builder], None]) -> None:
    """`fill` unless its last run in the prologue's scope had the same `key` (an index
    >= 0): for scratch that is a function of an input (never written by the kernel)
    at `key`, such as a widened operand, refilled only when the tile moves to
    another part of it."""
    slot = prologue.builder.insert(memref.AllocaOp.get(i64, 8, [1])).memref
    prologue.builder.insert(memref.StoreOp.get(integer(prologue.builder, i64, -1), slot,
                                               [index(prologue.builder, 0)]))
    zero = index(builder, 0)
    last = builder.insert(memref.LoadOp.get(slot, [zero])).res
    wide_key = builder.insert(arith.IndexCastOp(key, i64)).result
    stale = builder.insert(arith.CmpiOp(last, wide_key, "ne")).result

    def refill(inner: Builder) -> None:
        fill(inner)
        inner.insert(memref.StoreOp.get(wide_key, slot, [index(inner, 0)]))

    if_then(builder, stale, refill)


# -- vectors ----------------------------------------------------------------------------

@lru_cache(maxsize=1024)
def vector_type(element: Attribute, lanes: int) -> VectorType:
    """A vector of `lanes` of `element` (one attribute for each, shared like the
    constants')."""
    return VectorType(element, [lanes])


def value_type(element: Attribute, lanes: int) -> Attribute:
    """The element itself (lanes = 1) or a vector of `lanes` of it."""
    return element if lanes == 1 else vector_type(element, lanes)


def lanes_of(typ: Attribute) -> int:
    return typ.get_shape()[0] if isinstance(typ, VectorType) else 1


def lanes_slice(builder: Builder, value: SSAValue, first: int, count: int) -> SSAValue:
    """Lanes first..first + count of the vector `value` (`value` itself when that is all
    of it)."""
    if first == 0 and count == lanes_of(value.type):
        return value
    typ = value.type
    assert isinstance(typ, VectorType)
    return builder.insert(vector.ShuffleOp(
        value, value, shuffle_mask(list(range(first, first + count))),
        result_type=vector_type(typ.element_type, count))).result


def element_of(memory: SSAValue) -> Attribute:
    memory_type = memory.type
    assert isinstance(memory_type, MemRefType)
    return memory_type.element_type


def scalar_of(typ: Attribute) -> Attribute:
    """The element type of a vector type, or the scalar type itself."""
    return typ.element_type if isinstance(typ, VectorType) else typ  # pyright: ignore


def like(typ: Attribute, element: Attribute) -> Attribute:
    """`element`, or a vector of it with the lanes of the vector type `typ`."""
    return value_type(element, lanes_of(typ))


def constant(builder: Builder, typ: Attribute, value: float = 0.0) -> SSAValue:
    """A float scalar or splat vector constant, +0 by default (-0.0: IEEE's additive
    identity)."""
    value = float(value)
    attr = _splat_attr(typ, value, copysign(1.0, value) < 0)
    return builder.insert(arith.ConstantOp(attr)).result


def integer(builder: Builder, typ: Attribute, value: int) -> SSAValue:
    """An integer scalar or splat vector constant (`value` in the signed range)."""
    return builder.insert(arith.ConstantOp(_splat_attr(typ, int(value), False))).result


def splat(builder: Builder, scalar: SSAValue, lanes: int) -> SSAValue:
    """`scalar` in every lane (itself when lanes = 1)."""
    if lanes == 1:
        return scalar
    return builder.insert(vector.BroadcastOp(scalar, vector_type(scalar.type, lanes))).vector


def fma(builder: Builder, x: SSAValue, y: SSAValue, acc: SSAValue) -> SSAValue:
    """x * y + acc, fused, on scalars or vectors."""
    if isinstance(x.type, VectorType):
        return builder.insert(vector.FMAOp(x, y, acc)).res
    return builder.insert(math.FmaOp(x, y, acc)).result


def load(builder: Builder, memory: SSAValue, at: SSAValue, lanes: int = 1, stride: int = 1,
         valid: int | None = None, fill: float = 0.0, *, widened: bool = False,
         tf32: bool = False) -> SSAValue:
    """`lanes` elements of `memory` at `at`, `at + stride`, ...: a scalar, a vector load
    (unit stride), or a gather of scalar loads; only the first `valid` lanes are read
    when given (the others hold `fill`).

    In the memory's element type, or with `widened` in its arithmetic type (`widen`);
    `tf32` also rounds the value to TF32 (`round_tf32`): a Contraction's operands.
    """
    return load_convert(builder, _read(builder, memory, at, lanes, stride, valid, fill),
                        widened, tf32)


def load_stepped(builder: Builder, memory: SSAValue, at: SSAValue, lanes: int, stride: int,
                 *, back: bool = False, widened: bool = False, tf32: bool = False
                 ) -> SSAValue:
    """`load(memory, at, lanes, stride)` (a small stride from 2 on) as `stride`
    contiguous vectors regrouped by `select_lanes`: the elements from `at` on, or
    with `back` those ending at the last lane's element. A gather costs a load and
    an insert per lane (a view `a[:, ::2]` along k). It reads the stride - 1
    elements past the last lane's, or with `back` before the first lane's: the
    caller knows they lie within the operand's span."""
    start = add(builder, at, -(stride - 1)) if back else at
    shift = stride - 1 if back else 0
    vectors = [_read(builder, memory, add(builder, start, v * lanes), lanes, 1, None, 0.0)
               for v in range(stride)]
    (value,) = select_lanes(builder, vectors, [[divmod(lane * stride + shift, lanes)
                                                 for lane in range(lanes)]])
    return load_convert(builder, value, widened, tf32)


def load_convert(builder: Builder, value: SSAValue, widened: bool, tf32: bool) -> SSAValue:
    """A loaded `value` as `load` returns it with `widened` and `tf32`."""
    if widened or tf32:
        value = widen(builder, value)
    return round_tf32(builder, value) if tf32 else value


def _read(builder: Builder, memory: SSAValue, at: SSAValue, lanes: int, stride: int,
          valid: int | None, fill: float) -> SSAValue:
    if lanes == 1:
        return builder.insert(memref.LoadOp.get(memory, [at])).res
    typ = vector_type(element_of(memory), lanes)
    if stride == 1 and valid is None:
        return builder.insert(vector.LoadOp(memory, [at], typ)).result
    value = constant(builder, typ, fill)
    for lane in range(lanes if valid is None else valid):
        element = builder.insert(memref.LoadOp.get(memory, [add(builder, at, lane * stride)])).res
        value = builder.insert(vector.InsertOp(element, value, [lane])).result
    return value


def load_broadcast(builder: Builder, memory: SSAValue, at: SSAValue, lanes: int, *,
              widened: bool = False, tf32: bool = False) -> SSAValue:
    """`splat(load(memory, at, widened=..., tf32=...), lanes)`, converted after the
    broadcast: a widened f16 is broadcast as stored and converted as a vector
    (vpbroadcastw, vcvtph2ps: no scalar conversion and second broadcast); a
    widened bf16 is broadcast into twice the lanes of i16, so that every 32-bit
    lane holds it twice, and the low copy is masked off (vpbroadcastw, vpand)."""
    value = _read(builder, memory, at, 1, 1, None, 0.0)
    if lanes == 1 or not (widened or tf32):
        return splat(builder, load_convert(builder, value, widened, tf32), lanes)
    if isinstance(scalar_of(value.type), BFloat16Type):
        bits = splat(builder, _bits(builder, value, i16), 2 * lanes)
        pairs = builder.insert(vector.BitcastOp(bits, vector_type(i32, lanes))).result
        upper = _binary(builder, arith.AndIOp, pairs, -(1 << 16))
        wide = builder.insert(arith.BitcastOp(upper, vector_type(Float32Type(), lanes))).result
    else:
        wide = widen(builder, splat(builder, value, lanes))
    return round_tf32(builder, wide) if tf32 else wide


def store(builder: Builder, value: SSAValue, memory: SSAValue, at: SSAValue, stride: int = 1,
          nontemporal: bool = False) -> None:
    """The inverse of `load`: a scalar, a vector store (non-temporal if asked), or one
    store per lane. A value of a wider type than the memory's is narrowed first
    (`narrow`: round to nearest even)."""
    element = element_of(memory)
    value = narrow(builder, value, element)
    lanes = lanes_of(value.type)
    if lanes == 1:
        builder.insert(memref.StoreOp.get(value, memory, [at]))
    elif stride == 1:
        flag = BoolAttr.from_bool(True) if nontemporal else None
        builder.insert(vector.StoreOp(value, memory, [at], flag))
    else:
        for lane in range(lanes):
            part = builder.insert(vector.ExtractOp(value, [lane], element)).result
            builder.insert(memref.StoreOp.get(part, memory, [add(builder, at, lane * stride)]))


# -- data types ---------------------------------------------------------------------------


def arithmetic_type(typ: Attribute) -> Attribute:
    """`typ` (a float type or a vector of it) with f16 and bf16 elements as f32: what
    arithmetic on stored values runs in (teir_dialect's DataType.accumulator_type)."""
    if isinstance(scalar_of(typ), Float16Type | BFloat16Type):
        return like(typ, Float32Type())
    return typ


def _bits(builder: Builder, value: SSAValue, width: IntegerType) -> SSAValue:
    return builder.insert(arith.BitcastOp(value, like(value.type, width))).result


def _binary(builder: Builder, op: type[arith.SignlessIntegerBinaryOperation], lhs: SSAValue,
            rhs: int | SSAValue) -> SSAValue:
    if isinstance(rhs, int):
        rhs = integer(builder, lhs.type, rhs)
    return builder.insert(op(lhs, rhs)).result


def _is_nan(builder: Builder, value: SSAValue) -> SSAValue:
    return builder.insert(lane_cmpf(value, value, "uno")).result


def widen(builder: Builder, value: SSAValue) -> SSAValue:
    """A stored f16/bf16 scalar or vector in f32, exactly (others: unchanged): fpext
    for f16, the bits shifted into the upper half of an f32 for bf16."""
    element = scalar_of(value.type)
    wide = arithmetic_type(value.type)
    if isinstance(element, Float16Type):
        return builder.insert(arith.ExtFOp(value, wide)).result
    if not isinstance(element, BFloat16Type):
        return value
    if isinstance(value.type, VectorType):
        # zero-extended to i32 by a shuffle with zeros (little endian: the bits in
        # the lower half), as xDSL's arith.extui takes scalars only; LLVM makes it
        # the same vpmovzxwd (a shuffle into the upper half became vpermt2w, with
        # copies of its operands: slower in the microkernel's loop)
        lanes = value.type.get_shape()[0]
        bits = _bits(builder, value, i16)
        halves = builder.insert(vector.ShuffleOp(
            bits, integer(builder, bits.type, 0),
            shuffle_mask([k for i in range(lanes) for k in (i, lanes + i)]),
            result_type=vector_type(i16, 2 * lanes))).result
        extended = builder.insert(vector.BitcastOp(halves, like(value.type, i32))).result
    else:
        extended = builder.insert(arith.ExtUIOp(_bits(builder, value, i16),
                                                like(value.type, i32))).result
    return builder.insert(arith.BitcastOp(_binary(builder, arith.ShLIOp, extended, 16),
                                          wide)).result


def narrow(builder: Builder, value: SSAValue, element: Attribute) -> SSAValue:
    """An f32 scalar or vector rounded to nearest even into f16 or bf16 (`element`; the
    value itself when it has that type already). Beyond the finite range it becomes
    Inf, subnormals are kept, NaN stays NaN (bf16: quiet, the upper payload kept)."""
    if scalar_of(value.type) == element:
        return value
    target = like(value.type, element)
    if isinstance(element, Float16Type):
        return builder.insert(arith.TruncFOp(value, target)).result
    assert isinstance(element, BFloat16Type), f"cannot narrow {value.type} to {element}"
    bits = _bits(builder, value, i32)
    upper = _binary(builder, arith.ShRUIOp, bits, 16)
    lowest_kept = _binary(builder, arith.AndIOp, upper, 1)
    rounded = _binary(builder, arith.AddiOp, _binary(builder, arith.AddiOp, bits, 0x7FFF),
                      lowest_kept)
    rounded = _binary(builder, arith.ShRUIOp, rounded, 16)
    quiet = _binary(builder, arith.OrIOp, upper, 0x40)
    chosen = builder.insert(lane_select(_is_nan(builder, value), quiet, rounded)).result
    if isinstance(value.type, VectorType):
        # the lower half of each i32 (little endian): its even i16 lanes, as xDSL's
        # arith.trunci takes scalars only
        lanes = value.type.get_shape()[0]
        pairs = builder.insert(vector.BitcastOp(chosen, vector_type(i16, 2 * lanes))).result
        half = builder.insert(vector.ShuffleOp(
            pairs, pairs, shuffle_mask(list(range(0, 2 * lanes, 2))),
            result_type=vector_type(i16, lanes))).result
    else:
        half = builder.insert(arith.TruncIOp(chosen, like(value.type, i16))).result
    return builder.insert(arith.BitcastOp(half, target)).result


def round_tf32(builder: Builder, value: SSAValue) -> SSAValue:
    """f32 values rounded to nearest even to TF32's 10 explicit mantissa bits (the low
    13 bits cleared; overflow gives Inf, subnormals are rounded alike, NaN is kept)."""
    bits = _bits(builder, value, i32)
    lowest_kept = _binary(builder, arith.AndIOp, _binary(builder, arith.ShRUIOp, bits, 13), 1)
    rounded = _binary(builder, arith.AddiOp, _binary(builder, arith.AddiOp, bits, 0xFFF),
                      lowest_kept)
    rounded = _binary(builder, arith.AndIOp, rounded, -(1 << 13))
    result = builder.insert(arith.BitcastOp(rounded, value.type)).result
    return builder.insert(lane_select(_is_nan(builder, value), value, result)).result


_INFINITY_BITS = {Float16Type: 0x7C00, BFloat16Type: 0x7F80}


def relu(builder: Builder, value: SSAValue) -> SSAValue:
    """The reference ReLU of a float scalar or 1-D vector: select(x < 0, +0, x), an
    ordered compare, so -0.0 and NaN pass unchanged (a max would not). f16/bf16 values
    are decided on their bits (`_relu_bits`)."""
    if type(scalar_of(value.type)) in _INFINITY_BITS:
        return _relu_bits(builder, value)
    zero = constant(builder, value.type)
    compared = widen(builder, value)
    compared_zero = zero if compared is value else constant(builder, compared.type)
    negative = builder.insert(lane_cmpf(compared, compared_zero, "olt")).result
    return builder.insert(lane_select(negative, zero, value)).result


def _relu_bits(builder: Builder, value: SSAValue) -> SSAValue:
    """ReLU of f16/bf16 values by integer ops on their bits, no conversion: x < 0
    exactly when the bits, less 0x8001 (wrapping), are below infinity's, i.e.
    the sign is set and the magnitude is 1 to infinity's (not -0.0, not a NaN);
    those become +0. The kernel then only moves 16-bit values, which
    `teir-f16-moves-as-i16` lets LLVM keep in general registers (a scalar f16
    went through a vector register's low word). Vectors (no lane-wise integer
    compare here) build the same test as a mask from arithmetic shifts."""
    infinity = _INFINITY_BITS[type(scalar_of(value.type))]
    bits = _bits(builder, value, i16)
    if not isinstance(value.type, VectorType):
        shifted = _binary(builder, arith.SubiOp, bits, 0x8001)
        negative = builder.insert(arith.CmpiOp(shifted, integer(builder, i16, infinity),
                                               "ult")).result
        return builder.insert(arith.SelectOp(negative, constant(builder, value.type),
                                             value)).result
    sign = _binary(builder, arith.ShRSIOp, bits, 15)  # all ones where the sign is set
    below = _binary(builder, arith.SubiOp, _binary(builder, arith.AndIOp, bits, 0x7FFF), 1)
    nonzero = _binary(builder, arith.XOrIOp, _binary(builder, arith.ShRSIOp, below, 15), -1)
    finite = _binary(builder, arith.ShRSIOp, _binary(builder, arith.SubiOp, below, infinity), 15)
    negative = _binary(builder, arith.AndIOp, _binary(builder, arith.AndIOp, sign, nonzero),
                       finite)
    kept = _binary(builder, arith.AndIOp, bits, _binary(builder, arith.XOrIOp, negative, -1))
    return builder.insert(arith.BitcastOp(kept, value.type)).result


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
                    vectors[i], vectors[j], shuffle_mask(mask),
                    result_type=typ)).result
                for mask in (stage.lo, stage.hi)
            )
    return [vectors[position] for position in order]


Picks = Sequence[tuple[int, int]]
"""For each lane of a vector to build: (source vector, lane of it)."""


def select_lanes(builder: Builder, vectors: Sequence[SSAValue],
                 outputs: Sequence[Picks]) -> list[SSAValue]:
    """The vectors whose lane i is lane `picks[i][1]` of `vectors[picks[i][0]]`, one per
    `picks` in `outputs` (every vector of one type): two-source shuffles, each of which
    x86 does with one permute (vpermt2*, an index register), shared between outputs.

    The sources are merged pairwise, as a tree: merging two groups of sources, the
    lanes every output takes from them are gathered into as few vectors as hold
    them, consecutive outputs sharing a vector while their lanes fit (and come
    from one vector of each group), each vector one shuffle; the last merge puts
    each output's lanes in place. So k outputs regrouping k vectors (a narrow
    transpose) take about k log2(k) shuffles rather than k (k - 1)."""
    typ = vectors[0].type
    assert isinstance(typ, VectorType)
    lanes = typ.get_shape()[0]
    assert all(len(picks) == lanes for picks in outputs), "outputs of the sources' type"
    # A group's part of output c: (vector, {output lane: lane of the vector}).
    Part = tuple[SSAValue, dict[int, int]]
    groups: list[dict[int, Part]] = []
    for v, value in enumerate(vectors):
        group: dict[int, Part] = {}
        for c, picks in enumerate(outputs):
            taken = {i: lane for i, (source, lane) in enumerate(picks) if source == v}
            if taken:
                group[c] = (value, taken)
        groups.append(group)

    def merge(left: dict[int, Part], right: dict[int, Part], last: bool) -> dict[int, Part]:
        # packs: [outputs, left vector, right vector, lanes used]
        packs: list[list] = []
        for c in sorted(left.keys() | right.keys()):
            ends = [side[c][0] if c in side else None for side in (left, right)]
            count = sum(len(side[c][1]) for side in (left, right) if c in side)
            if packs and not last:
                outputs, *shared, used = packs[-1]
                if used + count <= lanes and all(
                        None in (mine, theirs) or mine is theirs
                        for mine, theirs in zip(ends, shared)):
                    packs[-1] = [[*outputs, c],
                                 *(theirs if mine is None else mine
                                   for mine, theirs in zip(ends, shared)),
                                 used + count]
                    continue
            packs.append([[c], *ends, count])
        merged: dict[int, Part] = {}
        for outputs, first, second, _ in packs:
            mask = [0] * lanes
            placed: dict[int, dict[int, int]] = {c: {} for c in outputs}
            position = 0
            for c in outputs:
                for offset, side in ((0, left), (lanes, right)):
                    for i, lane in sorted(side[c][1].items()) if c in side else ():
                        at = i if last else position
                        mask[at] = offset + lane
                        placed[c][i] = at
                        position += 1
            only = first if second is None else second if first is None else None
            if only is not None:
                side = left if second is None else right
                if not last or all(at == lane for c in outputs
                                   for at, lane in side[c][1].items()):
                    merged.update((c, side[c]) for c in outputs)  # as it is
                    continue
                mask = [m % lanes for m in mask]
            pair = (only, only) if only is not None else (first, second)
            value = builder.insert(vector.ShuffleOp(
                *pair, shuffle_mask(mask), result_type=typ)).result
            merged.update((c, (value, placed[c])) for c in outputs)
        return merged

    if len(groups) == 1:  # one source: its lanes put in place
        groups = [merge(groups[0], {}, True)]
    while len(groups) > 1:
        last = len(groups) == 2
        groups = [merge(groups[g], groups[g + 1], last) if g + 1 < len(groups)
                  else groups[g] for g in range(0, len(groups), 2)]
    (whole,) = groups
    return [whole[c][0] for c in range(len(outputs))]
