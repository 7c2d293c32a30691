"""The segmented dot and the periodic product: the kernels of `#teir.kernel<segmented
...>` and `#teir.kernel<periodic ...>` Contractions (`teir_dialect.gemm`), a
batched GEMV whose batch b is the unit stride of the matrix (`bij,bj->bi` from
an [i][j][b] array, or from [j][i][b]).

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

The periodic product takes the matrix's (i, b) runs instead: for a block of
out's run held in registers, each j adds A[j]'s block times the vector's n
elements of that j repeated along the block (the lanes of a period shuffled out
of one n-lane load), so each element is summed over j in j's order, as the
record's own loop nest would.
"""

from __future__ import annotations

from math import lcm

from xdsl.builder import Builder
from xdsl.dialects import arith, vector
from xdsl.ir import Attribute, SSAValue

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
    lanes_slice,
    load,
    shuffle_mask,
    store,
    vector_type,
)

ACCUMULATORS = 8
"""Vectors summed at once per row (whole periods of them, at least one period):
enough independent FMAs to cover their latency on both FMA pipes."""


def _period(accumulator: Attribute, n: int, run: int) -> tuple[int, int, int]:
    """(lanes, period, vectors): the host's vector of `accumulator`, narrower (down to
    2 lanes) for a run shorter than it, and the lcm(n, lanes) elements after which
    the lanes' b repeat, in vectors."""
    lanes = host().lanes(accumulator.bitwidth // 8)  # pyright: ignore
    while lanes > 2 and lanes > run:
        lanes //= 2
    period = lcm(n, lanes)
    return lanes, period, period // lanes


def emit_segmented(builder: Builder, kernel: KernelAttr, in0: SSAValue, in1: SSAValue,
                   out: SSAValue, a0: SSAValue, x0: SSAValue, c0: SSAValue,
                   tf32: bool) -> None:
    """out[i][b] += sum over j of in0[i][j][b] in1[j][b] for the kernel's rows, from
    element indices a0, x0 and c0 (see the module doc)."""
    m, n, k = (kernel.get(p) for p in ("m", "n", "k"))
    lda, ldc, incc = (kernel.get(p) for p in ("lda", "ldc", "incc"))
    accumulator = arithmetic_type(element_of(in0))
    run = n * k
    lanes, period, vectors = _period(accumulator, n, run)
    sets = max(1, ACCUMULATORS // vectors)
    step = sets * period
    typ = vector_type(accumulator, lanes)

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
    result = vector_type(element, n)
    sums = None
    for start in range(0, len(total) * lanes, n):
        first, last = start // lanes, (start + n - 1) // lanes
        mask = [p - first * lanes for p in range(start, start + n)]
        piece = builder.insert(vector.ShuffleOp(
            total[first], total[last], shuffle_mask(mask),
            result_type=result)).result
        sums = piece if sums is None else builder.insert(arith.AddfOp(sums, piece)).result
    assert sums is not None
    return sums


def emit_periodic(builder: Builder, kernel: KernelAttr, in0: SSAValue, in1: SSAValue,
                  out: SSAValue, a0: SSAValue, x0: SSAValue, c0: SSAValue,
                  tf32: bool) -> None:
    """out[i][b] += sum over j of in0[j][i][b] in1[j][b] (see the module doc), out's
    run of m x n elements contiguous, in blocks of whole periods."""
    m, n, k = (kernel.get(p) for p in ("m", "n", "k"))
    lda, ldb = kernel.get("lda"), kernel.get("ldb")
    accumulator = arithmetic_type(element_of(in0))
    run = m * n
    lanes, _, vectors = _period(accumulator, n, run)
    # accumulators in registers, beside a period of the vector's pattern
    held = max(1, (host().vector_registers // 2) // vectors) * vectors
    typ = vector_type(accumulator, lanes)

    def block(inner: Builder, start: SSAValue | int, count: int, valid: int | None) -> None:
        """`count` vectors of out's run from element `start` (a multiple of the
        period), the last one `valid` lanes when given."""
        a_start = add(inner, a0, start)
        c_start = add(inner, c0, start)

        def step(body: Builder, j: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            x = load(body, in1, add(body, x0, j, ldb), n, widened=True, tf32=tf32)
            pattern = [body.insert(vector.ShuffleOp(
                x, x, shuffle_mask([(v * lanes + lane) % n for lane in range(lanes)]),
                result_type=typ)).result for v in range(min(vectors, count))]
            a_row = add(body, a_start, j, lda)
            return [fma(body, load(body, in0, add(body, a_row, r * lanes), lanes,
                                   valid=valid if r == count - 1 else None,
                                   widened=True, tf32=tf32),
                        pattern[r % vectors], acc) for r, acc in enumerate(accs)]

        accs = for_loop(inner, 0, k, 1, step, [constant(inner, typ)] * count)
        for r, acc in enumerate(accs):
            width = valid if (valid is not None and r == count - 1) else lanes
            at = add(inner, c_start, r * lanes)
            part = inner.insert(vector.ExtractOp(acc, [0], accumulator)).result if (
                width == 1) else lanes_slice(inner, acc, 0, width)
            total = inner.insert(arith.AddfOp(load(inner, out, at, width, widened=True),
                                              part)).result
            store(inner, total, out, at)

    step_elements = held * lanes
    whole = run // step_elements * step_elements
    for_loop(builder, 0, whole, step_elements,
             lambda inner, start, _: block(inner, start, held, None))
    rest = run - whole
    if rest:
        count, part = -(-rest // lanes), rest % lanes
        block(builder, whole, count, part or None)
