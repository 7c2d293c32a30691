"""The `mlir-upstream` target: TEIR's lowered IR as upstream MLIR reads it.

The lowering holds `teir_lane` ops (teir_lowering.lane) where xDSL 0.74's
`arith.cmpf`/`arith.select` and `llvm.fcmp`/`llvm.select` take scalars only;
upstream MLIR has them as those ops' vector forms. This target prints them under
MLIR's names and custom syntax and everything else as the `mlir` target does,
so that `mlir-opt` parses and verifies TEIR's scf-level and llvm-level output
(the bf16 pair product, `teir_lane.dot_bf16_pairs`, as the `llvm.call_intrinsic`
of its `vdpbf16ps`, in either form; `teir_lane.prefetch` as `memref.prefetch` of
its index plus the elements ahead):

    teir-opt rec.json -p teir-optimize,teir-to-scf -t mlir-upstream | mlir-opt-19

`-t 'mlir-upstream{generic=true}'` prints MLIR's generic form, which mlir-opt
reads at the scf level. At the llvm level it does not: xDSL 0.74 prints the
properties of some of its own llvm ops as MLIR does not read them
(`llvm.mul`/`llvm.sub`'s `overflowFlags = 0 : i32` where MLIR wants
`#llvm.overflow<none>`; the issue also saw `vector.shuffle`'s `mask` and
`llvm.trunc`'s properties), so use the custom form there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, VectorType
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.target import Target

from teir_lowering.lane import (
    LaneCmpfOp,
    LaneCompare,
    LaneDotBF16PairsOp,
    LaneFCmpOp,
    LaneLLVMSelectOp,
    LanePrefetchOp,
    LaneSelect,
    LaneSelectOp,
)

UPSTREAM_NAMES: dict[type[Operation], str] = {
    LaneCmpfOp: "arith.cmpf",
    LaneSelectOp: "arith.select",
    LaneFCmpOp: "llvm.fcmp",
    LaneLLVMSelectOp: "llvm.select",
}
"""The MLIR op each lane op stands for; their operands and properties are MLIR's."""


class UpstreamPrinter(Printer):
    """Prints the lane ops as the MLIR ops they stand for."""

    def print_op(self, op: Operation) -> None:
        if isinstance(op, LaneDotBF16PairsOp):
            self.print_pair_product(op)
            return
        if isinstance(op, LanePrefetchOp):
            self.print_prefetch(op)
            return
        name = UPSTREAM_NAMES.get(type(op))
        if name is None:
            super().print_op(op)
            return
        self.print_list(op.results, self.print_ssa_value)
        self.print_string(" = ")
        if self.print_generic_format:
            self.print_string(f'"{name}"')
            self.print_op_with_default_format(op)
            return
        self.print_string(name)
        if isinstance(op, LaneCompare):
            predicate = op.predicate_name
            self.print_string(f" {predicate}, " if isinstance(op, LaneCmpfOp)
                              else f' "{predicate}" ')
            self.print_list((op.lhs, op.rhs), self.print_ssa_value)
            self.print_op_attributes(op.attributes)
            self.print_string(" : ")
            self.print_attribute(op.lhs.type)
            return
        assert isinstance(op, LaneSelect)
        self.print_string(" ")
        self.print_list((op.cond, op.lhs, op.rhs), self.print_ssa_value)
        self.print_op_attributes(op.attributes)
        self.print_string(" : ")
        self.print_list((op.cond.type, op.lhs.type), self.print_attribute)

    def print_prefetch(self, op: LanePrefetchOp) -> None:
        """`memref.prefetch` of the element `ahead` past the index (MLIR's op has no
        displacement: the index is added first)."""
        ahead, at = self._get_new_valid_name_id(), self._get_new_valid_name_id()
        generic = self.print_generic_format
        self.print_string(f'%{ahead} = "arith.constant"() <{{value = {op.ahead.value.data} '
                          ': index}> : () -> index' if generic else
                          f"%{ahead} = arith.constant {op.ahead.value.data} : index")
        self._print_new_line()
        self.print_string(f'%{at} = "arith.addi"(' if generic else f"%{at} = arith.addi ")
        self.print_ssa_value(op.index)
        self.print_string(f", %{ahead}) : (index, index) -> index" if generic
                          else f", %{ahead} : index")
        self._print_new_line()
        self.print_string('"memref.prefetch"(' if generic else "memref.prefetch ")
        self.print_ssa_value(op.memref)
        if generic:
            self.print_string(f", %{at}) <{{isDataCache = true, isWrite = false, "
                              f"localityHint = {op.hint} : i32}}> : (")
            self.print_attribute(op.memref.type)
            self.print_string(", index) -> ()")
            return
        self.print_string(f"[%{at}], read, locality<{op.hint}>, data : ")
        self.print_attribute(op.memref.type)

    def print_pair_product(self, op: LaneDotBF16PairsOp) -> None:
        """The intrinsic's call as MLIR 19 translates it: its pairs as bf16 vectors
        (MLIR checks the intrinsic's types; LLVM itself upgrades the i32 form)."""
        assert isinstance(op.lhs.type, VectorType)
        pairs = f"vector<{2 * op.lhs.type.get_shape()[0]}xbf16>"
        names = []
        for value in (op.lhs, op.rhs):
            names.append(name := self._get_new_valid_name_id())
            self.print_string(f"%{name} = llvm.bitcast ")
            self.print_ssa_value(value)
            self.print_string(" : ")
            self.print_attribute(value.type)
            self.print_string(f" to {pairs}")
            self._print_new_line()
        self.print_ssa_value(op.result)
        self.print_string(f' = llvm.call_intrinsic "{op.intrinsic}"(')
        self.print_ssa_value(op.acc)
        self.print_string(f", %{names[0]}, %{names[1]}) : (")
        self.print_attribute(op.acc.type)
        self.print_string(f", {pairs}, {pairs}) -> ")
        self.print_attribute(op.result.type)


@dataclass(frozen=True)
class UpstreamTarget(Target):
    """MLIR text for upstream MLIR tools (see the module docstring)."""

    name: ClassVar[str] = "mlir-upstream"

    generic: bool = False
    """MLIR's generic form (-t 'mlir-upstream{generic=true}')."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        UpstreamPrinter(stream=output, print_generic_format=self.generic).print_op(module)
        output.write("\n")
