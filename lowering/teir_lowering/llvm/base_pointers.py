"""
xDSL's `convert-memref-to-ptr` patterns for the memrefs whose layout has an offset,
under one calling convention: a function takes (and returns) each memref as the
pointer to its base, the element its layout's offset counts from (what
`convert-linalg-to-teir`'s configurations and `linalg_run` assume, and upstream
MLIR's bare-pointer convention passes).

Inside a function xDSL lowers a memref to the pointer of its first element (a
subview adds only its own offsets). The two meet at the function boundary: a
memref argument with a static offset k is its base pointer plus k elements at
entry, and a call passes its argument's pointer minus k (`func.call` could pass
a view's first element, and the callee add k again). `memref.reinterpret_cast`
restarts from the source's base (MLIR's semantics), so it subtracts the source's
offset before it adds its own; xDSL's pattern added its own only. A dynamic
offset at either place is refused by name: no bare pointer carries it.
"""

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, ptr
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_memref_to_ptr import (
    ConvertReinterpretCastOp,
    LowerMemRefFuncCallPattern,
    LowerMemRefFuncOpPattern,
    LowerMemRefFuncReturnPattern,
    build_bytes_offset,
    build_offset_pointer,
)
from xdsl.utils.exceptions import DiagnosticException


def static_offset(memref_type: Attribute, what: str) -> int:
    """The offset (in elements) of a memref type's layout; 0 for other types."""
    if not isinstance(memref_type, MemRefType):
        return 0
    offset = memref_type.get_offset()
    if offset is None:
        raise DiagnosticException(
            f"{what} of type {memref_type}: a memref with a dynamic (or no strided) "
            "offset has no bare-pointer form")
    return offset


def offset_pointer(pointer: SSAValue, elements: int, element_type: Attribute,
                   builder: Builder) -> SSAValue:
    """`pointer` moved by `elements` elements of `element_type` (either sign)."""
    count = builder.insert(arith.ConstantOp(IntegerAttr(elements, IndexType()))).result
    return build_offset_pointer(pointer, build_bytes_offset(count, element_type, builder),
                                builder)


def _rebased(value: SSAValue, elements: int, builder: Builder) -> SSAValue:
    """The memref `value` with its pointer moved by `elements` elements, same type."""
    memref_type = value.type
    assert isinstance(memref_type, MemRefType)
    pointer = builder.insert(ptr.ToPtrOp(value)).res
    moved = offset_pointer(pointer, elements, memref_type.element_type, builder)
    return builder.insert(ptr.FromPtrOp(moved, memref_type)).res


class FuncArgumentsFromBase(LowerMemRefFuncOpPattern):
    """Memref arguments as bare pointers; one with offset k is its base pointer + k
    elements from the entry on."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        offsets = [(index, static_offset(t, f"argument {index} of @{op.sym_name.data}"))
                   for index, t in enumerate(op.function_type.inputs.data)]
        super().match_and_rewrite(op, rewriter)
        if op.is_declaration:
            return
        block = op.body.blocks[0]
        for index, offset in offsets:
            casts = [use.operation for use in block.args[index].uses]
            if not offset or not casts:
                continue
            (cast,) = casts  # super()'s ptr -> memref cast of the argument
            assert isinstance(cast, ptr.FromPtrOp)
            builder = Builder(InsertPoint.before(cast))
            element_type = cast.res.type.element_type  # pyright: ignore
            cast.operands[0] = offset_pointer(block.args[index], offset, element_type,
                                              builder)


class FuncCallArgumentsToBase(LowerMemRefFuncCallPattern):
    """A call passes each memref argument with offset k as its pointer - k
    elements, and takes a memref result with offset k as the pointer + k."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        callee = op.callee.string_value()
        for index, argument in enumerate(op.arguments):
            offset = static_offset(argument.type, f"argument {index} of a call of @{callee}")
            if offset:
                op.operands[index] = _rebased(argument, -offset, rewriter)
        results = [(result, static_offset(result.type, f"result of a call of @{callee}"))
                   for result in op.results]
        after = Builder(InsertPoint.after(op))
        for result, offset in results:
            if offset and result.uses:
                uses = list(result.uses)
                moved = _rebased(result, offset, after)
                for use in uses:
                    use.operation.operands[use.index] = moved
        super().match_and_rewrite(op, rewriter)


class FuncReturnToBase(LowerMemRefFuncReturnPattern):
    """A returned memref with offset k as its pointer - k elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        for index, value in enumerate(op.arguments):
            offset = static_offset(value.type, f"returned value {index}")
            if offset:
                op.operands[index] = _rebased(value, -offset, rewriter)
        super().match_and_rewrite(op, rewriter)


class ReinterpretCastFromBase(ConvertReinterpretCastOp):
    """`memref.reinterpret_cast`, restarting from the source's base."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ReinterpretCastOp, rewriter: PatternRewriter, /):
        offset = static_offset(op.source.type, "the source of a memref.reinterpret_cast")
        if offset:
            op.operands[0] = _rebased(op.source, -offset, rewriter)
        super().match_and_rewrite(op, rewriter)
