"""The `teir_lane` dialect: lane-wise compare and select on 1-D vectors.

In xDSL 0.74, `arith.cmpf` always has a scalar i1 result and `arith.select`
verifies a scalar i1 condition only, and so do `llvm.fcmp` and `llvm.select`;
MLIR, LLVM and xDSL's llvmlite translation take vectors of floats and of i1
alike. The vectorized ReLU and the f16/bf16 roundings of teir_lowering.codegen.emit
need them, so this dialect holds MLIR's vector forms, at two levels:

    teir_lane.cmpf olt, %x, %zero : vector<8xf32>          (arith level)
    teir_lane.select %neg, %zero, %x : vector<8xi1>, vector<8xf32>
    teir_lane.llvm_fcmp olt, %x, %zero : vector<8xf32>     (llvm level)
    teir_lane.llvm_select %neg, %zero, %x : vector<8xi1>, vector<8xf32>

Build the first two with `lane_cmpf` and `lane_select` (scalars give arith
ops); `teir-convert-arith-to-llvm` lowers them to the other two, which xDSL's
llvmlite translation takes as `llvm.fcmp` and `llvm.select` (it dispatches on
`isinstance`; `teir_lowering.llvm.lane`, which makes them, registers them as
virtual subclasses of xDSL's ops, so that the code generators, which build
only the first two, do without xDSL's llvm dialect).

Two more ops name LLVM intrinsics MLIR's dialects reach only through
`llvm.call_intrinsic`: `teir_lane.dot_bf16_pairs` (`vdpbf16ps`) and
`teir_lane.prefetch` (`llvm.prefetch`, a displacement past a load's address).

A module at the package's root: the scf-level emitters build these ops and
the LLVM conversions (`teir_lowering.llvm.lane`, `teir_lowering.llvm.memref`)
lower them.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

PREDICATES = arith.CMPF_COMPARISON_OPERATIONS
"""The predicates by number, as arith.cmpf and llvm.fcmp both number them."""


class LaneCompare(IRDLOperation):
    """A compare of two 1-D float vectors giving the vector of i1 of its shape. The
    ops below name their result as the xDSL op they stand for does."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    predicate = prop_def(IntegerAttr[i64])

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str):
        shape = lhs.type.get_shape() if isinstance(lhs.type, VectorType) else ()
        super().__init__(
            operands=[lhs, rhs],
            result_types=[VectorType(i1, shape)],
            properties={"predicate": IntegerAttr(PREDICATES.index(predicate), i64)},
        )

    @property
    def predicate_name(self) -> str:
        return PREDICATES[self.predicate.value.data]

    def verify_(self) -> None:
        if not 0 <= self.predicate.value.data < len(PREDICATES):
            raise VerifyException(f"predicate {self.predicate.value.data} out of range")
        typ = self.lhs.type
        if not (
            isinstance(typ, VectorType)
            and typ.get_num_dims() == 1
            and isinstance(typ.element_type, AnyFloat)
        ):
            raise VerifyException(f"expected a 1-D vector of floats, got {typ}")
        result = self.results[0].type
        if result != VectorType(i1, typ.get_shape()):
            raise VerifyException(
                f"expected result {VectorType(i1, typ.get_shape())}, got {result}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> LaneCompare:
        predicate = parser.parse_identifier()
        if predicate not in PREDICATES:
            parser.raise_error(f"unknown compare predicate {predicate!r}")
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        typ = parser.parse_type()
        operands = parser.resolve_operands([lhs, rhs], [typ, typ], parser.pos)
        op = cls(operands[0], operands[1], predicate)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate_name}, ")
        printer.print_list((self.lhs, self.rhs), printer.print_ssa_value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


class LaneSelect(IRDLOperation):
    """Lane i of the result is lane i of `lhs` where lane i of `cond` is set, else
    lane i of `rhs` (MLIR's semantics for a vector condition)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)

    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        typ = self.lhs.type
        if not (isinstance(typ, VectorType) and typ.get_num_dims() == 1):
            raise VerifyException(f"expected 1-D vector operands, got {typ}")
        if self.cond.type != VectorType(i1, typ.get_shape()):
            raise VerifyException(
                f"expected condition {VectorType(i1, typ.get_shape())}, got {self.cond.type}"
            )


@irdl_op_definition
class LaneCmpfOp(LaneCompare):
    """`arith.cmpf` of 1-D float vectors with MLIR's result, a vector of i1."""

    name = "teir_lane.cmpf"

    result = result_def()


@irdl_op_definition
class LaneSelectOp(LaneSelect):
    """`arith.select` with a vector-of-i1 condition (lane-wise)."""

    name = "teir_lane.select"

    result = result_def(LaneSelect.T)

    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"


@irdl_op_definition
class LaneFCmpOp(LaneCompare):
    """`llvm.fcmp` of 1-D float vectors, giving a vector of i1."""

    name = "teir_lane.llvm_fcmp"

    res = result_def()


@irdl_op_definition
class LaneLLVMSelectOp(LaneSelect):
    """`llvm.select` with a vector-of-i1 condition (lane-wise)."""

    name = "teir_lane.llvm_select"

    res = result_def(LaneSelect.T)

    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"


@irdl_op_definition
class LaneDotBF16PairsOp(IRDLOperation):
    """`acc + a.lo * b.lo + a.hi * b.hi` in each f32 lane, where each i32 lane of `lhs`
    and `rhs` holds two bf16 (lo in its low bits): AVX512-BF16's `vdpbf16ps`, which
    the microkernel's opt-in `bf16_products = pairs` uses (two K steps an
    instruction; the pair's products are summed before they reach the accumulator,
    bf16 subnormals read as zero). Lowered to the LLVM intrinsic of the width."""

    name = "teir_lane.dot_bf16_pairs"

    T: ClassVar = VarConstraint("T", AnyAttr())
    P: ClassVar = VarConstraint("P", AnyAttr())
    acc = operand_def(T)
    lhs = operand_def(P)
    rhs = operand_def(P)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)"

    def __init__(self, acc: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[acc, lhs, rhs], result_types=[acc.type])

    def verify_(self) -> None:
        typ, pairs = self.acc.type, self.lhs.type
        if not (isinstance(typ, VectorType) and typ.get_num_dims() == 1
                and typ.element_type == f32 and typ.get_shape()[0] in PAIR_LANES):
            raise VerifyException(f"expected vector<Nxf32> with N in {PAIR_LANES}, got {typ}")
        if pairs != VectorType(i32, typ.get_shape()):
            raise VerifyException(f"expected pairs {VectorType(i32, typ.get_shape())}, "
                                  f"got {pairs}")

    @property
    def intrinsic(self) -> str:
        """The LLVM intrinsic of this width (LLVM takes its i32 form and upgrades it)."""
        assert isinstance(self.acc.type, VectorType)
        return f"llvm.x86.avx512bf16.dpbf16ps.{32 * self.acc.type.get_shape()[0]}"


