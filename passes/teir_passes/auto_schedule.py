"""`teir-auto-schedule{threads=N}`: a fast schedule for any configuration, as a script.

The scheduler decides and the transformation passes act: every decision is a
step of a `teir-apply-schedule` script, applied as it is made, and the steps
that changed something are recorded on the configuration as the attribute
`script` (JSON), so `teir-opt --emit=script` prints them and
`teir-apply-schedule` replays them. The heuristics, in order, read the host
(`teir_dialect.host`: vector width, caches, cores), never constants of one CPU:

1. canonical guards, no extent-1 loops; a plain nest (loops above scalar
   primitives) in memory order: largest out stride outermost, reduction loops
   innermost in their own order; unless its innermost loop has unit stride on
   every tensor of a Contraction (an element-wise multiply-add inside the
   sums, which LLVM vectorizes: `unit_everywhere`), kept as written;
2. nested loops that are contiguous on every tensor and touch the same
   tensors (the same kind: batch, M, N or K) are fused, so that the
   dimensions a primitive sees are as long as the layout allows;
3. GEMM-shaped loops become GEMM/BRGEMM primitives, reduction loops around
   them join their K role, element-wise loops become tiles (the lifting
   passes of teir-optimize); a transposing Copy/ReLU tile whose out takes
   half the last-level cache or more (its out is streamed past the caches:
   teir-mark-streamed-out's `streamed_out`, which the scheduler records
   first) gets the loops around it in in0's memory order, and
   its rows cut into blocks of two lines of out when the rows it loads lie a
   multiple of 4 KiB apart (`schedule_transposes`);
4. with more than one thread, no parallel loop yet and enough work to pay
   for a fork/join (`fork_pays`: the time the threads save at the host's
   per-core rate against a fork/join's cost for that team size), the outermost loops
   that move out are made parallel until their iterations number at least
   four per thread (the race rule decides; refused steps are skipped); when
   there is no such loop, the N (or M) axis of the largest Contraction is
   split into blocks for the threads: the axis that stays longer once step 5
   has blocked the rows, in no more blocks than re-reading the operand it does
   not index is worth (`blocks_worth`). A loop below sequential ones would fork
   once per their iteration, so it is made parallel only when the work of one
   fork still pays for it; the same holds for
   the split of the widest axis. Loops are made parallel from the outside in,
   directly nested, so that they join into one parallel loop; none below a
   sequential loop under a parallel one (it would fork inside each thread).
   When the loops give fewer iterations than that, the split adds the rest,
   directly inside them. Parallel loops a configuration came with stay, unless
   its work does not pay for their fork/join: then they run sequentially;
5. a GEMM/BRGEMM whose K extent (batch x k) is larger than what keeps a
   panel of B in about half the L1 cache gets its outermost K axis split (a
   reduction loop around the kernel, which still fuses its Zero and ReLU);
   one whose A block (m x K) would not fit half the L2 gets its M axis split.
   This blocking comes after the threads' loops, inside them: a call forks
   once, and each thread's K loop walks its own block with its panels in its
   own core's caches. Blocked first, the K loop was outermost and the threads
   forked once per K block, once more for the remainder and for the Zero
   (a fork that wakes a sleeping core is the dearest part of a short call).
Each step keeps results exactly (the transformation passes check it), so the
schedule it produces computes what the configuration did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from math import isqrt, prod

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr, UnitAttr
from xdsl.passes import ModulePass

from teir_dialect.analysis import footprint, input_bytes, work
from teir_dialect.dialect import AxisOp, ConfigOp, InvokeOp, IterOp, PrimitiveOp
from teir_dialect.host import (
    BUFFERED_SETS,
    CACHE_LINE,
    SET_SPAN,
    Host,
    buffers_transpose,
    host,
    l1_sets,
    stores_rows_plainly,
    widened_bytes,
)
from teir_dialect.ids import fresh_id
from teir_dialect.vocabulary import KernelKind, OperationKind, Role
from teir_passes.legality import k_move_problem
from teir_passes.lift_elementwise import exclusive_loops
from teir_passes.mark_streamed_out import (
    STREAMED_ATTR,
    STREAMED_IN_ATTR,
    streamed_in,
    streamed_out,
)
from teir_passes.mark_streamed_out import mark as mark_streamed_out
from teir_passes.schedule_edit import Rewriting, TransformError, names_axis, taken_ids
from teir_passes.script import make_step

FORK_JOIN_CYCLES = 40_000
"""What one fork/join through libgomp costs a 2-thread kernel, in core cycles:
about 10 microseconds at 4 GHz (benchmarks/parallel_overhead.py), the worker
woken from its futex included. Wider teams wake and join in about log2(threads)
such steps."""

FORK_JOIN_CYCLES_GUEST = 200_000
"""The same on a guest of a hypervisor (`Host.virtualized`): the worker's core,
idle, is woken through the hypervisor, several times a bare core's cost as
measured on a 2-vCPU KVM guest with benchmarks/parallel_overhead.py's kernel
(README, Parallel policy): below it a GEMM 128^3 FP64 ran slower on two threads
than on one."""

STREAMED_ROW_LINES = 2
"""Lines of out per row of a transposing tile cut for `_Scheduler.schedule_transposes`:
the fewest whose rows `teir_lowering.codegen.tile_primitives` streams when they are
4 KiB apart (a line for the block, and one across a row's start off a line)."""

STREAMED_ROWS = 32
"""The most rows (of in0, each its own stream through the caches) of a tile cut for
`_Scheduler.schedule_transposes`, where `STREAMED_ROW_LINES` lines hold more (the
16-bit types): `abcd->dcba` 64^4 FP16 on a Zen 4 host 11.0 ms with 64 rows, 3.5 ms
with 32, 20.5 ms with 16 (README, Benchmarks); FP32 tiles of 32 rows were the
fastest on Zen 4 and Zen 5 alike."""

WIDEN_ROW_BYTES = 512
"""A tile that goes through buffers is widened by a block of the loop that continues its
rows of out (`_Scheduler.widen_transposes`) long enough for this many bytes per row
of out: the lowering's buffered tile then writes runs of that length (`abcd->dcba`
33 x 32 x 32 x 33 FP32: blocks of 4 tiles; a C loop ran slower with 8)."""

SHORT_RUN_BYTES = 256
"""The longest contiguous run of a Copy/ReLU tile that `_Scheduler.block_short_runs`
blocks: a run of a few lines, whose partial lines the next runs need again."""

GATHERED_RUN_LINES = 2
"""`gather_short_runs`: lines of in0 the runs of one gathered block span (at least)."""

RUN_BLOCK_BYTES = 512
"""Contiguous bytes per row of a block of short runs (`_Scheduler.block_short_runs`):
eight lines, as the staged transposes write (`STAGE_RUN_BYTES` in the lowering)."""

RUN_BLOCK_ROWS = 8
"""Rows of a block of short runs along the crowding loop (`_Scheduler.block_short_runs`):
fewer than an L1 set's ways, so that a block's lines stay until the block ends."""

FLOPS_PER_LANE_CYCLE = 4
"""Flops per vector lane and cycle of one core: two FMA pipes, 2 flops each."""


MEMORY_BYTES_PER_CYCLE = 8
"""Bytes one core reads from memory per cycle, streaming (a batched GEMV's 25 MiB
matrix in 0.76 ms on the 2-vCPU Zen 4 guest at 3.7 GHz: about 9)."""


def fork_pays(flops: float, moved: float, machine: Host, threads: int,
              element_width: int = 4, from_memory: float = 0.0) -> bool:
    """Whether work of `flops` (and `moved` bytes, and `from_memory` bytes of inputs
    read from memory) run by `threads` threads saves more time than one
    fork/join costs, at the host's per-core rate: T threads save (1 - 1/T) of
    the one-thread time, a fork/join costs FORK_JOIN_CYCLES
    (FORK_JOIN_CYCLES_GUEST on a virtualized host) x ceil(log2 T). Below that a
    kernel at T threads is slower than at one."""
    if threads <= 1:
        return False
    fork = FORK_JOIN_CYCLES_GUEST if machine.virtualized else FORK_JOIN_CYCLES
    cost = fork * max(1, (threads - 1).bit_length())
    saved = 1.0 - 1.0 / threads
    compute = flops / (FLOPS_PER_LANE_CYCLE * machine.lanes(element_width))
    copy = moved / machine.vector_bytes  # a vector load and store per cycle
    return max(compute, copy, from_memory / MEMORY_BYTES_PER_CYCLE) * saved >= cost


NEST_STEPS = 16
"""Steps the scheduler tries on single loop nests (reorder, fuse, split). Each is a
pass over the whole configuration, so a schedule of many different nests gets
its first ones scheduled and keeps the others as written: time linear in its
size. (Nests over the same axes share their steps.)"""

SCRIPT_ATTR = "script"
"""The attribute of teir.config holding the steps the auto-scheduler applied."""

NORMALIZE = ("teir-canonicalize-guards", "teir-drop-unit-iterations")
LIFT = ("teir-lift-gemm", "fold-guarded-reduction", "teir-lift-brgemm",
        "lift-elementwise", "teir-canonicalize-guards")


@dataclass(frozen=True)
class Knobs:
    """The scheduler's choices that the tuner may override (None: from the host)."""

    k_block: int | None = None
    """K extent (batch x k) per microkernel call; larger ones get their outer K axis split."""
    m_block: int | None = None
    """Rows of A per microkernel call; larger ones get their M axis split."""
    parallel_iterations: int | None = None
    """Parallel iterations to aim for (default: 4 per thread); 1 disables parallel loops."""
    fuse: bool = True
    """Fuse contiguous nested loops of the same kind first."""


class _Scheduler:
    """Applies steps to one configuration (held by a module of its own)."""

    def __init__(self, module: builtin.ModuleOp, config: ConfigOp, ctx: Context,
                 machine: Host, threads: int, knobs: Knobs):
        self.module = module
        self.config = config
        self.ctx = ctx
        self.host = machine
        self.threads = threads
        self.knobs = knobs
        self.script: list[dict] = []
        self.text = str(config)
        """The configuration as printed, to tell whether a step changed it."""
        self.nest_steps = NEST_STEPS

    def step(self, step: dict) -> bool:
        """Applies `step`; True when it changed the configuration (then it is recorded).

        A refused step (TransformError) leaves the configuration as it was: a
        transformation is tried on a copy. The normalizing and lifting passes
        never refuse (they rewrite what matches, and say whether anything did),
        so they work in place."""
        transformation = make_step(step)
        if isinstance(transformation, Rewriting):
            if not transformation.rewrite(self.module):
                return False
            trial = self.module
        else:
            trial = self.module.clone()
            try:
                transformation.apply(self.ctx, trial)
            except TransformError:
                return False
        (config,) = [op for op in trial.walk() if isinstance(op, ConfigOp)]
        text = str(config)
        if text == self.text:
            return False
        self.module, self.config, self.text = trial, config, text
        self.script.append(step)
        return True

    def nest_step(self, step: dict) -> bool:
        """`step` for one loop nest, while the budget of such steps lasts."""
        if self.nest_steps <= 0:
            return False
        self.nest_steps -= 1
        return self.step(step)

    # -- 1b. loop order of plain nests ----------------------------------------------

    def order_plain_nests(self) -> None:
        """Chains of nested loops above scalar primitives only (a plain nest, as a
        user or einsum_config writes it) in memory order: by out stride, largest
        outermost, reduction loops innermost in their own order (moving one
        past another would change the order of a sum). Whatever order the nest
        came in, fusion and lifting then see the same one."""
        # Chains lie in disjoint subtrees and teir-reorder finds one by its axes (and
        # reorders every chain over them), so the steps stay valid while earlier
        # ones rebuild the configuration, and one step serves all equal chains.
        steps: dict[tuple[str, ...], dict] = {}
        for top in self.config.schedule.walk_nodes():
            if not isinstance(top, IterOp) or not self._chain_top(top):
                continue
            chain = [top]
            while isinstance(child := chain[-1].only_child, IterOp):
                chain.append(child)
            if len(chain) < 2 or any(
                prim.all_role_axes for prim in self._primitives_below(chain[-1])
            ):
                continue
            if self.unit_everywhere(chain[-1].axis_op()):
                continue  # an element-wise loop innermost, written so (see the doc)
            order = sorted(chain, key=lambda n: -abs(n.axis_op().stride_on("out")))
            if order != chain:
                axes = tuple(n.axis_id for n in order)
                steps.setdefault(axes, {"op": "reorder", "order": list(axes)})
        for step in steps.values():
            self.nest_step(step)

    def unit_everywhere(self, axis: AxisOp) -> bool:
        """Whether `axis` has unit stride on every tensor of a Contraction: a loop
        over it innermost, inside the sums (`einsum`'s `ij,ij->j`, whose sums run
        down columns), is an element-wise multiply-add along contiguous memory that
        LLVM vectorizes, each out element summed in its order all the same."""
        config = self.config
        if not any(p.kind is OperationKind.CONTRACTION for p in config.primitives):
            return False
        width = max(p.element_width for p in config.primitives)
        return axis.size > 1 and all(abs(axis.stride_on(t)) == width
                                     for t in config.tensor_names)

    @staticmethod
    def _chain_top(node: IterOp) -> bool:
        parent = node.parent_op()
        return not (isinstance(parent, IterOp) and parent.only_child is node)

    @staticmethod
    def _primitives_below(node: IterOp) -> list[PrimitiveOp]:
        return [n.primitive_op() for n in node.walk() if isinstance(n, InvokeOp)]

    # -- 2. fusion ------------------------------------------------------------------

    def kind(self, axis_id: str) -> tuple[bool, ...]:
        axis = self.config.axis(axis_id)
        return tuple(axis.stride_on(t) != 0 for t in self.config.tensor_names)

    def contiguous(self, outer: str, inner: str) -> bool:
        """teir-fuse-axes' stride condition (checked here: a refused step costs a pass)."""
        a, b = self.config.axis(outer), self.config.axis(inner)
        return all(a.stride_on(t) == b.size * b.stride_on(t) for t in self.config.tensor_names)

    def fuse_contiguous(self) -> None:
        # teir-fuse-axes fuses every pair of nodes over the two axes, so a pair of
        # axes is tried once: a refusal stands (fusing other axes changes neither
        # their strides nor the guards on or below them).
        tried: set[tuple[str, str]] = set()
        changed = True
        while changed:
            changed = False
            for node in self.config.schedule.walk_nodes():
                inner = node.only_child if isinstance(node, IterOp) else None
                if not isinstance(inner, IterOp):
                    continue
                pair = (node.axis_id, inner.axis_id)
                if pair in tried:
                    continue
                tried.add(pair)
                if self.kind(node.axis_id) != self.kind(inner.axis_id):
                    continue
                if self.keeps_y_widened(*pair):
                    continue
                if not self.contiguous(*pair) or names_axis(inner, set(pair)):
                    continue
                if self.nest_step({"op": "fuse-axes", "outer": pair[0], "inner": pair[1]}):
                    changed = True
                    break

    def fuse_into_roles(self) -> None:
        """A loop that continues an M or N role axis of the GEMM below it (a flat
        record's parallel p over the BRGEMM's N axis q in `trus,pqtu->pqrs`) goes
        into that axis (teir-fuse-axes on a role axis): one call over both, as the
        einsum front end's records have it, whose calls keep a panel over every
        column (README, Auto-scheduler). The loop threads would share is then
        chosen among the others."""
        tried: set[tuple[str, str]] = set()
        while (pair := next(self._role_continuations(tried), None)) is not None:
            self.nest_step({"op": "fuse-axes", "outer": pair[0], "inner": pair[1]})

    def _role_continuations(self, tried: set[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        """(loop axis, role axis) pairs not in `tried` (added as they are given) that
        `fuse_into_roles` may fuse: the loop continues an M or N role axis, which no
        node iterates, of the GEMM below it, and every primitive below has it."""
        nodes = [n for n in self.config.schedule.walk_nodes() if isinstance(n, IterOp)]
        iterated = {n.axis_id for n in nodes}
        for node in nodes:
            prims = self._primitives_below(node)
            gemms = [p for p in prims if p.kind is OperationKind.CONTRACTION
                     and p.matched_kernel().is_gemm]
            if not gemms:
                continue
            for role in (Role.M, Role.N):
                for axis in gemms[0].role_axes(role):
                    pair = (node.axis_id, axis.axis_id)
                    if axis.axis_id in iterated or pair in tried:
                        continue
                    tried.add(pair)
                    if (self.contiguous(*pair) and not self.keeps_y_widened(*pair)
                            and all(axis.axis_id in {a.axis_id for a in p.all_role_axes}
                                    for p in prims)):
                        yield pair

    def keeps_y_widened(self, outer: str, inner: str) -> bool:
        """Whether two loops over free indices of an FP16 Contraction's broadcast
        operand Y stay apart: Y fused over both would be too large for the
        microkernel to widen to f32 whole (`widened_bytes`), the inner one alone
        is not, and a loop over the other operand's free indices would call the
        kernel again on the same Y. A whole widened Y is kept from call to call;
        one too large is widened again, panel by panel, at every call
        (`trus,pqtu->pqrs`: p and q fused, all of B widened for each r). Y is
        the input without out's unit-stride index (the vectors run along it)."""
        config = self.config
        if not self.widens_operands():
            return False
        axes = config.axes
        moving = [a for a in axes if a.stride_on("out") != 0]
        if not moving or set(config.tensor_names) != {"in0", "in1", "out"}:
            return False
        unit = min(moving, key=lambda a: abs(a.stride_on("out")))
        x = [t for t in ("in0", "in1") if unit.stride_on(t) != 0]
        if len(x) != 1:
            return False
        y = "in1" if x == ["in0"] else "in0"
        first, second = config.axis(outer), config.axis(inner)
        if first.stride_on(x[0]) != 0 or first.stride_on(y) == 0:
            return False  # not free indices of Y
        if not any(a is not unit and a.stride_on(y) == 0 and a.stride_on(x[0]) != 0
                   for a in moving):
            return False  # no other call reads the same Y
        k = prod(a.size for a in axes if a.stride_on("out") == 0)
        budget = widened_bytes(self.host.scratch_bytes)
        wide = 4 * k  # bytes of one f32 column of Y over the K extent
        return second.size * wide <= budget < first.size * second.size * wide

    # -- 3. transposing tiles ---------------------------------------------------------

    def block_short_runs(self) -> None:
        """Copy/ReLU tiles of a contiguous run of at most `SHORT_RUN_BYTES` (unit stride
        on in0 and on out) whose innermost loop steps one tensor by a stride whose
        rows crowd one or two L1 sets (`teir_dialect.host.l1_sets`) while the loop
        above it continues the run on that tensor: each run of that loop reads (or
        writes) a line or two that the next run of the loop above needs again,
        evicted in between by the crowd. Both loops are tiled (`teir-tile`), the
        outer one by enough indices for `RUN_BLOCK_BYTES` of contiguous run, the
        inner by `RUN_BLOCK_ROWS` (`abc->bac` 64 x 128 x 16, `abcd->cabd` 32 x 32 x
        64 x 8: README, Benchmarks)."""
        steps: dict[tuple[str, str], dict] = {}
        for invoke in [n for n in self.config.schedule.walk_nodes() if isinstance(n, InvokeOp)]:
            run_bytes = _run_bytes(invoke.primitive_op())
            if run_bytes is None:
                continue  # (before the loops: a node's only_child counts its children)
            chain = exclusive_loops(invoke)
            if len(chain) < 2 or any(n.parallel or n.guard is not None for n in chain[:2]):
                continue
            inner, outer = chain[0].axis_op(), chain[1].axis_op()
            crowded = [t for t in ("in0", "out") if outer.stride_on(t) == run_bytes
                       and l1_sets(inner.stride_on(t)) <= BUFFERED_SETS]
            if run_bytes > SHORT_RUN_BYTES or not crowded:
                continue
            sizes = [min(outer.size, max(1, RUN_BLOCK_BYTES // run_bytes)),
                     min(inner.size, RUN_BLOCK_ROWS)]
            if sizes != [outer.size, inner.size]:
                steps.setdefault((outer.axis_id, inner.axis_id), {
                    "op": "tile", "axes": [outer.axis_id, inner.axis_id], "sizes": sizes})
        for step in steps.values():
            self.nest_step(step)

    def gather_short_runs(self) -> None:
        """Copy/ReLU tiles of a contiguous run shorter than a line (unit stride on in0
        and out) whose continuation on in0 (the loop stepping in0 by the run) is a
        loop above the innermost: in out's order the runs that share in0's lines
        are read far apart, each line from memory again (`abcd->cbad` 23 x 353 x
        299 x 18 BF16: 36-byte runs, 35% of a copy). That loop is split by
        about `GATHERED_RUN_LINES` lines of in0 and its inner part goes innermost,
        so that consecutive tiles read in0 contiguously and write a few streams of
        out."""
        for invoke in [n for n in self.config.schedule.walk_nodes() if isinstance(n, InvokeOp)]:
            run_bytes = _run_bytes(invoke.primitive_op())
            if run_bytes is None or run_bytes >= CACHE_LINE:
                continue
            chain = exclusive_loops(invoke)
            if len(chain) < 2 or any(n.parallel or n.guard is not None for n in chain):
                continue
            continuing = [n for n in chain[1:] if n.axis_op().stride_on("in0") == run_bytes
                          and n.axis_op().stride_on("out") != 0]
            if not continuing:
                continue
            axis = continuing[0].axis_op()
            target = -(-GATHERED_RUN_LINES * CACHE_LINE // run_bytes)
            factors = [f for f in range(2, min(axis.size, 4 * target) + 1)
                       if axis.size % f == 0 and f < axis.size]
            if not factors:
                continue
            factor = min(factors, key=lambda f: (abs(f - target), f))
            before = {n.axis_id for n in chain}
            name = invoke.node_id
            if not self.nest_step({"op": "split", "axis": axis.axis_id, "factor": factor}):
                continue
            moved = [n for n in self.config.schedule.walk_nodes()
                     if isinstance(n, InvokeOp) and n.node_id == name]
            if len(moved) != 1:
                continue
            loops = [n.axis_id for n in reversed(exclusive_loops(moved[0]))]
            inner = [x for x in loops if x not in before]
            if len(inner) != 1:
                continue
            self.nest_step({"op": "reorder",
                            "order": [x for x in loops if x != inner[0]] + inner})

    def large_output(self) -> bool:
        """Whether out is streamed past the caches (teir-mark-streamed-out's
        `streamed_out`: the lowering streams its transposes)."""
        return streamed_out(self.config)

    def widen_transposes(self) -> None:
        """Transposing Copy/ReLU tiles that the lowering runs through buffers in the L1
        (`teir_dialect.host.buffers_transpose`: short rows, those of out in one or
        two L1 sets, where a block's stores evict the lines the next tiles
        write): the sequential loop directly around the tile that continues its
        rows of out is split into blocks of enough indices for `WIDEN_ROW_BYTES`
        per row, and the blocks' loop goes into the tile (`teir-widen-tile`), so
        that the buffers take a run of tiles at a time. The loop over the blocks
        stays for threads."""
        large = self.large_output()
        for invoke in [n for n in self.config.schedule.walk_nodes() if isinstance(n, InvokeOp)]:
            prim = invoke.primitive_op()
            loop = invoke.parent_op()
            if (not _transposing_tile(prim) or len(prim.all_role_axes) != 2
                    or not isinstance(loop, IterOp) or loop.only_child is not invoke
                    or loop.parallel or loop.guard is not None):
                continue
            width = prim.element_width
            (row,), (column,) = _unit_axes(prim, "out"), _unit_axes(prim, "in0")
            row_bytes = row.size * width
            if (not buffers_transpose(column.stride_on("out"), row_bytes, column.size * width,
                                      large)
                    or loop.axis_op().stride_on("out") != row_bytes):
                continue
            axis = loop.axis_op()
            block = -(-WIDEN_ROW_BYTES // row_bytes)
            if axis.size <= block:
                self.nest_step({"op": "widen-tile", "axis": axis.axis_id})
                continue
            taken = taken_ids(self.config).axes
            inner = fresh_id(f"{axis.axis_id}_in", taken)
            remainder = fresh_id(f"{axis.axis_id}_rem", taken | {inner})
            if not self.nest_step({"op": "split", "axis": axis.axis_id, "factor": block,
                                   "inner": inner}):
                continue
            self.nest_step({"op": "widen-tile", "axis": inner})
            if axis.size % block:
                self.nest_step({"op": "widen-tile", "axis": remainder})

    def schedule_transposes(self) -> None:
        """Transposing Copy/ReLU tiles (unit strides on in0 and out on different axes)
        whose out takes much of the host's last-level cache (`Host.streamed_bytes`):
        their out is written with streaming stores (whole lines that skip the cache,
        `teir_lowering.codegen.tile_primitives`), so what the schedule around them
        can still help is the reads.

        - A tile loads its rows of in0 (one per index of its unit-stride axis on
          out) a block at a time. When those rows, and the rows of out, lie
          multiples of `SET_SPAN` apart, all of them share one L1 set (and few L2
          sets). The rows are then cut into blocks of `STREAMED_ROW_LINES` lines
          of out (the fewest that the streaming stores take), the loop over the
          blocks outside the others (next step), so that the loops around the
          tile sweep fewer rows of in0 at a time (`abcd->dcba` 64^4 FP32: 32 of
          the 64 rows, 1 MiB apart).
        - The loops whose whole subtree is the tile follow in0's memory order,
          largest in0 stride outermost, so that consecutive tiles read
          neighbouring lines of in0. Out's order, which `order_plain_nests` chose
          before the tile existed, reads in0 a large stride apart from one tile
          to the next (`abcd->dcba` 64^4: 16 KiB). A tile whose rows of out are
          stored plainly, lines of out read for ownership, takes out's order
          instead, with in0's rows continued innermost (`_transpose_order`).

        The README's benchmark notes give what each step gained."""
        if not self.large_output():
            return
        cut = {axis for p in self.config.primitives if _transposing_tile(p)
               if (axis := self._split_aliased_rows(p)) is not None}
        steps: dict[tuple[str, ...], dict] = {}
        for invoke in self.config.schedule.walk_nodes():
            if not isinstance(invoke, InvokeOp) or not _transposing_tile(invoke.primitive_op()):
                continue
            chain = exclusive_loops(invoke)[::-1]  # outermost first
            if len(chain) < 2 or any(n.guard is not None for n in chain):
                continue
            innermost = chain[-1]
            if (innermost.axis_id in cut and not innermost.parallel
                    and all(n.parallel for n in chain[:-1])):
                # a parallel nest as written around the loop of the row cut: that
                # loop joins it, so that the nest stays one parallel loop
                steps.setdefault(("parallel", innermost.axis_id),
                                 {"op": "parallelize", "axis": innermost.axis_id})
            elif len({n.parallel for n in chain}) > 1:
                continue  # mixed policies: the order is the schedule's
            order = _transpose_order(invoke.primitive_op(), chain, self.host)
            if order != chain:
                axes = tuple(n.axis_id for n in order)
                steps.setdefault(axes, {"op": "reorder", "order": list(axes)})
        for step in steps.values():
            self.step(step)

    def _split_aliased_rows(self, prim: PrimitiveOp) -> str | None:
        """The row cut of `schedule_transposes` for one tile, when it applies: the
        axis whose loop over the blocks it made, else None."""
        width = prim.element_width
        rows, columns = _unit_axes(prim, "out"), _unit_axes(prim, "in0")
        if len(rows) != 1 or len(columns) != 1:
            return None
        (row,), (column,) = rows, columns
        block = min(STREAMED_ROW_LINES * CACHE_LINE // width, STREAMED_ROWS)
        aliased = (row.stride_on("in0") % SET_SPAN == 0
                   and column.stride_on("out") % SET_SPAN == 0)
        if aliased and row.size > block and row.size % block == 0 and self.nest_step(
                {"op": "split", "axis": row.axis_id, "factor": block}):
            return row.axis_id
        return None

    # -- 5. cache tiles ---------------------------------------------------------------

    def contractions(self) -> list[PrimitiveOp]:
        return [
            p for p in self.config.primitives
            if p.kind is OperationKind.CONTRACTION
            and p.matched_kernel().is_gemm
        ]

    def k_target(self, prim: PrimitiveOp) -> int:
        """K extent per call that keeps a panel of B, K x (register columns), in
        half the L1. A GEMV's vector (B of one column, or A of one row) counts as
        `GEMV_PANEL_COLUMNS` columns, or as one where the matrix streams from
        memory (`streamed_in`), so that each call reads the matrix's rows whole
        or in long runs, which the prefetchers follow (a matrix contiguous along
        its columns goes to `streams_columns` instead); K blocks of the register
        columns' panel read a 4096 x 4096 matrix in stripes of 1 KiB a row
        (README, Benchmarks)."""
        columns = max(4, self.host.vector_registers // 2)
        kernel = prim.matched_kernel()
        if min(kernel.get("m"), kernel.get("n")) == 1:
            columns = 1 if streamed_in(self.config) else GEMV_PANEL_COLUMNS
        return self.knobs.k_block or max(64, self.host.l1d // 2 // (prim.element_width * columns))

    def streams_columns(self, prim: PrimitiveOp) -> bool:
        """Whether `prim` is a GEMV as a GEMM (one free dimension of extent 1) whose
        long free axis is unit-stride on its operand and K is not: the microkernel
        then reads that operand a few vectors of a new column at each K step. Cut
        into short K blocks (`GEMV_K_BLOCK`), each call streams whole columns and
        the result stays in L1 from call to call (`ij,j->i` on a transposed
        matrix: README, Benchmarks: slow paths)."""
        kernel = prim.matched_kernel()
        if kernel.kind_name != KernelKind.GEMM or min(kernel.get("m"), kernel.get("n")) != 1:
            return False
        role, tensor = (Role.M, "in0") if kernel.get("n") == 1 else (Role.N, "in1")
        long, ks = prim.role_axes(role), prim.role_axes(Role.K)
        width = prim.element_width
        return (len(long) == 1 and len(ks) == 1 and long[0].stride_on(tensor) == width
                and abs(ks[0].stride_on(tensor)) != width)

    def k_split(self, prim: PrimitiveOp) -> int | None:
        """The factor `tile_contractions` splits the outer K axis of `prim` by (None: no split)."""
        kernel = prim.matched_kernel()
        if self.streams_columns(prim):
            k = kernel.get("k")
            return GEMV_K_BLOCK if k > 2 * GEMV_K_BLOCK and k_move_problem(prim) is None else None
        batch = kernel.get("br_size") if kernel.kind_name == KernelKind.BRGEMM else 1
        k, k_target = kernel.get("k"), self.k_target(prim)
        if batch * k <= 2 * k_target or k_move_problem(prim) is not None:
            return None
        if kernel.kind_name == KernelKind.BRGEMM and k < k_target:
            # Each block of the batch reads and writes the call's whole C again: one
            # beyond half the L2 then streams from the L3 per block, which cost more
            # than B's panel leaving the L1 (the spec's BRGEMM in FP64, C 1 MiB:
            # README, Benchmarks); where the L3 serves like memory, beyond a quarter,
            # as the operand streaming through the L2 with it evicts it
            c_bytes = kernel.get("m") * kernel.get("n") * prim.element_width
            share = 4 if self.host.l3_serves_like_memory else 2
            if c_bytes > self.host.l2 // share:
                return None
            return dividing_block(batch, max(1, k_target // k))
        return dividing_block(k, k_target) if kernel.kind_name == KernelKind.GEMM else None

    def m_target(self, prim: PrimitiveOp, k_block: int) -> int:
        """Rows per call that keep A's block, m x `k_block`, in half the L2."""
        width = prim.element_width
        rows = self.host.lanes(width) * 2
        return self.knobs.m_block or max(
            rows, (self.host.l2 // 2) // (k_block * width) // rows * rows)

    def m_split(self, prim: PrimitiveOp, k_block: int) -> int | None:
        """The factor `tile_contractions` splits the M axis of `prim` by, its calls
        `k_block` deep (None: no split)."""
        m_target, m = self.m_target(prim, k_block), prim.matched_kernel().get("m")
        if m > 2 * m_target and not self.streams_columns(prim):
            return dividing_rows(m, m_target, self.host.lanes(prim.element_width))
        return None

    def blocked_rows(self, prim: PrimitiveOp) -> int:
        """The rows of `prim`'s calls once `tile_contractions` has blocked it."""
        kernel = prim.matched_kernel()
        k = kernel.get("k")
        factor = self.k_split(prim)
        if factor is None:
            k_block = k * max(1, kernel.get("br_size"))
        else:
            k_block = factor * k if kernel.kind_name == KernelKind.BRGEMM else factor
        return self.m_split(prim, k_block) or kernel.get("m")

    def tile_contractions(self) -> None:
        """K and M blocks per contraction, the largest first: an axis that a larger
        one shares is blocked for it alone (the one-row remainder of a GEMM whose
        rows were cut for threads is a GEMV that wants K blocks of 8; splitting the
        shared K axis for it cut the GEMM's K into blocks of 8 too)."""
        decided: set[str] = set()
        for prim in sorted(self.contractions(), key=_volume, reverse=True):
            if prim.parent is None:
                continue
            outer = prim.role_axes(Role.K)[0]
            if outer.axis_id not in decided and (factor := self.k_split(prim)) is not None:
                self.nest_step({"op": "split", "axis": outer.axis_id, "factor": factor})
            decided.add(outer.axis_id)
            prim = self.config.find_primitive(prim.primitive_id) or prim
            if prim.parent is None or not prim.matched_kernel().is_gemm:
                continue
            kernel = prim.matched_kernel()
            k_block = kernel.get("k") * max(1, kernel.get("br_size"))
            if (rows := self.m_split(prim, k_block)) is not None:
                (m_axis,) = prim.role_axes(Role.M)
                self.nest_step({"op": "split", "axis": m_axis.axis_id, "factor": rows})

    # -- 4. threads ---------------------------------------------------------------------

    def parallelize(self) -> None:
        if any(isinstance(n, IterOp) and n.parallel for n in self.config.schedule.walk_nodes()):
            self.sequentialize_unpaid()
            return  # otherwise the schedule says how to run in parallel
        # inputs streamed from memory: one block per thread, each reading runs as
        # long as the rows allow (more blocks cut the rows of a column-streaming
        # GEMV, `ji,j->i`, into pieces the prefetchers follow worse); so too for an
        # FP16 Contraction, each of whose blocks widens the operand they share again
        # (`ij,jk->ik` 256^3: all of A once per block; README, Parallel policy)
        wanted = self.knobs.parallel_iterations or (
            self.threads if streamed_in(self.config) or self.widens_operands()
            else 4 * self.threads)
        if self.threads <= 1 or wanted <= 1 or not self.worth_threads():
            return
        iterations = 1
        forks = 1  # a parallel loop under sequential ones forks once per their iteration
        node = self.config.schedule.roots[0] if len(self.config.schedule.roots) == 1 else None
        while isinstance(node, IterOp) and iterations < wanted:
            if node.guard is not None or not self.worth_threads(forks):
                break
            axis = node.axis_op()
            moves_out = axis.stride_on("out") != 0 and axis.size > 1
            if moves_out and self.step({"op": "parallelize", "axis": node.axis_id}):
                iterations *= axis.size
            elif iterations == 1:
                forks *= axis.size
            else:
                break  # a parallel loop below this one would fork inside each thread
            node = node.only_child
        if iterations < wanted:
            self.split_for_threads(-(-wanted // iterations))

    def widens_operands(self) -> bool:
        """Whether a Contraction's operands are widened to f32 per tile on this host
        (`Host.widens_before_fmas`: FP16, and BF16 where shuffles take FMA ports;
        elsewhere BF16 is widened by a shift as it is read), which
        `keeps_y_widened` and `parallelize` weigh."""
        return any(p.kind is OperationKind.CONTRACTION
                   and self.host.widens_before_fmas(p.data_type.storage_type.name)
                   for p in self.config.primitives)

    def worth_threads(self, forks: int = 1) -> bool:
        """Whether the work of one fork/join (the whole work over `forks` of them)
        pays for it on this host at this thread count (`fork_pays`)."""
        flops, moved = work(self.config)
        # 16-bit products are summed in f32 lanes: their rate is FP32's
        widths = [max(4, p.element_width) for p in self.config.primitives
                  if p.kind is OperationKind.CONTRACTION]
        # inputs read from memory at every call (teir-mark-streamed-out): a GEMV's
        # time is its matrix's bytes, at a multiply-add each far below the FMA rate
        read = input_bytes(footprint(self.config)) if streamed_in(self.config) else 0
        return fork_pays(flops / forks, moved / forks, self.host, self.threads,
                         max(widths, default=4), read / forks)

    def sequentialize_unpaid(self) -> None:
        """Parallel loops the schedule came with whose fork/join does not pay (a
        small configuration written parallel) run on one thread: at two threads
        it would be slower than at one."""
        nodes = [n for n in self.config.schedule.walk_nodes()
                 if isinstance(n, IterOp) and n.parallel]
        outermost = [n for n in nodes
                     if not any(isinstance(a, IterOp) and a.parallel for a in n.ancestors())]
        forks = sum(prod(a.axis_op().size for a in n.ancestors()) for n in outermost)
        if self.threads > 1 and self.worth_threads(max(1, forks)):
            return
        for axis_id in dict.fromkeys(n.axis_id for n in nodes):
            self.step({"op": "sequentialize", "axis": axis_id})

    def split_for_threads(self, wanted: int) -> None:
        """Too few loop iterations to share (none, or fewer than `wanted` more per
        parallel one): cut the widest free role axis of the largest Contraction
        into `wanted` blocks, made parallel directly inside the parallel loops."""
        invocations = [n for n in self.config.schedule.walk_nodes() if isinstance(n, InvokeOp)]
        prims = [inv.primitive_op() for inv in invocations]
        contractions = [p for p in prims if p.kind is OperationKind.CONTRACTION]
        if not contractions:
            return
        largest = max(contractions, key=lambda p: _volume(p))
        users = [inv for inv, p in zip(invocations, prims)
                 if p.primitive_id == largest.primitive_id]
        if any(not _directly_parallel(inv) for inv in users):
            return  # a sequential loop between: the new loop would fork inside it
        nested = any(a.parallel for inv in users for a in inv.ancestors())
        forks = sum(prod(a.axis_op().size for a in inv.ancestors() if not a.parallel)
                    for inv in users)
        if not self.worth_threads(forks):
            return  # a loop around it would fork once per iteration of the loops above
        free = [a for role in (Role.N, Role.M) for a in largest.role_axes(role)]
        lanes = self.host.lanes(max(4, largest.element_width))  # of the accumulators
        rows = largest.role_axes(Role.M)

        def blocked(axis: AxisOp) -> int:
            """The extent a call sees along `axis` once cache blocking (inside
            the threads' loop) has cut the rows: threads share the longer one."""
            if axis in rows and largest.matched_kernel().is_gemm:
                return min(axis.size, self.blocked_rows(largest))
            return axis.size

        for axis in sorted(free, key=lambda a: -blocked(a)):
            if axis.size < 2 * min(wanted, self.threads):
                continue
            worth = self.blocks_worth(largest, axis, wanted)
            if worth < min(wanted, self.threads):
                continue
            block = thread_block(axis.size, worth, lanes, self.threads)
            before = (self.module, self.config, self.text, len(self.script))
            if self.step({"op": "split", "axis": axis.axis_id, "factor": block}):
                self.step({"op": "parallelize", "axis": axis.axis_id})
                if nested and not _one_parallel_chain(self.config):
                    # loops side by side inside a parallel one run sequentially
                    self.module, self.config, self.text, length = before
                    del self.script[length:]
                return

    def blocks_worth(self, prim: PrimitiveOp, axis: AxisOp, wanted: int) -> int:
        """How many thread blocks to cut `axis` (a free axis of `prim`) into, at most
        `wanted`: each block reads all of the operand `axis` does not index (B for
        a cut along M, K x N). When that operand outgrows half the L2 each block
        streams it from farther out, so a block keeps at least
        `REREAD_ROWS_PER_BYTE` x (element bytes) rows: then the re-read costs at
        most 1 / 16 byte a flop (`cad,dcb->ab`, K = 10201: blocks of 8 rows read B
        13 times). Fewer blocks than threads (than `wanted`, when fewer): the axis
        is not cut."""
        width = prim.element_width
        others = [t for t in ("in0", "in1") if axis.stride_on(t) == 0]
        if len(others) != 1:
            return wanted
        (other,) = others
        if prod(a.size for a in prim.all_role_axes
                if a.stride_on(other) != 0) * width <= self.host.l2 // 2:
            return wanted
        return min(wanted, axis.size // (REREAD_ROWS_PER_BYTE * width))

    def run(self) -> list[dict]:
        for name in NORMALIZE:
            self.step({"op": name})
        self.order_plain_nests()
        if self.knobs.fuse:
            self.fuse_contiguous()
        for name in LIFT:
            self.step({"op": name})
        if self.knobs.fuse:
            self.fuse_into_roles()
        self.widen_transposes()
        self.block_short_runs()
        self.gather_short_runs()
        self.schedule_transposes()
        self.parallelize()
        self.tile_contractions()
        return self.script


GEMV_K_BLOCK = 8
"""K steps per call of a GEMV that streams its matrix's columns (`streams_columns`)."""

GEMV_PANEL_COLUMNS = 4
"""Columns a GEMV's vector counts as in `k_target` when its matrix is held by the
caches: K blocks of a quarter of half the L1 (1024 FP32 elements on a 32 KiB L1),
where the register columns' 256 cut `ij,j->i` 2000 x 600 into stripes and a
remainder of 88 (README, Benchmarks)."""

REREAD_ROWS_PER_BYTE = 8
"""Rows of a thread block per byte of element, when each block re-reads the other
operand from beyond the L2 (`blocks_worth`): 2 x rows flops per element read, so
1 / 16 byte a flop."""


def vector_pieces(extent: int, lanes: int) -> int:
    """The register-block shapes a microkernel needs along a dimension of `extent`:
    one of full vectors of `lanes`, then one per power of two left over (the
    GEMM planner's segments); each is a copy of the microkernel's loop nest."""
    return (extent >= lanes) + (extent % lanes).bit_count()


def dividing_block(extent: int, target: int) -> int:
    """`target`, or the largest divisor of `extent` from half of it up: K blocks that
    divide K leave no remainder primitive, a second microkernel to compile (with
    one per block of a cut free axis: TCCG 24's K of 900 in 3 blocks of 300, not
    384, 384 and 132), and K blocks half as deep only read C twice as often."""
    for block in range(target, (target - 1) // 2, -1):
        if extent % block == 0:
            return block
    return target


def dividing_rows(extent: int, target: int, lanes: int) -> int:
    """`target`, or a divisor of `extent` from half of it up, whichever needs the
    fewest register-block shapes (`vector_pieces`), a remainder block counted as
    one more (its primitive is a second microkernel), then the largest: TCCG 19's
    GEMM rows, 2040 a thread, in 3 blocks of 680 = 42 x 16 + 8 (two shapes, one
    microkernel), not 768, 768 and 504 = 31 x 16 + 8 (three shapes, two)."""

    def shapes(block: int) -> int:
        rest = extent % block
        return vector_pieces(block, lanes) + (1 + vector_pieces(rest, lanes) if rest else 0)

    dividing = [b for b in range(target - 1, (target - 1) // 2, -1) if extent % b == 0]
    return min([target, *dividing], key=lambda b: (shapes(b), -b))


def thread_block(size: int, wanted: int, lanes: int, threads: int) -> int:
    """The block an axis of `size` is cut into for `wanted` to 2 * wanted parallel
    blocks: among those whose run on `threads` threads in vector operations (a
    narrow piece costs one, like a full vector; the remainder runs after the
    parallel loop) is within `RUN_MARGIN` of the shortest, the one needing the
    fewest register-block shapes (`vector_pieces`, the remainder block's counted
    too), then the shortest run, then without a remainder block (a second
    microkernel), then the count nearest `wanted`. Candidates are the blocks
    that divide `size` and those of whole vectors: 504 in blocks of 56 = 3 x 16
    + 8, not 63 = 3 x 16 + 8 + 4 + 2 + 1; 39597 (FP64) in 2 of 19792 and 13 left,
    not 3 of 13200 (the third, the remainder, runs on one thread after the
    parallel loop: TCCG 2); 464 in 14 blocks of 32 and one of 16,
    not 58 = 3 x 16 + 8 + 2, whose narrow vectors ran in every block; 300 in 9
    blocks of 32 and one of 12, not 15 of 20 = 16 + 4 (fewer shapes, but a
    quarter-filled vector in every block: a third longer run).
    ceil(size / wanted) when no candidate fits."""
    divisors = {d for n in range(1, isqrt(size) + 1) if size % n == 0 for d in (n, size // n)}
    # size / count rounded to whole vectors, for each count of blocks: up (count
    # blocks, the last shorter) and down (count whole ones and a short remainder)
    whole = {lanes * rounded for count in range(wanted, 2 * wanted + 1)
             for rounded in (-(-size // (count * lanes)), size // (count * lanes))
             if rounded} if lanes > 1 else set()
    fitting = [b for b in sorted(divisors | whole)
               if 0 < b < size and wanted <= -(-size // b) <= 2 * wanted]
    if not fitting:
        return -(-size // wanted)

    def shapes(block: int) -> int:
        rest = size % block
        return vector_pieces(block, lanes) + (vector_pieces(rest, lanes) if rest else 0)

    def ops(extent: int) -> int:  # vector operations along a block of `extent`
        return extent // lanes + (extent % lanes).bit_count()

    def run(block: int) -> int:
        return -(-(size // block) // threads) * ops(block) + ops(size % block)

    shortest = min(run(b) for b in fitting)
    near = [b for b in fitting if run(b) * RUN_MARGIN[1] <= shortest * RUN_MARGIN[0]]
    return min(near, key=lambda b: (shapes(b), run(b), size % b != 0,
                                    abs(-(-size // b) - wanted)))


RUN_MARGIN = (5, 4)
"""`thread_block`: blocks whose run is within 5/4 of the shortest compete on their
register-block shapes (fewer microkernel variants, less code); a longer run
loses outright."""


def _run_bytes(prim: PrimitiveOp) -> int | None:
    """The bytes of a Copy/ReLU tile that is one contiguous run (its one role axis of
    unit stride on in0 and out), else None."""
    width = prim.element_width
    runs = [a for a in _unit_axes(prim, "in0") if a.stride_on("out") == width]
    if not _unary(prim) or len(prim.all_role_axes) != 1 or len(runs) != 1:
        return None
    return runs[0].size * width


def _directly_parallel(node: InvokeOp) -> bool:
    """Whether the loops above `node` are all parallel (or all sequential): a loop
    made parallel right above it then joins theirs, or forks at the top."""
    policies = {a.parallel for a in node.ancestors()}
    return len(policies) <= 1


def _one_parallel_chain(config: ConfigOp) -> bool:
    """Whether the parallel loops form one chain of directly nested loops (which
    teir-outline-parallel collapses into one)."""
    parallel = [n for n in config.schedule.walk_nodes() if isinstance(n, IterOp) and n.parallel]
    return all(
        sum(1 for p in parallel if p.parent_op() is n.parent_op()) == 1 for n in parallel
    )


def _unary(prim: PrimitiveOp) -> bool:
    """Whether `prim` is a Copy or a ReLU from in0 into out (not in place)."""
    return prim.kind is OperationKind.COPY or (
        prim.kind is OperationKind.RELU and prim.config.tensor_count == 2)


def _unit_axes(prim: PrimitiveOp, tensor: str) -> list[AxisOp]:
    """The role axes of `prim` at unit stride on `tensor`."""
    return [a for a in prim.all_role_axes if a.stride_on(tensor) == prim.element_width]


def _transposing_tile(prim: PrimitiveOp) -> bool:
    """Whether `prim` is a Copy or unary ReLU tile whose unit-stride axis on in0 is
    not the one on out (a transpose, as `teir-lift-elementwise` makes them)."""
    if not _unary(prim):
        return False
    on_in, on_out = _unit_axes(prim, "in0"), _unit_axes(prim, "out")
    return bool(on_in) and bool(on_out) and not set(on_in) & set(on_out)


def _transpose_order(prim: PrimitiveOp, chain: list[IterOp],
                     machine: Host) -> list[IterOp]:
    """The loops of `chain` (whose whole subtree is the transposing tile `prim`) in the
    order `_Scheduler.schedule_transposes` gives them: in0's memory order, or,
    when the lowering stores the tile's rows of out plainly on `machine`
    (`teir_dialect.host.stores_rows_plainly`), out's, with the loop that
    continues in0's rows innermost: each line of out that a tile writes in part
    is finished by a tile soon after, still in the caches, and in0's rows are
    read as streams (HPTT's `abcde->edcba` 38 x 22 x 22 x 22 x 38 FP32, rows of
    152 bytes: README, Benchmarks)."""

    def stride(node: IterOp, tensor: str) -> int:
        return abs(node.axis_op().stride_on(tensor))

    width = prim.element_width
    rows, columns = _unit_axes(prim, "out"), _unit_axes(prim, "in0")
    if len(rows) == 1 and len(columns) == 1 and stores_rows_plainly(
            columns[0].stride_on("out"), rows[0].size * width, machine):
        by_out = sorted(chain, key=lambda n: (-stride(n, "out"), -stride(n, "in0")))
        run = columns[0].size * width
        return ([n for n in by_out if stride(n, "in0") != run]
                + [n for n in by_out if stride(n, "in0") == run])
    return sorted(chain, key=lambda n: (-stride(n, "in0"), -stride(n, "out")))


def _volume(prim: PrimitiveOp) -> int:
    volume = 1
    for axis in prim.all_role_axes:
        volume *= axis.size
    return volume


def auto_schedule(config: ConfigOp, ctx: Context, threads: int = 0,
                  machine: Host | None = None, knobs: Knobs = Knobs()) -> list[dict]:
    """Schedules `config` in place; returns the steps applied (also recorded on it)."""
    machine = machine or host()
    threads = threads or machine.cores
    func = config.parent_op()  # the function around it (through loops the config is in:
    assert func is not None  # a copy of a loop would keep using the function's values)
    while not isinstance(func.parent_op(), builtin.ModuleOp | None):
        func = func.parent_op()
        assert func is not None
    position = [op for op in func.walk() if isinstance(op, ConfigOp)].index(config)
    module = builtin.ModuleOp([])
    holder = func.clone()
    module.body.block.add_op(holder)
    mark_streamed_out(module, machine)  # read by large_output (and kept on config)
    # Transform steps name axes by id, and ids are only unique within one
    # configuration: the scheduler works on a copy that holds this one alone.
    copies = [op for op in module.walk() if isinstance(op, ConfigOp)]
    own = copies.pop(position)
    for other in copies:
        other.detach()
        other.erase()
    scheduler = _Scheduler(module, own, ctx, machine, threads, knobs)
    steps = scheduler.run()
    config.detach_region(config.body)
    config.add_region(scheduler.config.detach_region(scheduler.config.body))
    for mark in (STREAMED_ATTR, STREAMED_IN_ATTR):  # teir-mark-streamed-out's, kept
        if mark in scheduler.config.attributes:
            config.attributes[mark] = UnitAttr()
        else:
            config.attributes.pop(mark, None)
    config.forget_records()
    if steps:
        config.attributes[SCRIPT_ATTR] = StringAttr(json.dumps(steps))
    return steps


@dataclass(frozen=True)
class AutoSchedulePass(ModulePass):
    """Chooses and applies a schedule for every configuration (see the module docstring)."""

    name = "teir-auto-schedule"

    threads: int = 0
    """Threads to schedule for; 0: every core this process may use."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.threads < 0:
            raise TransformError(self.name, f"threads must be 0 or more, got {self.threads}")
        for config in [c for c in op.walk() if isinstance(c, ConfigOp)]:
            auto_schedule(config, ctx, self.threads)
