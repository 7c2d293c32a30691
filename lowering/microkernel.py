"""Register-blocked GEMM/BRGEMM microkernels in scf/arith/memref/vector.

Every Contraction that `teir-match-gemm` classifies as GEMM or BRGEMM, in any
of the 8 layouts `trans = "ABC"` and any m, n, k, runs here. The tile is
C(m, n) [+]= sum over batches of A(m, k) B(k, n), with the element strides the
kernel attribute gives (`GemmShape`). `plan_gemm` picks one of two kernels by
a small cost model and `GemmEmitter` emits it.

Outer-product kernel, vectors along V (m or n). C = A B and C^T = B^T A^T are
the same sums, so the kernel is written once for an operand X that carries V
and k, an operand Y that carries the other free dimension U and k, and C(V, U):
V = m takes X = A, Y = B; V = n swaps the roles of (A, m) and (B, n). C is cut
into blocks of MV vectors of L lanes along V by NR columns along U, held in
MV * NR vector accumulators; per batch and k: MV vector loads of X, one
broadcast of Y per column, MV * NR FMAs (the batch-reduce loop is inside).
C is read once before the batch-reduce loop and written once after it. Loads
and stores along V have the operand's stride along V: unit stride gives
`vector.load`/`vector.store`, any other stride gathers the lanes from scalar
loads (`vector.insert`) or scatters them to scalar stores (`vector.extract`):

- X is contiguous along V when A is "N" (V = m) or B is "T" (V = n): so "N?N"
  runs with V = m as before, "?TT" with V = n (vectors along n, broadcast A).
- "NNT" (V = m) and "TTN" (V = n) keep X contiguous while C is contiguous along
  U instead of V: each L x L square of accumulators is transposed in registers
  (`teir_lowering.emit.transpose`: unpack within 128-bit lanes, then 128-bit-lane
  shuffles, L log2 L shuffles in all) and C is read and written by vector
  rows along U, once per block. This needs NR a multiple of L, hence one vector
  per block when two would not fit (MV = 1, NR = L with 16 lanes: about 4%
  slower at k = 128 than the MV = 2 blocks of "NNN", faster for short k, and
  half the code of per-lane accesses). Columns left over (< L) and other
  strided C access C lane by lane.
- A gathered X costs L loads and inserts per vector and k step, shared by the NR
  columns: the planner takes it when nothing better fits (e.g. "TN?" with short
  k, where the dot kernel's reduction would dominate).

V is cut into row segments: blocks of 2 vectors of the widest L (the host's
width, narrower for short extents), then 1, then one block of each narrower
power of two the remainder needs (L/2, ..., 2) and a last scalar row (L = 1:
memref.load, math.fma), so every extent runs with the widest vectors that fit;
U is cut into NR columns, then one block of the remaining columns.

Dot kernel, vectors along k, for "TN?" (A rows and B columns k-contiguous, so
neither operand is contiguous along m or n). Blocks of MR x NR elements of C,
one vector accumulator each: per k step of L, MR vector loads of A rows, NR of
B columns, MR * NR FMAs; the k remainder is one more step with vectors gathered
from the remaining elements (-0.0 in A's other lanes, +0 in B's: their product
-0.0 changes no sum). The accumulators start at -0.0, the identity of IEEE
addition, so that a sum of -0.0 products stays -0.0 as in the reference. After
the batch-reduce loop the MR * NR accumulators are reduced together by a
transposing tree (`reduce_lanes`: about 3 shuffles/adds per accumulator in all,
instead of 2 log2 L each) and each sum is added to its element of C.

The planner (`plan_gemm`) estimates instructions per multiply-add of a main
block of each applicable kernel: outer along m and along n when that extent is
at least 2 (`_outer_cost`: X loads or gathers, broadcasts, FMAs, C traffic per
k * batch), dot when A and B are k-contiguous and k >= 4 (`_dot_cost`: loads,
FMAs, gathered remainder, reduction and C update per k * batch), and takes the
cheapest. Scalar code (L = 1, still register-blocked and with the fused
epilogues) is kept only where every vector kernel is estimated no better than
scalar loops (`SCALAR_COST`): m = n = 1 without k-contiguous A and B (a dot
product of strided operands), or tiles that are too small for any vector
reuse (e.g. a gathered X with one column). Those have no contiguous vector
dimension to exploit.

Code size: a kernel is a few hundred to about 1300 scf ops for tiles up to
37 x 37 (every segment and column remainder is one unrolled loop nest), which
dominates compile time (xDSL's passes: 1-4 s on this machine).

Fused epilogues (`GemmEmitter`): `zero_first` is a Zero of the tile just before
(the accumulators start at +0 and C is not read: beta = 0), or, with
`zero_when`, only when that i1 holds (C is read and replaced by +0 by a select);
`relu` is a ReLU of the tile just after, select(x < 0, +0, x) on each final
value before its one store (`teir_lowering.emit.relu`: an ordered compare, so -0.0 and NaN
pass unchanged), or, with `relu_when`, only when that i1 holds. When they may
be fused is the caller's rule (teir_lowering.convert_teir_to_scf: siblings of
the Contraction, or sunk into the first / last iteration of the K loops around
it).

Numerics: products are accumulated with fused multiply-adds; the outer kernel
adds them in k order per batch, the dot kernel in L interleaved partial sums
reduced by the tree. Both differ from the reference's float64 loop-order sums
by rounding only. Vector width follows the host: 512-bit with AVX-512, else
256-bit, and the accumulator budget its register count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.builder import Builder
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i64
from xdsl.ir import Attribute, SSAValue

from teir_dialect.dialect import KernelAttr
from teir_lowering.emit import (
    MIN_LANES,
    add,
    arithmetic_type,
    constant,
    fma,
    for_loop,
    load,
    load_broadcast,
    narrow,
    relu,
    store,
    transpose,
    value_type,
    vector_bytes,
)

ACCUMULATOR_REGISTERS = 24
"""Vector registers for C blocks with 32 architectural vector registers (AVX-512):
the loaded vectors of A (or B) and a broadcast need the rest."""


def accumulator_budget() -> int:
    """Accumulators per block: 24 of the 32 registers with AVX-512, 12 of 16 without."""
    return ACCUMULATOR_REGISTERS if vector_bytes() == 64 else ACCUMULATOR_REGISTERS // 2



def lanes_for(extent: int, width: int, minimum: int = MIN_LANES) -> int:
    """Vector lanes along a dimension: the host's full width, narrower (down to
    `minimum`) for short extents."""
    lanes = vector_bytes() // width
    while lanes > minimum and lanes > extent:
        lanes //= 2
    return lanes


@dataclass(frozen=True)
class GemmShape:
    """A tile product C(m, n) += sum over batches of A(m, k) B(k, n), in elements.

    `trans` is the kernel attribute's: A "N" = m unit-stride (element (i, p) at
    i + p * lda), "T" = k unit-stride (p + i * lda); B "N" = k unit-stride
    ((p, j) at p + j * ldb), "T" = n unit-stride (j + p * ldb); C "N" = m
    unit-stride ((i, j) at i + j * ldc), "T" = n unit-stride (j + i * ldc).
    """

    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    batch: int
    batch_a: int
    batch_b: int
    trans: str = "NNN"

    @staticmethod
    def of(kernel: KernelAttr) -> GemmShape | None:
        """The tile of a `#teir.kernel` that teir-match-gemm recorded; None unless it
        is a GEMM or BRGEMM (the microkernels take every layout of both)."""
        kind = kernel.kind_name
        if kind not in ("gemm", "brgemm"):
            return None
        batched = kind == "brgemm"
        return GemmShape(
            m=kernel.get("m"), n=kernel.get("n"), k=kernel.get("k"),
            lda=kernel.get("lda"), ldb=kernel.get("ldb"), ldc=kernel.get("ldc"),
            batch=kernel.get("br_size") if batched else 1,
            batch_a=kernel.get("br_stride_a"),
            batch_b=kernel.get("br_stride_b"),
            trans=kernel.trans.data,
        )

    @property
    def a_strides(self) -> tuple[int, int]:
        """(m stride, k stride) of A."""
        return (1, self.lda) if self.trans[0] == "N" else (self.lda, 1)

    @property
    def b_strides(self) -> tuple[int, int]:
        """(k stride, n stride) of B."""
        return (1, self.ldb) if self.trans[1] == "N" else (self.ldb, 1)

    @property
    def c_strides(self) -> tuple[int, int]:
        """(m stride, n stride) of C."""
        return (1, self.ldc) if self.trans[2] == "N" else (self.ldc, 1)


# -- the planner -----------------------------------------------------------------


@dataclass(frozen=True)
class GemmPlan:
    """The kernel chosen for a tile: `outer` with vectors along `vector` ("m" or
    "n"; lanes = 1 is register-blocked scalar code) or `dot` (vectors along k)."""

    kernel: str
    vector: str
    lanes: int
    cost: float  # estimated instructions per multiply-add


SCALAR_COST = 3.0
"""Instructions per multiply-add of plain scalar loops (two loads and an FMA)."""


def dot_block(budget: int) -> tuple[int, int]:
    """MR x NR of the dot kernel: MR * NR accumulators, MR loaded A rows, one B column."""
    return (4, 6) if budget >= 24 else (3, 4)


def _outer_cost(nv: int, nu: int, steps: int, x_unit: bool, c_unit: bool, c_across: bool,
                lanes: int, budget: int, zero_first: bool) -> float:
    """Per multiply-add, a main block: loads of X (gathered: a load and an insert per
    lane), one broadcast per column, the FMAs, and C's load and store spread over
    the k * batch steps: per vector 1 (unit stride), 1 + log2 L (contiguous along
    u: transposed in registers, `c_across`) or 2 L (strided: per lane)."""
    vectors = 2 if nv >= 2 * lanes else 1
    if c_across and not c_unit:
        vectors = 1 if 2 * lanes * lanes > budget else vectors
        nr = max(1, min(nu, lanes * max(1, budget // (vectors * lanes))))
        per_vector = 1 + lanes.bit_length() - 1
    else:
        nr = max(1, min(nu, budget // vectors))
        per_vector = 1 if c_unit else 2 * lanes
    x = vectors * (1 if x_unit else 2 * lanes)
    c = (1 if zero_first else 2) * vectors * nr * per_vector
    return (x + nr + vectors * nr + c / steps) / (vectors * lanes * nr)


def _dot_cost(m: int, n: int, k: int, batch: int, lanes: int, budget: int) -> float:
    """Per multiply-add, a main block: per k step MR + NR vector loads and MR * NR
    FMAs; the gathered k remainder; the reduction (about 3 ops per accumulator) and
    the update of C (about 4 per element) once per block."""
    mr, nr = (min(e, b) for e, b in zip((m, n), dot_block(budget)))
    steps, rest = divmod(k, lanes)
    per_batch = steps * (mr + nr + mr * nr) + (2 * rest * (mr + nr) + mr * nr if rest else 0)
    return (batch * per_batch + 7 * mr * nr) / (mr * nr * k * batch)


def plan_gemm(shape: GemmShape, width: int, zero_first: bool = False) -> GemmPlan:
    """The cheapest kernel for `shape` by the estimates above (see the module doc)."""
    s = shape
    budget = accumulator_budget()
    steps = s.k * s.batch
    a_m, a_k = s.a_strides
    b_k, b_n = s.b_strides
    c_m, c_n = s.c_strides
    plans: list[GemmPlan] = []
    for along, nv, nu, x_unit, c_unit, c_across in (
        ("m", s.m, s.n, a_m == 1, c_m == 1, c_n == 1),
        ("n", s.n, s.m, b_n == 1, c_n == 1, c_m == 1),
    ):
        if nv >= 2:
            lanes = lanes_for(nv, width, 2)
            cost = _outer_cost(nv, nu, steps, x_unit, c_unit,
                               c_across and GemmEmitter.transpose_c, lanes, budget, zero_first)
            plans.append(GemmPlan("outer", along, lanes, cost))
    if a_k == 1 and b_k == 1 and s.k >= MIN_LANES:
        lanes = lanes_for(s.k, width)
        plans.append(GemmPlan("dot", "k", lanes, _dot_cost(s.m, s.n, s.k, s.batch, lanes, budget)))
    best = min(plans, key=lambda plan: plan.cost, default=None)
    if best is None or best.cost >= SCALAR_COST:
        # Scalar code, register-blocked: scalars along the shorter free dimension,
        # so that NR columns share each loaded element of the other operand.
        return GemmPlan("outer", "m" if s.m <= s.n else "n", 1, SCALAR_COST)
    return best


# -- the emitter -----------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """A strided view of an outer-product operand: the element at (free index f,
    k index p, batch t) is at base + f * free + p * k + t * batch of `memory`."""

    memory: SSAValue
    base: SSAValue
    free: int
    k: int
    batch: int


class GemmEmitter:
    """Emits the blocked loops of one GEMM/BRGEMM tile at given base indices.

    `zero_first`: a fused Zero of the tile (the accumulation starts from +0 and C
    is not read), with `zero_when` (an i1) only when that holds (else from C).
    `relu`: a fused ReLU of the tile, select(x < 0, +0, x) applied to each final
    value before its store; with `relu_when` only when that holds. `plan`
    defaults to `plan_gemm`'s.

    Data types: `element` is the memory's type; A, B and C are widened where they
    are loaded and the accumulators have the arithmetic type (f32 for f16/bf16,
    `teir_lowering.emit`), so `width` is that type's width; C is rounded to
    `element` once, where it is stored. `tf32` rounds A and B to TF32 as they are
    loaded.
    """

    transpose_c = True
    """Transpose L x L blocks of a C contiguous along u in registers (else per lane)."""

    def __init__(self, shape: GemmShape, element: Attribute, width: int,
                 a: SSAValue, b: SSAValue, c: SSAValue,
                 zero_first: bool = False, relu: bool = False,
                 relu_when: SSAValue | None = None, plan: GemmPlan | None = None,
                 zero_when: SSAValue | None = None, tf32: bool = False):
        self.shape = shape
        self.storage = element
        self.element = arithmetic_type(element)  # of the accumulators
        self.tf32 = tf32
        self.width = width
        self.a, self.b, self.c = a, b, c
        self.zero_first = zero_first
        self.zero_when = zero_when if zero_first else None
        self.relu = relu
        self.relu_when = relu_when
        self.plan = plan or plan_gemm(shape, width, zero_first and zero_when is None)
        self.budget = accumulator_budget()

    # -- small builders ----------------------------------------------------------

    def start(self, builder: Builder, loaded: list[SSAValue]) -> list[SSAValue]:
        """The initial accumulators from C's `loaded` values under a conditional Zero."""
        if self.zero_when is None:
            return loaded
        return [builder.insert(arith.SelectOp(
                    self.zero_when, constant(builder, value.type), value)).result
                for value in loaded]

    def finish(self, builder: Builder, value: SSAValue) -> SSAValue:
        """The value stored to C: with a fused ReLU, relu(value) (when `relu_when`) of
        the value rounded to C's type, as the ReLU after the store would see it (a
        tiny negative sum may round to -0.0, which relu keeps)."""
        if not self.relu:
            return value
        value = narrow(builder, value, self.storage)
        result = relu(builder, value)
        if self.relu_when is not None:
            result = builder.insert(arith.SelectOp(self.relu_when, result, value)).result
        return result

    # -- the tile ------------------------------------------------------------------

    def emit(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue) -> None:
        s, plan = self.shape, self.plan
        a_m, a_k = s.a_strides
        b_k, b_n = s.b_strides
        c_m, c_n = s.c_strides
        if plan.kernel == "dot":
            self.emit_dot(builder, a0, b0, c0, plan.lanes)
            return
        a = Operand(self.a, a0, a_m, a_k, s.batch_a)
        b = Operand(self.b, b0, b_n, b_k, s.batch_b)
        if plan.vector == "m":
            self.emit_outer(builder, s.m, s.n, a, b, c0, c_m, c_n, plan.lanes)
        else:  # C^T = B^T A^T: the roles of (A, m) and (B, n) swap
            self.emit_outer(builder, s.n, s.m, b, a, c0, c_n, c_m, plan.lanes)

    # -- outer-product kernel ------------------------------------------------------

    @staticmethod
    def row_segments(extent: int, lanes: int, most: int = 2) -> list[tuple[int, int, int, int]]:
        """(start, stop, lanes, vectors per block) covering [0, extent): blocks of
        `most` (2 or 1) then 1 vectors of `lanes`, then one block of each narrower
        power of two that the remainder needs, down to scalars."""
        shapes = [(lanes, most), (lanes, 1)]
        narrower = lanes // 2
        while narrower >= 1:
            shapes.append((narrower, 1))
            narrower //= 2
        if lanes == 1:
            shapes = [(1, 1)]
        segments: list[tuple[int, int, int, int]] = []
        start = 0
        for width, vectors in shapes:
            size = width * vectors
            stop = start + (extent - start) // size * size
            if stop > start:
                segments.append((start, stop, width, vectors))
            start = stop
        return segments

    def emit_outer(self, builder: Builder, nv: int, nu: int, x: Operand, y: Operand,
                   c0: SSAValue, cv: int, cu: int, lanes: int) -> None:
        """C(v, u) at c0 + v * cv + u * cu += sum X(v, p) Y(u, p), vectors along v.

        When C is contiguous along u instead (cv != 1, cu == 1), blocks of L x L
        elements of C are transposed in registers (`transpose`): each block then
        takes one vector load and store per L elements instead of L scalar ones.
        That needs NR a multiple of L, so the widest segment has one vector per
        block when 2 * L * L accumulators do not fit; column remainders narrower
        than L use scalar accesses per lane.
        """
        transposing = self.transpose_c and cv != 1 and cu == 1 and lanes > 1
        most = 1 if transposing and 2 * lanes * lanes > self.budget else 2
        for segment in self.row_segments(nv, lanes, most):
            width, vectors = segment[2:]
            cuts: list[int] = []
            if transposing and width > 1:
                nr = width * max(1, self.budget // (vectors * width))
                cuts = [nu // nr * nr]
                cuts.append(cuts[0] + (nu - cuts[0]) // width * width)
            else:
                nr = max(1, min(nu, self.budget // vectors))
                cuts = [nu // nr * nr]
            start = 0
            for stop in [*cuts, nu]:
                if stop > start:
                    block = nr if start == 0 and stop == cuts[0] else stop - start
                    self.outer_blocks(builder, x, y, c0, cv, cu, segment, (start, stop, block))
                start = max(start, stop)

    def outer_blocks(self, builder: Builder, x: Operand, y: Operand, c0: SSAValue, cv: int,
                     cu: int, rows: tuple[int, int, int, int], cols: tuple[int, int, int]) -> None:
        row_start, row_stop, lanes, vectors = rows
        col_start, col_stop, nr = cols
        s = self.shape
        # C contiguous along u: L x L squares (vector v, first column g) transposed
        transposed = self.transpose_c and cv != 1 and cu == 1 and lanes > 1 and nr % lanes == 0
        squares = [(v, g) for v in range(vectors) for g in range(0, nr, lanes)]

        def column_block(cb: Builder, u0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            y_block = add(cb, y.base, u0, y.free)
            c_column = add(cb, c0, u0, cu)

            def row_block(rb: Builder, v0: SSAValue, __: list[SSAValue]) -> list[SSAValue]:
                c_block = add(rb, c_column, v0, cv)
                c_at = [[add(rb, c_block, v * lanes * cv + j * cu) for v in range(vectors)]
                        for j in range(nr)]
                if self.zero_first and self.zero_when is None:
                    accs = [constant(rb, value_type(self.element, lanes))] * (nr * vectors)
                elif transposed:
                    accs = [constant(rb, value_type(self.element, lanes))] * (nr * vectors)
                    for v, g in squares:  # rows of C along u, transposed to columns
                        rows = [load(rb, self.c, add(rb, c_at[g][v], lane * cv), lanes,
                                     widened=True)
                                for lane in range(lanes)]
                        for j, column in enumerate(transpose(rb, rows), start=g):
                            accs[j * vectors + v] = column
                else:
                    accs = [load(rb, self.c, c_at[j][v], lanes, cv, widened=True)
                            for j in range(nr) for v in range(vectors)]
                accs = self.start(rb, accs)
                x_block = add(rb, x.base, v0, x.free)

                def batch(bb: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                    x_batch = add(bb, x_block, t, x.batch)
                    y_batch = add(bb, y_block, t, y.batch)

                    def step(kb: Builder, kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                        x_k = add(kb, x_batch, kk, x.k)
                        x_vectors = [load(kb, x.memory, add(kb, x_k, v * lanes * x.free), lanes,
                                          x.free, widened=True, tf32=self.tf32)
                                     for v in range(vectors)]
                        y_k = add(kb, y_batch, kk, y.k)
                        out: list[SSAValue] = []
                        for j in range(nr):
                            broadcast = load_broadcast(kb, y.memory, add(kb, y_k, j * y.free),
                                                       lanes, widened=True, tf32=self.tf32)
                            for v in range(vectors):
                                out.append(fma(kb, x_vectors[v], broadcast, acc[j * vectors + v]))
                        return out

                    return for_loop(bb, 0, s.k, 1, step, acc)

                accs = for_loop(rb, 0, s.batch, 1, batch, accs)
                values = [self.finish(rb, acc) for acc in accs]
                if transposed:
                    for v, g in squares:
                        rows = transpose(rb, [values[j * vectors + v] for j in range(g, g + lanes)])
                        for lane, row in enumerate(rows):
                            store(rb, row, self.c, add(rb, c_at[g][v], lane * cv))
                    return []
                for j in range(nr):
                    for v in range(vectors):
                        store(rb, values[j * vectors + v], self.c, c_at[j][v], cv)
                return []

            for_loop(cb, row_start, row_stop, vectors * lanes, row_block)
            return []

        for_loop(builder, col_start, col_stop, nr, column_block)

    # -- dot kernel ------------------------------------------------------------------

    def emit_dot(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
                 lanes: int) -> None:
        """C(i, j) += sum A(i, p) B(p, j) with A rows and B columns k-contiguous."""
        s = self.shape
        mr, nr = (min(e, b) for e, b in zip((s.m, s.n), dot_block(self.budget)))
        row_cuts = [(0, s.m // mr * mr, mr), (s.m // mr * mr, s.m, s.m % mr)]
        col_cuts = [(0, s.n // nr * nr, nr), (s.n // nr * nr, s.n, s.n % nr)]
        for cols in col_cuts:
            for rows in row_cuts:
                if rows[2] and cols[2] and rows[1] > rows[0] and cols[1] > cols[0]:
                    self.dot_blocks(builder, a0, b0, c0, rows, cols, lanes)

    def dot_blocks(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
                   rows: tuple[int, int, int], cols: tuple[int, int, int], lanes: int) -> None:
        s = self.shape
        a_m, _ = s.a_strides
        _, b_n = s.b_strides
        c_m, c_n = s.c_strides
        row_start, row_stop, mr = rows
        col_start, col_stop, nr = cols
        whole = s.k // lanes * lanes
        rest = s.k - whole

        def column_block(cb: Builder, j0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            b_block = add(cb, b0, j0, b_n)
            c_column = add(cb, c0, j0, c_n)

            def row_block(rb: Builder, i0: SSAValue, __: list[SSAValue]) -> list[SSAValue]:
                a_block = add(rb, a0, i0, a_m)
                c_block = add(rb, c_column, i0, c_m)
                # (i, j) at i * nr + j; from -0.0, the identity of IEEE addition,
                # so that a sum of -0.0 products stays -0.0 as in the reference
                accs = [constant(rb, value_type(self.element, lanes), -0.0)] * (mr * nr)

                def batch(bb: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                    a_batch = add(bb, a_block, t, s.batch_a)
                    b_batch = add(bb, b_block, t, s.batch_b)

                    def step(kb: Builder, p: SSAValue | int, acc: list[SSAValue],
                             valid: int | None = None) -> list[SSAValue]:
                        a_p, b_p = add(kb, a_batch, p), add(kb, b_batch, p)
                        a_rows = [load(kb, self.a, add(kb, a_p, i * a_m), lanes, 1, valid, -0.0,
                                       widened=True, tf32=self.tf32) for i in range(mr)]
                        out = list(acc)
                        for j in range(nr):
                            b_column = load(kb, self.b, add(kb, b_p, j * b_n), lanes, 1, valid,
                                            widened=True, tf32=self.tf32)
                            for i in range(mr):
                                out[i * nr + j] = fma(kb, a_rows[i], b_column, out[i * nr + j])
                        return out

                    if whole:
                        acc = for_loop(bb, 0, whole, lanes, step, acc)
                    if rest:  # the k remainder: lanes past it add -0.0 * +0.0 = -0.0
                        acc = step(bb, whole, acc, rest)
                    return acc

                accs = for_loop(rb, 0, s.batch, 1, batch, accs)
                sums = self.reduce_lanes(rb, accs)
                for i in range(mr):
                    for j in range(nr):
                        at = add(rb, c_block, i * c_m + j * c_n)
                        if self.zero_first and self.zero_when is None:
                            start = constant(rb, self.element)
                        else:
                            (start,) = self.start(rb, [load(rb, self.c, at, widened=True)])
                        total = rb.insert(arith.AddfOp(start, sums[i * nr + j])).result
                        store(rb, self.finish(rb, total), self.c, at)
                return []

            for_loop(cb, row_start, row_stop, mr, row_block)
            return []

        for_loop(builder, col_start, col_stop, nr, column_block)

    def reduce_lanes(self, builder: Builder, vectors: list[SSAValue]) -> list[SSAValue]:
        """The lane sums of `vectors` (one vector type), reduced together.

        A vector here holds segments of equal width, each a part of one accumulator's
        lanes. Two vectors of the same width and segment width combine into one: the
        low halves of all their segments shuffled into one vector, the high halves
        into another, and the two added, which halves the segment width. A vector
        without a partner folds into one of half the width the same way. Once the
        segments are single lanes, the lanes are the sums.
        """
        # (value, vector width, segment width, owner of each segment)
        lanes = cast(VectorType, vectors[0].type).get_shape()[0]
        work = [(v, lanes, lanes, [i]) for i, v in enumerate(vectors)]
        done: list[tuple[SSAValue, list[int]]] = []
        while work:
            value, width, segment, owners = work.pop(0)
            if segment == 1:
                done.append((value, owners))
                continue
            half = segment // 2
            partner = next((w for w in work if w[1] == width and w[2] == segment), None)
            count = width // segment
            if partner is not None:
                work.remove(partner)
                other, result_width, result_owners = partner[0], width, owners + partner[3]
                starts = [q * segment for q in range(count)] + [width + q * segment for q in range(count)]
            else:
                other, result_width, result_owners = value, width // 2, owners
                starts = [q * segment for q in range(count)]
            result_type = VectorType(self.element, [result_width])
            low, high = (
                builder.insert(vector.ShuffleOp(
                    value, other,
                    DenseArrayBase.from_list(i64, [s + shift + lane for s in starts for lane in range(half)]),
                    result_type=result_type,
                )).result
                for shift in (0, half)
            )
            summed = builder.insert(arith.AddfOp(low, high)).result
            work.append((summed, result_width, half, result_owners))
        sums: list[SSAValue | None] = [None] * len(vectors)
        for value, owners in done:
            for lane, owner in enumerate(owners):
                sums[owner] = builder.insert(vector.ExtractOp(value, [lane], self.element)).result
        return [s for s in sums if s is not None]
