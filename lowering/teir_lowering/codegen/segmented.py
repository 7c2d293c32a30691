"""The segmented dot: the kernel of a `#teir.kernel<segmented ...>` Contraction
(`teir_dialect.gemm`), a batched GEMV whose batch b is the unit stride of the
matrix (`bij,bj->bi` from an [i][j][b] array).

Per row i, in0's (j, b) run and in1 (the vector, laid out [j][b] alike) are
multiplied lane by lane and summed into accumulators, so that each lane only
ever holds products of one b: the lane at position p of the run holds b = p mod
n, and the pattern repeats every lcm(n, L) elements (the `period`: n = 6 and L
= 16 lanes give three vectors). After the run the lanes of each b are added
(shuffles, no memory) and the n sums added to out's row. One pass over in0 at
a multiply-add per element, where a GEMM would multiply by a vector expanded
b times (b-fold multiply-adds) or copy in0 into [b][i][j] first.

Each sum runs in lanes, then across them in a fixed order: the same bits at
any thread count (rows are the schedule's to share out), not the order of a
loop over j.
"""

from __future__ import annotations

from math import lcm

from xdsl.builder import Builder
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i64
from xdsl.ir import SSAValue

from teir_dialect.attributes import KernelAttr
from teir_dialect.host import host
from teir_lowering.codegen.emit import (
    add,
    arithmetic_type,
    constant,
    element_of,
    fma,
    for_loop,
    index,
    load,
    store,
)

ACCUMULATORS = 8
"""Vectors summed at once per row (whole periods of them, at least one period):
enough independent FMAs to cover their latency on both FMA pipes."""


def emit_segmented(builder: Builder, kernel: KernelAttr, in0: SSAValue, in1: SSAValue,
                   out: SSAValue, a0: SSAValue, x0: SSAValue, c0: SSAValue,
                   tf32: bool) -> None:
    """out[i][b] += sum over j of in0[i][j][b] in1[j][b] for the kernel's rows, from
    element indices a0, x0 and c0 (see the module doc)."""
    m, n, k = (kernel.get(p) for p in ("m", "n", "k"))
    lda, ldc, incc = (kernel.get(p) for p in ("lda", "ldc", "incc"))
    accumulator = arithmetic_type(element_of(in0))
    lanes = host().lanes(accumulator.bitwidth // 8)  # pyright: ignore
    run = n * k
    while lanes > 2 and lanes > run:
        lanes //= 2
    period = lcm(n, lanes)
    vectors = period // lanes
    sets = max(1, ACCUMULATORS // vectors)
    step = sets * period
    typ = VectorType(accumulator, [lanes])

    def read(inner: Builder, memory: SSAValue, at: SSAValue, valid: int | None = None
             ) -> SSAValue:
        return load(inner, memory, at, lanes, valid=valid, widened=True, tf32=tf32)

    def row(inner: Builder, i: SSAValue, _: list[SSAValue]) -> None:
        a_row = add(inner, a0, i, lda)

        def steps(body: Builder, p: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            a_at, x_at = add(body, a_row, p), add(body, x0, p)
            return [fma(body, read(body, in0, add(body, a_at, v * lanes)),
                        read(body, in1, add(body, x_at, v * lanes)), acc)
                    for v, acc in enumerate(accs)]

        whole = run // step * step
        accs = for_loop(inner, 0, whole, step, steps,
                        [constant(inner, typ)] * (sets * vectors))
        total = accs[:vectors]
        for v, acc in enumerate(accs[vectors:]):
            total[v % vectors] = inner.insert(arith.AddfOp(total[v % vectors], acc)).result
        for start in range(whole, run, lanes):  # the rest: whole vectors, then a part
            valid = None if run - start >= lanes else run - start
            v = (start % period) // lanes
            total[v] = fma(inner, read(inner, in0, add(inner, a_row, start), valid),
                           read(inner, in1, add(inner, x0, start), valid), total[v])
        at = add(inner, c0, i, ldc)
        if n <= lanes:
            sums = _segment_sums(inner, total, n, lanes)
            store(inner, inner.insert(arith.AddfOp(
                load(inner, out, at, n, incc, widened=True), sums)).result, out, at, incc)
            return
        for b in range(n):  # a segment longer than a vector: lane by lane
            value = load(inner, out, add(inner, at, b * incc), widened=True)
            for p in range(b, period, n):
                lane = inner.insert(vector.ExtractOp(
                    total[p // lanes], [p % lanes], accumulator)).result
                value = inner.insert(arith.AddfOp(value, lane)).result
            store(inner, value, out, add(inner, at, b * incc))

    if m == 1:  # a row the schedule iterates
        row(builder, index(builder, 0), [])
    else:
        for_loop(builder, 0, m, 1, row)


def _segment_sums(builder: Builder, total: list[SSAValue], n: int, lanes: int) -> SSAValue:
    """The n-lane vector of the sums of each b's lanes in `total` (a period of
    vectors, position p holding b = p mod n; n <= lanes): the period's n-element
    pieces, each shuffled out of the one or two vectors it lies in, added in turn."""
    element = total[0].type.element_type  # pyright: ignore
    result = VectorType(element, [n])
    sums = None
    for start in range(0, len(total) * lanes, n):
        first, last = start // lanes, (start + n - 1) // lanes
        mask = [p - first * lanes for p in range(start, start + n)]
        piece = builder.insert(vector.ShuffleOp(
            total[first], total[last], DenseArrayBase.from_list(i64, mask),
            result_type=result)).result
        sums = piece if sums is None else builder.insert(arith.AddfOp(sums, piece)).result
    assert sums is not None
    return sums
