"""
The type conversion the llvm conversions share (arith, func, cf, lane, memref;
the retyping of bf16, f16 and pointers is `teir_lowering.llvm.retype`).

Conversions run one dialect at a time, in the style of MLIR's dialect conversion:

- `index` becomes `i64` (also as a vector element type), and memrefs and
  `!ptr_xdsl.ptr` a bare `!llvm.ptr` (`convert_type_to_llvm`);
- operands whose type changes are cast with `builtin.unrealized_conversion_cast`
  (`cast_to_llvm`), and results whose type changes are cast back
  (`replace_with_llvm`), so that every op verifies whatever order the patterns and
  passes run in. `reconcile-unrealized-casts` removes the casts once producers and
  users are all converted.
"""

from collections.abc import Sequence

from xdsl.dialects import llvm, ptr
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint


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
    A value that is itself a cast from a value of the LLVM type (a converted
    producer's result cast back) is replaced by that value at once: no cast pair
    for `reconcile-unrealized-casts` to fold, and half the ops to build.
    """
    converted: list[SSAValue] = []
    for value in values:
        target = convert_type_to_llvm(value.type)
        if target == value.type:
            converted.append(value)
            continue
        owner = value.owner
        if (isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1
                and owner.inputs[0].type == target):
            converted.append(owner.inputs[0])
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
        if new.name_hint is None:
            new.name_hint = old.name_hint  # users that take it directly keep the name
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
