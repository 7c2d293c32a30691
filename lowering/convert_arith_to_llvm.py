"""
Lowers `arith` (and the few `math` ops that are one LLVM intrinsic) to the `llvm` dialect.

xDSL ships the LLVM dialect and its translation to llvmlite, but no arith -> llvm
conversion. The patterns below map each arith op to the LLVM op with the same
semantics, one op at a time, in the style of MLIR's dialect conversion:

- `index` becomes `i64` (also as a vector element type);
- operands whose type changes are cast with `builtin.unrealized_conversion_cast`, and
  results whose type changes are cast back, so that every op verifies whatever order
  the patterns and passes run in. `reconcile-unrealized-casts` removes the casts once
  producers and users are all converted.

Ops with no faithful LLVM counterpart in xDSL's dialect (e.g. `arith.floordivsi`, or
`arith.cmpf` with the `false`/`true` predicates on vectors) are left alone, so that
`teir_lowering.llvm_pipeline` can report them.

Vector compares and lane-wise selects (the element-wise `select(x < 0, 0, x)` of
vectorized ReLUs): `LaneCmpfOp` and `LaneSelectOp` (teir_lowering.vector_ops, where
the scf-level emitters build them) lower to `VectorFCmpOp` and `VectorSelectOp`, the
vector forms of `llvm.fcmp` and `llvm.select`: xDSL 0.74's ops verify scalars or a
scalar i1 condition only, while LLVM (and xDSL's llvmlite translation, which builds
them with the same builder calls) takes vectors of floats and of i1 alike. Both are
subclasses of xDSL's ops, with the same names and printed forms, that only change
what their verifiers accept.

The type conversion helpers at the top are shared with the func and cf conversions,
and `RetypeWhere` with the pipeline's other type rewrites.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, llvm, math, ptr
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
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.type import get_element_type_or_self

from teir_lowering.vector_ops import verify_lane_compare, verify_lane_select

# --------------------------------------------------------------------------------------
# Type conversion shared by the arith, func and cf conversions
# --------------------------------------------------------------------------------------


def convert_type_to_llvm(typ: Attribute) -> Attribute:
    """
    Returns the LLVM-dialect type that values of `typ` have after lowering.

    `index` is 64 bits wide on the hosts the JIT targets. Memrefs and `!ptr_xdsl.ptr`
    become a bare `!llvm.ptr` to the first element: this is the calling convention of
    `convert-memref-to-ptr{lower_func=true}`, which the pipeline runs first.
    """
    match typ:
        case IndexType():
            return i64
        case VectorType() if isinstance(typ.element_type, IndexType):
            return VectorType(i64, typ.get_shape(), typ.scalable_dims)
        case MemRefType() | ptr.PtrType():
            return llvm.LLVMPointerType()
        case _:
            return typ


def cast_to_llvm(
    values: Sequence[SSAValue], rewriter: PatternRewriter
) -> list[SSAValue]:
    """
    Returns `values` with their LLVM types, casting those whose type changes.

    The casts let a converted op consume values whose producers are not converted yet.
    """
    converted: list[SSAValue] = []
    for value in values:
        target = convert_type_to_llvm(value.type)
        if target == value.type:
            converted.append(value)
            continue
        cast_op = rewriter.insert(UnrealizedConversionCastOp.get((value,), (target,)))
        cast_op.results[0].name_hint = value.name_hint
        converted.append(cast_op.results[0])
    return converted


def replace_with_llvm(
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue],
    rewriter: PatternRewriter,
) -> None:
    """
    Replaces `op` by `new_ops`, whose `new_results` stand for the results of `op`.

    A result whose type changed (`index` -> `i64`) is cast back to the old type, so
    that users that are not converted yet still verify.
    """
    rewriter.insert(new_ops)
    results: list[SSAValue] = []
    for old, new in zip(op.results, new_results, strict=True):
        if new.type == old.type:
            results.append(new)
            continue
        cast_op = rewriter.insert(UnrealizedConversionCastOp.get((new,), (old.type,)))
        results.append(cast_op.results[0])
    rewriter.replace(op, (), results)


def convert_block_arguments(block: Block, rewriter: PatternRewriter) -> None:
    """
    Gives the arguments of `block` their LLVM types.

    Existing uses see the old type through a cast at the start of the block, which
    `reconcile-unrealized-casts` folds away once the users are converted too.
    """
    for arg in tuple(block.args):
        old_type = arg.type
        new_type = convert_type_to_llvm(old_type)
        if new_type == old_type:
            continue
        new_arg = rewriter.replace_value_with_new_type(arg, new_type)
        if not new_arg.uses:
            continue
        cast_op = UnrealizedConversionCastOp.get((new_arg,), (old_type,))
        rewriter.insert(cast_op, InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(
            new_arg, cast_op.results[0], lambda use, cast=cast_op: use.operation is not cast
        )


def holds(attribute: Attribute, kind: type[Attribute]) -> bool:
    """Whether `attribute` is a `kind` or holds one among its parameters, at any depth."""
    if isinstance(attribute, kind):
        return True
    if isinstance(attribute, ParametrizedAttribute):
        return any(holds(parameter, kind) for parameter in attribute.parameters)
    data = getattr(attribute, "data", None)
    if isinstance(data, tuple):  # ArrayAttr
        return any(isinstance(d, Attribute) and holds(d, kind) for d in data)
    return False


@dataclass
class RetypeWhere(RewritePattern):
    """`conversion` on the ops whose results, block arguments, properties or attributes
    hold a `kind` type, and no others.

    xDSL's TypeConversionPattern rebuilds every parameter of every attribute of each
    op it visits, changed or not: on a large kernel that took most of the LLVM
    pipeline's time. Ops without a `kind` type would come out unchanged anyway.
    """

    conversion: TypeConversionPattern
    kind: type[Attribute]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        kind = self.kind
        if (
            any(holds(result.type, kind) for result in op.results)
            or any(holds(value, kind) for value in op.properties.values())
            or any(holds(value, kind) for value in op.attributes.values())
            or any(holds(arg.type, kind) for region in op.regions for block in region.blocks
                   for arg in block.args)
        ):
            self.conversion.match_and_rewrite(op, rewriter)


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


class VectorFCmpOp(llvm.FCmpOp):
    """
    `llvm.fcmp` on 1-D vectors of floats, giving a vector of i1 (one per lane).

    xDSL's `llvm.fcmp` verifies scalar operands only. This subclass (same name, same
    printed form) checks the vector form instead; the llvmlite translation matches
    it as an `llvm.fcmp` and llvmlite types the result as a vector of i1.
    """

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str):
        vector_type = cast(VectorType, lhs.type)
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[VectorType(i1, vector_type.get_shape())],
            properties={
                "predicate": IntegerAttr(llvm.FCmpPredicateFlag(predicate).to_int(), i64),
                "fastmathFlags": llvm.FastMathAttr(None),
            },
        )

    def verify_(self) -> None:
        verify_lane_compare(self.lhs.type, self.rhs.type, self.res.type)


class VectorSelectOp(llvm.SelectOp):
    """
    `llvm.select` with a vector-of-i1 condition (lane-wise), as `VectorFCmpOp`:
    xDSL's `llvm.select` verifies a scalar i1 condition only.
    """

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        IRDLOperation.__init__(
            self,
            operands=[cond, lhs, rhs],
            result_types=[lhs.type],
            properties={"fastmathFlags": llvm.FastMathAttr(None)},
        )

    def verify_(self) -> None:
        verify_lane_select(self.cond.type, self.lhs.type, self.rhs.type, self.res.type)


@dataclass
class ConvertCmpfOp(RewritePattern):
    """
    `arith.cmpf` -> `llvm.fcmp`; on 1-D vectors (`LaneCmpfOp`, typed with a vector of
    i1) -> `VectorFCmpOp`.

    `false` and `true` become constants: the llvmlite translation has no spelling for
    those two predicates. Vector compares with those predicates, or typed with a
    scalar i1 result (as xDSL's parser types them), are left alone.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter, /):
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if isinstance(op.lhs.type, VectorType):
            if name not in ("false", "true") and isinstance(op.result.type, VectorType):
                rewriter.replace(op, VectorFCmpOp(op.lhs, op.rhs, name))
            return
        if name in ("false", "true"):
            rewriter.replace(
                op, llvm.ConstantOp(IntegerAttr(int(name == "true"), i1), i1)
            )
            return
        rewriter.replace(op, llvm.FCmpOp(op.lhs, op.rhs, name))


@dataclass
class ConvertSelectOp(RewritePattern):
    """
    `arith.select` -> `llvm.select`: a scalar i1 condition picks whole values (vectors
    too); a vector-of-i1 condition picks lane by lane (`VectorSelectOp`).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter, /):
        lane_wise = isinstance(op.cond.type, VectorType)
        if lane_wise:
            if op.cond.type.get_num_dims() != 1:
                return
        elif op.cond.type != i1:
            return
        cond, lhs, rhs = cast_to_llvm(op.operands, rewriter)
        select = VectorSelectOp(cond, lhs, rhs) if lane_wise else llvm.SelectOp(cond, lhs, rhs)
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
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
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
                    ConvertIntegerResizeOp(),
                    ConvertFloatCastOp(),
                    ConvertFPToIntOp(),
                    ConvertUIToFPOp(),
                    ConvertMathFmaOp(),
                    ConvertMathIntrinsicOp(),
                ]
            )
        ).rewrite_module(op)
