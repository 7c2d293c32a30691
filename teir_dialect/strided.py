"""Byte sets of strided loop nests: their ranges, and whether two of them overlap.

A tile, or everything one invocation node writes over its loops, is a *box*:
the bytes `base + sum(stride_k * x_k) + [0, width)` for `0 <= x_k < extent_k`
(§10.4: every axis on the path adds `offset + stride * index`; offsets fold
into `base`). This module is plain integer arithmetic on such boxes, with no
IR in it, so that both the verifier (dialect.py) and the analyses and passes
above it use the same rules.

The parallel-race rule needs an exact answer to: can two *different* indices
of a parallel axis write a common byte? `parallel_overlap` decides it for the
boxes of a parallel node's subtree. It first tries two cheap proofs of
disjointness (the interval hulls, and the mixed-radix rule `disjoint_windows`
for a single box), then searches the difference of the two boxes exactly: the
question is whether some integer combination of strides falls in an open
interval, a bounded subset-sum that it enumerates over all but the widest
axis after merging contiguous axes (a contiguous run is one window). A search
larger than its budget is reported as undecided, never guessed.

Guards make the answer exact rather than conservative: a box that first/last
guards pin to one index of the parallel axis is written there only (`at`; with
stride 0 on out, only such boxes can run in parallel), one pinned to indices
of the loops around the parallel one is written in those runs only (`when`),
and guards that contradict leave no box at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from math import prod

from teir_dialect.vocabulary import GuardKind

INDEX_LIMIT = 2**63
"""Byte offsets and footprints must lie in (-2**63, 2**63): a signed 64-bit index."""

SEARCH_BUDGET = 1 << 22
"""Most index combinations the exact overlap search enumerates for one pair of boxes."""


@dataclass(frozen=True)
class ByteRange:
    """Bytes [start, stop) of one tensor, relative to its base."""

    start: int
    stop: int

    def union(self, other: ByteRange | None) -> ByteRange:
        if other is None:
            return self
        return ByteRange(min(self.start, other.start), max(self.stop, other.stop))


def index_range(extent: int, guards: Iterable[str]) -> tuple[int, int] | None:
    """The lowest and highest index an axis takes under first/last terms, or None
    when they contradict (first and last of an axis with more than one index)."""
    low, high = 0, extent - 1
    for kind in guards:
        if kind == GuardKind.FIRST:
            high = 0
        elif kind == GuardKind.LAST:
            low = extent - 1
    return None if low > high else (low, high)


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


@dataclass(frozen=True)
class Box:
    """Bytes `base + sum(stride * x) + [0, width)` over `axes` of (extent, stride),
    written at index `at` of the parallel axis only, or at every index (None),
    and only in the runs of the parallel loop where the enclosing loops take the
    indices `when` ((axis, index) pairs, pinned by first/last guards)."""

    base: int
    axes: tuple[tuple[int, int], ...]
    width: int
    at: int | None = None
    when: tuple[tuple[str, int], ...] = ()
    label: str = field(default="", compare=False)

    def meets(self, other: Box) -> bool:
        """Whether some run of the parallel loop writes both boxes: their `when`
        pins agree on every axis they share."""
        pins = dict(self.when)
        return all(pins.get(axis, index) == index for axis, index in other.when)

    def normalized(self) -> Box:
        """The same bytes with unit and zero-stride axes dropped and every axis
        whose step stays within the contiguous run below it folded into the
        window; the remaining axes sorted by stride."""
        axes = sorted((a for a in self.axes if a[0] > 1 and a[1] > 0), key=lambda a: a[1])
        width = self.width
        while axes and axes[0][1] <= width:
            extent, stride = axes.pop(0)
            width += stride * (extent - 1)
        return Box(self.base, tuple(axes), width, self.at, self.when, self.label)

    @property
    def hull(self) -> ByteRange:
        return ByteRange(self.base, self.base + sum(s * (n - 1) for n, s in self.axes) + self.width)


class Undecided(Exception):
    """The exact search would exceed its budget."""

    def __init__(self, combinations: int):
        super().__init__(combinations)
        self.combinations = combinations


def _shift_ranges(extent: int, x_at: int | None, y_at: int | None) -> list[tuple[int, int]]:
    """The ranges of d = i - j, i != j, i where box X writes and j where box Y writes."""
    if x_at is not None and y_at is not None:
        return [] if x_at == y_at else [(x_at - y_at, x_at - y_at)]
    if x_at is not None:
        low, high = x_at - (extent - 1), x_at
    elif y_at is not None:
        low, high = -y_at, extent - 1 - y_at
    else:
        low, high = -(extent - 1), extent - 1
    return [(lo, hi) for lo, hi in ((low, min(high, -1)), (max(low, 1), high)) if lo <= hi]


def solve(terms: Sequence[tuple[int, int, int]], low: int, high: int,
          budget: int = SEARCH_BUDGET) -> tuple[int, ...] | None:
    """Integers e_k in [lo_k, hi_k] for terms (stride_k, lo_k, hi_k), strides > 0,
    with low < sum(stride_k * e_k) < high; None when there are none.

    Raises Undecided when enumerating would take more than `budget` combinations.
    Enumerates every term but the widest and solves for that one directly.
    """
    if not terms:
        return () if low < 0 < high else None
    smallest = sum(s * lo for s, lo, _ in terms)
    largest = sum(s * hi for s, _, hi in terms)
    if largest <= low or smallest >= high:
        return None
    last = max(range(len(terms)), key=lambda k: terms[k][0] * (terms[k][2] - terms[k][1]))
    rest = [t for k, t in enumerate(terms) if k != last]
    counts = [hi - lo + 1 for _, lo, hi in rest]
    combinations = prod(counts)
    if combinations > budget:
        raise Undecided(combinations)
    if combinations <= SMALL_SEARCH:
        return _solve_small(terms, rest, last, low, high)
    import numpy as np  # here, not at import: teir-opt need not load numpy

    magnitude = sum(s * max(abs(lo), abs(hi)) for s, lo, hi in terms) + abs(low) + abs(high)
    # int64 while no sum can overflow it, Python integers (exact, slower) past that
    dtype = np.int64 if magnitude < 2**62 else object
    partial = np.zeros(1, dtype=dtype)
    for stride, lo, hi in rest:
        steps = stride * np.arange(lo, hi + 1).astype(dtype)
        partial = (partial[:, None] + steps[None, :]).reshape(-1)
    stride, lo, hi = terms[last]
    # the smallest e with stride * e > low - partial, clamped to lo
    e = np.maximum(np.floor_divide(low - partial, stride) + 1, lo)
    fits = (e <= hi) & (stride * e < high - partial)
    if not fits.any():
        return None
    found = int(np.argmax(fits))
    values = list(np.unravel_index(found, counts)) if counts else []
    result: list[int] = []
    for k in range(len(terms)):
        if k == last:
            result.append(int(e[found]))
        else:
            index = values.pop(0)
            result.append(terms[k][1] + int(index))
    return tuple(result)


SMALL_SEARCH = 4096
"""Combinations `solve` enumerates in Python integers rather than numpy arrays:
the records a verifier sees are mostly this small, and a tool that reads one
(teir-opt) then does without importing numpy, a quarter of a second."""


def _solve_small(terms: Sequence[tuple[int, int, int]], rest: list[tuple[int, int, int]],
                 last: int, low: int, high: int) -> tuple[int, ...] | None:
    """`solve` by enumeration in the same order as its numpy form (the first term
    slowest), so both give the same solution."""
    stride, lo, hi = terms[last]
    for values in product(*(range(l, h + 1) for _, l, h in rest)):
        partial = sum(s * v for (s, _, _), v in zip(rest, values))
        e = max((low - partial) // stride + 1, lo)
        if e <= hi and stride * e < high - partial:
            found = list(values)
            found.insert(last, e)
            return tuple(found)
    return None


def _merged(axes: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Terms (stride, lo, hi) with equal strides merged (their ranges add)."""
    by_stride: dict[int, tuple[int, int]] = {}
    for stride, lo, hi in axes:
        old = by_stride.get(stride, (0, 0))
        by_stride[stride] = (old[0] + lo, old[1] + hi)
    return [(s, lo, hi) for s, (lo, hi) in by_stride.items()]


