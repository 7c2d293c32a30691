"""
Lowers `arith` (and the few `math` ops that are one LLVM intrinsic) to the `llvm` dialect.

xDSL ships the LLVM dialect and its translation to llvmlite, but no arith -> llvm
conversion. The patterns below map each arith op to the LLVM op with the same
semantics, one op at a time, retyping `index` as `i64` with the casts of
teir_lowering.llvm.common.

Ops with no faithful LLVM counterpart in xDSL's dialect (e.g. `arith.floordivsi`, or
`arith.cmpf` on vectors, which xDSL types with a scalar i1) are left alone, so that
`teir-lower-to-llvm-dialect` can report them. The pass also lowers the lane-wise
compare and select of the `teir_lane` dialect (teir_lowering.lane), which the
vectorized ReLU uses instead.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.type import get_element_type_or_self

from teir_lowering.llvm.common import (
    cast_to_llvm,
    convert_type_to_llvm,
    replace_with_llvm,
)
from teir_lowering.llvm.lane import (
    ConvertLaneCmpf,
    ConvertLaneDotBF16Pairs,
    ConvertLaneSelect,
)
from teir_lowering.llvm.rewriting import rewrite_once


def intrinsic_suffix(typ: Attribute) -> str:
    """The type suffix that names the overload of an LLVM intrinsic, e.g. `v8f32`."""
    match typ:
        case Float16Type():
            return "f16"
        case BFloat16Type():
            return "bf16"
        case Float32Type():
            return "f32"
        case Float64Type():
            return "f64"
        case IntegerType():
            return f"i{typ.width.data}"
        case VectorType():
            (count,) = typ.get_shape()
            return f"v{count}{intrinsic_suffix(typ.element_type)}"
        case _:
            raise NotImplementedError(f"no LLVM intrinsic suffix for {typ}")


def _bitwidth(typ: Attribute) -> int:
    element = get_element_type_or_self(typ)
    assert isinstance(element, IntegerType)
    return element.width.data


def _fastmath(op: Operation) -> llvm.FastMathAttr:
    """The LLVM fast-math flags of an arith/math op (none when it has no flags)."""
    flags = op.properties.get("fastmath")
    if isinstance(flags, arith.FastMathFlagsAttr):
        return llvm.FastMathAttr(flags.data)
    return llvm.FastMathAttr(None)


# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------


@dataclass
class ConvertConstantOp(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant`, with index values retyped to i64."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        result_type = convert_type_to_llvm(op.result.type)
        value = op.value
        match value:
            case IntegerAttr() if isinstance(value.type, IndexType):
                value = IntegerAttr(value.value.data, i64)
            case IntegerAttr() | FloatAttr():
                pass
            case DenseIntOrFPElementsAttr() if isinstance(result_type, VectorType):
                if isinstance(value.get_element_type(), IndexType):
                    value = DenseIntOrFPElementsAttr.from_list(
                        cast(VectorType[IntegerType], result_type),
                        cast(Sequence[int], value.get_values()),
                    )
            case _:
                # dense resources and tensors have no LLVM constant of their own
                return
        constant = llvm.ConstantOp(value, result_type)
        replace_with_llvm(op, (constant,), constant.results, rewriter)


# --------------------------------------------------------------------------------------
# Binary arithmetic
# --------------------------------------------------------------------------------------

_INTEGER_BINARY_OPS: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

_FLOAT_BINARY_OPS: dict[type[Operation], type[llvm.AbstractFloatArithOp]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


@dataclass
class ConvertIntegerBinaryOp(RewritePattern):
    """Integer arith binary ops -> the LLVM op of the same name, with nsw/nuw kept."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op_type = _INTEGER_BINARY_OPS.get(type(op))
        if llvm_op_type is None:
            return
        lhs, rhs = cast_to_llvm(op.operands, rewriter)
        if issubclass(llvm_op_type, llvm.ArithmeticBinOpOverflow):
            flags = cast(arith.SignlessIntegerBinaryOperationWithOverflow, op)
            overflow = llvm.OverflowAttr(
                tuple(llvm.OverflowFlag(f.value) for f in flags.overflow_flags.data)
            )
            new_op = llvm_op_type(lhs, rhs, overflow=overflow)
        else:
            new_op = llvm_op_type(lhs, rhs)  # pyright: ignore[reportCallIssue]
        replace_with_llvm(op, (new_op,), new_op.results, rewriter)


