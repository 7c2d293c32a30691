"""`teir-f16-moves-as-i16`: f16 values that a kernel only moves become i16 bit patterns.

In a module that only moves its f16 values (a Copy, Zero or ReLU kernel: loads,
stores, shuffles, constants, selects, bitcasts; `emit._relu_bits` decides
ReLU on the bits), f16 is retyped as i16 the way `teir-bf16-as-i16` retypes
bf16. Without AVX512-FP16, LLVM keeps a scalar half in a vector register and
loads it with `vpinsrw` into the register's low word, so that every such load
waits for the one before; as i16 it goes through a general register
(`movzwl`, `movw`) as bf16 does (`abc->acb` 2896 x 3 x 4, the 3 x 4 tiles
copied element by element, took 3x the time of the same copy in bf16). A
module that computes on f16 (converts it) is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, ModuleOp
from xdsl.passes import ModulePass

from teir_lowering.llvm.bf16 import computes_in, retype_as_i16


@dataclass(frozen=True)
class F16MovesAsI16Pass(ModulePass):
    """Retypes f16 as i16 in a module that only moves f16 values (see the module doc)."""

    name = "teir-f16-moves-as-i16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(computes_in(inner, Float16Type) for inner in op.walk()):
            retype_as_i16(op, Float16Type)
