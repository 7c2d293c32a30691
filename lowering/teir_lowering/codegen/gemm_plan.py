"""The GEMM/BRGEMM planner: a cost model of the host that picks the kernel of a tile.

Data in, plan out: a `GemmShape` (the tile as teir-match-gemm recorded it), the
width of the arithmetic type and a `Host` (`teir_dialect.host`: read once, in
`plan_gemm`, so that a test pins it with `pinned(...)` or passes one) give a
`GemmPlan`, which `teir_lowering.codegen.gemm_emitter` turns into IR. Nothing
here builds IR. The kernels themselves (the outer-product kernel with vectors
along V = m or n, the dot kernel with vectors along k) are described there.

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
  A C narrower than the accumulators (f16, bf16) gets one K-block, so that it
  is rounded once.
- Packing (`GemmPlan.pack`): X is copied, per K-block, into a contiguous
  scratch buffer laid out as the kernel reads it (per row block, per K step,
  MV * L elements), when the cost model says it pays: X strided along V
  ("gather": its vectors would be L scalar loads each; "transpose": X
  contiguous along k, packed by L x L register transposes), or X contiguous
  along V but spread over more pages than the L1 DTLB holds, or with its K
  steps in one cache set ("copy"). Each element of X is then read from memory
  once instead of once per column panel. The buffer holds at most
  `GemmPlan.scratch_bytes` (`Host.scratch_bytes`): an X block
  larger than that is packed and consumed in M-blocks (`GemmPlan.m_block`).
  An X from memory copied in short runs a page or more apart (each run a
  stream of its own) is prefetched a few K steps ahead as it is copied
  (`GemmPlan.prefetch`).
- C contiguous along U (`GemmPlan.transpose_c`): read and written in L x L
  squares transposed in registers, NR a multiple of L.
- General strides (the `inca`/`incb`/`incc` of `#teir.kernel`): X without a
  unit stride is gathered or transposed into its packed block (or read in
  place: gathered, or at a stride of 2 to `STEPPED_MAX` as that many contiguous
  vectors regrouped by shuffles); Y without one may be packed per column panel
  (`GemmPlan.pack_y`, `_y_cycles`: the panel's lines against the L1d, its
  columns against the prefetchers' streams); the dot kernel gathers A or B
  along k (stepped loads likewise), or broadcasts one element when the stride
  is 0.
- The dot kernel wherever one operand is contiguous along k; the other, read at
  a stride along k, may be copied once per tile k-contiguous and widened
  (`GemmPlan.pack = "copy"`, `_dot_plan`: the copy against re-reading it for
  every row block).
- L1d sets (`set_conflicts`): lines a block reads at once from rows a multiple
  of 4 KiB apart, more than a set holds (Y's broadcast columns, X's gathered
  rows), each count a miss.

V is cut into row segments (`row_segments`): blocks of MV vectors of the widest
L (the host's width, narrower for short extents), then one block of the
remaining whole vectors, then one block of each narrower power of two the
remainder needs (L/2, ..., 2) and a last scalar row (L = 1), so every extent
runs with the widest vectors that fit; U is cut into NR columns, then one block
of the remaining columns (`outer_layout`).

The cost model (`plan_gemm`) estimates the cycles of the whole tile for each
applicable kernel, orientation, packing and register block: per K step of a
block max(FMAs / 2, loads / 2, shuffles, FMA latency 5) (two FMA and two load
pipes, as on every x86 core since Haswell), C's loads and stores per K-block,
the packing, and for X read in place from scattered pages a penalty per load
(measured: a 128^3 GEMM with lda = 1024 floats ran at 0.46x of lda = 128 on
the AVX2 host, 0.84x at lda = 1040). Scalar code (L = 1, still register-blocked
and with the fused epilogues) is what remains when no vector kernel applies
(m = n = 1 without k-contiguous A and B).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, replace
from math import gcd
from typing import TYPE_CHECKING

from teir_dialect.host import SET_SPAN, Host, host, widened_bytes
from teir_dialect.vocabulary import KernelKind

if TYPE_CHECKING:
    from teir_dialect.dialect import KernelAttr

# -- the machine model ------------------------------------------------------------------

MIN_LANES = 4
"""The fewest lanes worth a vector along a tile dimension (shorter: scalars)."""

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

SPLIT_PENALTY = 1.0
"""Extra cycles per load of X read in place, where a vector is a whole line and the
host pays a load of each of the two lines it straddles (`Host.splits_line_loads`),
counted only where several column panels read an X block larger than half the
L1d: packing it once then aligns it (an X the L1d holds stayed as fast in place)."""

CROWDED_SETS = 4
"""L1d sets an X micro-panel read in place may fall into before it costs
SCATTER_PENALTY per load (`crowded`): k steps 2 KiB apart (512 FP32 or 256 FP64
columns) put a 32-lane panel into 4 sets, where X read in place ran slower than
packed; 1 KiB apart (8 sets) measured either way (README, Benchmarks)."""

CROWDED_SPAN = 4 * PAGE
"""Bytes of K steps below which a crowded X micro-panel costs nothing extra."""

TRANSPOSE_C = True
"""Transpose L x L blocks of a C contiguous along U in registers (else per lane)."""


def _host_fields(machine: Host) -> dict[str, int]:
    """GemmPlan's `registers` and `scratch_bytes` on `machine`."""
    return {"registers": machine.vector_registers,
            "scratch_bytes": machine.scratch_bytes}