@dataclass
class ConvertFloatBinaryOp(RewritePattern):
    """Float arith binary ops -> the LLVM op of the same name, with fast-math kept."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        llvm_op_type = _FLOAT_BINARY_OPS.get(type(op))
        if llvm_op_type is None:
            return
        new_op = llvm_op_type(op.operands[0], op.operands[1], _fastmath(op))
        rewriter.replace(op, new_op)


@dataclass
class ConvertNegfOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.FNegOp(op.operand, _fastmath(op)))


_INTEGER_MIN_MAX_PREDICATES: dict[type[Operation], str] = {
    arith.MinSIOp: "slt",
    arith.MaxSIOp: "sgt",
    arith.MinUIOp: "ult",
    arith.MaxUIOp: "ugt",
}


@dataclass
class ConvertIntegerMinMaxOp(RewritePattern):
    """
    `arith.{min,max}{s,u}i` -> `llvm.icmp` + `llvm.select` (scalars only).

    xDSL's `llvm.select` takes a scalar condition, so vectors are left alone.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        predicate = _INTEGER_MIN_MAX_PREDICATES.get(type(op))
        if predicate is None or isinstance(op.results[0].type, VectorType):
            return
        lhs, rhs = cast_to_llvm(op.operands, rewriter)
        compare = llvm.ICmpOp(
            lhs, rhs, IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), i64)
        )
        select = llvm.SelectOp(compare, lhs, rhs)
        replace_with_llvm(op, (compare, select), select.results, rewriter)


_FLOAT_MIN_MAX_INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
}


@dataclass
class ConvertFloatMinMaxOp(RewritePattern):
    """
    `arith.{maximum,minimum,maxnum,minnum}f` -> the LLVM intrinsic of the same semantics.

    They go through `llvm.call_intrinsic` with the type-mangled name: xDSL's
    `llvm.intr.maxnum` translates to an unmangled `llvm.maxnum` declaration, which
    clashes once two float types use it in one module.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        intrinsic = _FLOAT_MIN_MAX_INTRINSICS.get(type(op))
        if intrinsic is None:
            return
        result_type = op.results[0].type
        rewriter.replace(
            op,
            llvm.CallIntrinsicOp(
                f"{intrinsic}.{intrinsic_suffix(result_type)}",
                op.operands,
                (result_type,),
            ),
        )


# --------------------------------------------------------------------------------------
# Comparisons and select
# --------------------------------------------------------------------------------------


@dataclass
class ConvertCmpiOp(RewritePattern):
    """`arith.cmpi` -> `llvm.icmp`; both dialects name the ten predicates alike."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter, /):
        name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        predicate = IntegerAttr(llvm.ICmpPredicateFlag(name).to_int(), i64)
        lhs, rhs = cast_to_llvm(op.operands, rewriter)
        rewriter.replace(op, llvm.ICmpOp(lhs, rhs, predicate))


