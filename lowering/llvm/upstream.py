"""The `mlir-upstream` target: TEIR's lowered IR as upstream MLIR reads it.

The lowering holds `teir_lane` ops (teir_lowering.llvm.lane) where xDSL 0.74's
`arith.cmpf`/`arith.select` and `llvm.fcmp`/`llvm.select` take scalars only;
upstream MLIR has them as those ops' vector forms. This target prints them under
MLIR's names and custom syntax and everything else as the `mlir` target does,
so that `mlir-opt` parses and verifies TEIR's scf-level and llvm-level output:

    teir-opt rec.json -p teir-optimize,teir-to-scf -t mlir-upstream | mlir-opt-19

The custom form only: in the generic form, xDSL prints some properties of
xDSL's own ops as MLIR does not read them (`vector.shuffle`'s `mask`,
`llvm.sub`'s `overflowFlags = 0 : i32` for MLIR's `#llvm.overflow<none>`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.target import Target

from teir_lowering.llvm.lane import LaneCmpfOp, LaneCompare, LaneSelect, LaneSelectOp


class UpstreamPrinter(Printer):
    """Prints the lane ops as the MLIR ops they stand for."""

    def print_op(self, op: Operation) -> None:
        if self.print_generic_format or not isinstance(op, LaneCompare | LaneSelect):
            super().print_op(op)
            return
        self.print_list(op.results, self.print_ssa_value)
        self.print_string(" = ")
        if isinstance(op, LaneCompare):
            if isinstance(op, LaneCmpfOp):
                self.print_string(f"arith.cmpf {op.predicate_name}, ")
            else:
                self.print_string(f'llvm.fcmp "{op.predicate_name}" ')
            self.print_list((op.lhs, op.rhs), self.print_ssa_value)
            self.print_op_attributes(op.attributes)
            self.print_string(" : ")
            self.print_attribute(op.lhs.type)
            return
        name = "arith.select" if isinstance(op, LaneSelectOp) else "llvm.select"
        self.print_string(f"{name} ")
        self.print_list((op.cond, op.lhs, op.rhs), self.print_ssa_value)
        self.print_op_attributes(op.attributes)
        self.print_string(" : ")
        self.print_list((op.cond.type, op.lhs.type), self.print_attribute)


@dataclass(frozen=True)
class UpstreamTarget(Target):
    """MLIR text for upstream MLIR tools (see the module docstring)."""

    name: ClassVar[str] = "mlir-upstream"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        UpstreamPrinter(stream=output).print_op(module)
        output.write("\n")
