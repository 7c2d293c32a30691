"""`teir-bf16-as-i16`: bf16 values become their i16 bit patterns, for the LLVM pipeline.

LLVM has a `bfloat` type, but llvmlite's IR builder and xDSL's translation to
it do not, so no bf16 may reach `teir_lowering.runtime.jit`. The emitters
(`teir_lowering.codegen.emit`) never compute in bf16: they load, store, shuffle,
insert, extract and select bf16 values, bitcast them to i16 and back, and
build bf16 constants; arithmetic runs on the values widened to f32 by integer
ops on the bits. All of that means the same on i16, so this pass, the first of
the LLVM pipeline, retypes every bf16 (scalars, vector and memref elements,
function signatures) as i16, turns bf16 constants into i16 constants of their
bit patterns (rounded to nearest even, as the interpreter rounds) and drops
the bitcasts between bf16 and i16 that become no-ops.

A bf16 float op (`arith.addf`, `arith.cmpf`, ...) would be meaningless on i16,
so the pass refuses modules that hold one. `teir-f16-moves-as-i16` (f16_moves)
shares the retyping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    VectorType,
    i16,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.type import get_element_type_or_self

from teir_dialect.interpreter import from_float64
from teir_dialect.vocabulary import DataType
from teir_lowering.lane import TEIR_LANE, LanePrefetchOp, LaneSelectOp
from teir_lowering.llvm.retype import Retype
from teir_lowering.llvm.rewriting import rewrite_once

_BIT_OPS = (arith.ConstantOp, arith.BitcastOp, arith.SelectOp, LaneSelectOp, LanePrefetchOp)
"""The arith (and lane) ops that may touch bf16 values: they move bits (a prefetch
names memory of the type only)."""


def half_bits(values: list[float], data_type: DataType) -> list[int]:
    """The bit patterns of `values` in the 16-bit `data_type` (nearest even), as
    signed i16 values."""
    bits = from_float64(np.asarray(values, dtype=np.float64), data_type)
    return [int(b) for b in bits.view(np.int16)]


_TYPES = {BFloat16Type: DataType.BF16, Float16Type: DataType.FP16}


@dataclass
class ConvertHalfConstant(RewritePattern):
    """A `kind` (bf16, f16) scalar or splat/dense vector constant -> the i16
    constant of its bits."""

    kind: type[Attribute]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        typ = op.result.type
        if not isinstance(get_element_type_or_self(typ), self.kind):
            return
        data_type = _TYPES[self.kind]
        value = op.value
        if isinstance(value, FloatAttr):
            (bits,) = half_bits([value.value.data], data_type)
            attr = IntegerAttr(bits, i16)
        else:
            assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(typ, VectorType)
            values = [float(v) for v in value.get_values()]
            attr = DenseIntOrFPElementsAttr.from_list(
                VectorType(i16, typ.get_shape()), half_bits(values, data_type)
            )
        rewriter.replace(op, arith.ConstantOp(attr))


@dataclass
class DropNoOpBitcast(RewritePattern):
    """`arith.bitcast` from a type to itself (was bf16 <-> i16) -> its operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.BitcastOp, rewriter: PatternRewriter, /):
        if op.input.type == op.result.type:
            rewriter.replace(op, (), (op.input,))


_VECTOR_MOVES = (vector.LoadOp, vector.StoreOp, vector.BroadcastOp, vector.ShuffleOp,
                 vector.InsertOp, vector.ExtractOp, vector.BitcastOp)
"""The vector ops the emitters use that move bits (vector.fma computes)."""


def computes_in(op: Operation, kind: type[Attribute]) -> bool:
    """Whether `op` does arithmetic on `kind` values (anything but moving bits)."""
    if isinstance(op, _BIT_OPS + _VECTOR_MOVES):
        return False
    if op.dialect_name() not in ("arith", "math", "vector", TEIR_LANE.name):
        return False
    types = [value.type for value in (*op.operands, *op.results)]
    return any(isinstance(get_element_type_or_self(t), kind) for t in types)


def retype_as_i16(op: ModuleOp, kind: type[Attribute]) -> None:
    """`kind` (bf16, f16) as i16 in every op of `op`, its constants as their bits,
    the bitcasts it leaves from a type to itself dropped."""
    for pattern in (ConvertHalfConstant(kind), Retype(kind, i16), DropNoOpBitcast()):
        rewrite_once(op, [pattern], dce=False)


@dataclass(frozen=True)
class BF16AsI16Pass(ModulePass):
    """Retypes bf16 as i16 (see the module doc)."""

    name = "teir-bf16-as-i16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_bf16_moves_only(op)
        retype_as_i16(op, BFloat16Type)


def check_bf16_moves_only(op: ModuleOp) -> None:
    """Refuses a module that computes on bf16 values (the precondition of typing them
    as i16: here, and in the direct translation, which writes bf16 as i16 itself)."""
    for inner in op.walk():
        if computes_in(inner, BFloat16Type):
            raise DiagnosticException(
                f"teir-bf16-as-i16: {inner.name} computes on bf16 values; widen them "
                "to f32 first (teir_lowering.codegen.emit.widen)"
            )
