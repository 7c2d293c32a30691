"""Register-blocked GEMM/BRGEMM microkernels in scf/arith/memref/vector.

For a Contraction that `teir-match-gemm`'s rule classifies as GEMM or BRGEMM
with A and C column-major (`trans` = "N?N": M has unit stride on in0 and out),
the tile is computed in blocks of MR x NR elements of C held in vector
registers (MR = MV vectors of VL lanes along M, NR columns): for each batch
and each k, MV vector loads of A, one broadcast of B per column, MV * NR FMAs;
C is loaded once before the batch-reduce loop and stored once after it.

The tile is cut into row segments (MV = 2, then MV = 1, then the scalar rows
left over when M is not a multiple of VL) and column segments (NR columns,
then one block of the remaining columns), so any M, N, K runs; the scalar
rows use plain loops with the same per-element order of accumulation.
Vector width follows the host: 512-bit with AVX-512, else 256-bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint

ACCUMULATOR_REGISTERS = 24
"""Vector registers for C blocks (of 32 with AVX-512: A vectors and a broadcast need the rest)."""


@cache
def vector_bytes() -> int:
    """The host's vector register width in bytes."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 64
    if features.get("avx2") or features.get("avx"):
        return 32
    return 16


MIN_LANES = 4


def lanes_for(m: int, width: int) -> int:
    """Vector lanes along M: the host's full width, narrower (down to 4) for short tiles."""
    lanes = vector_bytes() // width
    while lanes > MIN_LANES and lanes > m:
        lanes //= 2
    return lanes


@dataclass(frozen=True)
class GemmShape:
    """A tile product C(m, n) += sum over batches of A(m, k) B(k, n), in elements."""

    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    batch: int
    batch_a: int
    batch_b: int
    b_transposed: bool  # B stored n-major (element (k, j) at j + k * ldb)


