"""Facts derived from a configuration: where each invocation reads and writes.

The byte range a tensor needs follows from §10.4: every ancestor axis and every
role axis of the invoked primitive adds `offset + stride * index`. Strides are
non-negative, so the lowest address takes every index at 0 and the highest
every index at its last value; guards on the path pin an index to 0
(`first`) or to the last value (`last`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from teir_dialect.dialect import ConfigOp, InvokeOp, PrimitiveOp, ScheduleNode


@dataclass(frozen=True)
class ByteRange:
    """Bytes [start, stop) of one tensor, relative to its base."""

    start: int
    stop: int

    def union(self, other: ByteRange | None) -> ByteRange:
        if other is None:
            return self
        return ByteRange(min(self.start, other.start), max(self.stop, other.stop))


def disjoint_windows(axes: Iterable[tuple[int, int]], window: int) -> bool:
    """Whether axes given as (extent, byte stride) place distinct index tuples at
    disjoint `window`-byte windows: sorted by stride (mixed radix), each axis with
    extent > 1 must step past the whole span of the finer ones.

    A sufficient test, exact for the layouts strides describe in practice; used to
    prove that a loop nest writes each out element once, whatever its order.
    """
    span = window
    for extent, stride in sorted(axes, key=lambda axis: axis[1]):
        if extent > 1:
            if stride < span:
                return False
            span += stride * (extent - 1)
    return True


def index_range(axis_extent: int, guards: set[str]) -> tuple[int, int] | None:
    """The lowest and highest index an axis takes under first/last terms, or None."""
    low, high = 0, axis_extent - 1
    if "first" in guards:
        high = 0
    if "last" in guards:
        low = axis_extent - 1
    return None if low > high else (low, high)


def guard_terms(node: ScheduleNode) -> dict[str, set[str]]:
    """axis id -> {"first", "last"} from the guards on the path down to `node`."""
    terms: dict[str, set[str]] = {}
    chain: list[ScheduleNode] = [*node.ancestors(), node]
    for step in chain:
        if step.guard is not None:
            for term in step.guard.terms:
                terms.setdefault(term.axis_text, set()).add(term.kind.data)
    return terms


def invocation_range(invoke: InvokeOp, prim: PrimitiveOp, tensor: str) -> ByteRange | None:
    """The bytes of `tensor` that one invocation node touches over its whole run."""
    config = invoke.config
    terms = guard_terms(invoke)
    low = high = 0
    for ancestor in invoke.ancestors():
        axis = config.axis(ancestor.axis_id)
        span = index_range(axis.size, terms.get(axis.axis_id, set()))
        if span is None:
            return None  # an unsatisfiable guard: the invocation never runs
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
