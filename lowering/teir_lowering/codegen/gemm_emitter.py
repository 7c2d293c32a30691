"""Register-blocked GEMM/BRGEMM microkernels in scf/arith/memref/vector.

Every Contraction that `teir-match-gemm` classifies as GEMM or BRGEMM, in any
of the 8 layouts `trans = "ABC"` and any m, n, k, runs here. The tile is
C(m, n) [+]= sum over batches of A(m, k) B(k, n), with the element strides the
kernel attribute gives (`GemmShape`). The planner
(`teir_lowering.codegen.gemm_plan.plan_gemm`, a cost model of the host) picks a
kernel, its register block, its packing and its K-blocking; `GemmEmitter` emits
that plan and decides nothing of its own.

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
in L1 while the row blocks stream the X block from L2). A Y with general strides
(no unit-stride role axis) may be packed per column panel first (the plan's
`pack_y`: per batch and k step its NR elements in a row). An f16 Y is widened
to f32 whole (`widen_y`; kept while the next tiles of the scope read the same
Y, `emit.memoized`) or, too large for that, per column panel (`widen_panels`),
so that its broadcasts are f32 loads. A packed X goes to a
`memref.alloca` (hoisted to the function's entry by teir-hoist-allocas, so one
per thread). A C contiguous along U instead (cv != 1, cu == 1) is read and
written in L x L squares of accumulators transposed in registers
(`teir_lowering.codegen.emit.transpose`), by vector rows along U; columns left over
(< L) and other strided C access C lane by lane. The last rows of V that no
vector covers are scalar (L = 1: memref.load, math.fma).

Dot kernel, vectors along k, for A rows and B columns both k-contiguous
("TN?"), or with general strides along k (each vector gathered lane by lane; a
stride 0, a broadcast along k, loads one element). Blocks of MR x NR elements of C, one vector accumulator each: per k
step of L, MR vector loads of A rows, NR of B columns, MR * NR FMAs; the k
remainder is one more step with vectors gathered from the remaining elements
(-0.0 in A's other lanes, +0 in B's: their product -0.0 changes no sum). The
accumulators start at -0.0, the identity of IEEE addition, so that a sum of
-0.0 products stays -0.0 as in the reference. After the batch-reduce loop the
MR * NR accumulators are reduced together by a transposing tree
(`reduce_lanes`: about 3 shuffles/adds per accumulator in all, instead of
2 log2 L each) and each sum is added to its element of C.

Each level of a loop nest is one method; what the levels below it need travels
in a small frozen context (`OuterTile`, `KBlock`, `RegisterBlocks`, `Packing`,
`DotBlocks`). A method that is a loop body takes its context first (bound with
`functools.partial`), then `for_loop`'s builder, induction variable and
iter_args.

Code size: a kernel is a few hundred to a few thousand scf ops (every segment
and column remainder is one unrolled loop nest), which dominates compile time.

Fused epilogues (`GemmEmitter`): `zero_first` is a Zero of the tile just before
(the accumulators start at +0 and C is not read: beta = 0), or, with
`zero_when`, only when that i1 holds (C is read and replaced by +0 by a select);
`relu` is a ReLU of the tile just after, select(x < 0, +0, x) on each final
value before its one store (`teir_lowering.codegen.emit.relu`: an ordered compare, so
-0.0 and NaN pass unchanged), or, with `relu_when`, only when that i1 holds.
With several K-blocks both apply in the first / last block only. When they may
be fused is decided in the IR (`InvokeOp.fused_epilogue`, recorded by
teir-fuse-epilogues: siblings of the Contraction, or sunk into the first / last
iteration of the K loops around it); teir-to-scf passes the conditions on.

Numerics: products are accumulated with fused multiply-adds; the outer kernel
adds them in k order per batch (K-blocks add their partial sums to C in
order), the dot kernel in L interleaved partial sums reduced by the tree. Both
differ from the reference's float64 loop-order sums by rounding only.

BF16 with `pairs` (the primitive's opt-in `bf16_products = pairs`, AVX512-BF16
hosts): the outer kernel takes two k steps at once with `vdpbf16ps`
(`teir_lane.dot_bf16_pairs`): X's two rows interleaved, Y's two elements of
each column broadcast as one 32-bit pair, the two products summed before they
reach the accumulator (bf16 subnormals read as zero); an odd last k step, and
segments narrower than 128 bits, take the ordinary steps. An X contiguous along
the vectors and Y are read in place (packing would widen them to f32); an X
contiguous along k is packed by transposes of pairs (`pair_square`: two k
steps of a row are one 32-bit pair, so 2L k steps of L rows are an L x L
transpose), the k steps past its whole squares singly; the dot kernel and an X
strided both ways keep the ordinary steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import cast

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, SSAValue

from teir_lowering.codegen.emit import (
    Prologue,
    add,
    arithmetic_type,
    constant,
    fma,
    for_loop,
    index,
    load,
    load_broadcast,
    load_stepped,
    memoized,
    multiple_below,
    narrow,
    relu,
    shuffle_mask,
    store,
    transpose,
    value_type,
    vector_type,
)
from teir_lowering.codegen.gemm_plan import (
    GemmPlan,
    GemmShape,
    Oriented,
    Segment,
    plan_gemm,
    stepped,
    widens_before_fmas,
)
from teir_lowering.lane import PAIR_LANES, LaneDotBF16PairsOp, LanePrefetchOp


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


# -- the contexts of the loop levels ----------------------------------------------------


@dataclass(frozen=True)
class OuterTile:
    """The outer-product kernel's tile: C(v, u) at c0 + v * cv + u * cu += sum X(v, p)
    Y(u, p) over nv x nu, in K-blocks of `batches` x `steps`, with X packed into
    `scratch` in M-blocks of `rows` (None: read in place, one M-block), and C
    transposed in registers (`transposing`) or not."""

    nv: int
    nu: int
    x: Operand
    y: Operand
    c0: SSAValue
    cv: int
    cu: int
    batches: int
    steps: int
    rows: int
    scratch: SSAValue | None
    transposing: bool
    y_scratch: SSAValue | None = None
    """Y's column panels packed here (`GemmPlan.pack_y`), else read in place."""
    memo_x: bool = False
    """`scratch` lives in the scope's prologue and holds the packed X of the last call
    (one K-block, one M-block): packed again only when X moves."""

    @property
    def span(self) -> int:
        """K steps per K-block."""
        return self.batches * self.steps