class GemmEmitter:
    """Emits the blocked loops of one GEMM/BRGEMM tile at given base indices."""

    def __init__(self, shape: GemmShape, element: Attribute, width: int,
                 a: SSAValue, b: SSAValue, c: SSAValue,
                 zero_first: bool = False):
        self.zero_first = zero_first  # a fused Zero of the tile: start from 0 (beta = 0)
        self.shape = shape
        self.element = element
        self.lanes = lanes_for(shape.m, width)
        self.vector_type = VectorType(element, [self.lanes])
        self.a, self.b, self.c = a, b, c

    @staticmethod
    def index(builder: Builder, value: int) -> SSAValue:
        return builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def add(self, builder: Builder, base: SSAValue, value: int | SSAValue, scale: int = 1) -> SSAValue:
        """base + value * scale, skipping zero terms."""
        if isinstance(value, int):
            if value * scale == 0:
                return base
            term = self.index(builder, value * scale)
        else:
            term = value if scale == 1 else builder.insert(
                arith.MuliOp(value, self.index(builder, scale))
            ).result
        return builder.insert(arith.AddiOp(base, term)).result

    def loop(self, builder: Builder, lower: int, upper: int, step: int,
             body: Callable[[Builder, SSAValue, list[SSAValue]], list[SSAValue]],
             carried: list[SSAValue] | None = None) -> list[SSAValue]:
        """scf.for lower..upper by step with `carried` iter_args; body returns the yields."""
        carried = carried or []
        block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
        inner = Builder(InsertPoint.at_end(block))
        results = body(inner, block.args[0], list(block.args[1:]))
        inner.insert(scf.YieldOp(*results))
        op = builder.insert(scf.ForOp(
            self.index(builder, lower), self.index(builder, upper), self.index(builder, step),
            carried, block,
        ))
        return list(op.results)

    # -- the tile --------------------------------------------------------------

    def emit(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue) -> None:
        s = self.shape
        rows: list[tuple[int, int, int]] = []  # (start, stop, vectors per block)
        start = 0
        for vectors in (2, 1):
            size = vectors * self.lanes
            stop = start + (s.m - start) // size * size
            if stop > start:
                rows.append((start, stop, vectors))
            start = stop
        for row_start, row_stop, vectors in rows:
            nr = max(1, min(s.n, ACCUMULATOR_REGISTERS // vectors))
            full = s.n // nr * nr
            if full:
                self.blocks(builder, a0, b0, c0, (row_start, row_stop, vectors), (0, full, nr))
            if full < s.n:
                self.blocks(builder, a0, b0, c0, (row_start, row_stop, vectors),
                            (full, s.n, s.n - full))
        if start < s.m:
            self.scalar_rows(builder, a0, b0, c0, start)

    def blocks(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
               rows: tuple[int, int, int], cols: tuple[int, int, int]) -> None:
        row_start, row_stop, vectors = rows
        col_start, col_stop, nr = cols
        s, lanes = self.shape, self.lanes

        def column_block(cb: Builder, j0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            def row_block(rb: Builder, i0: SSAValue, __: list[SSAValue]) -> list[SSAValue]:
                c_block = self.add(rb, self.add(rb, c0, i0), j0, s.ldc)
                c_at = [[self.add(rb, c_block, v * lanes + j * s.ldc) for v in range(vectors)]
                        for j in range(nr)]
                if self.zero_first:
                    zero = rb.insert(arith.ConstantOp(
                        DenseIntOrFPElementsAttr.from_list(self.vector_type, [0.0]))).result
                    accs = [zero] * (nr * vectors)
                else:
                    accs = [rb.insert(vector.LoadOp(self.c, [c_at[j][v]], self.vector_type)).result
                            for j in range(nr) for v in range(vectors)]
                a_block = self.add(rb, a0, i0)
                b_block = self.add(rb, b0, j0, 1 if s.b_transposed else s.ldb)

                def batch(bb: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                    a_batch = self.add(bb, a_block, t, s.batch_a)
                    b_batch = self.add(bb, b_block, t, s.batch_b)

                    def step(kb: Builder, kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                        a_k = self.add(kb, a_batch, kk, s.lda)
                        a_vectors = [
                            kb.insert(vector.LoadOp(self.a, [self.add(kb, a_k, v * lanes)],
                                                    self.vector_type)).result
                            for v in range(vectors)
                        ]
                        b_k = self.add(kb, b_batch, kk, s.ldb if s.b_transposed else 1)
                        out: list[SSAValue] = []
                        for j in range(nr):
                            offset = j if s.b_transposed else j * s.ldb
                            value = kb.insert(memref.LoadOp.get(self.b, [self.add(kb, b_k, offset)])).res
                            splat = kb.insert(vector.BroadcastOp(value, self.vector_type)).vector
                            for v in range(vectors):
                                out.append(kb.insert(vector.FMAOp(
                                    a_vectors[v], splat, acc[j * vectors + v])).res)
                        return out

                    return self.loop(bb, 0, s.k, 1, step, acc)

                accs = self.loop(rb, 0, s.batch, 1, batch, accs)
                for j in range(nr):
                    for v in range(vectors):
                        rb.insert(vector.StoreOp(accs[j * vectors + v], self.c, [c_at[j][v]]))
                return []

            self.loop(cb, row_start, row_stop, vectors * lanes, row_block)
            return []

        self.loop(builder, col_start, col_stop, nr, column_block)

    def scalar_rows(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
                    first_row: int) -> None:
        """Rows [first_row, m) with scalar loops, accumulating in the same order."""
        s = self.shape

        def column(cb: Builder, j: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            def row(rb: Builder, i: SSAValue, __: list[SSAValue]) -> list[SSAValue]:
                c_at = self.add(rb, self.add(rb, c0, i), j, s.ldc)
                if self.zero_first:
                    start = rb.insert(arith.ConstantOp(FloatAttr(0.0, self.element))).result  # pyright: ignore
                else:
                    start = rb.insert(memref.LoadOp.get(self.c, [c_at])).res
                a_row = self.add(rb, a0, i)
                b_col = self.add(rb, b0, j, 1 if s.b_transposed else s.ldb)

                def batch(bb: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                    a_batch = self.add(bb, a_row, t, s.batch_a)
                    b_batch = self.add(bb, b_col, t, s.batch_b)

                    def step(kb: Builder, kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                        x = kb.insert(memref.LoadOp.get(self.a, [self.add(kb, a_batch, kk, s.lda)])).res
                        y = kb.insert(memref.LoadOp.get(
                            self.b, [self.add(kb, b_batch, kk, s.ldb if s.b_transposed else 1)])).res
                        product = kb.insert(arith.MulfOp(x, y)).result
                        return [kb.insert(arith.AddfOp(acc[0], product)).result]

                    return self.loop(bb, 0, s.k, 1, step, acc)

                (total,) = self.loop(rb, 0, s.batch, 1, batch, [start])
                rb.insert(memref.StoreOp.get(total, self.c, [c_at]))
                return []

            self.loop(cb, first_row, s.m, 1, row)
            return []

        self.loop(builder, 0, s.n, 1, column)
