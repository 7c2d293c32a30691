"""
Lowers `func.func`, `func.return` and `func.call` to `llvm.func`, `llvm.return` and
`llvm.call`.

Calling convention: every argument keeps its type except that `index` becomes `i64`
and a memref becomes one bare `!llvm.ptr` to its base (no descriptor; the element its
layout's offset counts from, teir_lowering.llvm.base_pointers). Run
after `convert-memref-to-ptr{lower_func=true}`, memref arguments already are pointers;
this pass applies the same rule to any memref left, so that it also works on its own.
A kernel `func.func @k(%a: memref<?xf32>, %b: memref<?xf64>)` hence becomes
`void k(float *, double *)` in C terms, callable through ctypes with `array.ctypes.data`.

The symbol name is kept, so the JIT exports the function under the func's `sym_name`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

from teir_lowering.llvm.common import (
    cast_to_llvm,
    convert_block_arguments,
    convert_type_to_llvm,
    replace_with_llvm,
)
from teir_lowering.llvm.rewriting import rewrite_once


def _llvm_function_type(
    name: str, function_type: func.FunctionType
) -> llvm.LLVMFunctionType:
    """The LLVM signature of a func signature; LLVM functions return at most one value."""
    outputs = function_type.outputs.data
    if len(outputs) > 1:
        raise DiagnosticException(
            f"cannot lower @{name} to LLVM: it returns {len(outputs)} values, "
            "an LLVM function returns at most one"
        )
    inputs = [convert_type_to_llvm(t) for t in function_type.inputs.data]
    output = convert_type_to_llvm(outputs[0]) if outputs else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType(inputs, output)


@dataclass
class ConvertFuncOp(RewritePattern):
    """
    `func.func` -> `llvm.func` with external linkage, the same name and argument
    attributes (so e.g. `{llvm.noalias}` on an argument reaches LLVM).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        function_type = _llvm_function_type(op.sym_name.data, op.function_type)
        body = rewriter.move_region_contents_to_new_regions(op.body)
        for block in body.blocks:
            convert_block_arguments(block, rewriter)
        other_props: dict[str, Attribute | None] = {}
        if op.arg_attrs is not None:
            other_props["arg_attrs"] = op.arg_attrs
        if op.res_attrs is not None:
            other_props["res_attrs"] = op.res_attrs
        rewriter.replace(
            op,
            llvm.FuncOp(
                op.sym_name,
                function_type,
                linkage=llvm.LinkageAttr("external"),
                body=body,
                other_props=other_props,
            ),
        )


@dataclass
class ConvertReturnOp(RewritePattern):
    """`func.return` -> `llvm.return` (of nothing or of the single result)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        if len(op.arguments) > 1:
            raise DiagnosticException(
                f"cannot lower a func.return of {len(op.arguments)} values to LLVM"
            )
        values = cast_to_llvm(op.arguments, rewriter)
        rewriter.replace(op, llvm.ReturnOp(values[0] if values else None))


@dataclass
class ConvertCallOp(RewritePattern):
    """`func.call` -> a direct `llvm.call`, arguments and result retyped."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        if len(op.res) > 1:
            raise DiagnosticException(
                f"cannot lower a call of @{op.callee.string_value()} to LLVM: "
                f"it returns {len(op.res)} values"
            )
        args = cast_to_llvm(op.arguments, rewriter)
        return_type = convert_type_to_llvm(op.res[0].type) if op.res else None
        call = llvm.CallOp(op.callee, *args, return_type=return_type)
        replace_with_llvm(op, (call,), call.results, rewriter)


@dataclass(frozen=True)
class ConvertFuncToLLVMPass(ModulePass):
    """Lowers func ops to llvm ops, memrefs passed as bare pointers."""

    name = "teir-convert-func-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(
            op,
            [ConvertFuncOp(), ConvertReturnOp(), ConvertCallOp()],
            dce=False,
        )
