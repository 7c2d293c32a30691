"""Vector code for the element-wise tile primitives: Zero, Copy and ReLU.

`emit_tile_primitive` is the hook of `teir-to-scf`: for a Zero, Copy or ReLU
tile it emits scf/arith/memref/vector loops and returns True, or returns False
(having emitted nothing) to leave the tile to the scalar loops. Two layouts
qualify, both only when the tile writes each out element once
(`teir_dialect.analysis.disjoint_windows`; then the order in which elements
are written does not matter, as in teir-to-scf's `order_for_out`):

- contiguous: the axis with the smallest out stride has unit stride on out and
  on the source (Copy and ReLU: in0, or out for the in-place ReLU; Zero reads
  nothing), over at least `MIN_LANES` elements. Axes that continue it
  contiguously on both tensors are merged into one run. A run is done with
  full vectors of the host's width, then single narrower vectors (down to 16
  bytes) and the last few elements as scalars; explicit vectors, rather than
  whatever LLVM's loop vectorizer makes of scalar loops.
- transposing (Copy and the unary ReLU): the axis R with unit stride on out and
  another axis C with unit stride on in0, each of at least `MIN_LANES`: rows
  of in0 run along C, rows of out along R, as in a GEMM operand layout
  (`teir-match-gemm`'s `operand_layout`). The R x C tile is cut into L x L
  blocks (L lanes: 16 f32 or 8 f64 with AVX-512): L rows of in0 are loaded as
  vectors, transposed in registers by log2(L) stages of `vector.shuffle`
  (`teir_lowering.codegen.emit.transpose`: unpack-low/high within 128-bit lanes, then 128-bit-lane
  shuffles, which x86 does with vunpck*/vshuf*), and stored as L rows of out.
  An edge that is not a multiple of L takes one more L x L block flush with
  the tile's end, overlapping the block before it (its elements are written
  twice with the same value; out never overlaps the source), when the
  narrower vectors would leave scalar work (`TileEmitter.overlaps`); else
  it uses L/2, L/4 ... down to 16-byte vectors. A side of 2 to `NARROW_MAX`
  elements (fewer than L; or fewer than a 16-byte vector holds, where no
  block fits: 7 in a 16-bit type) whose rows lie back to back, on in0 (an image's
  pixels of a few channels to planes) or on out (the inverse), takes the
  narrow forms instead: per L rows one run of k * L elements, its k vectors
  regrouped by two-source shuffles (`TileEmitter.deinterleave`, `interleave`).
  A side of 4 to 7 in a 16-bit type takes 4 x 4 blocks of 8-byte vectors. Other
  tiles narrower than 16 bytes on a side are left to scalar loops (the
  scalar edges of the 5-D and 6-D HPTT permutations, extents such as 22, 26 or
  27, bounded their speed: README, Benchmarks). Blocks walk along the
  rows of in0, or down the rows of out when those lie a power of two apart
  and the stores of a block would crowd a few L1 sets (`TileEmitter.crowded`),
  and on hosts whose scattered partial-line stores stall (`Host.stores_walk_down`)
  when the rows of out lie farther apart than those of in0.
  Where they would fall in one set (two, when in0's rows crowd too) and the rows
  of out are long enough, the tile goes through a buffer in the L1 instead
  (`TileEmitter.staged`): blocks into the buffer, then runs of whole lines out.
  For large outputs, and for crowded tiles whose rows of out are short, the
  blocks store whole cache lines with non-temporal stores
  (`TileEmitter.aligned_tile`, teir-mark-streamed-out's `streamed_out`,
  `TileEmitter.crowded_beyond_l1`), a streamed tile of few rows stores the
  lines of each row of out back to back (`COLUMNS_OUTER_ROWS`), and `einsum`
  allocates results of a MiB or more on a line
  (`teir_dialect.arrays.result_array`). Tiles whose short rows of out crowd one
  or two L1 sets and that an axis widens (`teir-widen-tile`: the tiles of a
  loop that continues their rows of out) go through two buffers in the L1 a
  run of tiles at a time (`TileEmitter.buffered`,
  `teir_dialect.host.buffers_transpose`).

ReLU keeps the reference semantics exactly: `select(x < 0, +0, x)` with an
ordered compare, so -0.0 and NaN pass unchanged (a max would not). Other role
axes of the tile become scalar loops around either form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.ir import Attribute, SSAValue

from teir_dialect.analysis import disjoint_windows
from teir_dialect.dialect import AxisOp, PrimitiveOp
from teir_dialect.host import (
    CACHE_LINE,
    NARROW_MAX,
    SCRATCH_BYTES,
    buffers_transpose,
    crowds,
    host,
    l1_sets,
    lines_apart,
)
from teir_dialect.vocabulary import OperationKind
from teir_lowering.codegen.emit import (
    LoopBody,
    Tile,
    add,
    constant,
    for_loop,
    if_then,
    index,
    lanes_slice,
    load,
    multiple_below,
    relu,
    select_lanes,
    store,
    switch,
    transpose,
    value_type,
)
from teir_lowering.codegen.gemm_plan import MIN_LANES
from teir_lowering.lane import PREFETCH_LOCALITY, LanePrefetchOp
from teir_passes.mark_streamed_out import streamed_out


def _loop(builder: Builder, lower: int | SSAValue, upper: int | SSAValue,
          step: int | SSAValue, body: LoopBody) -> list[SSAValue]:
    """`for_loop`, its vector code unrolled here already (`UNROLLED`); one of a single
    iteration is its body, inline (LLVM's LICM, knowing the trip count, found the
    stores of such a loop invariant and sank them without their non-temporal flag)."""
    if isinstance(lower, int) and isinstance(upper, int) and isinstance(step, int) \
            and lower < upper <= lower + step:
        body(builder, index(builder, lower), [])
        return []
    return for_loop(builder, lower, upper, step, body, unrolled=True)


CROWDED_WALK_BYTES = 1024
"""Rows of out at least this long spread a crowded tile's stores over enough L1
sets (16 lines' positions) as its blocks walk down them (`TileEmitter.crowded`)."""


COLUMNS_OUTER_ROWS = 64
"""Streamed tiles of at most this many rows (one row of in0 each) take their column
blocks outermost and every row of the tile within one (`TileEmitter.aligned_tile`):
the lines of a row of out then leave back to back, where the rows of a tile cut by
`teir_passes.auto_schedule` (`STREAMED_ROW_LINES`) otherwise took a whole walk
over the columns between them (`ab->ba` 4096^2 FP32, FP64). 64 takes in the 16-bit
types' cut (two lines of out are 64 of their rows): `ab->ba` 4096^2 FP16 and BF16
0.71-0.81x the time with 32, 2048 x 4096 0.47-0.66x, `abcd->dcba` 64^4 0.85-0.90x;
FP32 and FP64 the same within 3% (both 16-byte offsets, README, Benchmarks). With
many more rows that order reads too many rows of in0 at once (`ab->ba` 512 x 16384
FP32, 512 rows 64 KiB apart, ran slower). Measured on one host (Zen 5)."""

STAGE_RUN_BYTES = 512
"""The bytes of each row of out a staged tile writes in one go (`TileEmitter.staged`):
eight lines back to back. Stores to 16 rows 4 KiB apart, a line to each in turn,
took 1.8x a copy's time; runs of 4 lines per row 1.2x, of 8 lines 1.06x (a C loop,
1024^2 FP32, Zen 5). Tiles with shorter rows of out are not staged: HPTT's
`abcdef->fedcba` 90 x 12 x 12 x 12 x 4 x 26 (rows of 90 FP32, 26 columns) ran 1.3x
slower staged."""

STAGE_PAD_BYTES = 64
"""The padding after each row of the staging buffer, a line, so that the rows, a power
of two long, do not share the L1 sets that the blocks' stores then crowd."""

BUFFER_BYTES = 20 * 1024
"""The most bytes of each of a buffered tile's two buffers (`TileEmitter.buffered`):
both within a 48 KiB L1 with room for the lines read and written. Not scaled
to the host's L1d: on a 32 KiB one (Zen 4) 5/12 of it, 13 KiB, and a stage of
5/6 (`STAGE_BYTES`) ran 10-25% slower (`ab->ba` 512^2 and 1024^2, `bhsd->bhds`
4 x 8 x 512 x 64 FP32): the larger blocks pay for spilling to the L2."""

BLOCK_BUFFER_BYTES = 16 * 1024
"""The most bytes of the buffer a tile whose out is one contiguous block goes through
(`TileEmitter.stream_block`): half a 32 KiB L1d, the rest for the lines of in0."""

PREFETCH_AHEAD = 4 * CACHE_LINE
"""Bytes ahead along in0's rows that a transpose of a large tensor (teir-mark-streamed-out's
`streamed_out`) prefetches each row it loads (`TileEmitter.prefetches`): a tile
walks a block of rows of in0 (a line of out: 16 of FP32, 32 of 16-bit types)
along their length, more streams than the hardware prefetchers follow. With it,
`ab->ba` 704 x 48944 FP16 went from 0.72 to over 1.0 of a copy's bandwidth,
686 x 48944 (shifted lines) from about 0.5 to 0.7, and HPTT's median case
from 0.50 to 0.55 (AMD EPYC Zen 4). Two lines ahead did about as well, eight
and sixteen worse. Also how far along a row of out such a transpose prefetches
the lines it stores plainly where the L3 serves like memory (`TileEmitter.block`;
eight and sixteen lines ahead measured worse there too)."""

L2_LOCALITY = 2
"""The locality of the prefetches of the tiles of a large out (`TileEmitter.prefetches`,
`stream_block`, `emit_contiguous`; 2: `prefetcht1`, to the L2, which keeps
many more misses in flight than the L1). A C model of HPTT's `abcd->abdc` 57 x
57 x 72 x 72 FP32 (a read of each block in the transpose's order, then its
stores streamed, each store prefetching a line of the next block) ran at
15.7 GB/s without the prefetch, 17.6 with it into the L1 (`prefetcht0`) and
25.6 into the L2, 34 when the block's rows lie back to back and its lines go
in order (memcpy: 28-32; AMD EPYC Zen 4). Over HPTT's cases through the
register transposes, the row's prefetch into the L2 and the next tile's
gained 1.24-1.42x (geometric means of two runs; the row's into the L1 alone,
as before: 1.0)."""

RUNS_AHEAD = 8
"""Tiles ahead that a contiguous tile of a large out (`streamed_out`) prefetches its
run into the L2 (`TileEmitter.emit_contiguous`): the loops around such tiles
follow out, so each run of in0 is a stream of its own, too short for the
hardware prefetchers. HPTT's cases whose fastest dimension stays (runs of 52
to 5856 bytes, 64 MiB): geometric mean 1.62 -> 1.87x numpy's time with 8
ahead in two alternating runs; 1, 4, 8 and 16 all gained, 8 the most
(AMD EPYC Zen 4)."""

STREAM_GRANULE = 16
"""Bytes: out's start the streamed transposes need (x86 streams aligned vectors
only; numpy's large buffers sit 16 bytes past a line), else ordinary stores."""

CONSTANT_ROWS_LINE = 16
"""Streamed transposes on a run whose line of out holds this many rows (4-byte
elements) are compiled once per 16-byte offset of out, so that the rows of their
last line are constants (`TileEmitter.aligned_tile`; `abcd->dcba` 64^4 FP32 with
out 16 bytes past a line, as numpy places large arrays). FP16's 32 rows and
FP64's 8 ran at the same speed either way, as did the tiles off a run, and each
variant adds compile time (README, Benchmarks)."""

SHIFTED_PANEL_L2_PART = 8
"""The buffer of `TileEmitter.shifted_tile` takes an eighth of the host's L2 (at most
half the scratch budget): a line of each column of a panel of columns, kept from
one block of rows to the next. In0 is read along its rows a panel wide, so the
wider the panel the longer its reads: `ab->ba` 686 x 24472 FP32 reached 47, 65,
88, 92, 98% of a copy with 4, 8, 16, 32, 128 KiB, and 98% with 256 (beyond a
quarter of the L2 a 1000-row case fell back from 101 to 71%; AMD EPYC Zen 4,
1 MiB L2)."""

STAGE_BYTES = 40 * 1024
"""The most bytes of a staging buffer: within the L1 with room for the lines read.
`ab->ba` 1024^2 FP32 ran 1.2-1.5x faster with 64 columns of out a stage than with 32."""

BlockBody = Callable[[Builder, SSAValue, int], None]
"""Emits one block at c0 with `width` lanes: of a streamed tile's columns, of a
contiguous run (`TileEmitter.vector_blocks`), of a narrow transpose's long side."""

ColumnWalk = Callable[[Builder, BlockBody], None]
"""Emits the blocks that cover a crowded tile's columns (`TileEmitter.column_walk`)."""


@dataclass(frozen=True)
class TileAxis:
    """A role axis of a tile: its extent and its strides (elements) on source and out."""

    size: int
    source: int
    out: int


@dataclass
class Carry:
    """Where a tile is on its run (`Run.carry`), so that its last line of out, when
    out's rows start off a line, holds the first rows of the next tile on the run
    too (`TileEmitter.aligned_tile`)."""

    first: SSAValue  # i1: no tile before this one on the run
    last: SSAValue  # i1: no tile after it
    next_source: SSAValue  # the next tile's row 0 on the source (its own when last)


@dataclass
class Run:
    """The schedule loops around a tile that continue its rows of out (`Run.of`), with
    their induction variables, innermost first, and the element width."""

    loops: list[tuple[AxisOp, SSAValue]]
    width: int

    @staticmethod
    def of(rows: TileAxis, loops: Sequence[tuple[AxisOp, SSAValue]], width: int) -> Run | None:
        """The loops (of `loops`) that each continue the rows of out where the one
        before ends, the first where the tile's rows end, as the loops of a cut row
        (`teir-auto-schedule` cuts the rows of large transposes) and those of the
        axes that follow it on out do; None when no loop continues them."""
        span = rows.size * width
        chain: list[tuple[AxisOp, SSAValue]] = []
        while (found := next(((axis, iv) for axis, iv in loops
                              if axis.stride_on("out") == span and axis.size > 1
                              and all(axis is not a for a, _ in chain)), None)) is not None:
            chain.append(found)
            span *= found[0].size
        if not chain or any(axis.stride_on("in0") < 0 or axis.stride_on("in0") % width
                            for axis, _ in chain):
            return None
        return Run(chain, width)

    def carry(self, builder: Builder, source: SSAValue) -> Carry:
        """The tile's place on the run, emitted where it is used: the next tile is the
        first loop's next iteration, else that of the second with the first back
        at 0, and so on."""

        def all_at(ends: bool) -> SSAValue:
            result: SSAValue | None = None
            for axis, iv in self.loops:
                at = builder.insert(arith.CmpiOp(
                    iv, index(builder, axis.size - 1 if ends else 0), "eq")).result
                result = at if result is None else builder.insert(
                    arith.AndIOp(result, at)).result
            assert result is not None
            return result

        step = index(builder, 0)  # the last tile's: no next one
        back = 0  # source elements from the loops before this one, all at their ends, to 0
        steps = []
        for axis, iv in self.loops:
            stride = axis.stride_on("in0") // self.width
            steps.append((iv, axis.size, stride - back))
            back += (axis.size - 1) * stride
        for iv, size, delta in reversed(steps):
            more = builder.insert(arith.CmpiOp(iv, index(builder, size - 1), "ult")).result
            step = builder.insert(arith.SelectOp(more, index(builder, delta), step)).result
        return Carry(all_at(False), all_at(True), add(builder, source, step))


# -- emission -----------------------------------------------------------------------


class TileEmitter:
    """Emits the vector loops of one Zero/Copy/ReLU tile at given base indices."""

    def __init__(self, kind: OperationKind, element: Attribute, width: int,
                 source: SSAValue | None, out: SSAValue, nontemporal: bool = False):
        self.nontemporal = nontemporal  # may use non-temporal stores (see aligned_tile)
        self.large_output = nontemporal  # out takes half the last-level cache or more
        self.run: Run | None = None  # the loops continuing the tile's rows (aligned_tile)
        self.next_tile = 0  # elements of the source from this tile to the next one run
        self.kind = kind
        self.element = element
        self.width = width
        self.source = source
        self.out = out
        self.lanes = host().lanes(width)
        self.min_lanes = max(2, 16 // width)  # 16-byte vectors
        # the narrowest blocks: 4 x 4 of 16-bit types in 8-byte vectors, so that a side
        # of 4 to 7 (under a 16-byte vector's 8 lanes) is not left to scalar loops
        self.least_lanes = min(self.min_lanes, 4)

    # -- small builders -------------------------------------------------------

    def outer_loops(self, builder: Builder, axes: Sequence[TileAxis], source: SSAValue,
                    out: SSAValue, body: Callable[[Builder, SSAValue, SSAValue], None]) -> None:
        """Scalar loops over `axes` (outermost first) advancing both bases."""
        if not axes:
            body(builder, source, out)
            return
        axis, rest = axes[0], axes[1:]

        def step(b: Builder, iv: SSAValue, _: list[SSAValue]) -> None:
            self.outer_loops(b, rest, add(b, source, iv, axis.source),
                             add(b, out, iv, axis.out), body)

        for_loop(builder, 0, axis.size, 1, step)

    def apply(self, builder: Builder, value: SSAValue) -> SSAValue:
        """The primitive's value for a loaded (vector or scalar) `value`."""
        return relu(builder, value) if self.kind == OperationKind.RELU else value

    def element_op(self, builder: Builder, source: SSAValue | None, out: SSAValue,
                   lanes: int) -> None:
        """One vector (lanes > 1) or scalar of the primitive: out[out] = f(source[source])."""
        if self.source is None or source is None:
            value = constant(builder, value_type(self.element, lanes))
        else:
            value = self.apply(builder, load(builder, self.source, source, lanes))
        store(builder, value, self.out, out)

    # -- contiguous runs ----------------------------------------------------------

    def emit_contiguous(self, builder: Builder, outer: Sequence[TileAxis], run: int,
                        source: SSAValue, out: SSAValue) -> None:
        """Loops over `outer`, each iteration `run` contiguous elements on both tensors;
        with a `next_tile` (out streamed), each run's lines prefetched."""

        def row(b: Builder, src: SSAValue, dst: SSAValue) -> None:
            if self.next_tile and self.source is not None:
                # each line of the run `RUNS_AHEAD` tiles on
                for at in range(0, run * self.width + CACHE_LINE - 1, CACHE_LINE):
                    b.insert(LanePrefetchOp(self.source, add(b, src, at // self.width),
                                            RUNS_AHEAD * self.next_tile, L2_LOCALITY))

            def vectors(vb: Builder, i: SSAValue, lanes: int) -> None:
                self.element_op(vb, add(vb, src, i), add(vb, dst, i), lanes)

            for done in range(self.vector_blocks(b, run, vectors), run):
                self.element_op(b, add(b, src, done), add(b, dst, done), 1)

        self.outer_loops(builder, outer, source, out, row)

    # -- transposes -------------------------------------------------------------------

    def emit_transpose(self, builder: Builder, outer: Sequence[TileAxis], rows: TileAxis,
                       columns: TileAxis, source: SSAValue, out: SSAValue) -> None:
        """Loops over `outer` around the transpose of `rows` (unit stride on out) and
        `columns` (unit stride on the source)."""

        def tile(b: Builder, src: SSAValue, dst: SSAValue) -> None:
            if self.narrow(columns.size, rows, rows.source):
                self.deinterleave(b, rows, columns, src, dst)
            elif self.narrow(rows.size, columns, columns.out):
                self.interleave(b, rows, columns, src, dst)
            elif self.streams(rows, columns):
                self.aligned_tile(b, rows, columns, src, dst)
            elif self.streams_block(rows, columns):
                self.stream_block(b, rows, columns, src, dst)
            elif self.streams_shifted(rows, columns):
                self.shifted_tile(b, rows, columns, src, dst)
            elif self.stages(rows, columns):
                self.staged(b, rows, columns, src, dst)
            elif self.crowded(columns) and self.walks_source_lines(rows, columns):
                self.crowded_walk(b, rows, columns, src, dst)
            else:
                self.whole_region(b, rows, columns, src, dst)

        run = self.buffered_run(outer, rows, columns)
        if run is not None:
            rest = [axis for axis in outer if axis is not run]
            self.outer_loops(builder, rest, source, out, lambda b, src, dst: self.buffered(
                b, rows, columns, run, src, dst))
            return
        self.outer_loops(builder, outer, source, out, tile)

    # -- narrow transposes ---------------------------------------------------------

    def narrow(self, k: int, long: TileAxis, packed: int) -> bool:
        """Whether a transpose whose short side holds `k` elements takes
        `deinterleave`/`interleave`: its rows of k elements lie back to back on the
        tensor where that side has unit stride (`_narrow`: an image's pixels of k
        channels), k is under a vector's lanes, and the long side fills a 16-byte
        vector. Scalar loops did these (a side under 16 bytes), or L x L blocks
        of k lanes at most."""
        narrow = _narrow(k, packed) or (packed == k and 2 <= k < self.min_lanes)
        return (self.source is not None and narrow and k < self.lanes
                and long.size >= self.min_lanes)

    def deinterleave(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """The transpose of rows of in0 k = columns.size elements long that lie back
        to back (`narrow`): per L rows, k vectors loaded from one run of k * L
        elements give the k rows of out L lanes each, lane l of row c being element
        c + k * l of the run (`select_lanes`)."""
        k = columns.size

        def block(b: Builder, r0: SSAValue, lanes: int) -> None:
            run = add(b, source, r0, k)
            loaded = [self.apply(b, load(b, self.source, add(b, run, v * lanes), lanes))
                      for v in range(k)]
            rows_of_out = select_lanes(b, loaded, [
                [divmod(c + k * lane, lanes) for lane in range(lanes)] for c in range(k)])
            for c, value in enumerate(rows_of_out):
                store(b, value, self.out, add(b, add(b, out, r0), c * columns.out))

        done = self.vector_blocks(builder, rows.size, block)
        self.scalar_region(builder, rows, columns, source, out, (done, rows.size), (0, k))

    def interleave(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                   source: SSAValue, out: SSAValue) -> None:
        """The transpose into rows of out k = rows.size elements long that lie back to
        back (`narrow`), the inverse of `deinterleave`: per L columns, the k rows of
        in0 (a vector each) give one run of k * L elements of out, its element e
        lane e // k of row e % k."""
        k = rows.size

        def block(b: Builder, c0: SSAValue, lanes: int) -> None:
            loaded = [self.apply(b, load(b, self.source, add(b, add(b, source, c0),
                                                                r * rows.source), lanes))
                      for r in range(k)]
            run = add(b, out, c0, k)
            vectors = select_lanes(b, loaded, [
                [((v * lanes + lane) % k, (v * lanes + lane) // k) for lane in range(lanes)]
                for v in range(k)])
            for v, value in enumerate(vectors):
                store(b, value, self.out, add(b, run, v * lanes))

        done = self.vector_blocks(builder, columns.size, block)
        self.scalar_region(builder, rows, columns, source, out, (0, k), (done, columns.size))

    def vector_blocks(self, builder: Builder, size: int, block: BlockBody) -> int:
        """`block` over [0, size) (a contiguous run, a narrow transpose's long side):
        the host's lanes, then single blocks of half as many down to 16 bytes;
        returns where they end (scalars after)."""
        done = size // self.lanes * self.lanes
        # (left to LLVM's unroller: a contiguous run's block is one vector, and
        # `abcd->cbad` 72 x 56 x 12 x 347 ran at 0.65 of a copy instead of 0.84
        # with this loop kept from it)
        for_loop(builder, 0, done, self.lanes,
                 lambda b, start, _: block(b, start, self.lanes))
        lanes = self.lanes // 2
        while lanes >= self.min_lanes:
            if size - done >= lanes:
                block(builder, index(builder, done), lanes)
                done += lanes
            lanes //= 2
        return done

    def streams(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether to store whole cache lines non-temporally (see `aligned_tile`)."""
        row_bytes = columns.out * self.width
        line = CACHE_LINE // self.width
        return (
            self.nontemporal
            and CACHE_LINE % (self.lanes * self.width) == 0
            # rows of out of whole lines (one line each, as the 32-row tiles of a
            # 16-bit `abcd->dcba` 32^4, streams too: README, Benchmarks), or of at
            # least a line where the next tile on the run takes the lines across
            and (rows.size % line == 0 or self.run is not None and rows.size >= line)
            and lines_apart(row_bytes, rows.size * self.width, host())
        )

    def aligned_tile(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """The transpose with the rows of out cut at cache-line boundaries.

        Non-temporal stores skip the read-for-ownership of a line only if they
        fill it, and x86 streams aligned vectors only, but numpy's large buffers
        sit 16 bytes past a line. Every row of out has the alignment of the
        first (`streams`), so when the tile's first out address is 16-byte
        aligned, the first `peel` rows of the tile lead up to a line boundary
        and blocks of E = 64 / width rows (a line of out) x lanes columns from
        row `peel` on store whole lines: one vector per line with 64-byte
        vectors, else E / lanes lanes x lanes transposes whose vectors for one
        line are stored back to back (a line written in two halves apart ran
        at half the speed on the AVX2 host: the write-combining buffer is
        flushed half full). As the rows are a multiple of E, the rows left,
        [0, peel) and the last E - peel, make one more block, the edge block:
        its 16-byte pieces are stored back to back (non-temporally too), so
        that each partial line leaves the core in one go; ordinary stores there
        would bring lines in whose sets the tile's other rows keep evicting
        (rows of a tile are often a power of two apart). Where out's rows start
        on a line, the peel is a whole line, through the edge block too: whole
        line blocks from row 0 measured slower, as did walking the columns
        along in0's lines (`abcd->dcba` 64^4, `ab->ba` 4096^2: README,
        Benchmarks). Other starts take ordinary stores. The blocks go a
        row of lines at a time along the columns, or, in tiles of at most
        `COLUMNS_OUTER_ROWS` rows, a column block at a time down every row. The
        streaming stores are fenced once, when the function returns
        (teir-fence-nontemporal-stores).

        On a run (`Run`: loops around the tile continue its rows of out), a
        tile whose rows of out start off a line takes `carried` instead: the
        lines from its first line boundary, the last one holding the next
        tile's first rows, its own first rows left to the tile before (stored
        plainly by the run's first tile, as the last tile's last rows are).
        Rows of out that are not whole lines go that way at every start.

        Where a line holds `CONSTANT_ROWS_LINE` rows, `carried` is compiled once
        per 16-byte offset of out in its line (`switch`), so that the peel and
        the rows of the last line are constants: chosen at run time, LLVM kept
        the rows' addresses in a vector and extracted them one by one in every
        block (README, Benchmarks); other starts take the run-time form.
        """
        lanes, width, nr = self.lanes, self.width, rows.size
        line = CACHE_LINE // width  # rows of the tile per line of out
        piece = self.min_lanes  # lanes per 16 bytes
        misalignment = self.misalignment(builder, self.out, out)
        aligned = self.on_granule(builder, misalignment)
        columns_full = columns.size // lanes * lanes

        def whole_blocks(wb: Builder, block: BlockBody) -> None:
            _loop(wb, 0, columns_full, lanes, lambda cb, c0, _: block(cb, c0, lanes))

        def streaming(b: Builder) -> None:
            lead = b.insert(arith.SubiOp(index(b, CACHE_LINE), misalignment)).result
            peel = b.insert(arith.DivUIOp(lead, index(b, width))).result  # 1 to E rows

            def row_of(bb: Builder, lane: int) -> SSAValue:
                """The tile row in lane `lane` of the edge block: lane, or lane + nr - line."""
                head = bb.insert(arith.CmpiOp(index(bb, lane), peel, "ult")).result
                return bb.insert(arith.SelectOp(
                    head, index(bb, lane), index(bb, lane + nr - line))).result

            source_rows = [add(b, source, row_of(b, k), rows.source) for k in range(line)]
            out_pieces = [add(b, out, row_of(b, q)) for q in range(0, line, piece)]

            def edge(cb: Builder, c0: SSAValue, count: int) -> None:
                parts = [self.transposed(cb, [add(cb, row, c0) for row in
                                              source_rows[h:h + count]], count)
                         for h in range(0, line, count)]
                for column in range(count):
                    at = add(cb, c0, column)
                    for q, base in zip(range(0, line, piece), out_pieces):
                        part = lanes_slice(cb, parts[q // count][column], q % count, piece)
                        store(cb, part, self.out, add(cb, base, at, columns.out),
                              nontemporal=True)

            after_peel = b.insert(arith.SubiOp(index(b, nr), peel)).result
            middle = b.insert(arith.AddiOp(peel, multiple_below(b, after_peel, line))).result

            def lines(lb: Builder, c0: SSAValue, count: int) -> None:
                """Every row of the tile at columns c0..: the lines of one row of out
                leave back to back."""
                edge(lb, c0, count)
                _loop(lb, peel, middle, line, lambda rb, r0, _: self.line_block(
                    rb, rows, columns, source, out, r0, c0, count))

            if nr <= COLUMNS_OUTER_ROWS:
                whole_blocks(b, lines)
            else:
                whole_blocks(b, edge)
                _loop(b, peel, middle, line, lambda rb, r0, _: whole_blocks(
                    rb, lambda cb, c0, count: self.line_block(
                        cb, rows, columns, source, out, r0, c0, count)))
            self.region(b, rows, columns, source, out, (0, nr), (columns_full, columns.size),
                        lanes)

        def carried(b: Builder) -> None:
            assert self.run is not None
            carry = self.run.carry(b, source)

            def along(b: Builder, peel: int | SSAValue) -> None:
                """The run's lines, `peel` rows (0 to E - 1) before the first line: a
                constant where out starts on a multiple of 16 bytes (`offsets`), each
                row of the last line then a fixed row of this tile or the next."""
                if isinstance(peel, int):
                    start: int | SSAValue = peel + (nr - peel) // line * line
                    tail = nr - start  # 0 to E - 1 rows
                    lane_rows = [add(b, source, start + k, rows.source) if k < tail
                                 else add(b, carry.next_source, k - tail, rows.source)
                                 for k in range(line)]
                    has_tail: bool | SSAValue = tail > 0
                else:
                    after = b.insert(arith.SubiOp(index(b, nr), peel)).result
                    start = b.insert(arith.AddiOp(peel, multiple_below(b, after, line))).result
                    left = b.insert(arith.SubiOp(index(b, nr), start)).result
                    has_tail = b.insert(arith.CmpiOp(left, index(b, 0), "ne")).result
                    beyond = b.insert(arith.SubiOp(start, index(b, nr))).result  # next tile's
                    lane_rows = []
                    for k in range(line):
                        own = b.insert(arith.CmpiOp(index(b, k), left, "ult")).result
                        lane_rows.append(b.insert(arith.SelectOp(
                            own, add(b, source, add(b, start, k), rows.source),
                            add(b, carry.next_source, add(b, beyond, k), rows.source))).result)

                def last_line(cb: Builder, c0: SSAValue, count: int) -> None:
                    """Rows start.. at columns c0..: this tile's last rows and the next
                    tile's first, one whole line of out; the last tile's own rows alone."""

                    def whole(lb: Builder) -> None:
                        parts = [self.transposed(lb, [add(lb, row, c0) for row in
                                                      lane_rows[h:h + count]], count)
                                 for h in range(0, line, count)]
                        dst = add(lb, add(lb, out, c0, columns.out), start)
                        for column in range(count):
                            for h, part in enumerate(parts):
                                # 16-byte pieces, as the edge block stores (whole
                                # vectors measured slower on the Zen 4 host)
                                for q in range(0, count, piece):
                                    store(lb, lanes_slice(lb, part[column], q, piece),
                                          self.out,
                                          add(lb, dst, column * columns.out + h * count + q),
                                          nontemporal=True)

                    def tail_rows(tb: Builder) -> None:
                        end = add(tb, c0, count)
                        if_then(tb, carry.last, lambda lb: self.scalar_region(
                            lb, rows, columns, source, out, (start, nr), (c0, end)), whole)

                    if isinstance(has_tail, SSAValue):
                        if_then(cb, has_tail, tail_rows)
                    elif has_tail:
                        tail_rows(cb)

                def lines(lb: Builder, c0: SSAValue, count: int) -> None:
                    last_line(lb, c0, count)
                    _loop(lb, peel, start, line, lambda rb, r0, _: self.line_block(
                        rb, rows, columns, source, out, r0, c0, count))

                # the first rows, to the first line, belong to the previous tile's last line
                if not isinstance(peel, int) or peel:
                    if_then(b, carry.first, lambda hb: self.scalar_region(
                        hb, rows, columns, source, out, (0, peel), (0, columns_full)))
                # (column blocks outermost whatever the rows: with rows outermost, LLVM's
                # O3 pipeline dropped the non-temporal flag of every store)
                whole_blocks(b, lines)

            if line == CONSTANT_ROWS_LINE:
                offsets = [m for m in range(0, CACHE_LINE, STREAM_GRANULE) if m or nr % line]
                if_then(b, aligned,
                        lambda gb: switch(gb, misalignment, offsets, lambda vb, m: along(
                            vb, (CACHE_LINE - m) % CACHE_LINE // width)),
                        lambda gb: along(gb, self.up_to_line(gb, misalignment)))
            else:
                along(b, self.up_to_line(b, misalignment))
            self.region(b, rows, columns, source, out, (0, nr), (columns_full, columns.size),
                        lanes)

        if self.run is None:
            if_then(builder, aligned, streaming,
                    lambda b: self.whole_region(b, rows, columns, source, out))
        elif nr % line == 0:
            # rows of out from a line: the tile's lines are its own (and the first ran
            # faster through the edge block than the last through `carried`)
            on_line = builder.insert(arith.CmpiOp(misalignment, index(builder, 0), "eq")).result
            if_then(builder, on_line, streaming, carried)
        else:
            carried(builder)

    def streams_block(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether a tile of a large out whose rows of out lie back to back (its out
        one contiguous block) but are not whole lines goes through a buffer
        (`stream_block`)."""
        return (self.nontemporal and self.large_output and self.source is not None
                and columns.out == rows.size and rows.size % (CACHE_LINE // self.width) != 0
                and CACHE_LINE % (self.lanes * self.width) == 0
                and columns.size >= self.lanes
                and rows.size * self.width * self.lanes <= BLOCK_BUFFER_BYTES)

    def stream_block(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """The transpose of a tile whose out is one contiguous block, through a buffer
        in the L1 laid out as that block: columns at a time as many as
        `BLOCK_BUFFER_BYTES` hold are transposed into it (ordinary stores), then
        copied to out as whole lines with non-temporal stores, the partial lines
        at either end with ordinary ones. Written straight from the registers,
        each line of out that spans two rows of out was read for ownership and
        written back: `dbea->dbae` 54 x 47 x 54 x 54 FP32 (blocks of 54 x 54) ran
        at a third of a copy's speed on a Zen 4 host (README, Benchmarks)."""
        width, nr, lanes = self.width, rows.size, self.lanes
        line = CACHE_LINE // width
        # whole blocks of columns at a time (`streams_block`: a block's rows fit)
        chunk = min(columns.size, BLOCK_BUFFER_BYTES // (nr * width)) // lanes * lanes
        buffer = builder.insert(memref.AllocaOp.get(self.element, 64, [chunk * nr])).memref
        filler = TileEmitter(self.kind, self.element, width, self.source, buffer)

        def copy(b: Builder, lo: SSAValue, hi: SSAValue, dst: SSAValue) -> None:
            _loop(b, lo, hi, 1, lambda rb, i, _: store(
                rb, load(rb, buffer, i), self.out, add(rb, dst, i)))

        def next_line(b: Builder, c0: SSAValue, i: SSAValue) -> SSAValue:
            """The element of this tile whose line in the next tile (`next_tile` on) the
            store of the line at `i` of columns c0.. prefetches: the same element of
            in0's block when its rows lie back to back, else row t mod nr's line t
            div nr of columns c0.. for the t-th line stored."""
            if rows.source == columns.size:
                return add(b, add(b, source, c0, nr), i)
            t = b.insert(arith.DivUIOp(i, index(b, line))).result
            row = b.insert(arith.RemUIOp(t, index(b, nr))).result
            along = b.insert(arith.DivUIOp(t, index(b, nr))).result
            return add(b, add(b, add(b, source, c0), row, rows.source), along, line)

        def block(b: Builder, c0: SSAValue, count: int) -> None:
            filler.whole_region(b, rows, TileAxis(count, columns.source, nr),
                                add(b, source, c0), index(b, 0))
            dst = add(b, out, c0, nr)
            total = index(b, count * nr)
            head = b.insert(arith.MinUIOp(
                self.up_to_line(b, self.misalignment(b, self.out, dst)), total)).result
            after = b.insert(arith.SubiOp(total, head)).result
            end = b.insert(arith.AddiOp(head, multiple_below(b, after, line))).result

            def whole_line(lb: Builder, i: SSAValue, _: list[SSAValue]) -> None:
                if self.large_output and self.next_tile:
                    lb.insert(LanePrefetchOp(self.source, next_line(lb, c0, i),
                                             self.next_tile, L2_LOCALITY))
                for h in range(0, line, lanes):
                    store(lb, load(lb, buffer, add(lb, i, h), lanes), self.out,
                          add(lb, dst, add(lb, i, h)), nontemporal=True)

            copy(b, index(b, 0), head, dst)
            _loop(b, head, end, line, whole_line)
            copy(b, end, total, dst)

        full = columns.size // chunk * chunk
        _loop(builder, 0, full, chunk, lambda b, c0, _: block(b, c0, chunk))
        if full < columns.size:
            block(builder, index(builder, full), columns.size - full)

    def streams_shifted(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether a tile of a large out whose rows of out are not whole lines, each
        at its own offset in its lines, stores its lines shifted (`shifted_tile`)."""
        line = CACHE_LINE // self.width
        return (self.nontemporal and self.large_output and self.source is not None
                and CACHE_LINE % (self.lanes * self.width) == 0
                and (columns.out * self.width) % CACHE_LINE != 0
                and rows.size >= host().shifted_min_lines * line
                and columns.size >= self.lanes)

    def shifted_tile(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """The transpose of a tile whose rows of out are not whole lines (`ab->ba`
        686 x 24472: every row 42.875 lines, eight offsets in turn): whole lines
        of out with non-temporal stores, each column's shifted by its own offset.

        A block of L columns (the host's lanes) starts at a 16-byte offset in its
        line when out is 16-byte aligned (L elements are 16 bytes or more), so
        four variants, one per offset, know every column's offset p (rows to
        its first line boundary) when compiled. The rows go in blocks of a line
        (E elements), each transposed once and kept in a buffer until the next
        block of rows: column c's line, rows E (b - 1) + p_c .., is gathered
        from the two blocks by shuffles (`select_lanes`) and stored aligned.
        The columns go in panels of `SHIFTED_PANEL_L2_PART` of the L2 of buffer, rows
        outermost within a panel, so in0 is read along its rows once. The rows
        before each column's first line and after its last one are stored
        plainly. Written from the registers, each such row of out cost a read
        for ownership of every line and ran at a third of the whole-line
        neighbour's speed (686 rows: 2744 against 2752 bytes, AMD EPYC Zen 4)."""
        width, nr, lanes = self.width, rows.size, self.lanes
        line = CACHE_LINE // width
        pitch = columns.out * width  # bytes from one row of out to the next
        full_rows = nr // line * line  # rows in whole blocks of a line
        columns_full = columns.size // lanes * lanes
        panel_bytes = min(SCRATCH_BYTES // 2, host().l2 // SHIFTED_PANEL_L2_PART)
        panel = max(lanes, panel_bytes // (line * width) // lanes * lanes)
        aligned = self.on_granule(builder, self.misalignment(builder, self.out, out))
        # each block's columns' last rows of a line, until the next rows come
        buffer = builder.insert(memref.AllocaOp.get(self.element, 64, [panel * line])).memref

        def firsts(start: int) -> list[int]:
            """Each column's rows before its first line boundary, the block starting
            `start` bytes into a line."""
            return [(-(start + j * pitch)) % CACHE_LINE // width for j in range(lanes)]

        def transposed_rows(b: Builder, r0: int | SSAValue, c0: SSAValue) -> list[list[SSAValue]]:
            return self.line_rows(b, rows, source, r0, c0, lanes, along=False)

        def plain(b: Builder, parts: list[list[SSAValue]], r0: int, c0: SSAValue) -> None:
            """Rows r0 .. r0 + E - 1 of every column of the block, ordinary stores."""
            self.store_lines(b, columns, out, parts, r0, c0, lanes, nontemporal=False)

        def first_block(b: Builder, c0: SSAValue, kept: SSAValue) -> None:
            """Rows 0 .. E - 1: kept, and stored plainly (the rows before each
            column's first line; a column whose first line starts at row 0 stores
            it again, streamed)."""
            parts = transposed_rows(b, 0, c0)
            plain(b, parts, 0, c0)
            keep(b, parts, kept)

        def keep(b: Builder, parts: list[list[SSAValue]], kept: SSAValue) -> None:
            for j in range(lanes):
                for q, part in enumerate(parts):
                    store(b, part[j], buffer, add(b, kept, j * line + q * lanes))

        def next_block(r0: SSAValue, b: Builder, c0: SSAValue, kept: SSAValue) -> None:
            """Rows r0 .. r0 + E - 1 (r0 a multiple of E from E on): each column's
            line from row r0 - E + p, non-temporally, from the kept rows and these,
            in the variant of the block's offset (each variant transposes its own:
            computed before the branch, the transposed rows and the kept ones
            spilled, 15% slower)."""

            def lines(start: int, vb: Builder) -> None:
                p = firsts(start)
                parts = transposed_rows(vb, r0, c0)
                dst = add(vb, add(vb, out, c0, columns.out), r0)
                for j in range(lanes):
                    below = [load(vb, buffer, add(vb, kept, j * line + q * lanes), lanes)
                             for q in range(line // lanes)]
                    pieces = select_lanes(vb, [*below, *(part[j] for part in parts)], [
                        [divmod(p[j] + v * lanes + i, lanes) for i in range(lanes)]
                        for v in range(line // lanes)])
                    for v, piece in enumerate(pieces):
                        store(vb, piece, self.out,
                              add(vb, dst, j * columns.out + p[j] - line + v * lanes),
                              nontemporal=True)
                keep(vb, parts, kept)

            variant(b, c0, lines)

        def last_rows(b: Builder, c0: SSAValue) -> None:
            """Rows from each column's last line to the end, plainly: the last whole
            block of rows (its lines end at row full_rows - E + p), then the rows
            after it as a block ending at the last row."""
            plain(b, transposed_rows(b, full_rows - line, c0), full_rows - line, c0)
            if nr > full_rows:
                plain(b, transposed_rows(b, nr - line, c0), nr - line, c0)

        def variant(b: Builder, c0: SSAValue, body: Callable[[int, Builder], None]) -> None:
            """`body(start, builder)` in the variant of the offset in its line of the
            block of columns at c0 (16-byte offsets only: `aligned`)."""
            start = self.misalignment(b, self.out, add(b, out, c0, columns.out))
            switch(b, start, range(0, CACHE_LINE, STREAM_GRANULE),
                   lambda vb, case: body(case, vb))

        def blocks(b: Builder, lo: SSAValue, hi: SSAValue,
                   body: Callable[[Builder, SSAValue, SSAValue], None]) -> None:
            """`body(builder, c0, kept)` for every block of L columns in [lo, hi),
            `kept` the block's place in the buffer."""

            def block(cb: Builder, c0: SSAValue, _: list[SSAValue]) -> None:
                kept = cb.insert(arith.MuliOp(
                    cb.insert(arith.SubiOp(c0, lo)).result, index(cb, line))).result
                body(cb, c0, kept)

            for_loop(b, lo, hi, lanes, block)

        def streaming(b: Builder) -> None:
            def one_panel(pb: Builder, lo: SSAValue, _: list[SSAValue]) -> None:
                hi = pb.insert(arith.MinUIOp(add(pb, lo, panel), index(pb, columns_full))).result
                blocks(pb, lo, hi, first_block)
                _loop(pb, line, full_rows, line, lambda rb, r0, _: blocks(
                    rb, lo, hi, lambda cb, c0, kept: next_block(r0, cb, c0, kept)))
                blocks(pb, lo, hi, lambda cb, c0, _: last_rows(cb, c0))

            for_loop(b, 0, columns_full, panel, one_panel)
            self.region(b, rows, columns, source, out, (0, nr), (columns_full, columns.size),
                        lanes)

        if_then(builder, aligned, streaming,
                lambda b: self.whole_region(b, rows, columns, source, out))

    def stages(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether the tile goes through a staging buffer (`staged`): the stores of a
        block fall in one L1 set, or in two where the loads crowd as well (the walk
        down the rows of out then gains nothing), and it holds a whole stage. With
        rows of out 2 KiB apart and in0's spread, the walk down them measured
        faster (`bhsd->bhds` 4 x 8 x 512 x 64 FP32); with 1 KiB, staging lost.
        A whole stage: a run of `STAGE_RUN_BYTES` on each row of out."""
        stores, loads = self.sets(columns.out), self.sets(rows.source)
        return ((stores == 1 or stores <= 2 and loads <= 2)
                and rows.size * self.width >= STAGE_RUN_BYTES and columns.size >= self.lanes)

    def staged(self, builder: Builder, rows: TileAxis, columns: TileAxis,
               source: SSAValue, out: SSAValue) -> None:
        """The transpose through a buffer in the L1: stages of `run` rows x `count`
        columns go there as lanes x lanes blocks, then each of the `count` rows of
        out gets its `run` elements as consecutive vectors. Rows of out a power of
        two apart put a block's `lanes` stores in one L1 set, where each read for
        ownership evicts a line that the next blocks still write; runs of whole
        lines per row spread them over the sets (`ijk->kij` 64^3, `ab->ba` 1024^2:
        README, Benchmarks). The rows and columns past the last whole stage take
        `region`."""
        lanes = self.lanes
        run = STAGE_RUN_BYTES // self.width
        pitch = run + STAGE_PAD_BYTES // self.width
        whole = columns.size // lanes
        most = max(1, STAGE_BYTES // (pitch * self.width * lanes))
        count = lanes * max(k for k in range(1, min(most, whole) + 1) if whole % k == 0)
        buffer = builder.insert(memref.AllocaOp.get(self.element, 64, [count * pitch])).memref
        stage_rows = TileAxis(run, rows.source, 1)
        stage_columns = TileAxis(count, 1, pitch)
        rows_end = rows.size // run * run
        columns_end = columns.size // count * count
        zero = index(builder, 0)

        def stage(b: Builder, r0: SSAValue, c0: SSAValue) -> None:
            src = add(b, add(b, source, r0, rows.source), c0)
            _loop(b, 0, run, lanes, lambda rb, r, _: _loop(
                rb, 0, count, lanes, lambda cb, c, _: self.block(
                    cb, stage_rows, stage_columns, src, zero, r, c, lanes, buffer)))
            dst = add(b, add(b, out, c0, columns.out), r0)

            def row(rb: Builder, c: SSAValue, _: list[SSAValue]) -> None:
                at = rb.insert(arith.MuliOp(c, index(rb, pitch))).result
                to = add(rb, dst, c, columns.out)
                for k in range(0, run, lanes):
                    store(rb, load(rb, buffer, add(rb, at, k), lanes), self.out,
                          add(rb, to, k))

            _loop(b, 0, count, 1, row)

        _loop(builder, 0, rows_end, run, lambda rb, r0, _: _loop(
            rb, 0, columns_end, count, lambda cb, c0, _: stage(cb, r0, c0)))
        self.region(builder, rows, columns, source, out, (0, rows_end),
                    (columns_end, columns.size), lanes)
        self.region(builder, rows, columns, source, out, (rows_end, rows.size),
                    (0, columns.size), lanes)

    def crowded_walk(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """A `crowded` tile (blocks down the rows of out) whose rows of in0 start
        16-byte aligned at run time: its columns in pieces along in0's lines
        (`column_walk`), each piece down every row. Whole blocks from numpy's
        16-byte offset read each line of in0 twice, a column block apart, and
        rows of in0 a power of two apart evict it in between (`ab->ba` 1024^2
        and 2048^2 FP32: README, Benchmarks)."""
        start = self.misalignment(builder, self.source, source)
        within = builder.insert(arith.RemUIOp(start, index(builder, 16))).result
        lined = builder.insert(arith.CmpiOp(within, index(builder, 0), "eq")).result

        def piece(b: Builder, c0: SSAValue, count: int) -> None:
            self.region(b, rows, columns, add(b, source, c0), add(b, out, c0, columns.out),
                        (0, rows.size), (0, count), count)

        def walk(b: Builder) -> None:
            for part in self.column_walk(columns.size, start, b):
                part(b, piece)

        if_then(builder, lined, walk,
                lambda b: self.whole_region(b, rows, columns, source, out))

    def misalignment(self, builder: Builder, memory: SSAValue, at: SSAValue) -> SSAValue:
        """The byte offset within its cache line of element `at` of `memory`."""
        pointer = builder.insert(
            memref.ExtractAlignedPointerAsIndexOp.get(memory)).aligned_pointer
        start = add(builder, pointer, at, self.width)
        return builder.insert(arith.RemUIOp(start, index(builder, CACHE_LINE))).result

    def on_granule(self, builder: Builder, misalignment: SSAValue) -> SSAValue:
        """Whether `misalignment` (bytes into a line) is a multiple of
        `STREAM_GRANULE`: the starts the streamed paths take."""
        granule = builder.insert(
            arith.RemUIOp(misalignment, index(builder, STREAM_GRANULE))).result
        return builder.insert(arith.CmpiOp(granule, index(builder, 0), "eq")).result

    def up_to_line(self, builder: Builder, misalignment: SSAValue) -> SSAValue:
        """The elements from one `misalignment` bytes into a line to the next line
        boundary (0 on a boundary)."""
        lead = builder.insert(arith.SubiOp(index(builder, CACHE_LINE), misalignment)).result
        lead = builder.insert(arith.RemUIOp(lead, index(builder, CACHE_LINE))).result
        return builder.insert(arith.DivUIOp(lead, index(builder, self.width))).result

    def walks_source_lines(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether a crowded tile may walk its columns along the source's lines
        (`crowded_walk`): every row of the source has the first one's alignment, and
        the columns are whole 16-byte pieces, a block and a line at least."""
        line = CACHE_LINE // self.width
        return (self.source is not None and rows.source * self.width % CACHE_LINE == 0
                and columns.size % self.min_lanes == 0
                and columns.size >= self.lanes + line)

    def column_walk(self, size: int, start: SSAValue, builder: Builder) -> list[ColumnWalk]:
        """The blocks over `size` columns whose first one sits `start` bytes (a
        multiple of 16) into a line of the source, as three walks: narrower
        blocks up to the next line boundary, whole blocks from there (each
        vector a line or part of one), narrower blocks for the rest. A vector
        across two lines reads each twice over a walk, and the rows of a tile,
        often a power of two apart, share a few L1 sets that evict the line
        between the two reads (`crowded_walk`)."""
        lanes = self.lanes
        line = CACHE_LINE // self.width
        head = self.up_to_line(builder, start)

        def pieces(b: Builder, block: BlockBody, at: SSAValue, count: SSAValue,
                   largest: int) -> None:
            """Blocks over `count` (< 2 * largest, a multiple of 16 bytes) columns from
            `at`: one per power of two in `count`, largest first."""
            part = largest
            while part >= self.min_lanes:
                bit = b.insert(arith.AndIOp(count, index(b, part))).result
                has = b.insert(arith.CmpiOp(bit, index(b, 0), "ne")).result
                higher = b.insert(arith.AndIOp(count, index(b, -2 * part))).result
                c0 = b.insert(arith.AddiOp(at, higher)).result  # after the larger pieces

                def one(bb: Builder, c0: SSAValue = c0, part: int = part) -> None:
                    for k in range(0, part, min(part, lanes)):
                        block(bb, add(bb, c0, k), min(part, lanes))

                if_then(b, has, one)
                part //= 2

        full = builder.insert(arith.SubiOp(index(builder, size), head)).result
        end = builder.insert(arith.AddiOp(head, multiple_below(builder, full, lanes))).result
        rest = builder.insert(arith.SubiOp(index(builder, size), end)).result
        zero = index(builder, 0)
        return [
            lambda b, block: pieces(b, block, zero, head, line // 2),
            lambda b, block: _loop(b, head, end, lanes, lambda bb, c0, _: block(bb, c0, lanes)),
            lambda b, block: pieces(b, block, end, rest, lanes // 2),
        ]

    def whole_region(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                     source: SSAValue, out: SSAValue) -> None:
        """The whole tile as one `region` with ordinary stores, from the host's lanes."""
        self.region(builder, rows, columns, source, out, (0, rows.size), (0, columns.size),
                    self.lanes)

    def region(self, builder: Builder, rows: TileAxis, columns: TileAxis,
               source: SSAValue, out: SSAValue, row_range: tuple[int, int],
               column_range: tuple[int, int], lanes: int) -> None:
        """Rows x columns of the transpose: lanes x lanes blocks, then each edge as one
        more block overlapping the last (`overlaps`) or with half the lanes (the rest
        of the columns, then the rest of the rows)."""
        (r_lo, r_hi), (c_lo, c_hi) = row_range, column_range
        if r_lo >= r_hi or c_lo >= c_hi:
            return
        while lanes >= self.least_lanes and (r_hi - r_lo < lanes or c_hi - c_lo < lanes):
            lanes //= 2
        if lanes < self.least_lanes:
            self.scalar_region(builder, rows, columns, source, out, row_range, column_range)
            return
        r_full = r_lo + (r_hi - r_lo) // lanes * lanes
        c_full = c_lo + (c_hi - c_lo) // lanes * lanes
        r_back = self.overlaps(r_hi - r_full)
        c_back = self.overlaps(c_hi - c_full)

        def starts(b: Builder, lo: int, full: int, back: bool, hi: int,
                   body: Callable[[Builder, SSAValue], None]) -> None:
            _loop(b, lo, full, lanes, lambda bb, start, _: body(bb, start))
            if back:
                body(b, index(b, hi - lanes))

        def row_starts(b: Builder, body: Callable[[Builder, SSAValue], None]) -> None:
            starts(b, r_lo, r_full, r_back, r_hi, body)

        def column_starts(b: Builder, body: Callable[[Builder, SSAValue], None]) -> None:
            starts(b, c_lo, c_full, c_back, c_hi, body)

        if self.crowded(columns) or host().stores_walk_down and columns.out > rows.source:
            column_starts(builder, lambda cb, c0: row_starts(
                cb, lambda rb, r0: self.block(rb, rows, columns, source, out, r0, c0, lanes)))
        else:
            row_starts(builder, lambda rb, r0: column_starts(
                rb, lambda cb, c0: self.block(cb, rows, columns, source, out, r0, c0, lanes)))
        if not c_back:
            self.region(builder, rows, columns, source, out,
                        (r_lo, r_hi if r_back else r_full), (c_full, c_hi), lanes // 2)
        if not r_back:
            self.region(builder, rows, columns, source, out, (r_full, r_hi), (c_lo, c_hi),
                        lanes // 2)

    def buffered_run(self, outer: Sequence[TileAxis], rows: TileAxis,
                     columns: TileAxis) -> TileAxis | None:
        """The axis of the tile that continues its rows of out (`rows.size` apart on
        out), when the tile goes through buffers (`buffered`, as
        `teir_dialect.host.buffers_transpose` says; `teir-auto-schedule` widens
        such tiles by that axis); None otherwise."""
        w = self.width
        if (self.source is None or self.chunk(rows, min(columns.size, self.lanes), 1) < 1
                or not buffers_transpose(columns.out * w, rows.size * w, columns.size * w,
                                         self.large_output)):
            return None
        return next((axis for axis in outer if axis.out == rows.size), None)

    def pitch(self, size: int) -> int:
        """The pitch of a buffer's rows of `size` elements: whole 16-byte pieces, and
        one more where they would make whole lines, so that the rows a block
        reads or writes fall in other L1 sets."""
        pitch = -(-size // self.min_lanes) * self.min_lanes
        return pitch + self.min_lanes if pitch * self.width % CACHE_LINE == 0 else pitch

    def chunk(self, rows: TileAxis, columns: int, most: int) -> int:
        """The most tiles (up to `most`) of `columns` columns whose buffers hold
        `BUFFER_BYTES` each."""
        fits = [k for k in range(1, most + 1)
                if k * rows.size * self.pitch(columns) * self.width <= BUFFER_BYTES
                and columns * self.pitch(k * rows.size) * self.width <= BUFFER_BYTES]
        return max(fits, default=0)

    def column_block(self, rows: TileAxis, columns: TileAxis, run: TileAxis) -> int:
        """The columns a buffered tile takes at a time: all of them, or the most
        whole vectors' worth, whose buffers hold enough tiles for `STAGE_RUN_BYTES`
        per row of out (or all of `run`)."""
        wanted = min(run.size, -(-STAGE_RUN_BYTES // (rows.size * self.width)))
        lanes = self.lanes
        for block in [columns.size, *range(columns.size // lanes * lanes, 0, -lanes)]:
            if self.chunk(rows, block, wanted) >= wanted:
                return block
        return min(columns.size, lanes)

    def buffered(self, builder: Builder, rows: TileAxis, columns: TileAxis, run: TileAxis,
                 source: SSAValue, out: SSAValue) -> None:
        """The tiles along `run` (each a rows x columns transpose, the rows of out of one
        continuing those of the one before) through two buffers in the L1, `chunk`
        tiles and `column_block` columns at a time: the rows of in0 of every tile
        copied into one (each row's lines read once; consecutive reads from
        different tiles, whose rows lie apart), transposed from it into the
        other, whose rows, `chunk` tiles' rows of out long, are copied to out
        (each row's lines written back to back). Rows of out a power of two apart
        put a block's stores in one L1 set (its loads too when the rows of in0
        are), where they evicted the lines that the next tiles wrote again
        (`abcd->dcba` 33 x 32 x 32 x 33, `abcd->dbac` 16 x 64 x 24 x 48: README,
        Benchmarks)."""
        block = self.column_block(rows, columns, run)
        fit = self.chunk(rows, block, run.size)
        count = -(-run.size // -(-run.size // fit))  # chunks of equal size, the last shorter
        pitch_in = self.pitch(block)
        pitch_out = self.pitch(count * rows.size)
        into = builder.insert(memref.AllocaOp.get(
            self.element, 64, [count * rows.size * pitch_in])).memref
        outof = builder.insert(memref.AllocaOp.get(
            self.element, 64, [block * pitch_out])).memref
        zero = index(builder, 0)
        loads = TileEmitter(OperationKind.COPY, self.element, self.width, self.source, into)
        transposes = TileEmitter(self.kind, self.element, self.width, into, outof)
        stores = TileEmitter(OperationKind.COPY, self.element, self.width, outof, self.out)
        buffer_rows = TileAxis(rows.size, pitch_in, 1)

        def chunk(b: Builder, first: int | SSAValue, tiles: int, c0: int | SSAValue,
                  width: int) -> None:
            src = add(b, add(b, source, first, run.source), c0)
            dst = add(b, add(b, out, first, run.out), c0, columns.out)
            loads.emit_contiguous(b, [TileAxis(rows.size, rows.source, pitch_in),
                                      TileAxis(tiles, run.source, rows.size * pitch_in)],
                                  width, src, zero)

            def transpose(tb: Builder, k: SSAValue, _: list[SSAValue]) -> None:
                transposes.whole_region(tb, buffer_rows, TileAxis(width, 1, pitch_out),
                                        add(tb, zero, k, rows.size * pitch_in),
                                        add(tb, zero, k, rows.size))

            for_loop(b, 0, tiles, 1, transpose)
            stores.emit_contiguous(b, [TileAxis(width, pitch_out, columns.out)],
                                   tiles * rows.size, zero, dst)

        def columns_at(b: Builder, c0: int | SSAValue, width: int) -> None:
            whole = run.size // count * count
            for_loop(b, 0, whole, count, lambda cb, first, _: chunk(cb, first, count, c0, width))
            if whole < run.size:
                chunk(b, whole, run.size - whole, c0, width)

        whole_columns = columns.size // block * block
        for_loop(builder, 0, whole_columns, block, lambda b, c0, _: columns_at(b, c0, block))
        if whole_columns < columns.size:
            columns_at(builder, whole_columns, columns.size - whole_columns)

    def crowded(self, columns: TileAxis) -> bool:
        """Whether the stores of one block (rows of out `columns.out` apart) fall in at
        most `CROWDED_SETS` L1 sets (`teir_dialect.host.crowds`). Blocks walk along
        in0's rows by default (the next block loads the next lines of the same rows
        of in0 and stores other rows of out), and rows of out a power of two apart then put the stores of
        the whole walk in those few sets, where every store evicts a line written
        just before and its read for ownership misses the L2 too (README,
        Benchmarks: `ab->ba` 512^2 against 520^2). Such tiles walk down the rows
        of out instead: the next block stores the next lines of the same rows of
        out, and its loads, crowded in turn when in0's rows alias, cost less (a
        load evicts a clean line)."""
        return crowds(columns.out * self.width)

    def sets(self, stride: int) -> int:
        """The L1 sets that lines `stride` elements apart fall in."""
        return l1_sets(stride * self.width)

    def crowded_beyond_l1(self, rows: TileAxis, columns: TileAxis) -> bool:
        """Whether a tile whose stores are `crowded` takes non-temporal stores below
        streamed outputs too: when its rows of out are shorter than
        `CROWDED_WALK_BYTES`, as walking down them then reaches too few sets
        (`abc->cba` 64^3). Longer rows keep ordinary stores, which streaming
        only slowed (`ab->ba` 512^2, `bhsd->bhds` 4x8x512x64: figures in the
        README, Benchmarks): a streamed result is in no cache for its consumer."""
        return self.crowded(columns) and rows.size * self.width < CROWDED_WALK_BYTES

    def overlaps(self, rest: int) -> bool:
        """Whether the `rest` (< lanes) rows or columns left after whole blocks take
        one more whole block, overlapping the last: when halving the lanes would
        end in scalar code (a multiple of 16 bytes ends in narrower blocks)."""
        return rest % self.min_lanes != 0

    def line_block(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                   source: SSAValue, out: SSAValue, r0: SSAValue, c0: SSAValue,
                   lanes: int) -> None:
        """Rows r0.. (a line of out each column) x `lanes` columns from c0, stored with
        non-temporal stores, the vectors of one line of out back to back."""
        self.store_lines(builder, columns, out,
                         self.line_rows(builder, rows, source, r0, c0, lanes), r0, c0,
                         lanes, nontemporal=True)

    def line_rows(self, builder: Builder, rows: TileAxis, source: SSAValue,
                  r0: SSAValue | int, c0: SSAValue, lanes: int,
                  along: bool = True) -> list[list[SSAValue]]:
        """Rows r0 .. (a line of out) x `lanes` columns from c0, transposed: part h
        holds rows h * lanes .., vector j of a part column c0 + j."""
        src = add(builder, add(builder, source, r0, rows.source), c0)
        return [self.transposed(builder, [add(builder, src, (h + k) * rows.source)
                                          for k in range(lanes)], lanes, along)
                for h in range(0, CACHE_LINE // self.width, lanes)]

    def store_lines(self, builder: Builder, columns: TileAxis, out: SSAValue,
                    parts: list[list[SSAValue]], r0: SSAValue | int, c0: SSAValue,
                    lanes: int, nontemporal: bool) -> None:
        """`line_rows`' parts into rows r0 .. of out's columns c0 .., each column's
        vectors back to back."""
        dst = add(builder, add(builder, out, c0, columns.out), r0)
        for column in range(lanes):
            for h, part in enumerate(parts):
                store(builder, part[column], self.out,
                      add(builder, dst, column * columns.out + h * lanes),
                      nontemporal=nontemporal)

    def block(self, builder: Builder, rows: TileAxis, columns: TileAxis, source: SSAValue,
              out: SSAValue, r0: SSAValue, c0: SSAValue, lanes: int,
              target: SSAValue | None = None) -> None:
        """One lanes x lanes block: rows r0.. of the source in, rows c0.. of out (or
        of `target`, a staging buffer) out. Rows of a large out stored so, plainly,
        on a host whose L3 serves like memory (`Host.l3_serves_like_memory`), are
        prefetched `PREFETCH_AHEAD` along into the L2 before each store: every line
        such a store reads for ownership comes from memory, and asked for ahead
        they come in parallel rather than one store at a time (README,
        Benchmarks)."""
        src = add(builder, add(builder, source, r0, rows.source), c0)
        dst = add(builder, add(builder, out, c0, columns.out), r0)
        vectors = self.transposed(
            builder, [add(builder, src, k * rows.source) for k in range(lanes)], lanes)
        ahead = (PREFETCH_AHEAD // self.width if target is None and self.large_output
                 and host().l3_serves_like_memory else 0)
        for column, value in enumerate(vectors):
            at = add(builder, dst, column * columns.out)
            if ahead:
                builder.insert(LanePrefetchOp(self.out, at, ahead, L2_LOCALITY))
            store(builder, value, self.out if target is None else target, at)

    def prefetches(self, along: bool) -> list[tuple[int, int]]:
        """(elements ahead, locality) of the prefetches of each row of in0 that a
        transpose of a large out (`large_output`) loads: `PREFETCH_AHEAD` along
        the row and the same row of the next tile the schedule runs (`next_tile`),
        both into the L2 (`L2_LOCALITY`; one where they are the same line, as
        when the next tile continues the rows); for a tile that walks its rows along
        their length (`shifted_tile`, not `along`) the next tile's only, or
        without one the row's into the L1 (README, Benchmarks)."""
        if not self.large_output:
            return []
        row = PREFETCH_AHEAD // self.width
        if not along:
            return ([(self.next_tile, L2_LOCALITY)] if self.next_tile
                    else [(row, PREFETCH_LOCALITY)])
        return [(ahead, L2_LOCALITY) for ahead in dict.fromkeys((row, self.next_tile)) if ahead]

    def transposed(self, builder: Builder, addresses: Sequence[SSAValue],
                   lanes: int, along: bool = True) -> list[SSAValue]:
        """The primitive applied to `lanes` vectors loaded at `addresses` (rows of the
        source), transposed: vector j holds lane j of every row, in row order;
        `along`: see `prefetches`."""
        assert self.source is not None
        rows = []
        prefetches = self.prefetches(along)
        for at in addresses:
            for ahead, locality in prefetches:
                builder.insert(LanePrefetchOp(self.source, at, ahead, locality))
            rows.append(self.apply(builder, load(builder, self.source, at, lanes)))
        return transpose(builder, rows)

    def scalar_region(self, builder: Builder, rows: TileAxis, columns: TileAxis,
                      source: SSAValue, out: SSAValue,
                      row_range: tuple[int | SSAValue, int | SSAValue],
                      column_range: tuple[int | SSAValue, int | SSAValue]) -> None:
        """Element by element, rows of out innermost. The edge of a vector tile (a range
        short of the whole tile) keeps its loops rolled (`for_loop`'s `rolled`):
        LLVM unrolled and vectorized the few elements of each edge into most of a
        streamed transpose's code, and most of its compile time, for no speed
        (README, Compile time)."""
        edge = (row_range[0], row_range[1], column_range[0], column_range[1]) != (
            0, rows.size, 0, columns.size)

        def column(cb: Builder, c: SSAValue, _: list[SSAValue]) -> None:
            src_c = add(cb, source, c)
            dst_c = add(cb, out, c, columns.out)

            def row(rb: Builder, r: SSAValue, _: list[SSAValue]) -> None:
                self.element_op(rb, add(rb, src_c, r, rows.source), add(rb, dst_c, r), 1)

            for_loop(cb, *row_range, 1, row, rolled=edge)

        for_loop(builder, *column_range, 1, column, rolled=edge)


# -- the teir-to-scf hook -----------------------------------------------------------


def emit_tile_primitive(builder: Builder, prim: PrimitiveOp, element: Attribute,
                        tile: Tile, loops: Sequence[tuple[AxisOp, SSAValue]] = ()) -> bool:
    """Vector code for a Zero/Copy/ReLU tile (see the module doc); False: not handled.
    `loops`: the unguarded schedule loops around it whose whole body it is, with their
    induction variables (`Run.of`)."""
    kind = prim.kind
    if kind == OperationKind.CONTRACTION:
        return False
    config = prim.config
    width = prim.element_width
    if kind == OperationKind.ZERO:
        source_name = None
    elif kind == OperationKind.RELU and config.tensor_count == 3:
        source_name = "out"  # in place
    else:
        source_name = "in0"
    tensors = ["out"] if source_name is None else sorted({"out", source_name})
    axes: list[TileAxis] = []
    shift = dict.fromkeys(tensors, 0)
    for axis in prim.all_role_axes:
        for tensor in tensors:
            stride, offset = axis.stride_on(tensor), axis.offset_on(tensor)
            if stride % width or offset % width or stride < 0 or offset < 0:
                return False  # the scalar path reports byte-misaligned tiles
            shift[tensor] += offset // width
        if axis.size > 1:
            source_stride = 0 if source_name is None else axis.stride_on(source_name) // width
            axes.append(TileAxis(axis.size, source_stride, axis.stride_on("out") // width))
    if not axes or not disjoint_windows([(axis.size, axis.out) for axis in axes], 1):
        return False
    plan = _plan(kind, axes, source_name is None)
    if plan is None:
        return False
    memory = dict(zip(config.tensor_names, config.tensors))
    out = add(builder, tile.address(builder, "out"), shift["out"])
    source = out
    if source_name not in (None, "out"):
        source = add(builder, tile.address(builder, source_name), shift[source_name])
    tile_emitter = TileEmitter(
        kind, element, width,
        None if source_name is None else memory[source_name],
        memory["out"],
    )
    large = streamed_out(config)
    if loops and source_name == "in0" and large:
        step = loops[0][0].stride_on("in0")  # the innermost loop's: the next tile run
        tile_emitter.next_tile = step // width if step > 0 and step % width == 0 else 0
    if plan[0] == "contiguous":
        _, outer, run = plan
        tile_emitter.emit_contiguous(builder, outer, run, source, out)
    else:
        _, outer, rows, columns = plan
        tile_emitter.large_output = large
        tile_emitter.nontemporal = (tile_emitter.large_output
                                    or tile_emitter.crowded_beyond_l1(rows, columns))
        if not outer and source_name == "in0":
            tile_emitter.run = Run.of(rows, loops, width)
        tile_emitter.emit_transpose(builder, outer, rows, columns, source, out)
    return True


def _narrow(k: int, packed: int) -> bool:
    """Whether a side of `k` elements may take the narrow forms (`NARROW_MAX`): rows
    of k elements back to back (`packed`, the stride between them, is k)."""
    return 2 <= k <= NARROW_MAX and packed == k


Plan = (
    tuple[str, list[TileAxis], int] | tuple[str, list[TileAxis], TileAxis, TileAxis] | None
)


def _plan(kind: OperationKind, axes: list[TileAxis], no_source: bool) -> Plan:
    """("contiguous", outer axes, run) or ("transpose", outer, rows, columns), or None."""
    by_out = sorted(axes, key=lambda a: a.out)
    inner = by_out[0]
    if inner.out == 1 and (no_source or inner.source == 1):
        run = inner.size
        rest = by_out[1:]
        # Merge axes that continue the run on both tensors.
        while rest and rest[0].out == run and (no_source or rest[0].source == run):
            run *= rest[0].size
            rest = rest[1:]
        if run < MIN_LANES:
            return None
        return ("contiguous", list(reversed(rest)), run)
    if kind == OperationKind.ZERO or inner.out != 1:
        return None
    columns = [a for a in axes if a.source == 1 and a is not inner]
    if len(columns) != 1 or inner.source < columns[0].size or columns[0].out < inner.size:
        return None
    rows, column = inner, columns[0]
    if min(rows.size, column.size) < MIN_LANES and not (
            _narrow(column.size, rows.source) or _narrow(rows.size, column.out)):
        return None
    outer = [a for a in by_out[::-1] if a is not rows and a is not column]
    return ("transpose", outer, rows, column)