@dataclass(frozen=True)
class Widening:
    """Y (f16) being widened into the f32 buffer `wide` (`GemmEmitter.widen_y`):
    along k (per column, its k steps) or along its free dimension (per k step, its
    `nu` columns), `steps` k steps per batch."""

    y: Operand
    wide: SSAValue
    along_k: bool
    nu: int
    steps: int
    span: int
    """K steps of the K-block (batches x steps): a column's elements along k."""


@dataclass(frozen=True)
class KBlock:
    """One K-block: X and Y from its first batch and k step, `length` k steps per
    batch (a last k chunk may be shorter), and the epilogue it applies."""

    x: Operand
    y: Operand
    length: SSAValue | int
    epilogue: Epilogue


@dataclass(frozen=True)
class RegisterBlocks:
    """The register blocks of one segment and one column range of NR `columns`, over
    one K-block: X (in place or packed) and Y from the K-block's start, C from the
    M-block's; `transposed`: C in L x L squares transposed in registers."""

    x: Operand
    y: Operand
    c0: SSAValue
    cv: int
    cu: int
    seg: Segment
    columns: int
    batches: int
    length: SSAValue | int
    epilogue: Epilogue
    transposed: bool
    y_scratch: SSAValue | None = None
    steps: int = 0
    """With `y_scratch`: each column panel of Y is packed there first (per batch and
    k step its NR elements in a row; `steps` k steps per batch)."""
    x_reads: str = ""
    """X read in place at a small stride along V (`stepped`): "forward", every
    vector by `load_stepped` reading on past its last lane; "last back" / "last
    gathered", the same but the block's last vector, which ends V, reads back from
    its last lane / is gathered (it starts V too); "": `load`."""

    @property
    def final(self) -> bool:
        """The segment ends V: its last row block reads as `x_reads` says, the others
        forward."""
        return self.x_reads.startswith("last")

    @property
    def squares(self) -> list[tuple[int, int]]:
        """(vector v, first column g) of each L x L square of C."""
        lanes = self.seg.lanes
        return [(v, g) for v in range(self.seg.vectors) for g in range(0, self.columns, lanes)]


@dataclass(frozen=True)
class Packing:
    """X's rows of `segments` over one K-block, packed into `scratch`: row block v0
    at v0 * span, then per batch and k step its `height` elements."""

    x: Operand
    scratch: SSAValue
    segments: list[Segment]
    batches: int
    length: SSAValue | int
    steps: int

    @property
    def span(self) -> int:
        return self.batches * self.steps


@dataclass(frozen=True)
class DotBlocks:
    """The dot kernel's blocks of `mr` x `nr` elements of C over rows [row_start,
    row_stop), with vectors of `lanes` along k: `whole` k steps in full vectors and a
    gathered remainder of `rest`."""

    a0: SSAValue
    b0: SSAValue
    c0: SSAValue
    row_start: int
    row_stop: int
    mr: int
    nr: int
    lanes: int
    whole: int
    rest: int