@dataclass
class ConvertCmpfOp(RewritePattern):
    """
    `arith.cmpf` of scalars -> `llvm.fcmp` (vectors: `teir_lane.cmpf`).

    `false` and `true` become constants: the llvmlite translation has no spelling for
    those two predicates. Vector compares, which xDSL types with a scalar i1 result,
    are left alone.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter, /):
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if isinstance(op.lhs.type, VectorType):
            return
        if name in ("false", "true"):
            rewriter.replace(
                op, llvm.ConstantOp(IntegerAttr(int(name == "true"), i1), i1)
            )
            return
        rewriter.replace(op, llvm.FCmpOp(op.lhs, op.rhs, name))


@dataclass
class ConvertSelectOp(RewritePattern):
    """`arith.select` -> `llvm.select`: the i1 condition picks whole values (vectors
    too; lane by lane: `teir_lane.select`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter, /):
        cond, lhs, rhs = cast_to_llvm(op.operands, rewriter)
        select = llvm.SelectOp(cond, lhs, rhs)
        replace_with_llvm(op, (select,), select.results, rewriter)


# --------------------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------------------


def _resize_integer(
    value: SSAValue, target: Attribute, signed: bool
) -> tuple[list[Operation], SSAValue]:
    """The ops (and result) that sign/zero-extend or truncate `value` to `target`."""
    source_width = _bitwidth(value.type)
    target_width = _bitwidth(target)
    if source_width == target_width:
        return [], value
    if source_width > target_width:
        resized = llvm.TruncOp(value, target)
    elif signed:
        resized = llvm.SExtOp(value, target)
    else:
        resized = llvm.ZExtOp(value, target)
    return [resized], resized.res


@dataclass
class ConvertIntegerResizeOp(RewritePattern):
    """
    `arith.extsi/extui/trunci` -> `llvm.sext/zext/trunc`, and `arith.index_cast` as the
    same three on i64 (a cast to or from i64 disappears).
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        match op:
            case arith.ExtSIOp() | arith.TruncIOp() | arith.IndexCastOp():
                signed = True
            case arith.ExtUIOp():
                signed = False
            case _:
                return
        (value,) = cast_to_llvm(op.operands, rewriter)
        target = convert_type_to_llvm(op.results[0].type)
        new_ops, result = _resize_integer(value, target, signed)
        replace_with_llvm(op, new_ops, (result,), rewriter)


@dataclass
class ConvertFloatCastOp(RewritePattern):
    """`arith.extf/truncf/sitofp/bitcast` -> `llvm.fpext/fptrunc/sitofp/bitcast`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        match op:
            case arith.ExtFOp():
                llvm_op_type = llvm.FPExtOp
            case arith.TruncFOp():
                llvm_op_type = llvm.FPTruncOp
            case arith.SIToFPOp():
                llvm_op_type = llvm.SIToFPOp
            case arith.BitcastOp():
                llvm_op_type = llvm.BitcastOp
            case _:
                return
        (value,) = cast_to_llvm(op.operands, rewriter)
        target = convert_type_to_llvm(op.results[0].type)
        if value.type == target:
            # e.g. a bitcast between index and i64
            replace_with_llvm(op, (), (value,), rewriter)
            return
        new_op = llvm_op_type(value, target)
        replace_with_llvm(op, (new_op,), new_op.results, rewriter)


