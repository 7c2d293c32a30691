"""Facts derived from a configuration: where each invocation reads and writes.

The byte range a tensor needs follows from §10.4: every ancestor axis and every
role axis of the invoked primitive adds `offset + stride * index`. Strides are
non-negative, so the lowest address takes every index at 0 and the highest
every index at its last value; guards on the path pin an index to 0
(`first`) or to the last value (`last`).
"""

from __future__ import annotations

from teir_dialect.dialect import ConfigOp, InvokeOp, PrimitiveOp, ScheduleNode
from teir_dialect.strided import ByteRange, disjoint_windows, index_range
from teir_dialect.vocabulary import OperationKind

__all__ = [
    "ByteRange",
    "disjoint_windows",
    "footprint",
    "guard_terms",
    "index_range",
    "input_bytes",
    "invocation_range",
    "work",
]


def guard_terms(node: ScheduleNode) -> dict[str, list[str]]:
    """axis id -> the kinds ("first", "last") of the guard terms on the path down to
    `node`, the node's own guard included."""
    terms: dict[str, list[str]] = {}
    for step in [*node.ancestors(), node]:
        if step.guard is not None:
            for term in step.guard.terms:
                terms.setdefault(term.axis_text, []).append(term.kind.data)
    return terms


def invocation_range(invoke: InvokeOp, prim: PrimitiveOp, tensor: str) -> ByteRange | None:
    """The bytes of `tensor` that one invocation node touches over its whole run
    (None when its guards contradict, so that it never runs)."""
    terms = guard_terms(invoke)
    low = high = 0
    for ancestor in invoke.ancestors():
        axis = ancestor.axis_op()
        span = index_range(axis.size, terms.get(axis.axis_id, ()))
        if span is None:
            return None
        stride, offset = axis.stride_on(tensor), axis.offset_on(tensor)
        low += offset + stride * span[0]
        high += offset + stride * span[1]
    for axis in prim.all_role_axes:
        stride, offset = axis.stride_on(tensor), axis.offset_on(tensor)
        low += offset
        high += offset + stride * (axis.size - 1)
    return ByteRange(low, high + prim.element_width)


def footprint(config: ConfigOp) -> dict[str, ByteRange | None]:
    """tensor name -> the bytes the configuration touches (None: untouched)."""
    result: dict[str, ByteRange | None] = {name: None for name in config.tensor_names}
    for node in config.schedule.walk_nodes():
        if not isinstance(node, InvokeOp):
            continue
        prim = node.primitive_op()
        for tensor in prim.accessed_tensors:
            touched = invocation_range(node, prim, tensor)
            if touched is not None:
                result[tensor] = touched.union(result[tensor])
    return result


def input_bytes(touched: dict[str, ByteRange | None]) -> int:
    """The bytes the inputs' ranges of a `footprint` span together (out left out)."""
    return sum(span.stop - span.start for name, span in touched.items()
               if name != "out" and span is not None)


def work(config: ConfigOp) -> tuple[float, float]:
    """(floating-point operations, bytes moved) of one run, from the schedule (guards
    ignored): 2 flops per multiply-add of a Contraction; bytes written by Zero,
    read and written by Copy and ReLU."""
    flops = 0.0
    moved = 0.0
    for node in config.schedule.walk_nodes():
        if not isinstance(node, InvokeOp):
            continue
        prim = node.primitive_op()
        calls = 1
        for ancestor in node.ancestors():
            calls *= ancestor.axis_op().size
        elements = 1
        for axis in prim.all_role_axes:
            elements *= axis.size
        if prim.kind is OperationKind.CONTRACTION:
            flops += 2.0 * calls * elements
        else:
            copies = 1 if prim.kind is OperationKind.ZERO else 2
            moved += calls * elements * prim.element_width * copies
    return flops, moved