class GemmEmitter:
    """Emits the blocked loops of one GEMM/BRGEMM tile at given base indices.

    `zero_first`: a fused Zero of the tile (the accumulation starts from +0 and C
    is not read), with `zero_when` (an i1) only when that holds (else from C).
    `relu`: a fused ReLU of the tile, select(x < 0, +0, x) applied to each final
    value before its store; with `relu_when` only when that holds. `plan`
    defaults to `plan_gemm`'s (`from_memory`: its flag, the configuration's inputs
    read from memory at every call). `prologue`: the enclosing scope's (`emit.Prologue`),
    where a Y widened whole is kept for the next tiles (None: widened per tile).

    Data types: `element` is the memory's type; A, B and C are widened where they
    are loaded and the accumulators have the arithmetic type (f32 for f16/bf16,
    `teir_lowering.codegen.emit`), so `width` is that type's width; C is rounded to
    `element` once, where it is stored (the plan has one K-block then). `tf32`
    rounds A and B to TF32 as they are loaded.
    """

    def __init__(self, shape: GemmShape, element: Attribute, width: int,
                 a: SSAValue, b: SSAValue, c: SSAValue,
                 zero_first: bool = False, relu: bool = False,
                 relu_when: SSAValue | None = None, plan: GemmPlan | None = None,
                 zero_when: SSAValue | None = None, tf32: bool = False,
                 pairs: bool = False, prologue: Prologue | None = None,
                 from_memory: bool = False):
        self.shape = shape
        self.prologue = prologue
        self.storage = element
        self.element = arithmetic_type(element)  # of the accumulators
        self.tf32 = tf32
        self.width = width
        self.a, self.b, self.c = a, b, c
        self.epilogue = Epilogue(zero_first, zero_when if zero_first else None,
                                 relu, relu_when if relu else None, element)
        narrow_c = self.storage != self.element
        self.plan = plan or plan_gemm(shape, width, zero_first and zero_when is None,
                                      narrow_c=narrow_c,
                                      converts=widens_before_fmas(element.name),
                                      stored=element.bitwidth // 8,  # pyright: ignore
                                      from_memory=from_memory)
        # pairs read X in place where its vectors are contiguous, or packed by
        # transposes as pairs (`packed_pairs`) where it is contiguous along k; a
        # gathered X (strided both ways) keeps the ordinary steps
        oriented = Oriented.of(shape, self.plan.vector)
        self.pairs = (pairs and isinstance(element, BFloat16Type) and self.plan.kernel == "outer"
                      and (oriented.x_free == 1 or oriented.x_k == 1))
        self.packed_pairs = self.pairs and oriented.x_free != 1
        if self.pairs:
            self.plan = replace(self.plan, pack="transpose" if self.packed_pairs else "",
                                pack_y=False, widen_y=False, widen_panels=False)
        if narrow_c and self.plan.k_block != (0, 0):
            raise ValueError(f"a GEMM plan for a C of {element} has K-blocks: its partial "
                             "sums would be rounded (plan_gemm's narrow_c)")

    # -- the tile -----------------------------------------------------------------------

    def emit(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue) -> None:
        plan = self.plan
        if plan.kernel == "dot":
            self.emit_dot(builder, a0, b0, c0, plan.lanes)
            return
        o = Oriented.of(self.shape, plan.vector)
        operands = [(self.a, a0), (self.b, b0)]
        if plan.vector == "n":  # C^T = B^T A^T: the roles of (A, m) and (B, n) swap
            operands.reverse()
        (x, x0), (y, y0) = operands
        self.emit_outer(builder, o, Operand(x, x0, o.x_free, o.x_k, o.x_batch, o.x_free),
                        Operand(y, y0, o.y_free, o.y_k, o.y_batch, o.y_free), c0)

    # -- outer-product kernel -----------------------------------------------------------

    def emit_outer(self, builder: Builder, o: Oriented, x: Operand, y: Operand,
                   c0: SSAValue) -> None:
        """C(v, u) at c0 + v * c_v + u * c_u += sum X(v, p) Y(u, p), vectors along v:
        K-blocks, then M-blocks of the packed X (all of V when X is read in place),
        then the segments' column and row blocks (see the module doc)."""
        plan = self.plan
        batches, steps = plan.k_steps(self.shape)
        rows = plan.m_block(o.nv, self.width, batches * steps)
        scratch = y_scratch = None
        # X packed whole (one K-block, one M-block) is a function of X alone: kept in
        # the scope's prologue and packed again only for another X (`emit.memoized`),
        # as a loop around the calls that keeps X (`abc,cd->abd` with B transposed:
        # one GEMM per a) would otherwise pack it once per call
        memo_x = (self.prologue is not None and rows == o.nv
                  and (batches, steps) == (self.shape.batch, self.shape.k))
        if plan.pack:
            scope = self.prologue.builder if memo_x else builder  # pyright: ignore
            scratch = scope.insert(
                memref.AllocaOp.get(self.element, 64, [rows * batches * steps])).memref
        if plan.pack_y or plan.widen_panels:
            columns = plan.panel_columns(o.nv, o.nu, plan.transposes_c(o.c_v, o.c_u),
                                         self.width, batches * steps)
            y_scratch = builder.insert(memref.AllocaOp.get(
                self.element, 64, [columns * batches * steps])).memref
        if plan.widen_y:
            y = self.widen_y(builder, o, y, batches, steps)
        tile = OuterTile(o.nv, o.nu, x, y, c0, o.c_v, o.c_u, batches, steps, rows, scratch,
                         plan.transposes_c(o.c_v, o.c_u), y_scratch, memo_x)
        self.k_blocks(builder, batches, steps, partial(self.outer_k_block, tile))

    def widen_y(self, builder: Builder, o: Oriented, y: Operand, batches: int,
                steps: int) -> Operand:
        """Y (f16, one K-block) widened to f32 into a scratch buffer, as an operand laid
        out like Y along its unit stride: (u, t, p) at u * span + t * steps + p when
        Y is contiguous along k, at (t * steps + p) * nu + u when along u."""
        span = batches * steps
        # in the scope's prologue when memoized: the buffer outlives the tile
        scope = builder if self.prologue is None else self.prologue.builder
        wide = scope.insert(memref.AllocaOp.get(self.element, 64, [o.nu * span])).memref
        widening = Widening(y, wide, o.y_k == 1, o.nu, steps, span)

        def fill(inner: Builder) -> None:
            for_loop(inner, 0, batches, 1, partial(self.widen_batch, widening), rolled=True)

        if self.prologue is None:
            fill(builder)
        else:
            memoized(builder, self.prologue, y.base, fill)
        if widening.along_k:
            return Operand(wide, index(builder, 0), span, 1, steps, span)
        return Operand(wide, index(builder, 0), 1, o.nu, steps * o.nu, 1)

    def widen_batch(self, w: Widening, builder: Builder, t: SSAValue,
                    _: list[SSAValue]) -> list[SSAValue]:
        """Batch t: per column its k steps (Y contiguous along k), else per k step its
        columns."""
        if w.along_k:
            for_loop(builder, 0, w.nu, 1, partial(self.widen_column, w, t), rolled=True)
        else:
            for_loop(builder, 0, w.steps, 1, partial(self.widen_step, w, t), rolled=True)
        return []

    def widen_column(self, w: Widening, t: SSAValue, builder: Builder, u: SSAValue,
                     _: list[SSAValue]) -> list[SSAValue]:
        source = add(builder, add(builder, w.y.base, u, w.y.free), t, w.y.batch)
        target = add(builder, add(builder, index(builder, 0), u, w.span), t, w.steps)
        self.widen_line(builder, w, source, target, w.steps)
        return []

    def widen_step(self, w: Widening, t: SSAValue, builder: Builder, p: SSAValue,
                   _: list[SSAValue]) -> list[SSAValue]:
        source = add(builder, add(builder, w.y.base, t, w.y.batch), p, w.y.k)
        target = add(builder, add(builder, index(builder, 0), t, w.steps * w.nu), p, w.nu)
        self.widen_line(builder, w, source, target, w.nu)
        return []

    def widen_line(self, builder: Builder, w: Widening, source: SSAValue, target: SSAValue,
                   length: int) -> None:
        """`length` elements at unit stride from `source` into the buffer at `target`:
        vectors of the plan's lanes, then scalars. These loops, like the ones around
        them, stay rolled (`for_loop(..., rolled=True)`): they run once per panel,
        and LLVM's unrolling (and vectorizing of the scalars) made most of a 16-bit
        GEMM's code and compile time (README, Compile time)."""
        lanes = self.plan.lanes
        full = length // lanes * lanes
        if full:
            for_loop(builder, 0, full, lanes, partial(self.widen_elements, w, source, target,
                                                      lanes), rolled=True)
        if length % lanes:
            for_loop(builder, full, length, 1, partial(self.widen_elements, w, source, target, 1),
                     rolled=True)

    def widen_elements(self, w: Widening, source: SSAValue, target: SSAValue, lanes: int,
                       builder: Builder, i: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        value = load(builder, w.y.memory, add(builder, source, i), lanes, widened=True)
        store(builder, value, w.wide, add(builder, target, i))
        return []

    def outer_k_block(self, tile: OuterTile, builder: Builder, t0: SSAValue | int,
                      p0: SSAValue | int, length: SSAValue | int, epilogue: Epilogue) -> None:
        """One K-block of the tile: its M-blocks, in a loop when there are several."""
        block = KBlock(tile.x.shifted(builder, batch=t0, k=p0),
                       tile.y.shifted(builder, batch=t0, k=p0), length, epilogue)
        rows = tile.rows
        full = tile.nv // rows
        if full > 1:
            for_loop(builder, 0, full * rows, rows, partial(self.m_block, tile, block, rows))
        elif full == 1:
            self.m_block(tile, block, rows, builder, 0)
        if tile.nv % rows:
            self.m_block(tile, block, tile.nv % rows, builder, full * rows)

    def m_block(self, tile: OuterTile, block: KBlock, extent: int, builder: Builder,
                m0: SSAValue | int, _: list[SSAValue] | None = None) -> None:
        """`extent` rows of V from m0 over one K-block: X packed (when it is), then
        the register blocks of each segment and column range."""
        segments = self.plan.layout(extent, tile.nu, tile.transposing)
        x = block.x.shifted(builder, rows=m0)
        c0 = add(builder, tile.c0, m0, tile.cv)
        if tile.scratch is not None:
            packing = Packing(x, tile.scratch, segments, tile.batches, block.length,
                              tile.steps)
            if tile.memo_x:
                memoized(builder, self.prologue, x.base,  # pyright: ignore[reportArgumentType]
                         lambda inner: self.pack(inner, packing))
            else:
                self.pack(builder, packing)
        for seg in segments:
            x_seg = x if tile.scratch is None else Operand(
                tile.scratch, index(builder, 0), 1, seg.height, seg.height * tile.steps,
                tile.span)
            reads = ""
            if tile.scratch is None and seg.lanes > 1 and stepped(x.free):
                # a vector's reads past its last lane lie within V, but at V's end
                reads = ("forward" if seg.stop != extent else "last back"
                         if seg.stop - seg.lanes >= 1 else "last gathered")
            for start, stop, nr in seg.columns:
                transposed = tile.transposing and seg.lanes > 1 and nr % seg.lanes == 0
                blocks = RegisterBlocks(x_seg, block.y, c0, tile.cv, tile.cu, seg, nr,
                                        tile.batches, block.length, block.epilogue, transposed,
                                        tile.y_scratch, tile.steps, reads)
                for_loop(builder, start, stop, nr, partial(self.column_block, blocks))

    def k_blocks(self, builder: Builder, batches: int, steps: int, body: KBlockBody) -> None:
        """`body` for each K-block of `batches` x `steps` (the last k chunk may be
        shorter), with the epilogue of the first and last blocks."""
        s = self.shape
        groups, chunks = s.batch // batches, -(-s.k // steps)
        if groups * chunks == 1:
            body(builder, 0, 0, s.k, self.epilogue)
        elif chunks == 1:
            for_loop(builder, 0, groups, 1, partial(self.k_group, body, batches, groups))
        else:
            for_loop(builder, 0, s.batch, 1, partial(self.k_batch, body, steps, chunks))

    def k_group(self, body: KBlockBody, batches: int, groups: int, builder: Builder,
                g: SSAValue, _: list[SSAValue]) -> None:
        """The K-block of the batches of group g (all of k)."""
        epilogue = self.epilogue.within(builder, _equals(builder, g, 0),
                                        _equals(builder, g, groups - 1))
        t0 = builder.insert(arith.MuliOp(g, index(builder, batches))).result
        body(builder, t0, 0, self.shape.k, epilogue)

    def k_batch(self, body: KBlockBody, steps: int, chunks: int, builder: Builder,
                t: SSAValue, _: list[SSAValue]) -> None:
        """The K-blocks of batch t: its k chunks."""
        for_loop(builder, 0, chunks, 1, partial(self.k_chunk, body, steps, chunks, t))

    def k_chunk(self, body: KBlockBody, steps: int, chunks: int, t: SSAValue,
                builder: Builder, c: SSAValue, _: list[SSAValue]) -> None:
        """The K-block of chunk c of batch t: `steps` k steps, fewer in the last."""
        s = self.shape
        p0 = builder.insert(arith.MuliOp(c, index(builder, steps))).result
        length: SSAValue | int = steps
        if s.k % steps:
            rest = builder.insert(arith.SubiOp(index(builder, s.k), p0)).result
            length = builder.insert(arith.MinUIOp(rest, index(builder, steps))).result
        first = _both(builder, _equals(builder, t, 0), _equals(builder, c, 0))
        last = _both(builder, _equals(builder, t, s.batch - 1),
                     _equals(builder, c, chunks - 1))
        body(builder, t, p0, length, self.epilogue.within(builder, first, last))

    # -- packing X ----------------------------------------------------------------------

    def pack(self, builder: Builder, packing: Packing) -> None:
        """X's rows of the segments over one K-block into the scratch buffer, as the
        kernel reads it: row block v0 at v0 * span, then per batch and k step its
        `height` elements (Operand with free 1, k height, batch height * steps).

        An X contiguous along V ("copy") is read in its own order, each K step's
        rows in a row, so that the first (often the only) read of the block from
        memory is sequential; the others row block by row block, gathered or
        transposed."""
        if self.plan.pack == "copy":
            for_loop(builder, 0, packing.batches, 1, partial(self.copy_batch, packing))
            return
        for seg in packing.segments:
            for_loop(builder, seg.start, seg.stop, seg.height,
                     partial(self.pack_row_block, packing, seg))

    def copy_batch(self, packing: Packing, builder: Builder, t: SSAValue,
                   _: list[SSAValue]) -> None:
        for_loop(builder, 0, packing.length, 1, partial(self.copy_step, packing, t))

    def copy_step(self, packing: Packing, t: SSAValue, builder: Builder, p: SSAValue,
                  _: list[SSAValue]) -> None:
        """K step p of batch t: the rows of every segment, in X's order."""
        x = packing.x
        at = add(builder, add(builder, x.base, t, x.batch), p, x.k)
        for seg in packing.segments:
            to = add(builder, add(builder, index(builder, 0), t, seg.height * packing.steps),
                     p, seg.height)
            for_loop(builder, seg.start, seg.stop, seg.height,
                     partial(self.copy_rows, packing, seg, at, to))

    def copy_rows(self, packing: Packing, seg: Segment, at: SSAValue, to: SSAValue,
                  builder: Builder, v0: SSAValue, _: list[SSAValue]) -> None:
        source, target = add(builder, at, v0), add(builder, to, v0, packing.span)
        for v in range(seg.vectors):
            at = add(builder, source, v * seg.lanes)
            if self.plan.prefetch:
                builder.insert(LanePrefetchOp(packing.x.memory, at,
                                              self.plan.prefetch * packing.x.k))
            value = load(builder, packing.x.memory, at, seg.lanes, widened=True,
                         tf32=self.tf32)
            store(builder, value, packing.scratch, add(builder, target, v * seg.lanes))

    def pack_row_block(self, packing: Packing, seg: Segment, builder: Builder, v0: SSAValue,
                       _: list[SSAValue]) -> None:
        """The row block at v0, batch by batch."""
        source = add(builder, packing.x.base, v0, packing.x.free)
        target = add(builder, index(builder, 0), v0, packing.span)
        for_loop(builder, 0, packing.batches, 1,
                 partial(self.pack_batch, packing, seg, source, target))

    def pack_batch(self, packing: Packing, seg: Segment, source: SSAValue, target: SSAValue,
                   builder: Builder, t: SSAValue, _: list[SSAValue]) -> None:
        """Batch t of one row block: transposed in squares as far as they go, the rest
        gathered."""
        src = add(builder, source, t, packing.x.batch)
        dst = add(builder, target, t, seg.height * packing.steps)
        done: SSAValue | int = 0
        if self.plan.pack == "transpose" and seg.lanes > 1:
            done = self.pack_transposed(builder, packing, seg, src, dst)
        self.pack_gathered(builder, packing, seg, src, dst, done, packing.length)

    def pack_gathered(self, builder: Builder, packing: Packing, seg: Segment,
                      src: SSAValue, dst: SSAValue, start: SSAValue | int,
                      stop: SSAValue | int) -> None:
        """K steps [start, stop) of one row block, vector by vector (each a load, or a
        gather of its lanes when X is strided along V)."""
        for_loop(builder, start, stop, 1, partial(self.gather_step, packing, seg, src, dst))

    def gather_step(self, packing: Packing, seg: Segment, src: SSAValue, dst: SSAValue,
                    builder: Builder, p: SSAValue, _: list[SSAValue]) -> None:
        x = packing.x
        at, to = add(builder, src, p, x.k), add(builder, dst, p, seg.height)
        for v in range(seg.vectors):
            value = load(builder, x.memory, add(builder, at, v * seg.lanes * x.free), seg.lanes,
                         x.free, widened=True, tf32=self.tf32)
            store(builder, value, packing.scratch, add(builder, to, v * seg.lanes))

    def pack_transposed(self, builder: Builder, packing: Packing, seg: Segment,
                        src: SSAValue, dst: SSAValue) -> SSAValue | int:
        """The K steps of one row block of an X contiguous along k, in L x L squares
        transposed in registers: L rows of X loaded as vectors along k become L
        vectors along V. Returns where the whole squares end."""
        lanes, length = seg.lanes, packing.length
        if self.packed_pairs and lanes in PAIR_LANES:
            whole = multiple_below(builder, length, 2 * lanes)
            for_loop(builder, 0, whole, 2 * lanes,
                     partial(self.pair_square, packing, seg, src, dst))
            return whole
        whole = multiple_below(builder, length, lanes)
        for_loop(builder, 0, whole, lanes,
                 partial(self.transpose_square, packing, seg, src, dst))
        return whole

    def pair_square(self, packing: Packing, seg: Segment, src: SSAValue, dst: SSAValue,
                    builder: Builder, p: SSAValue, _: list[SSAValue]) -> None:
        """2L k steps of one row block as L pairs: L rows of X loaded as 2L bf16 along k
        are L i32 pairs each, transposed in registers; pair j (k steps p + 2j and p +
        2j + 1, for L rows) goes to the f32 slots of k step p + 2j, as bits, where
        `pair_step` reads it."""
        x, lanes = packing.x, seg.lanes
        at, to = add(builder, src, p), add(builder, dst, p, seg.height)
        slots = vector_type(self.element, lanes)  # f32 lanes holding the pairs' bits
        for v in range(seg.vectors):
            rows = [builder.insert(vector.BitcastOp(
                load(builder, x.memory, add(builder, at, (v * lanes + i) * x.free), 2 * lanes),
                slots)).result for i in range(lanes)]
            for j, column in enumerate(transpose(builder, rows)):
                store(builder, column, packing.scratch,
                      add(builder, to, 2 * j * seg.height + v * lanes))

    def transpose_square(self, packing: Packing, seg: Segment, src: SSAValue, dst: SSAValue,
                         builder: Builder, p: SSAValue, _: list[SSAValue]) -> None:
        x, lanes = packing.x, seg.lanes
        at, to = add(builder, src, p), add(builder, dst, p, seg.height)
        for v in range(seg.vectors):
            rows = [load(builder, x.memory, add(builder, at, (v * lanes + i) * x.free), lanes,
                         widened=True, tf32=self.tf32)
                    for i in range(lanes)]
            for j, column in enumerate(transpose(builder, rows)):
                store(builder, column, packing.scratch,
                      add(builder, to, j * seg.height + v * lanes))

    # -- packing Y ----------------------------------------------------------------------

    def pack_y(self, builder: Builder, blocks: RegisterBlocks, y_block: SSAValue) -> None:
        """The NR columns of Y at y_block over the K-block into the Y scratch buffer:
        per batch t and k step p, the columns in a row at (t * steps + p) * NR, so
        that the row blocks broadcast from consecutive elements of one or two cache
        lines instead of NR lines of the tensor (GETT/BLIS's packed B panel)."""
        for_loop(builder, 0, blocks.batches, 1, partial(self.pack_y_batch, blocks, y_block))

    def pack_y_batch(self, blocks: RegisterBlocks, y_block: SSAValue, builder: Builder,
                     t: SSAValue, _: list[SSAValue]) -> None:
        source = add(builder, y_block, t, blocks.y.batch)
        target = add(builder, index(builder, 0), t, blocks.columns * blocks.steps)
        for_loop(builder, 0, blocks.length, 1,
                 partial(self.pack_y_step, blocks, source, target))

    def pack_y_step(self, blocks: RegisterBlocks, source: SSAValue, target: SSAValue,
                    builder: Builder, p: SSAValue, _: list[SSAValue]) -> None:
        y, nr = blocks.y, blocks.columns
        at, to = add(builder, source, p, y.k), add(builder, target, p, nr)
        scratch = cast(SSAValue, blocks.y_scratch)
        for j in range(nr):
            value = load(builder, y.memory, add(builder, at, j * y.free), widened=True,
                         tf32=self.tf32)
            store(builder, value, scratch, add(builder, to, j))

    def widen_panel(self, builder: Builder, blocks: RegisterBlocks,
                    y_block: SSAValue) -> tuple[RegisterBlocks, SSAValue]:
        """The NR columns of Y at y_block (f16, contiguous along k) widened into the Y
        scratch buffer, laid out as Y is (`widen_y` for one panel), and the blocks
        reading them from there."""
        y, span = blocks.y, blocks.batches * blocks.steps
        wide = cast(SSAValue, blocks.y_scratch)
        panel = Operand(y.memory, y_block, y.free, y.k, y.batch, y.block)
        widening = Widening(panel, wide, True, blocks.columns, blocks.steps, span)
        for_loop(builder, 0, blocks.batches, 1, partial(self.widen_batch, widening),
                 rolled=True)
        zero = index(builder, 0)
        return replace(blocks, y=Operand(wide, zero, span, 1, blocks.steps, 0)), zero

    # -- register blocks ----------------------------------------------------------------

    def column_block(self, blocks: RegisterBlocks, builder: Builder, u0: SSAValue,
                     _: list[SSAValue]) -> list[SSAValue]:
        """The column panel at u0: Y's panel packed (when the plan says so), its row
        blocks."""
        y_block = add(builder, blocks.y.base, u0, blocks.y.block)
        c_column = add(builder, blocks.c0, u0, blocks.cu)
        seg = blocks.seg
        if blocks.y_scratch is not None and self.plan.widen_panels:
            blocks, y_block = self.widen_panel(builder, blocks, y_block)
        elif blocks.y_scratch is not None:
            self.pack_y(builder, blocks, y_block)
            y_block = index(builder, 0)
            blocks = replace(blocks, y=Operand(blocks.y_scratch, y_block, 1, blocks.columns,
                                               blocks.columns * blocks.steps, 0))
        last = seg.stop - seg.height if blocks.final else seg.stop
        for_loop(builder, seg.start, last, seg.height,
                 partial(self.row_block, replace(blocks, x_reads="forward" if blocks.x_reads
                                                 else ""), y_block, c_column))
        if blocks.final:
            self.row_block(blocks, y_block, c_column, builder, index(builder, last), [])
        return []

    def row_block(self, blocks: RegisterBlocks, y_block: SSAValue, c_column: SSAValue,
                  builder: Builder, v0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        """The register block at row v0 of a column panel: C into the accumulators,
        the K-block's multiply-adds, the epilogue, C back."""
        lanes, vectors, cv, cu = blocks.seg.lanes, blocks.seg.vectors, blocks.cv, blocks.cu
        c_block = add(builder, c_column, v0, cv)
        c_at = [[add(builder, c_block, v * lanes * cv + j * cu) for v in range(vectors)]
                for j in range(blocks.columns)]
        accs = blocks.epilogue.start(builder, self.load_c(builder, blocks, c_at))
        x_block = add(builder, blocks.x.base, v0, blocks.x.block)
        accs = self.accumulate(builder, blocks, x_block, y_block, accs)
        self.store_c(builder, blocks, c_at, [blocks.epilogue.finish(builder, acc) for acc in accs])
        return []

    def load_c(self, builder: Builder, blocks: RegisterBlocks,
               c_at: list[list[SSAValue]]) -> list[SSAValue]:
        """The initial accumulators, (column j, vector v) at j * MV + v: +0 when C is
        not read, else C's vectors (rows along U transposed to columns)."""
        lanes, vectors, nr = blocks.seg.lanes, blocks.seg.vectors, blocks.columns
        zero = value_type(self.element, lanes)
        if blocks.epilogue.skips_c:
            return [constant(builder, zero)] * (nr * vectors)
        if not blocks.transposed:
            return [load(builder, self.c, c_at[j][v], lanes, blocks.cv, widened=True)
                    for j in range(nr) for v in range(vectors)]
        accs = [constant(builder, zero)] * (nr * vectors)
        for v, g in blocks.squares:
            rows = [load(builder, self.c, add(builder, c_at[g][v], lane * blocks.cv), lanes,
                         widened=True)
                    for lane in range(lanes)]
            for j, column in enumerate(transpose(builder, rows), start=g):
                accs[j * vectors + v] = column
        return accs

    def store_c(self, builder: Builder, blocks: RegisterBlocks, c_at: list[list[SSAValue]],
                values: list[SSAValue]) -> None:
        """The final values into C (columns transposed back to rows along U)."""
        lanes, vectors = blocks.seg.lanes, blocks.seg.vectors
        if blocks.transposed:
            for v, g in blocks.squares:
                rows = transpose(builder, [values[j * vectors + v] for j in range(g, g + lanes)])
                for lane, row in enumerate(rows):
                    store(builder, row, self.c, add(builder, c_at[g][v], lane * blocks.cv))
            return
        for j in range(blocks.columns):
            for v in range(vectors):
                store(builder, values[j * vectors + v], self.c, c_at[j][v], blocks.cv)

    def accumulate(self, builder: Builder, blocks: RegisterBlocks, x_block: SSAValue,
                   y_block: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        """The K-block's multiply-adds into `accs`: the batch-reduce loop around the k
        loop, or one loop over all K steps when the batches follow each other on both
        operands (a packed X, a k-contiguous Y)."""
        x, y, length = blocks.x, blocks.y, blocks.length
        if blocks.batches > 1 and isinstance(length, int) and not self.packed_pairs and (
                x.batch == x.k * length and y.batch == y.k * length):
            return self.k_loop(blocks, x_block, y_block, blocks.batches * length, builder, accs)
        return for_loop(builder, 0, blocks.batches, 1,
                        partial(self.batch_k_loop, blocks, x_block, y_block), accs)

    def batch_k_loop(self, blocks: RegisterBlocks, x_block: SSAValue, y_block: SSAValue,
                     builder: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        x_at = add(builder, x_block, t, blocks.x.batch)
        y_at = add(builder, y_block, t, blocks.y.batch)
        return self.k_loop(blocks, x_at, y_at, blocks.length, builder, acc)

    def k_loop(self, blocks: RegisterBlocks, x_at: SSAValue, y_at: SSAValue,
               count: SSAValue | int, builder: Builder, acc: list[SSAValue]) -> list[SSAValue]:
        if self.pairs and blocks.seg.lanes in PAIR_LANES:
            # in place any two k steps pair; packed, those of whole pair squares
            paired = multiple_below(builder, count, 2 * blocks.seg.lanes
                                     if self.packed_pairs else 2)
            acc = for_loop(builder, 0, paired, 2,
                           partial(self.pair_step, blocks, x_at, y_at), acc)
            return for_loop(builder, paired, count, 1,
                            partial(self.k_step, blocks, x_at, y_at), acc)
        return for_loop(builder, 0, count, 1, partial(self.k_step, blocks, x_at, y_at), acc)

    def pair_step(self, blocks: RegisterBlocks, x_at: SSAValue, y_at: SSAValue,
                  builder: Builder, kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        """K steps kk and kk + 1 with `vdpbf16ps`: per vector of X its two rows
        interleaved (lane 2i: step kk, 2i + 1: step kk + 1), per column of Y its two
        elements as one broadcast 32-bit pair."""
        x, y, lanes, vectors = blocks.x, blocks.y, blocks.seg.lanes, blocks.seg.vectors
        pair_type = vector_type(i32, lanes)
        interleave = shuffle_mask([lane for i in range(lanes) for lane in (i, lanes + i)])
        x_k = add(builder, x_at, kk, x.k)
        x_pairs = []
        for v in range(vectors):
            first = add(builder, x_k, v * lanes * x.free)
            if self.packed_pairs:  # f32 slots holding the pairs' bits (`pair_square`)
                packed = load(builder, x.memory, first, lanes)
                x_pairs.append(builder.insert(vector.BitcastOp(packed, pair_type)).result)
                continue
            rows = [load(builder, x.memory, at, lanes, x.free)
                    for at in (first, add(builder, first, x.k))]
            both = builder.insert(vector.ShuffleOp(
                rows[0], rows[1], interleave,
                result_type=vector_type(self.storage, 2 * lanes))).result
            x_pairs.append(builder.insert(vector.BitcastOp(both, pair_type)).result)
        y_k = add(builder, y_at, kk, y.k)
        repeat = shuffle_mask([0, 1] * lanes)
        out: list[SSAValue] = []
        for j in range(blocks.columns):
            two = load(builder, y.memory, add(builder, y_k, j * y.free), 2, y.k)
            spread = builder.insert(vector.ShuffleOp(
                two, two, repeat, result_type=vector_type(self.storage, 2 * lanes))).result
            broadcast = builder.insert(vector.BitcastOp(spread, pair_type)).result
            out += [builder.insert(LaneDotBF16PairsOp(
                acc[j * vectors + v], x_pairs[v], broadcast)).result
                for v in range(vectors)]
        return out

    def k_step(self, blocks: RegisterBlocks, x_at: SSAValue, y_at: SSAValue, builder: Builder,
               kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        """One K step: MV vectors of X, a broadcast of Y per column, MV * NR FMAs."""
        x, y, lanes, vectors = blocks.x, blocks.y, blocks.seg.lanes, blocks.seg.vectors
        x_k = add(builder, x_at, kk, x.k)
        reads = blocks.x_reads

        def read(v: int) -> SSAValue:
            at = add(builder, x_k, v * lanes * x.free)
            if reads == "forward" or reads and v < vectors - 1:
                return load_stepped(builder, x.memory, at, lanes, x.free, widened=True,
                                    tf32=self.tf32)
            if reads == "last back":
                return load_stepped(builder, x.memory, at, lanes, x.free, back=True,
                                    widened=True, tf32=self.tf32)
            return load(builder, x.memory, at, lanes, x.free, widened=True, tf32=self.tf32)

        x_vectors = [read(v) for v in range(vectors)]
        y_k = add(builder, y_at, kk, y.k)
        out: list[SSAValue] = []
        for j in range(blocks.columns):
            broadcast = load_broadcast(builder, y.memory, add(builder, y_k, j * y.free), lanes,
                                       widened=True, tf32=self.tf32)
            out += [fma(builder, x_vectors[v], broadcast, acc[j * vectors + v])
                    for v in range(vectors)]
        return out

    # -- dot kernel ---------------------------------------------------------------------

    def emit_dot(self, builder: Builder, a0: SSAValue, b0: SSAValue, c0: SSAValue,
                 lanes: int) -> None:
        """C(i, j) += sum A(i, p) B(p, j) with A rows and B columns k-contiguous, in
        the plan's blocks and the blocks the extents leave at the edges; with the
        plan's `pack`, the operand not contiguous along k copied so first
        (`packed_dot`)."""
        if self.plan.pack:
            a0, b0 = self.packed_dot(builder, a0, b0)
        s = self.shape
        mr, nr = min(s.m, self.plan.vectors), min(s.n, self.plan.columns)
        row_cuts = [(0, s.m // mr * mr, mr), (s.m // mr * mr, s.m, s.m % mr)]
        col_cuts = [(0, s.n // nr * nr, nr), (s.n // nr * nr, s.n, s.n % nr)]
        whole = s.k // lanes * lanes
        for col_start, col_stop, cols in col_cuts:
            for row_start, row_stop, rows in row_cuts:
                if rows and cols and row_stop > row_start and col_stop > col_start:
                    blocks = DotBlocks(a0, b0, c0, row_start, row_stop, rows, cols, lanes,
                                       whole, s.k - whole)
                    for_loop(builder, col_start, col_stop, cols,
                             partial(self.dot_column, blocks))

    def packed_dot(self, builder: Builder, a0: SSAValue, b0: SSAValue
                   ) -> tuple[SSAValue, SSAValue]:
        """The operand read stepped or gathered along k copied, widened, into a
        k-contiguous scratch array ((t, free, p) at (t * free + free index) * k + p),
        once per tile (per kernel call where the scope keeps it: `memoized` on its
        base); the tile's shape and operand then name the copy. Returns the bases."""
        s = self.shape
        on_a = s.strided_k == "a"
        free, source, base = (s.m, self.a, a0) if on_a else (s.n, self.b, b0)
        k_stride, free_stride = (s.a_strides[1], s.a_strides[0]) if on_a else (
            s.b_strides[0], s.b_strides[1])
        batch_stride = s.batch_a if on_a else s.batch_b
        scope = builder if self.prologue is None else self.prologue.builder
        copy = scope.insert(memref.AllocaOp.get(self.element, 64,
                                                [s.batch * free * s.k])).memref

        def fill(inner: Builder) -> None:
            def batch(body: Builder, t: SSAValue, _: list[SSAValue]) -> None:
                for_loop(body, 0, free, 1, partial(line, t))

            def line(t: SSAValue, body: Builder, j: SSAValue, _: list[SSAValue]) -> None:
                start = add(body, add(body, base, t, batch_stride), j, free_stride)
                row = body.insert(arith.MuliOp(add(body, j, t, free),
                                               index(body, s.k))).result

                def element(step: Builder, p: SSAValue, _: list[SSAValue]) -> None:
                    store(step, load(step, source, add(step, start, p, k_stride),
                                     widened=True), copy, add(step, row, p))

                for_loop(body, 0, s.k, 1, element)

            for_loop(inner, 0, s.batch, 1, batch)

        if self.prologue is None:
            fill(builder)
        else:
            memoized(builder, self.prologue, base, fill)
        zero = index(builder, 0)
        if on_a:  # A "T": k unit, rows k apart, batches m * k apart
            self.shape = replace(s, trans="T" + s.trans[1:], lda=s.k, inca=1,
                                 batch_a=s.m * s.k)
            self.a = copy
            return zero, b0
        self.shape = replace(s, trans=s.trans[0] + "N" + s.trans[2], ldb=s.k, incb=1,
                             batch_b=s.n * s.k)
        self.b = copy
        return a0, zero

    def dot_column(self, blocks: DotBlocks, builder: Builder, j0: SSAValue,
                   _: list[SSAValue]) -> list[SSAValue]:
        s = self.shape
        b_block = add(builder, blocks.b0, j0, s.b_strides[1])
        c_column = add(builder, blocks.c0, j0, s.c_strides[1])
        for_loop(builder, blocks.row_start, blocks.row_stop, blocks.mr,
                 partial(self.dot_row, blocks, b_block, c_column))
        return []

    def dot_row(self, blocks: DotBlocks, b_block: SSAValue, c_column: SSAValue,
                builder: Builder, i0: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        """The block at row i0: accumulators (i, j) at i * nr + j from -0.0, the
        identity of IEEE addition (a sum of -0.0 products stays -0.0 as in the
        reference), the batch-reduce loop, the lane sums added to C."""
        s = self.shape
        a_block = add(builder, blocks.a0, i0, s.a_strides[0])
        c_block = add(builder, c_column, i0, s.c_strides[0])
        accs = [constant(builder, value_type(self.element, blocks.lanes), -0.0)] * (
            blocks.mr * blocks.nr)
        accs = for_loop(builder, 0, s.batch, 1,
                        partial(self.dot_batch, blocks, a_block, b_block), accs)
        self.dot_update_c(builder, blocks, c_block, self.reduce_lanes(builder, accs))
        return []

    def dot_update_c(self, builder: Builder, blocks: DotBlocks, c_block: SSAValue,
                     sums: list[SSAValue]) -> None:
        """C(i, j) + sum (i, j) of the block at c_block, through the epilogue."""
        c_m, c_n = self.shape.c_strides
        for i in range(blocks.mr):
            for j in range(blocks.nr):
                at = add(builder, c_block, i * c_m + j * c_n)
                if self.epilogue.skips_c:
                    start = constant(builder, self.element)
                else:
                    (start,) = self.epilogue.start(
                        builder, [load(builder, self.c, at, widened=True)])
                total = builder.insert(arith.AddfOp(start, sums[i * blocks.nr + j])).result
                store(builder, self.epilogue.finish(builder, total), self.c, at)

    def dot_batch(self, blocks: DotBlocks, a_block: SSAValue, b_block: SSAValue,
                  builder: Builder, t: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        """Batch t: the k steps in whole vectors, then the remainder (lanes past it
        add -0.0 * +0.0 = -0.0)."""
        s = self.shape
        a_batch = add(builder, a_block, t, s.batch_a)
        b_batch = add(builder, b_block, t, s.batch_b)
        if blocks.whole:
            # Stepped loads read past a vector's last element: every whole step but
            # a last one ending on the row's last element; that one reads back from
            # it when a step precedes it, else it gathers.
            any_stepped = stepped(s.a_strides[1]) or stepped(s.b_strides[0])
            last = any_stepped and not blocks.rest
            forward = blocks.whole - blocks.lanes if last else blocks.whole
            acc = for_loop(builder, 0, forward, blocks.lanes,
                           partial(self.dot_step, blocks, a_batch, b_batch,
                                   direction="forward" if any_stepped else ""), acc)
            if last:
                acc = self.dot_step(blocks, a_batch, b_batch, builder, forward, acc,
                                    direction="back" if forward else "")
        if blocks.rest:
            acc = self.dot_step(blocks, a_batch, b_batch, builder, blocks.whole, acc,
                                blocks.rest)
        return acc

    def dot_step(self, blocks: DotBlocks, a_batch: SSAValue, b_batch: SSAValue,
                 builder: Builder, p: SSAValue | int, acc: list[SSAValue],
                 valid: int | None = None, *, direction: str = "") -> list[SSAValue]:
        """One k step of L: MR rows of A, NR columns of B, MR * NR FMAs (`valid`: only
        that many lanes are loaded, -0.0 in A's others, +0 in B's). `direction`
        ("forward" or "back"): operands with a small stride along k (`stepped`) are
        read by `load_stepped` that way (`dot_batch` says which is safe)."""
        (a_m, a_k), (b_k, b_n) = self.shape.a_strides, self.shape.b_strides
        lanes, mr, nr = blocks.lanes, blocks.mr, blocks.nr
        a_p, b_p = add(builder, a_batch, p, a_k), add(builder, b_batch, p, b_k)

        def read(memory: SSAValue, at: SSAValue, stride: int, fill: float) -> SSAValue:
            if direction and valid is None and stepped(stride):
                return load_stepped(builder, memory, at, lanes, stride,
                                    back=direction == "back", widened=True, tf32=self.tf32)
            return load(builder, memory, at, lanes, stride, valid, fill, widened=True,
                        tf32=self.tf32)

        a_rows = [read(self.a, add(builder, a_p, i * a_m), a_k, -0.0) for i in range(mr)]
        out = list(acc)
        for j in range(nr):
            b_column = read(self.b, add(builder, b_p, j * b_n), b_k, 0.0)
            for i in range(mr):
                out[i * nr + j] = fma(builder, a_rows[i], b_column, out[i * nr + j])
        return out

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
            result_type = vector_type(self.element, result_width)
            low, high = (
                builder.insert(vector.ShuffleOp(
                    value, other,
                    shuffle_mask([s + shift + lane for s in starts for lane in range(half)]),
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