def box_pair_overlap(x: Box, y: Box, extent: int, stride: int,
                     budget: int = SEARCH_BUDGET) -> tuple[int, int] | None:
    """Indices i != j of a parallel axis (extent, byte stride) such that the bytes
    box x writes at i overlap the bytes box y writes at j, or None.

    Byte windows [a, a + wx) and [b, b + wy) overlap iff -wx < a - b < wy, and
    a - b = (x.base - y.base) + (i - j) * stride + (a combination of x's strides
    minus one of y's): `solve` looks for it. Raises Undecided past the budget.
    """
    x, y = x.normalized(), y.normalized()
    difference = _merged(
        [(s, 0, n - 1) for n, s in x.axes] + [(s, -(n - 1), 0) for n, s in y.axes]
    )
    low, high = -x.width - (x.base - y.base), y.width - (x.base - y.base)
    for d_low, d_high in _shift_ranges(extent, x.at, y.at):
        if stride == 0:  # every index writes the same bytes: d is free
            if solve(difference, low, high, budget) is None:
                continue
            d = d_low
        else:
            found = solve([(stride, d_low, d_high), *difference], low, high, budget)
            if found is None:
                continue
            d = found[0]
        if x.at is not None:
            i = x.at
        elif y.at is not None:
            i = y.at + d
        else:
            i = max(d, 0)
        return i, i - d
    return None