PREFETCH_LOCALITY = 3
"""`llvm.prefetch`'s locality when a `teir_lane.prefetch` names none: every level."""


def prefetch_arguments(op: LanePrefetchOp) -> tuple[int, int, int]:
    """`llvm.prefetch`'s arguments after the address: a read, the op's locality, of
    data."""
    return (0, op.hint, 1)


@irdl_op_definition
class LanePrefetchOp(IRDLOperation):
    """A hint to bring the cache line of `memref[index + ahead]` into every cache
    level for a read (MLIR's `memref.prefetch ..., read, locality<3>, data`;
    LLVM's `llvm.prefetch`). `ahead` is a constant so that the address is the
    one of a load at `index` plus a displacement (`prefetcht0 256(%rax)`): as an
    index of its own LLVM built the addresses in vector registers. x86's
    prefetch never faults, so a line past the end of the memory names no access:
    a streamed transpose prefetches its rows of in0 a few lines ahead of its
    loads without a bound (`TileEmitter.transposed`). `locality` (MLIR's and
    LLVM's hint, 0 to 3; absent: 3) 2 stops at the L2 (`prefetcht1`): far more
    such misses are in flight than the L1's."""

    name = "teir_lane.prefetch"

    memref = operand_def(MemRefType)
    index = operand_def(IndexType)
    ahead = prop_def(IntegerAttr[I64])
    locality = opt_prop_def(IntegerAttr[I64])

    assembly_format = ("$memref `[` $index `]` `ahead` $ahead (`locality` $locality^)? "
                       "attr-dict `:` type($memref)")

    def __init__(self, memref: SSAValue, index: SSAValue, ahead: int,
                 locality: int = PREFETCH_LOCALITY):
        properties: dict[str, Attribute] = {"ahead": IntegerAttr(ahead, i64)}
        if locality != PREFETCH_LOCALITY:
            properties["locality"] = IntegerAttr(locality, i64)
        super().__init__(operands=[memref, index], properties=properties)

    def verify_(self) -> None:
        if not 0 <= self.hint <= 3:
            raise VerifyException(f"teir_lane.prefetch: locality {self.hint} is not 0 to 3")

    @property
    def hint(self) -> int:
        """`llvm.prefetch`'s locality: the property, else every level's 3."""
        return PREFETCH_LOCALITY if self.locality is None else self.locality.value.data


PREFETCH_INTRINSIC = "llvm.prefetch.p0"


PAIR_LANES = (4, 8, 16)
"""f32 lanes of the `vdpbf16ps` forms (xmm, ymm, zmm)."""

UNROLLED = "teir_lane.unrolled"
"""A unit attribute on an scf.for whose body is vector code that the emitter unrolled
itself (register transposes, runs of vectors): the translation to LLVM IR asks
LLVM's loop unroller to leave it (`llvm.loop.unroll.disable`), which would only
grow the code and its compile time (README, Compile time)."""


LLVM_LEVEL = (LaneFCmpOp, LaneLLVMSelectOp)
"""The lane ops that xDSL's translation to LLVM IR takes."""

TEIR_LANE = Dialect("teir_lane", [LaneCmpfOp, LaneSelectOp, LaneFCmpOp, LaneLLVMSelectOp,
                                  LaneDotBF16PairsOp, LanePrefetchOp])


def is_llvm_level(op: Operation) -> bool:
    """Whether xDSL's translation to LLVM IR takes `op`: an llvm op or an llvm-level
    lane op."""
    return op.dialect_name() == "llvm" or isinstance(op, LLVM_LEVEL)


def lane_cmpf(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpfOp | LaneCmpfOp:
    """`arith.cmpf`, lane-wise (`teir_lane.cmpf`) on vectors."""
    if isinstance(lhs.type, VectorType):
        return LaneCmpfOp(lhs, rhs, predicate)
    return arith.CmpfOp(lhs, rhs, predicate)


def lane_select(
    cond: SSAValue, lhs: SSAValue, rhs: SSAValue
) -> arith.SelectOp | LaneSelectOp:
    """`arith.select`, lane-wise (`teir_lane.select`) when `cond` is a vector of i1."""
    if isinstance(cond.type, VectorType):
        return LaneSelectOp(cond, lhs, rhs)
    return arith.SelectOp(cond, lhs, rhs)
