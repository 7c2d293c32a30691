"""`teir-convert-vector-to-llvm`: the vector ops of the microkernels, in llvm.

`vector.load`/`vector.store` go through xDSL's `convert-vector-to-ptr`; this
pass covers the rest the microkernels use: `vector.broadcast` of a scalar
(insertelement into lane 0, then a shufflevector with an all-zero mask, the
form LLVM turns into one `vbroadcastss`), `vector.fma` (`llvm.intr.fma`) and
`vector.shuffle` of 1-D vectors (`llvm.shufflevector`, which LLVM's x86 backend
matches to vunpck*/vshuf*/vperm* for the register transposes of
teir_lowering.codegen.tile_primitives). The microkernels' strided lanes (gathers of a
vector from scalar loads, scatters of its lanes to scalar stores) use
`vector.insert` of a scalar at a constant lane (`llvm.insertelement`) and
`vector.extract` of one (a one-lane shufflevector bitcast to the scalar: xDSL's
llvmlite translation has no extractelement; LLVM folds the pair into one).
`vector.bitcast` (`llvm.bitcast`) reinterprets a vector with another lane
count, as the bf16 broadcasts of teir_lowering.codegen.emit do.

It also takes the `vector.store`s marked `nontemporal`, which
`convert-vector-to-ptr` would lower without the flag: they become
`ptr_xdsl.store`s with a `nontemporal` unit attribute, which
`teir-convert-ptr-addressing-to-llvm` turns into `llvm.store ... nontemporal`
(so this pass runs before `convert-vector-to-ptr`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, memref, ptr, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.convert_memref_to_ptr import build_target_ptr
from xdsl.utils.hints import isa

from teir_lowering.llvm.rewriting import rewrite_once

NONTEMPORAL = "nontemporal"
"""The unit attribute marking a `ptr_xdsl.store` as non-temporal."""


@dataclass
class ConvertBroadcast(RewritePattern):
    """Scalar -> 1-D vector broadcast as insertelement + zero-mask shufflevector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter, /):
        result = op.vector.type
        if isinstance(op.source.type, VectorType) or result.get_num_dims() != 1:
            return  # only scalar sources; others are reported as leftovers
        lanes = result.get_shape()[0]
        undef = llvm.UndefOp(result)
        zero = llvm.ConstantOp(IntegerAttr(0, i64), i64)
        first = llvm.InsertElementOp(undef.res, op.source, zero.result)
        splat = llvm.ShuffleVectorOp(
            first.res, undef.res, DenseArrayBase.from_list(i32, [0] * lanes), result
        )
        rewriter.replace(op, (undef, zero, first, splat), splat.results)


@dataclass
class ConvertFMA(RewritePattern):
    """vector.fma -> llvm.intr.fma (fused: one rounding)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.FMAOp(op.lhs, op.rhs, op.acc))


@dataclass
class ConvertShuffle(RewritePattern):
    """1-D vector.shuffle -> llvm.shufflevector (the same mask, as i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter, /):
        if op.v1.type.get_num_dims() != 1 or op.v2.type != op.v1.type:
            return  # n-D or mixed-length operands are reported as leftovers
        mask = DenseArrayBase.from_list(i32, op.mask.get_values())
        rewriter.replace(op, llvm.ShuffleVectorOp(op.v1, op.v2, mask, op.result.type))


@dataclass
class ConvertInsert(RewritePattern):
    """vector.insert of a scalar at a constant lane of a 1-D vector -> llvm.insertelement."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.InsertOp, rewriter: PatternRewriter, /):
        if isinstance(op.source.type, VectorType) or op.dynamic_position:
            return  # sub-vectors and dynamic lanes are reported as leftovers
        (lane,) = op.static_position.get_values()
        index = llvm.ConstantOp(IntegerAttr(lane, i64), i64)
        insert = llvm.InsertElementOp(op.dest, op.source, index.result)
        rewriter.replace(op, (index, insert), insert.results)


@dataclass
class ConvertExtract(RewritePattern):
    """vector.extract of a scalar at a constant lane of a 1-D vector -> one-lane
    llvm.shufflevector + llvm.bitcast to the element (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ExtractOp, rewriter: PatternRewriter, /):
        if isinstance(op.result.type, VectorType) or op.dynamic_position:
            return  # sub-vectors and dynamic lanes are reported as leftovers
        (lane,) = op.static_position.get_values()
        one_lane = VectorType(op.result.type, [1])
        shuffle = llvm.ShuffleVectorOp(
            op.vector, op.vector, DenseArrayBase.from_list(i32, [lane]), one_lane
        )
        scalar = llvm.BitcastOp(shuffle.res, op.result.type)
        rewriter.replace(op, (shuffle, scalar), scalar.results)


@dataclass
class ConvertBitcast(RewritePattern):
    """1-D vector.bitcast -> llvm.bitcast (the same bits, another lane count)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BitcastOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.BitcastOp(op.source, op.result.type))


@dataclass
class ConvertNontemporalStore(RewritePattern):
    """vector.store {nontemporal = true} -> ptr_xdsl.store marked `nontemporal`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter, /):
        if op.nontemporal is None or not op.nontemporal.value.data:
            return
        memref_type = op.base.type
        assert isa(memref_type, memref.MemRefType)
        target = build_target_ptr(op.base, memref_type, op.indices, rewriter)
        store = ptr.StoreOp(addr=target, value=op.vector)
        store.attributes[NONTEMPORAL] = UnitAttr()
        rewriter.replace(op, store)


@dataclass(frozen=True)
class ConvertVectorToLLVMPass(ModulePass):
    """Lowers vector.broadcast, fma, shuffle, insert, extract and bitcast to the llvm
    dialect."""

    name = "teir-convert-vector-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, [
            ConvertBroadcast(), ConvertFMA(), ConvertShuffle(), ConvertInsert(),
            ConvertExtract(), ConvertBitcast(), ConvertNontemporalStore(),
        ], dce=False, apply_recursively=False)