def lanes_for(extent: int, width: int, machine: Host, minimum: int = MIN_LANES) -> int:
    """Vector lanes along a dimension: the host's full width, narrower (down to
    `minimum`) for short extents."""
    lanes = machine.lanes(width)
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
    `inca`, `incb`, `incc` replace the unit stride by the recorded increment
    (TEIR's general strides: i * inca + p * lda for "N" A, and so on).
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
    inca: int = 1
    incb: int = 1
    incc: int = 1

    @staticmethod
    def of(kernel: KernelAttr) -> GemmShape | None:
        """The tile of a `#teir.kernel` that teir-match-gemm recorded; None unless it
        is a GEMM or BRGEMM (the microkernels take every layout of both)."""
        if not kernel.is_gemm:
            return None
        batched = kernel.kind_name == KernelKind.BRGEMM
        return GemmShape(
            m=kernel.get("m"), n=kernel.get("n"), k=kernel.get("k"),
            lda=kernel.get("lda"), ldb=kernel.get("ldb"), ldc=kernel.get("ldc"),
            batch=kernel.get("br_size") if batched else 1,
            batch_a=kernel.get("br_stride_a"),
            batch_b=kernel.get("br_stride_b"),
            trans=kernel.trans.data,
            inca=kernel.get("inca"), incb=kernel.get("incb"), incc=kernel.get("incc"),
        )

    @property
    def a_strides(self) -> tuple[int, int]:
        """(m stride, k stride) of A."""
        return (self.inca, self.lda) if self.trans[0] == "N" else (self.lda, self.inca)

    @property
    def b_strides(self) -> tuple[int, int]:
        """(k stride, n stride) of B."""
        return (self.incb, self.ldb) if self.trans[1] == "N" else (self.ldb, self.incb)

    @property
    def c_strides(self) -> tuple[int, int]:
        """(m stride, n stride) of C."""
        return (self.incc, self.ldc) if self.trans[2] == "N" else (self.ldc, self.incc)

    @property
    def strided_k(self) -> str:
        """The operand the dot kernel reads at a stride along k ("a" when A's k stride
        is neither 0 nor 1, else "b"): the one its `pack = "copy"` copies."""
        return "a" if self.a_strides[1] not in (0, 1) else "b"


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


# -- the plan ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GemmPlan:
    """The kernel chosen for a tile.

    `outer` with vectors along `vector` ("m" or "n"; lanes = 1 is register-blocked
    scalar code), register blocks of `vectors` x `columns`, X packed as `pack`
    says ("" read in place, "copy", "gather", "transpose"), C transposed in
    registers where it is contiguous along U (`transpose_c`); or `dot` (vectors
    along k, blocks of `vectors` x `columns` elements; `pack = "copy"`: the
    operand not contiguous along k is copied, widened, k-contiguous once per tile). `k_block` = (batches, k)
    per K-block; (0, 0) is the whole K in one block. `registers` (the host's
    vector registers, which size the blocks at the edges) and `scratch_bytes`
    (the largest packed X block) are the host's, as the plan was made for it.
    """

    kernel: str
    vector: str
    lanes: int
    cost: float  # estimated cycles per multiply-add
    vectors: int = 1
    columns: int = 1
    pack: str = ""
    k_block: tuple[int, int] = (0, 0)
    transpose_c: bool = TRANSPOSE_C
    _: KW_ONLY
    registers: int
    scratch_bytes: int
    pack_y: bool = False
    """Y's column panels (NR columns x the K-block) are packed per panel before the
    row blocks read them: Y with general strides (no unit-stride role axis)."""
    held_y: bool = False
    """Y is constant along k (stride 0): LLVM keeps its broadcasts in registers
    across the k loop, so the blocks leave a register per column (`widest_columns`)."""
    widen_y: bool = False
    """Y (f16) is widened to f32 once, whole, into a scratch buffer before the
    row blocks read it (vector loads and conversions along its unit stride): each
    broadcast is then a plain f32 load instead of a 16-bit broadcast and a
    conversion per column, row block and K step (`widen_pays`)."""
    widen_panels: bool = False
    """Y (f16) too large to widen whole is widened per column panel (its NR columns
    over the K-block, vector conversions along k) before the panel's row blocks
    read it: a conversion per vector of elements and panel instead of a broadcast
    and a conversion per element and row block (`widen_panels_pay`)."""
    prefetch: int = 0
    """K steps ahead whose run of X the copy into the packed X prefetches as it
    copies a step's run (0: none): X from memory in short runs a page or more
    apart (`prefetch_pays`)."""

    def panel_columns(self, nv: int, nu: int, transposing: bool, width: int,
                      span: int) -> int:
        """The most columns of a Y panel any register block of an nv x nu tile takes
        (the layouts of its M-blocks of `span` K steps, as the emitter walks them)."""
        rows = self.m_block(nv, width, span)
        extents = {rows, nv % rows} - {0}
        return max(nr for extent in extents
                   for seg in self.layout(extent, nu, transposing) for _, _, nr in seg.columns)

    def k_steps(self, shape: GemmShape) -> tuple[int, int]:
        """(batches, k) per K-block, all of K when there is one."""
        return self.k_block if self.k_block != (0, 0) else (shape.batch, shape.k)

    def transposes_c(self, c_v: int, c_u: int) -> bool:
        """C, at strides (c_v, c_u) along (V, U), is accessed in L x L squares
        transposed in registers: it is contiguous along U, not V."""
        return self.transpose_c and c_v != 1 and c_u == 1 and self.lanes > 1

    def m_block(self, rows: int, width: int, span: int) -> int:
        """Rows of X per M-block: all `rows` when X is read in place, else as many
        row blocks of `span` K steps as the scratch buffer holds (one at least)."""
        if not self.pack:
            return rows
        height = self.vectors * self.lanes
        return min(rows, max(height, self.scratch_bytes // width // span // height * height))

    def layout(self, rows: int, columns: int, transposing: bool) -> list[Segment]:
        """The segments of `rows` along V and the column ranges of `columns` along U
        (`outer_layout` with this plan's blocks)."""
        return outer_layout(rows, columns, self.lanes, self.vectors, self.columns,
                            transposing, self.registers, self.held_y)


# -- blocks -----------------------------------------------------------------------------


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


def widest_columns(vectors: int, registers: int, held: bool = False) -> int:
    """NR of a block of `vectors`: MV * NR accumulators, MV loaded vectors and a
    broadcast in the host's vector registers, with three to spare: LLVM's scheduler
    loads broadcasts ahead of their FMAs, and a 1 x 14 block on 16 ymm registers
    spilled accumulators to the stack (2 x 6 and 3 x 4 do not). With `held` (Y
    constant along k, a stride-0 view) LLVM hoists each column's broadcast out of
    the k loop into a register of its own: a 2 x 14 block of such a `bij,bjk->bik`
    spilled 28 accumulators' worth of loads and stores per k step."""
    return max(1, (registers - max(4, vectors + 1)) // (vectors + held))


def column_ranges(extent: int, width: int, columns: int,
                  across: bool) -> tuple[tuple[int, int, int], ...]:
    """(start, stop, NR) covering [0, extent) of U: blocks of `columns`, then one of
    the rest (`across`: C transposed in squares of `width`, so NR is a multiple of
    it and the columns left over (< width) are a last block of their own)."""
    if across:
        nr = max(width, columns // width * width)
        cuts = [extent // nr * nr]
        cuts.append(cuts[0] + (extent - cuts[0]) // width * width)
    else:
        nr = max(1, min(columns, extent))
        cuts = [extent // nr * nr]
    ranges: list[tuple[int, int, int]] = []
    low = 0
    for high in [*cuts, extent]:
        if high > low:
            ranges.append((low, high, nr if low == 0 and high == cuts[0] else high - low))
        low = max(low, high)
    return tuple(ranges)


def outer_layout(nv: int, nu: int, lanes: int, vectors: int, columns: int,
                 transposing: bool, registers: int, held: bool = False) -> list[Segment]:
    """The segments of V and column ranges of U of an outer-product tile whose main
    blocks are `vectors` x `columns` (`transposing`: C contiguous along U, squares
    transposed in registers, so NR is a multiple of the segment's lanes; `held`:
    see `widest_columns`)."""
    segments = []
    for start, stop, width, mv in row_segments(nv, lanes, vectors):
        nr = (columns if (width, mv) == (lanes, vectors)
              else widest_columns(mv, registers, held))
        ranges = column_ranges(nu, width, nr, transposing and width > 1)
        segments.append(Segment(start, stop, width, mv, ranges))
    return segments


def register_blocks(nv: int, nu: int, lanes: int, registers: int,
                    transposing: bool, held: bool = False) -> list[tuple[int, int]]:
    """Candidate (MV, NR) main blocks: for 1 to 4 vectors, the widest NR that fits the
    registers and the narrower ones that still hold FMA_PORTS * FMA_LATENCY
    accumulators (enough to hide the FMA latency), so the cost model can trade
    block size against the blocks the extents leave at the edges. With one or two
    columns (a GEMV) four vectors hold too few accumulators: up to as many as
    hide the latency."""
    blocks = []
    whole = max(1, nv // lanes)
    most = 4 if lanes > 1 else 1
    if lanes > 1 and most * nu < FMA_PORTS * FMA_LATENCY:
        # MV * NR accumulators, MV loaded vectors, a broadcast and three to spare
        most = max(most, min(-(-FMA_PORTS * FMA_LATENCY // nu), (registers - 4) // (nu + 1)))
    for vectors in range(1, most + 1):
        if vectors > whole:
            break
        widest = widest_columns(vectors, registers, held)
        if transposing:
            widest = widest // lanes * lanes
            candidates = [widest] if widest else []
        else:
            widest = min(widest, nu)
            enough = min(widest, -(-FMA_PORTS * FMA_LATENCY // vectors))
            candidates = list(range(widest, enough - 1, -1))
        blocks += [(vectors, columns) for columns in candidates]
    return blocks


def k_blocking(shape: GemmShape, columns: int, width: int, l1d: int) -> tuple[int, int]:
    """(batches, k) per K-block: the most K steps whose Y panel (`columns` x the
    steps) fills at most 3/4 of the L1d (`l1d` bytes); (batch, k) when all of K does.

    As in BLIS's analytical model (Low et al., TOMS 2016), the panel may take all
    but two ways of an 8-way L1d (x86's are 8- to 12-way), which the X vectors
    streamed from L2 and C's block share. Half the L1d cut the spec's BRGEMM in
    FP64 (a 24 KiB panel) into two K-blocks, which ran 3-9% slower on the AVX2
    EPYC host (three runs)."""
    s = shape
    target = max(1, l1d * 3 // 4 // (columns * width))
    if s.k * s.batch <= target:
        return (s.batch, s.k)
    if s.k <= target:
        group = max(d for d in range(1, s.batch + 1) if s.batch % d == 0 and d * s.k <= target)
        return (group, s.k)
    chunks = -(-s.k // target)
    return (1, -(-s.k // chunks))


# -- the cost model ---------------------------------------------------------------------


def scattered(rows: int, k_stride: int, batch_stride: int, batches: int, steps: int,
              width: int) -> float:
    """The penalty per load of an X micro-panel read in place (`rows` unit-stride
    elements per K step, `steps` k steps in each of `batches` batches): 0, or
    SCATTER_PENALTY when it spans more than TLB_PAGES pages, CONFLICT_PENALTY when
    its K steps also fall into one L1 set (a k stride that is a multiple of PAGE).
    K steps less than a page apart in one run (one batch, or batches back to back)
    are one stream at one stride, through its pages in order, whatever their count:
    0 (a BF16 GEMV on a transposed 457 x 712 matrix, k steps 914 bytes apart, ran
    twice as fast read in place as packed: README, Benchmarks)."""
    step = abs(k_stride) * width
    if step < PAGE and (batches == 1 or abs(batch_stride) == abs(k_stride) * steps):
        # ... unless those K steps crowd into a few L1 sets, which the stream then
        # sweeps, evicting the Y panel that shares them (`CROWDED_SETS`)
        return SCATTER_PENALTY if crowded(rows, step, steps, width) else 0.0
    if step >= PAGE:
        pages = steps
    else:
        pages = -(-((steps - 1) * step + rows * width) // PAGE)
    pages *= batches if abs(batch_stride) * width >= pages * PAGE else 1
    if pages <= TLB_PAGES:
        return SCATTER_PENALTY if crowded(rows, step, steps, width) else 0.0
    return CONFLICT_PENALTY if step and step % PAGE == 0 else SCATTER_PENALTY


def crowded(rows: int, step: int, steps: int, width: int) -> bool:
    """Whether the `steps` K steps of an X micro-panel read in place, `rows` elements
    each and `step` bytes apart, fall into at most `CROWDED_SETS` L1d sets over
    more than `CROWDED_SPAN` bytes: a stride that is a multiple of half a page puts
    every step's lines into the same two or four sets."""
    if steps * step <= CROWDED_SPAN:
        return False
    lines = -(-rows * width // LINE)
    return PAGE // gcd(step, PAGE) * lines <= CROWDED_SETS


def step_cycles(vectors: int, columns: int, lanes: int, gather: bool, penalty: float,
                stride: int = 0, converts: bool = False) -> float:
    """Cycles of one K step of a block: its FMAs (and, where X is f16 read in place,
    a conversion per X vector on the same pipes: `converts`), its loads (X
    gathered: a load and a lane insert per lane; at a small `stride` (`stepped`),
    that many loads and one shuffle fewer, on the two vector ALU ports) and the
    FMA latency bound, whichever is longest, plus `penalty` per X load."""
    fmas = vectors * columns + (vectors if converts else 0)
    x_loads = vectors * (lanes if gather and lanes > 1 else 1)
    inserts = x_loads if gather and lanes > 1 else 0
    if gather and lanes > 1 and stepped(stride):
        x_loads, inserts = vectors * stride, vectors * (stride - 1) / 2
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

FIRST_READ = {32: 4.0, 64: 0.5}
"""Extra cycles per vector of an X block larger than half the L1d that is read in
place from scattered memory, by the host's vector bytes: its first column panel
reads it one line per K step and row block, at the latency of wherever X is,
where packing reads it in order but as a pass of its own, not overlapped with
the FMAs. Calibrated on one host of each kind, with the spec's BRGEMM at p32
q64 r32 s64 t8 u64 (batches 512 KiB apart, 64 columns: the packed panel serves
five column blocks): on the AVX2 host (Zen 3) it ran 13% faster packed in FP32,
24% in FP64; on the AVX-512 host (Zen 5), whose prefetchers keep up with one
line per vector, 17% faster read in place in FP32, 10% in FP64, while the
same A under 2048 columns (einsum's record of that contraction, where the
panel serves 157 column blocks) ran 5% faster packed in FP64. An X whose K
steps follow at one stride (one batch, or batches back to back) streams
through the hardware's stride prefetchers and pays nothing: packing it only
cost time (128^3 GEMM on the AVX2 EPYC host: 56% of the FP64 peak packed, 78%
read in place; FP32 62% / 82%)."""

SCATTERED_LINE = 7.0
"""Extra cycles per 64-byte line of X read in place when its micro-panels span more
pages than the TLB holds (`scattered`): each K step is a stream of its own, more
than the prefetchers follow, so each line's first read waits for memory. Set on
`dca,bd->cab` (m = 39597 fused, n = 13, k = 201, k steps 158 KB apart, X 32 MB,
one column panel): read in place it took about 7 cycles a line more than packed
on the AVX-512 host (README, Benchmarks: TCCG); any value from 2 up packs that
tile on both pinned hosts."""

PREFETCH_STEPS = 2
"""K steps ahead the copy of an X whose K steps lie a page or more apart prefetches
(`GemmPlan.prefetch`): each step's run is a stream of its own, more of them than
the hardware prefetchers follow, so the copy waited for memory at every run's
first lines (`dca,bd->bca`'s X, 39597 x 201 FP64 with steps 310 KiB apart, copied
in runs of 160 elements: of 2, 4 and 8 steps ahead, 2 was fastest; README,
Benchmarks)."""

PREFETCH_RUN = 8192
"""Bytes from which the run a copied K step reads is long enough for the hardware
prefetchers to follow it themselves (`prefetch_pays`)."""


def prefetch_pays(s: GemmShape, plan: GemmPlan, width: int, stored: int, machine: Host,
                  from_memory: bool) -> bool:
    """Whether the copy into `plan`'s packed X prefetches its runs (`PREFETCH_STEPS`):
    X comes from memory (the configuration's inputs, or a tile spread over more
    than the caches hold), its K steps lie a page or more apart, and each step's
    run is shorter than `PREFETCH_RUN`. Where the caches hold X, or its runs are
    long (`eb,aecd->abcd`'s 1444 elements back to back), the prefetches only
    took issue slots: TCCG 10 and 14 ran 5-18% slower with them (README,
    Benchmarks)."""
    o = Oriented.of(s, plan.vector)
    batches, steps = plan.k_steps(s)
    run = plan.m_block(o.nv, width, batches * steps) * stored
    return (abs(o.x_k) * stored >= PAGE and run < PREFETCH_RUN
            and not x_cached(s, o, stored, machine, from_memory))


PACK_CYCLES = {"copy": lambda lanes: 1, "gather": lambda lanes: lanes + 1,
               "transpose": lambda lanes: 1 + (lanes.bit_length() - 1)}
"""Cycles per vector of X packed: a load and a store, L loads and inserts and a
store, or a share of an L x L register transpose."""


@dataclass(frozen=True)
class Oriented:
    """A tile as the outer-product kernel with vectors along V sees it: the extents
    of V and U, the strides of X (along V, k, batch) and Y (along U, k, batch), and
    C's (along V, U). C = A B and C^T = B^T A^T are the same sums: V = m takes
    X = A, Y = B; V = n swaps the roles of (A, m) and (B, n)."""

    nv: int
    nu: int
    x_free: int
    x_k: int
    x_batch: int
    y_free: int
    y_k: int
    y_batch: int
    c_v: int
    c_u: int

    @staticmethod
    def of(s: GemmShape, along: str) -> Oriented:
        """The tile with vectors along `along` ("m" or "n")."""
        (a_m, a_k), (b_k, b_n), (c_m, c_n) = s.a_strides, s.b_strides, s.c_strides
        if along == "m":
            return Oriented(s.m, s.n, a_m, a_k, s.batch_a, b_n, b_k, s.batch_b, c_m, c_n)
        return Oriented(s.n, s.m, b_n, b_k, s.batch_b, a_m, a_k, s.batch_a, c_n, c_m)


def x_cached(s: GemmShape, o: Oriented, stored: int, machine: Host,
             from_memory: bool) -> bool:
    """Whether the caches hold X: not when the configuration's inputs come from
    memory at every call (`from_memory`: a tile's X too, whatever its span; the
    8 x 1024 x 4096 FP32 GEMM's 4 MB tiles of B, k steps 16 KiB apart, ran 2.1x
    faster packed), else when the bytes from its first element to its last (what
    its reads are spread over; a tile of a larger tensor whose k steps lie far
    apart spans much of it) are at most half the last-level cache."""
    if from_memory:
        return False
    last = (o.nv - 1) * abs(o.x_free) + (s.k - 1) * abs(o.x_k) + (s.batch - 1) * abs(o.x_batch)
    return (last + 1) * stored <= machine.l3 // 2


def _outer_plans(s: GemmShape, along: str, width: int, zero_first: bool,
                 machine: Host, stored: int, converts: bool = False,
                 from_memory: bool = False) -> list[GemmPlan]:
    """Every outer-product plan with vectors along `along` (see the module doc);
    `stored`: bytes of an element in memory (X read in place), `width` those of
    the arithmetic type (packed X, accumulators); `converts`: X read in place needs
    a conversion per vector (f16), which packing does once; `from_memory`: the
    configuration's inputs come from memory at every call (`_outer_cycles`)."""
    o = Oriented.of(s, along)
    if o.nv < 2:
        return []
    registers = machine.vector_registers
    lanes = lanes_for(o.nv, width, machine, 2)
    transposing = TRANSPOSE_C and o.c_v != 1 and o.c_u == 1
    packs = ["", "copy" if o.x_free == 1 else "transpose" if o.x_k == 1 else "gather"]
    # Y with general strides (no unit-stride role axis) may be packed per panel
    y_packs = [False, True] if o.y_k != 1 and o.y_free != 1 and o.nu > 1 else [False]
    held = o.y_k == 0 and s.k > 1  # Y's broadcasts stay in registers (widest_columns)
    plans = []
    for vectors, columns in register_blocks(o.nv, o.nu, lanes, registers, transposing,
                                            held):
        k_block = k_blocking(s, columns, width, machine.l1d)
        k_blocks = s.batch // k_block[0] * -(-s.k // k_block[1])
        segments = outer_layout(o.nv, o.nu, lanes, vectors, columns, transposing, registers,
                                held)
        # X read by one column panel (a GEMV: U = 1) is read once: packing would
        # only add a copy of it, unless its micro-panels are scattered over more
        # pages than the TLB holds and X is larger than half the last-level cache
        # (each K step a stream of its own from memory: the first read runs at
        # memory latency, the packing streams it in order). An X the caches hold
        # is read in place: a 16-bit 4096 x 256 GEMV with k steps 8 KB apart ran
        # twice as fast read in place as packed (whose copy walks the same pages).
        scattered_x = o.x_free == 1 and scattered(
            vectors * lanes, o.x_k, o.x_batch, k_block[0], k_block[1], stored) > 0 and (
            not x_cached(s, o, stored, machine, from_memory))
        for pack in packs if o.nu > columns or scattered_x else packs[:1]:
            for pack_y in y_packs:
                cycles = _outer_cycles(s, o, segments, pack, k_block, stored, machine,
                                       zero_first and k_blocks == 1, transposing,
                                       converts, from_memory)
                cycles += _y_cycles(s, o, segments, k_block, width, machine.l1d, pack_y)
                plans.append(GemmPlan(
                    "outer", along, lanes, cycles / (s.m * s.n * s.k * s.batch), vectors,
                    columns, pack, k_block if k_blocks > 1 else (0, 0), TRANSPOSE_C,
                    **_host_fields(machine), pack_y=pack_y, held_y=held))
    return plans


LINE = 64
"""Bytes per cache line."""

Y_MISS = 2.0
"""Extra cycles per broadcast of a Y element read in place when the lines of a Y
panel (NR columns x the K-block, general strides) do not fit 3/4 of the L1d: it
comes from L2 at every row block after the first."""

PREFETCH_STREAMS = 16
"""Lines a panel's columns may start in per k step before its broadcasts outrun the
hardware prefetchers (which follow about 16 streams on x86 cores): a stepped GEMV
(`j,ij->i`) ran twice as fast in the dot kernel as in 28 scalar columns of one row
each (README, Benchmarks)."""

PACK_Y = 1.5
"""Cycles per Y element packed: a scalar load and store (two pipes each), its
conversion, the loop."""


L1_WAYS = 8
"""Lines one L1d set holds (the fewest of the hosts TEIR plans for)."""


def set_conflicts(columns: int, stride: int, width: int) -> bool:
    """Whether `columns` lines `stride` elements apart are more than one L1d set
    holds: their starts one SET_SPAN (or a multiple) apart all map to one set."""
    step = abs(stride) * width
    if step < LINE:
        return False
    apart = SET_SPAN // gcd(step, SET_SPAN)  # columns until the sets repeat
    return -(-columns // apart) > L1_WAYS


def _y_cycles(s: GemmShape, o: Oriented, segments: list[Segment], k_block: tuple[int, int],
              width: int, l1d: int, pack: bool) -> float:
    """What Y adds to a tile: with general strides, the packing of each column panel
    once per segment, or the misses of its broadcasts when read in place; Y
    contiguous along k whose columns start a multiple of SET_SPAN apart, more of
    them than an L1d set holds (`ij,jk->ik` with rows of A 4 KiB long: 27
    columns, every broadcast a miss), the misses."""
    along_k = o.y_k == 1 and o.y_free != 1 and not pack
    if not along_k and not (o.y_k != 1 and o.y_free != 1):
        return 0.0
    columns = max(nr for seg in segments for _, _, nr in seg.columns)
    broadcasts = sum((seg.stop - seg.start) // seg.height * (high - low)
                     for seg in segments for low, high, _ in seg.columns) * s.k * s.batch
    if along_k:
        return broadcasts * Y_MISS if set_conflicts(columns, o.y_free, width) else 0.0
    batches, steps = k_block
    if pack:
        return len(segments) * o.nu * s.k * s.batch * PACK_Y

    def lines_along(count: int, stride: int) -> int:
        """Cache lines `count` elements `stride` elements apart span (a line each when
        a line or more apart)."""
        step = abs(stride) * width
        return count if step >= LINE else max(1, -(-count * step // LINE))

    if lines_along(columns, o.y_free) > PREFETCH_STREAMS:
        return broadcasts * Y_MISS  # more streams than the prefetchers follow
    lines = batches * lines_along(steps, o.y_k) * lines_along(columns, o.y_free)
    if lines * LINE <= l1d * 3 // 4:
        return 0.0
    # the first row block reads each element of Y once from memory whatever the
    # layout (so does the packing): the misses are the re-reads of the others
    return max(0, broadcasts - o.nu * s.k * s.batch) * Y_MISS


def _outer_cycles(s: GemmShape, o: Oriented, segments: list[Segment], pack: str,
                  k_block: tuple[int, int], stored: int, machine: Host, stores_only: bool,
                  transposing: bool, converts: bool = False,
                  from_memory: bool = False) -> float:
    """The cycles of the whole tile with X packed as `pack` says (`stored`: bytes of
    an element of X in memory). The first segment holds the main blocks
    (register_blocks takes no more vectors than V holds)."""
    batches, steps = k_block
    main = segments[0]
    gather = o.x_free != 1 and not pack
    penalty = 0.0
    # X read by one column panel is read once: K steps in one L1 set evict nothing
    # it reads again, and an X the caches hold waits for no memory
    once = o.nu <= main.columns[0][2]
    x_block = o.nv * batches * steps * stored  # bytes of X a row-block pass reads
    cached = once and x_cached(s, o, stored, machine, from_memory)
    if o.x_free == 1 and not pack:
        penalty = scattered(main.height, o.x_k, o.x_batch, batches, steps, stored)
        penalty = min(penalty, SCATTER_PENALTY) if once else penalty
        if (not once and machine.splits_line_loads and main.lanes * stored >= LINE
                and x_block > machine.l1d // 2):
            penalty += SPLIT_PENALTY
    # X in place at a small stride: stepped loads where V has more than one vector
    # (a vector that starts and ends V is gathered: `GemmEmitter.k_step`)
    stride = o.x_free if o.nv > main.lanes else 0
    # the batches of a block run as one loop when they follow each other on both
    # operands (a packed X always does); else each batch exits a k loop
    fused = batches == 1 or s.k <= UNROLLED or (
        o.y_batch == o.y_k * s.k and (pack or o.x_batch == o.x_k * s.k))
    k_blocks = s.batch // batches * -(-s.k // steps)
    cycles = 0.0
    for seg in segments:
        row_blocks = (seg.stop - seg.start) // seg.height
        for low, high, nr in seg.columns:
            blocks = row_blocks * ((high - low) // nr)
            step = step_cycles(seg.vectors, nr, seg.lanes, gather, penalty, stride,
                               converts and not pack)
            if transposing and seg.lanes > 1 and nr % seg.lanes == 0:
                step += TRANSPOSED_C_STEP
            c = c_cycles(seg.lanes, nr, o.c_v == 1, transposing, stores_only)
            cycles += blocks * (s.k * s.batch * step + k_blocks * seg.vectors * nr * c)
            if not fused:
                cycles += blocks * s.batch * LOOP_EXIT
    x_vectors = o.nv * s.k * s.batch / main.lanes
    # a page or more between k steps: each a stream of its own, more of them than the
    # prefetchers follow (`ea,ebcd->abcd` 43 x 54872 x 43, 43 k steps 219 KB apart:
    # 1.6x as fast packed on Zen 4: README, Benchmarks: TCCG)
    streams = (o.x_free == 1 and not pack and abs(o.x_k) * stored >= PAGE
               and steps > PREFETCH_STREAMS)
    # inputs the caches do not keep from call to call (`streamed_in`): X read in place
    # by several column panels waits for memory in the k loop at each line's first
    # read, where the packing reads it ahead with many lines in flight (101 x 9999 x
    # 99 FP64, X = B: 5.8 -> 4.5 ms packed on Zen 4; README, Benchmarks)
    first_reads = from_memory and o.x_free == 1 and not pack and not once
    if (penalty or streams or first_reads) and not cached:
        # read in place from scattered pages: the first read of each line waits
        cycles += x_vectors * SCATTERED_LINE * machine.vector_bytes / LINE
    if gather and set_conflicts(main.height, o.x_free, stored):
        # the rows a register block gathers from start a multiple of SET_SPAN apart:
        # more lines than one L1d set holds, every gathered element a miss
        # (`ij,jk->ik` 512 x 2048 x 16, A's columns gathered 8 KiB apart)
        cycles += x_vectors * main.lanes * Y_MISS * max(1, o.nu // main.columns[0][2])
    if pack:
        cycles += x_vectors * (PACK_CYCLES[pack](main.lanes) + (1 if converts else 0))
    elif (o.x_free == 1 and x_block > machine.l1d // 2
          and s.batch > 1 and o.x_batch != o.x_k * s.k):
        cycles += x_vectors * FIRST_READ[min(64, max(32, machine.vector_bytes))]
    return cycles


def dot_block(registers: int) -> tuple[int, int]:
    """MR x NR of the dot kernel: MR * NR accumulators, MR loaded A rows, one B column."""
    return (4, 6) if registers >= 32 else (3, 4)


STEPPED_MAX = 6
"""Strides along k (elements) up to this many are read as that many contiguous
vectors regrouped by shuffles (`emit.load_stepped`, the dot kernel), wider ones
gathered lane by lane."""


def stepped(stride: int) -> bool:
    """Whether the dot kernel reads vectors along k at `stride` by `load_stepped`."""
    return 2 <= stride <= STEPPED_MAX


PACK_ELEMENT = 2.0
"""Cycles per element of the dot kernel's packing: a scalar load, conversion and
store of the stepped operand into its k-contiguous copy."""


def _dot_plan(s: GemmShape, width: int, machine: Host) -> GemmPlan:
    """The dot kernel's plan: the cheaper of reading both operands in place and,
    when one is read stepped or gathered along k, copying that one once per tile
    k-contiguous (`pack = "copy"`): its steps are then a load each, where in
    place each row block of the other re-reads and re-shuffles them."""
    plans = [_dot_cost(s, width, machine, "")]
    a_k, b_k = s.a_strides[1], s.b_strides[0]
    free = s.m if s.strided_k == "a" else s.n
    if (a_k not in (0, 1) or b_k not in (0, 1)) and (
            s.batch * s.k * free * width <= machine.scratch_bytes):
        plans.append(_dot_cost(s, width, machine, "copy"))
    return min(plans, key=lambda plan: plan.cost)


def _dot_cost(s: GemmShape, width: int, machine: Host, pack: str) -> GemmPlan:
    """The dot kernel's plan with `pack`: per block and batch, k / L steps of MR + NR
    loads and MR * NR FMAs, the gathered k remainder; the reduction (about 3 ops
    per accumulator) and C's update (about 4 per element) once per block; with
    `pack`, PACK_ELEMENT per element of the copied operand."""
    lanes = lanes_for(s.k, width, machine)
    mr, nr = dot_block(machine.vector_registers)
    steps, rest = divmod(s.k, lanes)
    a_k, b_k = s.a_strides[1], s.b_strides[0]
    packed = s.strided_k
    # a vector along k: one load at unit stride or stride 0 (one element
    # broadcast); at a small stride that many loads and one shuffle fewer
    # (`STEPPED_MAX`); else a gather: a load per lane, and a lane insert per lane;
    # shuffles and inserts on the two vector ALU ports that FMAs leave free in a
    # load-bound step
    (a_loads, a_shuffles), (b_loads, b_shuffles) = (
        (1, 0) if stride in (0, 1) or pack and side == packed
        else (stride, stride - 1) if stepped(stride)
        else (lanes, lanes - 1) for side, stride in (("a", a_k), ("b", b_k)))
    cycles = PACK_ELEMENT * s.batch * s.k * (s.m if packed == "a" else s.n) if pack else 0.0
    for rows in (mr,) * (s.m // mr) + ((s.m % mr,) if s.m % mr else ()):
        for cols in (nr,) * (s.n // nr) + ((s.n % nr,) if s.n % nr else ()):
            loads = rows * a_loads + cols * b_loads
            inserts = (rows * a_shuffles + cols * b_shuffles) / 2
            step = max(rows * cols / FMA_PORTS, loads / LOAD_PORTS, inserts, FMA_LATENCY)
            gathered = rest * (rows + cols) + step if rest else 0
            cycles += s.batch * (steps * step + gathered) + 7 * rows * cols
    return GemmPlan("dot", "k", lanes, cycles / (s.m * s.n * s.k * s.batch), mr, nr, pack,
                    **_host_fields(machine))


def _scalar_plan(s: GemmShape, along: str, width: int, zero_first: bool,
                 machine: Host) -> GemmPlan:
    """Scalar register blocks of one row by the widest NR columns."""
    registers = machine.vector_registers
    nv, nu = (s.m, s.n) if along == "m" else (s.n, s.m)
    columns = max(1, min(nu, widest_columns(1, registers)))
    batches, steps = k_blocking(s, columns, width, machine.l1d)
    k_blocks = s.batch // batches * -(-s.k // steps)
    cycles = 0.0
    segments = outer_layout(nv, nu, 1, 1, columns, False, registers)
    for seg in segments:
        for low, high, nr in seg.columns:
            blocks = (seg.stop - seg.start) * ((high - low) // nr)
            cycles += blocks * (s.k * s.batch * step_cycles(1, nr, 1, False, 0.0)
                                + k_blocks * nr * (1 if zero_first and k_blocks == 1 else 2))
    # Y with general strides, read in place: its broadcasts miss the L1d as in
    # the vector kernels (`_y_cycles`)
    cycles += _y_cycles(s, Oriented.of(s, along), segments, (batches, steps), width,
                        machine.l1d, False)
    return GemmPlan("outer", along, 1, cycles / (s.m * s.n * s.k * s.batch), 1, columns, "",
                    (batches, steps) if k_blocks > 1 else (0, 0),
                    **_host_fields(machine))


TWO_VECTOR_MARGIN = 1.02
"""Plans within 2% of the cheapest: the block of two vectors wins (BLIS's shape on
every x86 core since Haswell: 2 x 6 with 16 registers, 2 x 12-14 with 32). The
model cannot tell 2 x 6 from 3 x 4 apart on the AVX2 host (llvm-mca: both at one
FMA per pipe and cycle); timings there were within their noise."""


def _preference(plan: GemmPlan) -> float:
    return plan.cost * (1.0 if plan.vectors == 2 or plan.kernel == "dot" else TWO_VECTOR_MARGIN)


def widen_pays(plan: GemmPlan, s: GemmShape, width: int) -> bool:
    """Whether Y of a 16-bit tile is widened whole (`GemmPlan.widen_y`): the outer
    kernel with vectors, one K-block, Y with a unit stride (read in place), and the
    widened Y within half the scratch budget. Widening costs about one vector
    load, conversion and store per L elements of Y, once; a 16-bit broadcast costs
    a conversion per column and K step of every row block."""
    if plan.kernel != "outer" or plan.lanes == 1 or plan.pack_y or plan.k_block != (0, 0):
        return False
    o = Oriented.of(s, plan.vector)
    return (1 in (o.y_k, o.y_free)
            and o.nu * s.k * s.batch * width <= widened_bytes(plan.scratch_bytes))


def widen_panels_pay(plan: GemmPlan, s: GemmShape, width: int) -> bool:
    """Whether Y of a 16-bit tile that is not widened whole is widened per column
    panel (`GemmPlan.widen_panels`): the outer kernel with vectors, one K-block, Y
    contiguous along k (a column's K steps are whole vectors), and a panel within
    half the scratch budget."""
    if plan.kernel != "outer" or plan.lanes == 1 or plan.pack_y or plan.k_block != (0, 0):
        return False
    o = Oriented.of(s, plan.vector)
    span = s.k * s.batch
    columns = plan.panel_columns(o.nv, o.nu, plan.transposes_c(o.c_v, o.c_u), width, span)
    return o.y_k == 1 and columns * span * width <= widened_bytes(plan.scratch_bytes)


def widens_before_fmas(element: str, machine: Host | None = None) -> bool:
    """`Host.widens_before_fmas` for the emitter, which reads the host only through
    the planner: `plan_gemm`'s `converts` for a tile stored as `element`."""
    return (machine or host()).widens_before_fmas(element)


def plan_gemm(shape: GemmShape, width: int, zero_first: bool = False, *,
              narrow_c: bool = False, converts: bool = False,
              machine: Host | None = None, stored: int = 0,
              from_memory: bool = False) -> GemmPlan:
    """The cheapest kernel for `shape` by the estimates above (see the module doc).

    `width`: bytes of the arithmetic type; `zero_first`: a fused Zero spares
    reading C; `narrow_c`: C is stored in a narrower type than the accumulators
    (one K-block); `converts`: a broadcast element of Y needs a conversion on the
    FMA pipes (`Host.widens_before_fmas`: f16's vcvtph2ps; bf16's shuffles on hosts
    where they take FMA ports, elsewhere they run beside the FMAs), so Y is
    widened once when it fits (`widen_pays`), and each vector of X read in place
    needs one on the FMA pipes, which a packed X pays once. `machine` defaults to `teir_dialect.host.host()`.
    `stored`: bytes of an element in memory where that is not `width` (f16 and
    bf16 compute in f32): X's addresses read in place (pages, lines) follow it.
    `from_memory`: the configuration's inputs come from memory at every call
    (teir-mark-streamed-out's `streamed_in`).
    """
    s = shape
    machine = machine or host()
    stored = stored or width
    plans = _outer_plans(s, "m", width, zero_first, machine, stored, converts, from_memory)
    plans += _outer_plans(s, "n", width, zero_first, machine, stored, converts, from_memory)
    a_k, b_k = s.a_strides[1], s.b_strides[0]
    if s.k >= MIN_LANES and (1 in (a_k, b_k) or (s.incb, s.inca) != (1, 1) and (
            a_k, b_k) != (0, 0) and all(stride in (0, 1) or stepped(stride)
                                        for stride in (a_k, b_k))):
        # the dot kernel: A rows and B columns contiguous along k; or one of them,
        # the other read stepped, gathered or broadcast, or copied k-contiguous
        # (`ij,jk->ik` with k = 2 to 16: B's k steps k elements apart); with general
        # strides, neither contiguous but each stepped or broadcast
        plans.append(_dot_plan(s, width, machine))
    # Scalar code, register-blocked: scalars along the shorter free dimension, so
    # that NR columns share each loaded element of the other operand.
    along = "m" if s.m <= s.n else "n"
    scalar = _scalar_plan(s, along, width, zero_first, machine)
    best = min(plans, key=_preference, default=scalar)
    best = best if best.cost < scalar.cost else scalar
    # (the outer kernel's packed X; the dot kernel's copy is made once per tile)
    if (best.kernel == "outer" and best.pack == "copy"
            and prefetch_pays(s, best, width, stored, machine, from_memory)):
        best = replace(best, prefetch=PREFETCH_STEPS)
    # C narrower than the accumulators (f16, bf16) is rounded once, at its one
    # store: one K-block, as a K-blocked tile would round its partial sums; its Y
    # (of the same 16-bit type) is widened once when that fits
    if not narrow_c:
        return best
    best = replace(best, k_block=(0, 0))
    whole = converts and widen_pays(best, s, width)
    return replace(best, widen_y=whole,
                   widen_panels=converts and not whole and widen_panels_pay(best, s, width))