@dataclass
class ConvertFPToIntOp(RewritePattern):
    """
    `arith.fptosi/fptoui` -> `llvm.fpto{s,u}i.sat` intrinsics.

    xDSL's LLVM dialect has no plain `fptosi`/`fptoui`. The saturating intrinsics agree
    with them wherever those are defined (out-of-range inputs are poison for them).
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        match op:
            case arith.FPToSIOp():
                intrinsic = "llvm.fptosi.sat"
            case arith.FPToUIOp():
                intrinsic = "llvm.fptoui.sat"
            case _:
                return
        source = op.operands[0].type
        target = op.results[0].type
        name = f"{intrinsic}.{intrinsic_suffix(target)}.{intrinsic_suffix(source)}"
        rewriter.replace(op, llvm.CallIntrinsicOp(name, op.operands, (target,)))


@dataclass
class ConvertUIToFPOp(RewritePattern):
    """
    `arith.uitofp` without an LLVM `uitofp` (xDSL's dialect has none).

    Narrower than 64 bits, the value is zero-extended to i64, where it is non-negative,
    and converted signed. Otherwise a value with the top bit set is halved, keeping the
    low bit as a sticky bit so that rounding is unchanged, converted signed and doubled.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.UIToFPOp, rewriter: PatternRewriter, /):
        value = op.input
        result_type = op.result.type
        width = _bitwidth(value.type)
        if width < 64:
            extend = llvm.ZExtOp(value, i64)
            convert = llvm.SIToFPOp(extend, result_type)
            rewriter.replace(op, (extend, convert))
            return
        int_type = value.type
        zero = llvm.ConstantOp(IntegerAttr(0, int_type), int_type)
        one = llvm.ConstantOp(IntegerAttr(1, int_type), int_type)
        negative = llvm.ICmpOp(
            value, zero.result, IntegerAttr(llvm.ICmpPredicateFlag.SLT.to_int(), i64)
        )
        half = llvm.LShrOp(value, one.result)
        low_bit = llvm.AndOp(value, one.result)
        sticky_half = llvm.OrOp(half.res, low_bit.res)
        converted_half = llvm.SIToFPOp(sticky_half, result_type)
        doubled = llvm.FAddOp(converted_half, converted_half)
        direct = llvm.SIToFPOp(value, result_type)
        select = llvm.SelectOp(negative, doubled, direct)
        rewriter.replace(
            op,
            (
                zero,
                one,
                negative,
                half,
                low_bit,
                sticky_half,
                converted_half,
                doubled,
                direct,
                select,
            ),
        )


# --------------------------------------------------------------------------------------
# math ops that are a single LLVM intrinsic
# --------------------------------------------------------------------------------------

_MATH_INTRINSICS: dict[type[Operation], str] = {
    math.AbsFOp: "llvm.fabs",
    math.SqrtOp: "llvm.sqrt",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.TruncOp: "llvm.trunc",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.CopySignOp: "llvm.copysign",
    math.PowFOp: "llvm.pow",
}


@dataclass
class ConvertMathFmaOp(RewritePattern):
    """
    `math.fma` -> `llvm.intr.fma`.

    Fast-math flags are dropped: the llvmlite translation rejects them on fma, and an
    fma without them is always a correct lowering.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.FMAOp(op.a, op.b, op.c))


@dataclass
class ConvertMathIntrinsicOp(RewritePattern):
    """Elementwise `math` ops that are one LLVM intrinsic -> `llvm.call_intrinsic`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        intrinsic = _MATH_INTRINSICS.get(type(op))
        if intrinsic is None:
            return
        result_type = op.results[0].type
        if not isinstance(get_element_type_or_self(result_type), AnyFloat):
            return
        rewriter.replace(
            op,
            llvm.CallIntrinsicOp(
                f"{intrinsic}.{intrinsic_suffix(result_type)}",
                op.operands,
                (result_type,),
            ),
        )


@dataclass(frozen=True)
class ConvertArithToLLVMPass(ModulePass):
    """
    Lowers arith ops (and `math.fma` and other one-intrinsic math ops) to the llvm
    dialect, with `index` as i64.
    """

    name = "teir-convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(
            op,
            [
                ConvertConstantOp(),
                ConvertIntegerBinaryOp(),
                ConvertFloatBinaryOp(),
                ConvertNegfOp(),
                ConvertIntegerMinMaxOp(),
                ConvertFloatMinMaxOp(),
                ConvertCmpiOp(),
                ConvertCmpfOp(),
                ConvertSelectOp(),
                ConvertLaneCmpf(),
                ConvertLaneSelect(),
                ConvertLaneDotBF16Pairs(),
                ConvertIntegerResizeOp(),
                ConvertFloatCastOp(),
                ConvertFPToIntOp(),
                ConvertUIToFPOp(),
                ConvertMathFmaOp(),
                ConvertMathIntrinsicOp(),
            ]
        )