def parallel_overlap(boxes: Sequence[Box], extent: int, stride: int,
                     budget: int = SEARCH_BUDGET) -> tuple[int, int, Box, Box] | None:
    """Two different indices of a parallel axis whose writes overlap, with the boxes
    that write there, or None when every index writes its own bytes.

    Raises Undecided when the exact search for some pair of boxes is too large.
    """
    unique = list(dict.fromkeys(boxes))
    if extent <= 1:
        return None
    for index, x in enumerate(unique):
        for y in unique[index:]:
            if not x.meets(y):
                continue  # guards on enclosing loops: never in the same run
            relaxed = box_pair_overlap(
                Box(x.hull.start, (), x.hull.stop - x.hull.start, x.at),
                Box(y.hull.start, (), y.hull.stop - y.hull.start, y.at),
                extent, stride,
            )
            if relaxed is None:
                continue  # even the hulls never meet
            if x is y and x.at is None and stride and disjoint_windows(
                [(extent, stride), *x.normalized().axes], x.normalized().width
            ):
                continue  # one box, and (parallel index, box index) -> byte is injective
            found = box_pair_overlap(x, y, extent, stride, budget)
            if found is not None:
                return found[0], found[1], x, y
    return None


def tuples_overlap(boxes: Sequence[Box], axes: Sequence[tuple[int, int]],
                   budget: int = SEARCH_BUDGET) -> bool:
    """Whether two different index tuples of loops `axes` (extent, byte stride) around
    the same body write a common byte, the body writing `boxes` (relative to the
    tile address at its entry; `at` is ignored: every box is taken as written).

    Exact: a nonzero difference of index tuples has a first nonzero coordinate j,
    taken positive by symmetry (both orders of every pair of boxes are tried);
    `solve` then looks for coordinates j+1.. and box indices that meet. Raises
    Undecided past the budget.
    """
    loops = [(n, s) for n, s in axes if n > 1 and s > 0]
    if not loops:
        return False
    unique = [b.normalized() for b in dict.fromkeys(boxes)]
    if len(unique) == 1 and disjoint_windows([*loops, *unique[0].axes], unique[0].width):
        # every (loop, box) index tuple on its own window: the dense layouts, in any
        # axis order, without a search that a 4-D one in another order ran past
        return False
    for x in unique:
        for y in unique:
            difference = _merged(
                [(s, 0, n - 1) for n, s in x.axes] + [(s, -(n - 1), 0) for n, s in y.axes]
            )
            low, high = -x.width - (x.base - y.base), y.width - (x.base - y.base)
            for j, (extent, stride) in enumerate(loops):
                later = [(s, -(n - 1), n - 1) for n, s in loops[j + 1 :]]
                if solve([(stride, 1, extent - 1), *later, *difference], low, high,
                         budget) is not None:
                    return True
    return False
