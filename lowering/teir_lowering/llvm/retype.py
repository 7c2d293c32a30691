"""Retyping shared by the conversions that change a type everywhere (bf16 and f16 as
i16, memrefs as pointers), and the question whether a module holds memory of a
type at all. Apart from `teir_lowering.llvm.common` because the translation
straight to LLVM IR (`teir_lowering.llvm.translate`) needs them and not xDSL's
llvm dialect, whose import is a large part of a new process's first compile."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern


def takes_memory_of(module: ModuleOp, kind: type[Attribute]) -> bool:
    """Whether a function of `module` takes memory of `kind` elements: the code
    generators make 16-bit float values only from such memory, the tensors a
    kernel's functions take."""
    return any(
        isinstance(op, func.FuncOp) and any(
            isinstance(typ, MemRefType) and isinstance(typ.element_type, kind)
            for typ in op.function_type.inputs)
        for op in module.ops)


_SAME = Attribute.__new__(Attribute)
"""`Retype`'s memo entry for an attribute that holds no type to convert."""


@dataclass
class Retype(RewritePattern):
    """Every `kind` type an op's results, block arguments, properties or attributes
    hold, at any depth (vector and memref elements, function types), becomes
    `target`; ops that hold none stay as they are.

    What xDSL's TypeConversionPattern(recursive=True) does, without its costs: it
    rebuilds every parameter of every attribute of each op it visits, changed or
    not, and tells array attributes from others by a verification that formats an
    exception message, printing the attribute, for each one that is not (shuffle
    masks included): most of the time of the FP16 and BF16 retyping passes. Here
    each distinct attribute is converted once (`converted`) and rebuilt only when
    something in it changed.
    """

    kind: type[Attribute]
    target: Attribute
    _memo: dict[Attribute, Attribute] = field(default_factory=dict)

    def converted(self, attribute: Attribute) -> Attribute:
        """`attribute` with `kind` replaced (`attribute` itself when it holds none)."""
        try:
            found = self._memo.get(attribute)
        except TypeError:  # an unhashable Data attribute
            return self._rebuilt(attribute)
        if found is None:
            rebuilt = self._rebuilt(attribute)
            found = self._memo[attribute] = _SAME if rebuilt is attribute else rebuilt
        return attribute if found is _SAME else found

    def _rebuilt(self, attribute: Attribute) -> Attribute:
        if isinstance(attribute, self.kind):
            return self.target
        if isinstance(attribute, ParametrizedAttribute):
            parameters = attribute.parameters
            new = [self.converted(p) for p in parameters]
            if any(n is not p for n, p in zip(new, parameters)):
                return type(attribute).new(new)
        elif isinstance(attribute, ArrayAttr):
            items = attribute.data
            new = [self.converted(item) for item in items]
            if any(n is not p for n, p in zip(new, items)):
                return ArrayAttr(new)
        elif isinstance(attribute, DictionaryAttr):
            entries = attribute.data
            new_entries = {name: self.converted(value) for name, value in entries.items()}
            if any(new_entries[name] is not value for name, value in entries.items()):
                return DictionaryAttr(new_entries)
        return attribute

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if (new_type := self.converted(arg.type)) is not arg.type:
                        rewriter.replace_value_with_new_type(arg, new_type)
        result_types = [self.converted(result.type) for result in op.results]
        properties = {name: self.converted(value) for name, value in op.properties.items()}
        attributes = {name: self.converted(value) for name, value in op.attributes.items()}
        if (all(new is result.type for new, result in zip(result_types, op.results))
                and all(properties[name] is value for name, value in op.properties.items())
                and all(attributes[name] is value for name, value in op.attributes.items())):
            return
        regions = [op.detach_region(region) for region in op.regions]
        new_op = type(op).create(operands=op.operands, result_types=result_types,
                                 properties=properties, attributes=attributes,
                                 successors=op.successors, regions=regions)
        rewriter.replace(op, new_op)
        for new, old in zip(new_op.results, op.results):
            new.name_hint = old.name_hint

