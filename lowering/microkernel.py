"""Register-blocked GEMM/BRGEMM microkernels in scf/arith/memref/vector.

Every Contraction that `teir-match-gemm` classifies as GEMM or BRGEMM, in any
of the 8 layouts `trans = "ABC"` and any m, n, k, runs here. The tile is
C(m, n) [+]= sum over batches of A(m, k) B(k, n), with the element strides the
kernel attribute gives (`GemmShape`). `plan_gemm` picks a kernel, its register
block, its packing and its K-blocking by a cost model of the host
(`teir_passes.host`), and `GemmEmitter` emits it.

Outer-product kernel, vectors along V (m or n). C = A B and C^T = B^T A^T are
the same sums, so the kernel is written once for an operand X that carries V
and k, an operand Y that carries the other free dimension U and k, and C(V, U):
V = m takes X = A, Y = B; V = n swaps the roles of (A, m) and (B, n). C is cut
into register blocks of MV vectors of L lanes along V by NR columns along U,
held in MV * NR vector accumulators; per batch and k: MV vector loads of X, one
broadcast of Y per column, MV * NR FMAs (the batch-reduce loop is inside). C is
read once before the K loops and written once after them, per K-block. Loops,
outermost first: K-blocks, M-blocks (packed X only), column panels of NR, row
blocks of MV * L, batches, k (BLIS's order: a panel of Y, K-block x NR, stays
in L1 while the row blocks stream the X block from L2).

- Register block (`register_blocks`): every MV x NR with MV * NR accumulators,
  MV loaded vectors and one broadcast in the host's vector registers (16 ymm
  with AVX2: 2 x 6 or 3 x 4; 32 zmm with AVX-512: 2 x 14, 3 x 9, 4 x 6),
  costed with the blocks the extents leave at the edges; FP32 and FP64 get
  their own (the extents in vectors differ, e.g. m = 64 is 8 vectors of f32
  and 16 of f64).
- K-blocking (`k_blocking`): the K steps (batch x k) are cut into blocks whose
  Y panel (NR columns x the block) fills at most 3/4 of the L1d: batches grouped
  when k is short, k cut into chunks when it is long. C is loaded and stored
  once per K-block; the fused Zero applies in the first, the ReLU in the last.
- Packing (`GemmPlan.pack`): X is copied, per K-block, into a contiguous
  scratch buffer laid out as the kernel reads it (per row block, per K step,
  MV * L elements), when the cost model says it pays: X strided along V
  ("gather": its vectors would be L scalar loads each; "transpose": X
  contiguous along k, packed by L x L register transposes), or X contiguous
  along V but spread over more pages than the L1 DTLB holds, or with its K
  steps in one cache set ("copy"). Each element of X is then read from memory
  once instead of once per column panel. The buffer is a `memref.alloca`
  (hoisted to the function's entry by teir-hoist-allocas, so one per thread)
  of at most `SCRATCH_BYTES` and half the L2: an X block larger than that is packed and
  consumed in M-blocks.
- When C is contiguous along U instead (cv != 1, cu == 1), L x L squares of
  accumulators are transposed in registers (`teir_lowering.emit.transpose`)
  and C is read and written by vector rows along U (NR a multiple of L);
  columns left over (< L) and other strided C access C lane by lane.

V is cut into row segments: blocks of MV vectors of the widest L (the host's
width, narrower for short extents), then one block of the remaining whole
vectors, then one block of each narrower power of two the remainder needs
(L/2, ..., 2) and a last scalar row (L = 1: memref.load, math.fma), so every
extent runs with the widest vectors that fit; U is cut into NR columns, then
one block of the remaining columns.

Dot kernel, vectors along k, for A rows and B columns both k-contiguous
("TN?"). Blocks of MR x NR elements of C, one vector accumulator each: per k
step of L, MR vector loads of A rows, NR of B columns, MR * NR FMAs; the k
remainder is one more step with vectors gathered from the remaining elements
(-0.0 in A's other lanes, +0 in B's: their product -0.0 changes no sum). The
accumulators start at -0.0, the identity of IEEE addition, so that a sum of
-0.0 products stays -0.0 as in the reference. After the batch-reduce loop the
MR * NR accumulators are reduced together by a transposing tree
(`reduce_lanes`: about 3 shuffles/adds per accumulator in all, instead of
2 log2 L each) and each sum is added to its element of C.

The cost model (`plan_gemm`) estimates the cycles of the whole tile for each
applicable kernel, orientation, packing and register block: per K step of a
block max(FMAs / 2, loads / 2, shuffles, FMA latency 5) (two FMA and two load
pipes, as on every x86 core since Haswell), C's loads and stores per K-block,
the packing, and for X read in place from scattered pages a penalty per load
(measured: a 128^3 GEMM with lda = 1024 floats ran at 0.46x of lda = 128 on
the AVX2 host, 0.84x at lda = 1040). Scalar code (L = 1, still register-blocked
and with the fused epilogues) is what remains when no vector kernel applies
(m = n = 1 without k-contiguous A and B).

Code size: a kernel is a few hundred to a few thousand scf ops (every segment
and column remainder is one unrolled loop nest), which dominates compile time.

Fused epilogues (`GemmEmitter`): `zero_first` is a Zero of the tile just before
(the accumulators start at +0 and C is not read: beta = 0), or, with
`zero_when`, only when that i1 holds (C is read and replaced by +0 by a select);
`relu` is a ReLU of the tile just after, select(x < 0, +0, x) on each final
value before its one store (`teir_lowering.emit.relu`: an ordered compare, so
-0.0 and NaN pass unchanged), or, with `relu_when`, only when that i1 holds.
With several K-blocks both apply in the first / last block only. When they may
be fused is the caller's rule (teir_lowering.convert_teir_to_scf: siblings of
the Contraction, or sunk into the first / last iteration of the K loops around
it).

Numerics: products are accumulated with fused multiply-adds; the outer kernel
adds them in k order per batch (K-blocks add their partial sums to C in
order), the dot kernel in L interleaved partial sums reduced by the tree. Both
differ from the reference's float64 loop-order sums by rounding only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, vector
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
    index,
    load,
    load_broadcast,
    narrow,
    relu,
    store,
    transpose,
    value_type,
)
from teir_passes.host import host

# -- the machine model -------------------------------------------------------------------

FMA_PORTS = 2
"""FMAs issued per cycle: two FMA pipes on every x86 core since Haswell and Zen."""

LOAD_PORTS = 2
"""Loads per cycle on those cores (two or three: the lower bound)."""

FMA_LATENCY = 5
"""Cycles from one FMA to the next on the same accumulator: 4 or 5 on those cores,
the longer, so that blocks keep ten or more accumulators in flight."""

PAGE = 4096
"""Bytes per page, and the index period of x86 L1d caches (indexed within a page)."""

TLB_PAGES = 48
"""Pages one micro-panel of X may span before its loads miss the L1 DTLB: three
quarters of the 64 entries of the smallest L1 DTLB of those cores (Zen 3, Haswell),
leaving the rest to Y and C."""

SCATTER_PENALTY = 1.0
"""Extra cycles per load of X from a micro-panel spanning more than TLB_PAGES pages,
and `CONFLICT_PENALTY` when its K steps also share one L1 set (see the module doc)."""

CONFLICT_PENALTY = 3.0

SCRATCH_BYTES = 256 << 10
"""The largest packed X block, on the stack of the thread that runs the kernel: far
inside the 2 MiB glibc gives a thread's stack at least; at most half the host's L2
(`teir_passes.host`), where the block stays while the column panels stream over it.
Larger X blocks are packed and consumed in M-blocks."""


def lanes_for(extent: int, width: int, minimum: int = MIN_LANES) -> int:
    """Vector lanes along a dimension: the host's full width, narrower (down to
    `minimum`) for short extents."""
    lanes = host().lanes(width)
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


# -- the planner -----------------------------------------------------------------------


@dataclass(frozen=True)
class GemmPlan:
    """The kernel chosen for a tile.

    `outer` with vectors along `vector` ("m" or "n"; lanes = 1 is register-blocked
    scalar code), register blocks of `vectors` x `columns`, X packed as `pack`
    says ("" read in place, "copy", "gather", "transpose"); or `dot` (vectors
    along k, blocks of `vectors` x `columns` elements). `k_block` = (batches, k)
    per K-block; (0, 0) is the whole K in one block.
    """

    kernel: str
    vector: str
    lanes: int
    cost: float  # estimated cycles per multiply-add
    vectors: int = 1
    columns: int = 1
    pack: str = ""
    k_block: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Segment:
    """Rows [start, stop) of V in blocks of `vectors` vectors of `lanes`, and the
    column ranges (start, stop, NR) of U that each row block meets."""

    start: int
    stop: int
    lanes: int
    vectors: int
    columns: tuple[tuple[int, int, int], ...]

    @property
    def height(self) -> int:
        return self.lanes * self.vectors


def row_segments(extent: int, lanes: int, most: int) -> list[tuple[int, int, int, int]]:
    """(start, stop, lanes, vectors per block) covering [0, extent): blocks of `most`
    vectors of `lanes`, one block of the whole vectors left, then one block of each
    narrower power of two that the remainder needs, down to scalars."""
    if lanes == 1:
        shapes = [(1, 1)]
    else:
        shapes = [(lanes, vectors) for vectors in range(most, 0, -1)]
        narrower = lanes // 2
        while narrower >= 1:
            shapes.append((narrower, 1))
            narrower //= 2
    segments: list[tuple[int, int, int, int]] = []
    start = 0
    for width, vectors in shapes:
        size = width * vectors
        stop = start + (extent - start) // size * size
        if stop > start:
            segments.append((start, stop, width, vectors))
        start = stop
    return segments


def widest_columns(vectors: int, registers: int) -> int:
    """NR of a block of `vectors`: MV * NR accumulators, MV loaded vectors and a
    broadcast in the host's vector registers, with three to spare: LLVM's scheduler
    loads broadcasts ahead of their FMAs, and a 1 x 14 block on 16 ymm registers
    spilled accumulators to the stack (2 x 6 and 3 x 4 do not)."""
    return max(1, (registers - max(4, vectors + 1)) // vectors)


def outer_layout(nv: int, nu: int, lanes: int, vectors: int, columns: int,
                 transposing: bool, registers: int) -> list[Segment]:
    """The segments of V and column ranges of U of an outer-product tile whose main
    blocks are `vectors` x `columns` (`transposing`: C contiguous along U, squares
    transposed in registers, so NR is a multiple of the segment's lanes)."""
    segments = []
    for start, stop, width, mv in row_segments(nv, lanes, vectors):
        across = transposing and width > 1
        nr = columns if (width, mv) == (lanes, vectors) else widest_columns(mv, registers)
        if across:
            nr = max(width, nr // width * width)
            cuts = [nu // nr * nr]
            cuts.append(cuts[0] + (nu - cuts[0]) // width * width)
        else:
            nr = max(1, min(nr, nu))
            cuts = [nu // nr * nr]
        ranges: list[tuple[int, int, int]] = []
        low = 0
        for high in [*cuts, nu]:
            if high > low:
                ranges.append((low, high, nr if low == 0 and high == cuts[0] else high - low))
            low = max(low, high)
        segments.append(Segment(start, stop, width, mv, tuple(ranges)))
    return segments


def register_blocks(nv: int, nu: int, lanes: int, registers: int,
                    transposing: bool) -> list[tuple[int, int]]:
    """Candidate (MV, NR) main blocks: for 1 to 4 vectors, the widest NR that fits the
    registers and the narrower ones that still hold FMA_PORTS * FMA_LATENCY
    accumulators (enough to hide the FMA latency), so the cost model can trade
    block size against the blocks the extents leave at the edges."""
    blocks = []
    whole = max(1, nv // lanes)
    for vectors in range(1, (4 if lanes > 1 else 1) + 1):
        if vectors > whole:
            break
        widest = widest_columns(vectors, registers)
        if transposing:
            widest = widest // lanes * lanes
            candidates = [widest] if widest else []
        else:
            widest = min(widest, nu)
            enough = min(widest, -(-FMA_PORTS * FMA_LATENCY // vectors))
            candidates = list(range(widest, enough - 1, -1))
        blocks += [(vectors, columns) for columns in candidates]
    return blocks


def k_blocking(shape: GemmShape, columns: int, width: int) -> tuple[int, int]:
    """(batches, k) per K-block: the most K steps whose Y panel (`columns` x the
    steps) fills at most 3/4 of the L1d; (batch, k) when all of K does.

    As in BLIS's analytical model (Low et al., TOMS 2016), the panel may take all
    but two ways of an 8-way L1d (x86's are 8- to 12-way), which the X vectors
    streamed from L2 and C's block share. Half the L1d cut the spec's BRGEMM in
    FP64 (a 24 KiB panel) into two K-blocks, which ran 3-9% slower on the AVX2
    EPYC host (three runs)."""
    s = shape
    target = max(1, host().l1d * 3 // 4 // (columns * width))
    if s.k * s.batch <= target:
        return (s.batch, s.k)
    if s.k <= target:
        group = max(d for d in range(1, s.batch + 1) if s.batch % d == 0 and d * s.k <= target)
        return (group, s.k)
    chunks = -(-s.k // target)
    return (1, -(-s.k // chunks))


def scattered(rows: int, k_stride: int, batch_stride: int, batches: int, steps: int,
              width: int) -> float:
    """The penalty per load of an X micro-panel read in place (`rows` unit-stride
    elements per K step, `steps` k steps in each of `batches` batches): 0, or
    SCATTER_PENALTY when it spans more than TLB_PAGES pages, CONFLICT_PENALTY when
    its K steps also fall into one L1 set (a k stride that is a multiple of PAGE)."""
    step = abs(k_stride) * width
    if step >= PAGE:
        pages = steps
    else:
        pages = -(-((steps - 1) * step + rows * width) // PAGE)
    pages *= batches if abs(batch_stride) * width >= pages * PAGE else 1
    if pages <= TLB_PAGES:
        return 0.0
    return CONFLICT_PENALTY if step and step % PAGE == 0 else SCATTER_PENALTY


def step_cycles(vectors: int, columns: int, lanes: int, gather: bool, penalty: float) -> float:
    """Cycles of one K step of a block: its FMAs, its loads (X gathered: a load and a
    lane insert per lane) and the FMA latency bound, whichever is longest, plus
    `penalty` per X load."""
    fmas = vectors * columns
    x_loads = vectors * (lanes if gather and lanes > 1 else 1)
    inserts = x_loads if gather and lanes > 1 else 0
    cycles = max(fmas / FMA_PORTS, (x_loads + columns) / LOAD_PORTS, inserts, FMA_LATENCY)
    return cycles + penalty * vectors


TRANSPOSED_C_STEP = 1.0
"""Extra cycles per K step of a block whose C is transposed in registers: such blocks
are one vector by L columns (NR a multiple of L), and LLVM spilled an accumulator
of the 1 x 8 block on 16 ymm registers (a 128^3 "TNN" GEMM ran at 0.6x of the
packed 2 x 6 kernel that way)."""


def c_cycles(lanes: int, columns: int, c_unit: bool, across: bool, stores_only: bool) -> float:
    """Cycles per C vector of a block per K-block: a load and a store (a store only
    when the fused Zero spares the load), transposed (log2 L shuffles each way) or
    lane by lane."""
    accesses = 1 if stores_only else 2
    if c_unit or lanes == 1:
        return accesses
    if across and columns % lanes == 0:
        return accesses * (1 + (lanes.bit_length() - 1))
    return accesses * lanes


LOOP_EXIT = 10.0
"""Cycles lost per exit of a block's k loop (a mispredicted branch, the loop's setup)."""

UNROLLED = 8
"""k loops this short are unrolled whole by LLVM: no loop exit to pay for."""

FIRST_READ = 4.0
"""Extra cycles per vector of an X block larger than half the L1d that is read in
place from scattered memory: its first column panel reads it one line per K step
and row block, at the latency of wherever X is, where packing reads it in order
(measured on the AVX2 host: the spec's BRGEMM at p32 q64 r32 s64 t8 u64, whose
batches are 1 MiB apart, ran 13% faster packed in FP32, 24% in FP64). An X
whose K steps follow at one stride (one batch, or batches back to back) streams
through the hardware's stride prefetchers instead and pays nothing: packing it
only cost time (128^3 GEMM on the AVX2 EPYC host: 56% of the FP64 peak packed,
78% read in place; FP32 62% / 82%)."""

PACK_CYCLES = {"copy": lambda lanes: 1, "gather": lambda lanes: lanes + 1,
               "transpose": lambda lanes: 1 + (lanes.bit_length() - 1)}
"""Cycles per vector of X packed: a load and a store, L loads and inserts and a
store, or a share of an L x L register transpose."""


def _outer_plan(s: GemmShape, along: str, width: int, zero_first: bool,
                transpose_c: bool) -> list[GemmPlan]:
    """Every outer-product plan with vectors along `along` (see the module doc)."""
    registers = host().vector_registers
    if along == "m":
        nv, nu, (x_free, x_k), x_batch, (c_v, c_u) = (
            s.m, s.n, s.a_strides, s.batch_a, s.c_strides)
    else:
        nv, nu, x_batch = s.n, s.m, s.batch_b
        x_k, x_free = s.b_strides
        c_u, c_v = s.c_strides
    if nv < 2:
        return []
    lanes = lanes_for(nv, width, 2)
    transposing = transpose_c and c_v != 1 and c_u == 1
    packs = [""]
    if x_free == 1:
        packs.append("copy")
    else:
        packs.append("transpose" if x_k == 1 else "gather")
    y_k, y_batch = (s.b_strides[0], s.batch_b) if along == "m" else (s.a_strides[1], s.batch_a)
    plans = []
    work = s.m * s.n * s.k * s.batch
    for vectors, columns in register_blocks(nv, nu, lanes, registers, transposing):
        batches, steps = k_blocking(s, columns, width)
        k_blocks = s.batch // batches * -(-s.k // steps)
        segments = outer_layout(nv, nu, lanes, vectors, columns, transposing, registers)
        for pack in packs:
            gather = x_free != 1 and not pack
            penalty = 0.0
            if x_free == 1 and not pack:
                penalty = scattered(vectors * lanes, x_k, x_batch, batches, steps, width)
            # the batches of a block run as one loop when they follow each other on
            # both operands (a packed X always does); else each batch exits a k loop
            fused = batches == 1 or s.k <= UNROLLED or (
                y_batch == y_k * s.k and (pack or x_batch == x_k * s.k))
            cycles = 0.0
            for seg in segments:
                row_blocks = (seg.stop - seg.start) // seg.height
                for low, high, nr in seg.columns:
                    blocks = row_blocks * ((high - low) // nr)
                    step = step_cycles(seg.vectors, nr, seg.lanes, gather, penalty)
                    if transposing and seg.lanes > 1 and nr % seg.lanes == 0:
                        step += TRANSPOSED_C_STEP
                    c = c_cycles(seg.lanes, nr, c_v == 1, transposing, zero_first and k_blocks == 1)
                    cycles += blocks * (s.k * s.batch * step + k_blocks * seg.vectors * nr * c)
                    if not fused:
                        cycles += blocks * s.batch * LOOP_EXIT
            x_vectors = nv * s.k * s.batch / lanes
            if pack:
                cycles += x_vectors * PACK_CYCLES[pack](lanes)
            elif (x_free == 1 and nv * batches * steps * width > host().l1d // 2
                  and s.batch > 1 and x_batch != x_k * s.k):
                cycles += x_vectors * FIRST_READ
            plans.append(GemmPlan("outer", along, lanes, cycles / work, vectors, columns, pack,
                                  (batches, steps) if k_blocks > 1 else (0, 0)))
    return plans


def dot_block(registers: int) -> tuple[int, int]:
    """MR x NR of the dot kernel: MR * NR accumulators, MR loaded A rows, one B column."""
    return (4, 6) if registers >= 32 else (3, 4)


def _dot_plan(s: GemmShape, width: int) -> GemmPlan:
    """The dot kernel's plan: per block and batch, k / L steps of MR + NR loads and
    MR * NR FMAs, the gathered k remainder; the reduction (about 3 ops per
    accumulator) and C's update (about 4 per element) once per block."""
    lanes = lanes_for(s.k, width)
    mr, nr = dot_block(host().vector_registers)
    steps, rest = divmod(s.k, lanes)
    cycles = 0.0
    for rows in (mr,) * (s.m // mr) + ((s.m % mr,) if s.m % mr else ()):
        for cols in (nr,) * (s.n // nr) + ((s.n % nr,) if s.n % nr else ()):
            step = max(rows * cols / FMA_PORTS, (rows + cols) / LOAD_PORTS, FMA_LATENCY)
            gathered = rest * (rows + cols) + step if rest else 0
            cycles += s.batch * (steps * step + gathered) + 7 * rows * cols
    return GemmPlan("dot", "k", lanes, cycles / (s.m * s.n * s.k * s.batch), mr, nr)


def plan_gemm(shape: GemmShape, width: int, zero_first: bool = False) -> GemmPlan:
    """The cheapest kernel for `shape` by the estimates above (see the module doc)."""
    s = shape
    plans = _outer_plan(s, "m", width, zero_first, GemmEmitter.transpose_c)
    plans += _outer_plan(s, "n", width, zero_first, GemmEmitter.transpose_c)
    if s.a_strides[1] == 1 and s.b_strides[0] == 1 and s.k >= MIN_LANES:
        plans.append(_dot_plan(s, width))
    # Scalar code, register-blocked: scalars along the shorter free dimension, so
    # that NR columns share each loaded element of the other operand.
    along = "m" if s.m <= s.n else "n"
    scalar = _scalar_plan(s, along, width, zero_first)
    best = min(plans, key=_preference, default=scalar)
    return best if best.cost < scalar.cost else scalar


TWO_VECTOR_MARGIN = 1.02
"""Plans within 2% of the cheapest: the block of two vectors wins (BLIS's shape on
every x86 core since Haswell: 2 x 6 with 16 registers, 2 x 12-14 with 32). The
model cannot tell 2 x 6 from 3 x 4 apart on the AVX2 host (llvm-mca: both at one
FMA per pipe and cycle); timings there were within their noise."""


def _preference(plan: GemmPlan) -> float:
    return plan.cost * (1.0 if plan.vectors == 2 or plan.kernel == "dot" else TWO_VECTOR_MARGIN)


def _scalar_plan(s: GemmShape, along: str, width: int, zero_first: bool) -> GemmPlan:
    """Scalar register blocks of one row by the widest NR columns."""
    registers = host().vector_registers
    nv, nu = (s.m, s.n) if along == "m" else (s.n, s.m)
    columns = max(1, min(nu, widest_columns(1, registers)))
    batches, steps = k_blocking(s, columns, width)
    k_blocks = s.batch // batches * -(-s.k // steps)
    cycles = 0.0
    for seg in outer_layout(nv, nu, 1, 1, columns, False, registers):
        for low, high, nr in seg.columns:
            blocks = (seg.stop - seg.start) * ((high - low) // nr)
            cycles += blocks * (s.k * s.batch * step_cycles(1, nr, 1, False, 0.0)
                                + k_blocks * nr * (1 if zero_first and k_blocks == 1 else 2))
    return GemmPlan("outer", along, 1, cycles / (s.m * s.n * s.k * s.batch), 1, columns, "",
                    (batches, steps) if k_blocks > 1 else (0, 0))


# -- the emitter -------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """A strided view of an outer-product operand: the element at (free index f, k
    index p, batch t) is at base + f * free + p * k + t * batch of `memory`, except
    that the row block starting at free index v0 starts at base + v0 * block (a
    packed X keeps each row block's K steps together)."""

    memory: SSAValue
    base: SSAValue
    free: int
    k: int
    batch: int
    block: int

    def shifted(self, builder: Builder, rows: SSAValue | int = 0,
                batch: SSAValue | int = 0, k: SSAValue | int = 0) -> Operand:
        """The same view starting `rows`, `batch` and `k` further."""
        base = add(builder, self.base, rows, self.free)
        base = add(builder, base, batch, self.batch)
        return Operand(self.memory, add(builder, base, k, self.k), self.free, self.k,
                       self.batch, self.block)


def _both(builder: Builder, first: SSAValue | None, second: SSAValue | None) -> SSAValue | None:
    """first and second (i1), None standing for true."""
    if first is None or second is None:
        return second if first is None else first
    return builder.insert(arith.AndIOp(first, second)).result


def _equals(builder: Builder, value: SSAValue, number: int) -> SSAValue:
    return builder.insert(arith.CmpiOp(value, index(builder, number), "eq")).result


@dataclass(frozen=True)
class Epilogue:
    """The fused Zero and ReLU as they apply to one K-block: `zero` starts the
    accumulation from +0 (only when the i1 `zero_when` holds, if given; else from
    C); `relu` applies relu before the store (only when `relu_when` holds, if given)."""

    zero: bool = False
    zero_when: SSAValue | None = None
    relu: bool = False
    relu_when: SSAValue | None = None
    storage: Attribute | None = None
    """C's element type, which a fused ReLU sees (None: that of the value)."""

    @property
    def skips_c(self) -> bool:
        """The accumulation starts from +0 unconditionally: C is not read (beta = 0)."""
        return self.zero and self.zero_when is None

    def within(self, builder: Builder, first: SSAValue | None,
               last: SSAValue | None) -> Epilogue:
        """This epilogue for a K-block that is the first / last one when `first` /
        `last` hold (None: it is)."""
        return Epilogue(
            self.zero, _both(builder, self.zero_when, first) if self.zero else None,
            self.relu, _both(builder, self.relu_when, last) if self.relu else None,
            self.storage,
        )

    def start(self, builder: Builder, loaded: list[SSAValue]) -> list[SSAValue]:
        """The initial accumulators from C's `loaded` values under a conditional Zero."""
        if not self.zero or self.zero_when is None:
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
        if self.storage is not None:
            value = narrow(builder, value, self.storage)
        result = relu(builder, value)
        if self.relu_when is not None:
            result = builder.insert(arith.SelectOp(self.relu_when, result, value)).result
        return result


KBlockBody = Callable[[Builder, SSAValue | int, SSAValue | int, SSAValue | int, Epilogue], None]
"""body(builder, first batch, first k, k steps, epilogue) of one K-block."""


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
        self.epilogue = Epilogue(zero_first, zero_when if zero_first else None,
                                 relu, relu_when if relu else None, element)
        self.plan = plan or plan_gemm(shape, width, zero_first and zero_when is None)
        if self.storage != self.element and self.plan.k_block != (0, 0):
            # C narrower than the accumulators (f16, bf16) is rounded once, at its one
            # store: one K-block, as a K-blocked tile would round its partial sums
            self.plan = replace(self.plan, k_block=(0, 0))
        self.registers = host().vector_registers

    # -- the tile ------------------------------------------------------------------

    def emit(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue) -> None:
        s, plan = self.shape, self.plan
        if plan.kernel == "dot":
            self.emit_dot(builder, a0, b0, c0, plan.lanes)
            return
        a_m, a_k = s.a_strides
        b_k, b_n = s.b_strides
        c_m, c_n = s.c_strides
        a = Operand(self.a, a0, a_m, a_k, s.batch_a, a_m)
        b = Operand(self.b, b0, b_n, b_k, s.batch_b, b_n)
        if plan.vector == "m":
            self.emit_outer(builder, s.m, s.n, a, b, c0, c_m, c_n)
        else:  # C^T = B^T A^T: the roles of (A, m) and (B, n) swap
            self.emit_outer(builder, s.n, s.m, b, a, c0, c_n, c_m)

    # -- outer-product kernel ------------------------------------------------------

    def emit_outer(self, builder: Builder, nv: int, nu: int, x: Operand, y: Operand,
                   c0: SSAValue, cv: int, cu: int) -> None:
        """C(v, u) at c0 + v * cv + u * cu += sum X(v, p) Y(u, p), vectors along v:
        K-blocks, then M-blocks of the packed X (all of V when X is read in place),
        then the segments' column and row blocks (see the module doc)."""
        s, plan = self.shape, self.plan
        batches, steps = plan.k_block if plan.k_block != (0, 0) else (s.batch, s.k)
        span = batches * steps
        transposing = self.transpose_c and cv != 1 and cu == 1 and plan.lanes > 1
        rows = nv
        scratch = None
        if plan.pack:
            height = plan.vectors * plan.lanes
            limit = min(SCRATCH_BYTES, host().l2 // 2)
            rows = min(nv, max(height, limit // self.width // span // height * height))
            scratch = builder.insert(
                memref.AllocaOp.get(self.element, 64, [rows * span])).memref

        def k_block(kb: Builder, t0: SSAValue | int, p0: SSAValue | int,
                    length: SSAValue | int, epilogue: Epilogue) -> None:
            x_k, y_k = x.shifted(kb, batch=t0, k=p0), y.shifted(kb, batch=t0, k=p0)

            def m_block(mb: Builder, m0: SSAValue | int, extent: int) -> None:
                segments = outer_layout(extent, nu, plan.lanes, plan.vectors, plan.columns,
                                        transposing, self.registers)
                x_m = x_k.shifted(mb, rows=m0)
                c_m = add(mb, c0, m0, cv)
                if scratch is not None:
                    self.pack(mb, x_m, scratch, segments, batches, length, steps)
                for seg in segments:
                    x_seg = x_m if scratch is None else Operand(
                        scratch, index(mb, 0), 1, seg.height, seg.height * steps, span)
                    for columns in seg.columns:
                        self.outer_blocks(mb, x_seg, y_k, c_m, cv, cu, seg, columns,
                                          batches, length, epilogue, transposing)

            full = nv // rows
            if full > 1:
                for_loop(kb, 0, full * rows, rows, lambda b, m0, _: m_block(b, m0, rows))
            elif full == 1:
                m_block(kb, 0, rows)
            if nv % rows:
                m_block(kb, full * rows, nv % rows)

        self.k_blocks(builder, batches, steps, k_block)

    def k_blocks(self, builder: Builder, batches: int, steps: int, body: KBlockBody) -> None:
        """`body` for each K-block of `batches` x `steps` (the last k chunk may be
        shorter), with the epilogue of the first and last blocks."""
        s = self.shape
        groups, chunks = s.batch // batches, -(-s.k // steps)
        if groups * chunks == 1:
            body(builder, 0, 0, s.k, self.epilogue)
            return
        if chunks == 1:
            def group(gb: Builder, g: SSAValue, _: list[SSAValue]) -> None:
                epilogue = self.epilogue.within(gb, _equals(gb, g, 0), _equals(gb, g, groups - 1))
                t0 = gb.insert(arith.MuliOp(g, index(gb, batches))).result
                body(gb, t0, 0, s.k, epilogue)

            for_loop(builder, 0, groups, 1, group)
            return

        def batch(bb: Builder, t: SSAValue, _: list[SSAValue]) -> None:
            def chunk(cb: Builder, c: SSAValue, __: list[SSAValue]) -> None:
                p0 = cb.insert(arith.MuliOp(c, index(cb, steps))).result
                length: SSAValue | int = steps
                if s.k % steps:
                    rest = cb.insert(arith.SubiOp(index(cb, s.k), p0)).result
                    length = cb.insert(arith.MinUIOp(rest, index(cb, steps))).result
                first = _both(cb, _equals(cb, t, 0), _equals(cb, c, 0))
                last = _both(cb, _equals(cb, t, s.batch - 1), _equals(cb, c, chunks - 1))
                body(cb, t, p0, length, self.epilogue.within(cb, first, last))

            for_loop(bb, 0, chunks, 1, chunk)

        for_loop(builder, 0, s.batch, 1, batch)

    def pack(self, builder: Builder, x: Operand, scratch: SSAValue, segments: list[Segment],
             batches: int, length: SSAValue | int, steps: int) -> None:
        """X's rows of `segments` over one K-block into `scratch`, as the kernel reads
        it: row block v0 at v0 * span, then per batch and k step its `height`
        elements (Operand with free 1, k height, batch height * steps).

        An X contiguous along V ("copy") is read in its own order, each K step's
        rows in a row, so that the first (often the only) read of the block from
        memory is sequential; the others row block by row block, gathered or
        transposed."""
        span = batches * steps
        if self.plan.pack == "copy":
            def batch_rows(bb: Builder, t: SSAValue, _: list[SSAValue]) -> None:
                def step_rows(kb: Builder, p: SSAValue, __: list[SSAValue]) -> None:
                    at = add(kb, add(kb, x.base, t, x.batch), p, x.k)
                    for seg in segments:
                        to = add(kb, add(kb, index(kb, 0), t, seg.height * steps), p, seg.height)

                        def row_block(rb: Builder, v0: SSAValue, ___: list[SSAValue],
                                      seg: Segment = seg, to: SSAValue = to) -> None:
                            source, target = add(rb, at, v0), add(rb, to, v0, span)
                            for v in range(seg.vectors):
                                value = load(rb, x.memory, add(rb, source, v * seg.lanes),
                                             seg.lanes, widened=True, tf32=self.tf32)
                                store(rb, value, scratch, add(rb, target, v * seg.lanes))

                        for_loop(kb, seg.start, seg.stop, seg.height, row_block)

                for_loop(bb, 0, length, 1, step_rows)

            for_loop(builder, 0, batches, 1, batch_rows)
            return
        for seg in segments:
            def row_block(rb: Builder, v0: SSAValue, _: list[SSAValue], seg: Segment = seg) -> None:
                source = add(rb, x.base, v0, x.free)
                target = add(rb, index(rb, 0), v0, span)

                def batch(bb: Builder, t: SSAValue, __: list[SSAValue]) -> None:
                    src = add(bb, source, t, x.batch)
                    dst = add(bb, target, t, seg.height * steps)
                    done: SSAValue | int = 0
                    if self.plan.pack == "transpose" and seg.lanes > 1:
                        done = self.pack_transposed(bb, x, scratch, seg, src, dst, length)
                    self.pack_gathered(bb, x, scratch, seg, src, dst, done, length)

                for_loop(rb, 0, batches, 1, batch)

            for_loop(builder, seg.start, seg.stop, seg.height, row_block)

    def pack_gathered(self, builder: Builder, x: Operand, scratch: SSAValue, seg: Segment,
                      src: SSAValue, dst: SSAValue, start: SSAValue | int,
                      stop: SSAValue | int) -> None:
        """K steps [start, stop) of one row block, vector by vector (each a load, or a
        gather of its lanes when X is strided along V)."""
        def step(kb: Builder, p: SSAValue, _: list[SSAValue]) -> None:
            at, to = add(kb, src, p, x.k), add(kb, dst, p, seg.height)
            for v in range(seg.vectors):
                value = load(kb, x.memory, add(kb, at, v * seg.lanes * x.free), seg.lanes, x.free,
                             widened=True, tf32=self.tf32)
                store(kb, value, scratch, add(kb, to, v * seg.lanes))

        for_loop(builder, start, stop, 1, step)

    def pack_transposed(self, builder: Builder, x: Operand, scratch: SSAValue, seg: Segment,
                        src: SSAValue, dst: SSAValue, length: SSAValue | int) -> SSAValue | int:
        """The K steps of one row block of an X contiguous along k, in L x L squares
        transposed in registers: L rows of X loaded as vectors along k become L
        vectors along V. Returns where the whole squares end."""
        lanes = seg.lanes
        if isinstance(length, int):
            whole: SSAValue | int = length // lanes * lanes
        else:
            count = builder.insert(arith.DivUIOp(length, index(builder, lanes))).result
            whole = builder.insert(arith.MuliOp(count, index(builder, lanes))).result

        def square(kb: Builder, p: SSAValue, _: list[SSAValue]) -> None:
            at, to = add(kb, src, p), add(kb, dst, p, seg.height)
            for v in range(seg.vectors):
                rows = [load(kb, x.memory, add(kb, at, (v * lanes + i) * x.free), lanes,
                             widened=True, tf32=self.tf32)
                        for i in range(lanes)]
                for j, column in enumerate(transpose(kb, rows)):
                    store(kb, column, scratch, add(kb, to, j * seg.height + v * lanes))

        for_loop(builder, 0, whole, lanes, square)
        return whole

    def outer_blocks(self, builder: Builder, x: Operand, y: Operand, c0: SSAValue, cv: int,
                     cu: int, seg: Segment, cols: tuple[int, int, int], batches: int,
                     length: SSAValue | int, epilogue: Epilogue, transposing: bool) -> None:
        """The register blocks of one segment and column range over one K-block."""
        lanes, vectors = seg.lanes, seg.vectors
        col_start, col_stop, nr = cols
        # C contiguous along u: L x L squares (vector v, first column g) transposed
        transposed = transposing and lanes > 1 and nr % lanes == 0
        squares = [(v, g) for v in range(vectors) for g in range(0, nr, lanes)]

        def column_block(cb: Builder, u0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            y_block = add(cb, y.base, u0, y.block)
            c_column = add(cb, c0, u0, cu)

            def row_block(rb: Builder, v0: SSAValue, __: list[SSAValue]) -> list[SSAValue]:
                c_block = add(rb, c_column, v0, cv)
                c_at = [[add(rb, c_block, v * lanes * cv + j * cu) for v in range(vectors)]
                        for j in range(nr)]
                zero = value_type(self.element, lanes)
                if epilogue.skips_c:
                    accs = [constant(rb, zero)] * (nr * vectors)
                elif transposed:
                    accs = [constant(rb, zero)] * (nr * vectors)
                    for v, g in squares:  # rows of C along u, transposed to columns
                        rows = [load(rb, self.c, add(rb, c_at[g][v], lane * cv), lanes,
                                     widened=True)
                                for lane in range(lanes)]
                        for j, column in enumerate(transpose(rb, rows), start=g):
                            accs[j * vectors + v] = column
                else:
                    accs = [load(rb, self.c, c_at[j][v], lanes, cv, widened=True)
                            for j in range(nr) for v in range(vectors)]
                accs = epilogue.start(rb, accs)
                x_block = add(rb, x.base, v0, x.block)

                def steps(bb: Builder, x_at: SSAValue, y_at: SSAValue, count: SSAValue | int,
                          acc: list[SSAValue]) -> list[SSAValue]:
                    def step(kb: Builder, kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                        x_k = add(kb, x_at, kk, x.k)
                        x_vectors = [load(kb, x.memory, add(kb, x_k, v * lanes * x.free), lanes,
                                          x.free, widened=True, tf32=self.tf32)
                                     for v in range(vectors)]
                        y_k = add(kb, y_at, kk, y.k)
                        out: list[SSAValue] = []
                        for j in range(nr):
                            broadcast = load_broadcast(kb, y.memory, add(kb, y_k, j * y.free),
                                                       lanes, widened=True, tf32=self.tf32)
                            for v in range(vectors):
                                out.append(fma(kb, x_vectors[v], broadcast, acc[j * vectors + v]))
                        return out

                    return for_loop(bb, 0, count, 1, step, acc)

                if batches > 1 and isinstance(length, int) and (
                        x.batch == x.k * length and y.batch == y.k * length):
                    # the batches follow each other on both operands (a packed X, a
                    # k-contiguous Y): one loop over all K steps of the block
                    accs = steps(rb, x_block, y_block, batches * length, accs)
                else:
                    accs = for_loop(rb, 0, batches, 1, lambda bb, t, acc: steps(
                        bb, add(bb, x_block, t, x.batch), add(bb, y_block, t, y.batch), length,
                        acc), accs)
                values = [epilogue.finish(rb, acc) for acc in accs]
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

            for_loop(cb, seg.start, seg.stop, seg.height, row_block)
            return []

        for_loop(builder, col_start, col_stop, nr, column_block)

    # -- dot kernel ------------------------------------------------------------------

    def emit_dot(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
                 lanes: int) -> None:
        """C(i, j) += sum A(i, p) B(p, j) with A rows and B columns k-contiguous."""
        s = self.shape
        mr, nr = (min(e, b) for e, b in zip((s.m, s.n), dot_block(self.registers)))
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
                        if self.epilogue.skips_c:
                            start = constant(rb, self.element)
                        else:
                            (start,) = self.epilogue.start(
                                rb, [load(rb, self.c, at, widened=True)])
                        total = rb.insert(arith.AddfOp(start, sums[i * nr + j])).result
                        store(rb, self.epilogue.finish(rb, total), self.c, at)
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
