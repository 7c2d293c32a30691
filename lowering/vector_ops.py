"""Lane-wise compare and select on 1-D float vectors, at the scf/arith level.

In xDSL 0.74, `arith.cmpf` always has a scalar i1 result and `arith.select`
verifies a scalar i1 condition only, while MLIR (and LLVM, and xDSL's llvmlite
translation) take vectors of floats and of i1 alike. `LaneCmpfOp` and
`LaneSelectOp` are MLIR's vector forms of the two ops (build them with
`lane_cmpf` and `lane_select`): subclasses of xDSL's ops, with the same names
and printed forms (MLIR's), that only change what their verifiers accept;
xDSL's parser cannot read them back. The vectorized ReLU (`teir_lowering.emit.relu`)
emits them, and `teir-convert-arith-to-llvm` lowers them to the vector forms of
`llvm.fcmp` and `llvm.select`, which check their types with the same two
verifiers below.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, VectorType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def verify_lane_compare(lhs: Attribute, rhs: Attribute, result: Attribute) -> None:
    """Operands: one 1-D vector type of floats; result: the vector of i1 of its shape."""
    if not (
        isinstance(lhs, VectorType)
        and lhs.get_num_dims() == 1
        and isinstance(lhs.element_type, AnyFloat)
    ):
        raise VerifyException(f"expected a 1-D vector of floats, got {lhs}")
    if rhs != lhs:
        raise VerifyException(f"operand types differ: {lhs} and {rhs}")
    if result != VectorType(i1, lhs.get_shape()):
        raise VerifyException(f"expected result {VectorType(i1, lhs.get_shape())}, got {result}")


def verify_lane_select(cond: Attribute, lhs: Attribute, rhs: Attribute, result: Attribute) -> None:
    """Operands and result: one 1-D vector type; condition: the vector of i1 of its shape."""
    if not (isinstance(lhs, VectorType) and lhs.get_num_dims() == 1):
        raise VerifyException(f"expected 1-D vector operands, got {lhs}")
    if rhs != lhs or result != lhs:
        raise VerifyException(f"operand and result types differ: {lhs}, {rhs}, {result}")
    if cond != VectorType(i1, lhs.get_shape()):
        raise VerifyException(f"expected condition {VectorType(i1, lhs.get_shape())}, got {cond}")


class LaneCmpfOp(arith.CmpfOp):
    """
    `arith.cmpf` of 1-D float vectors with MLIR's result type, a vector of i1 (xDSL's
    `arith.cmpf` types every result as a scalar i1). Build it with `lane_cmpf`.
    """

    def verify_(self) -> None:
        verify_lane_compare(self.lhs.type, self.rhs.type, self.result.type)


def lane_cmpf(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpfOp:
    """`arith.cmpf`, lane-wise with a vector-of-i1 result (`LaneCmpfOp`) on vectors."""
    if not isinstance(lhs.type, VectorType):
        return arith.CmpfOp(lhs, rhs, predicate)
    lane = LaneCmpfOp.__new__(LaneCmpfOp)
    IRDLOperation.__init__(
        lane,
        operands=[lhs, rhs],
        result_types=[VectorType(i1, lhs.type.get_shape())],
        properties={
            "predicate": IntegerAttr(arith.CMPF_COMPARISON_OPERATIONS.index(predicate), i64),
            "fastmath": arith.FastMathFlagsAttr("none"),
        },
    )
    return lane


class LaneSelectOp(arith.SelectOp):
    """
    `arith.select` with a 1-D vector of i1 as condition: lane i of the result is lane
    i of `lhs` where lane i of `cond` is set, else lane i of `rhs` (MLIR's semantics).
    Printed in MLIR's form, `arith.select %c, %a, %b : vector<8xi1>, vector<8xf32>`.
    """

    def verify_(self) -> None:
        verify_lane_select(self.cond.type, self.lhs.type, self.rhs.type, self.result.type)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_ssa_value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((self.cond.type, self.result.type), printer.print_attribute)


def lane_select(cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> arith.SelectOp:
    """`arith.select`, lane-wise (`LaneSelectOp`) when `cond` is a vector of i1."""
    if isinstance(cond.type, VectorType):
        op = LaneSelectOp.__new__(LaneSelectOp)
        IRDLOperation.__init__(op, operands=[cond, lhs, rhs], result_types=[lhs.type])
        return op
    return arith.SelectOp(cond, lhs, rhs)
