"""The machine TEIR compiles for, read from the machine itself.

Vector width and register count come from LLVM's view of the host CPU (the
features the JIT compiles with); cache sizes per core from Linux's sysfs
(`/sys/devices/system/cpu/cpu0/cache`), which reports what one core sees —
py-cpuinfo sums L1/L2 over cores on some hosts, so it is not used for sizes;
the model name from `/proc/cpuinfo`. Nothing is a constant tuned on one CPU:
the auto-scheduler and the microkernels size their tiles from this, and
every benchmark names the model it ran on.

`TEIR_HOST_CACHE` may override the cache sizes ("l1=32K,l2=512K,l3=32M") to
study a schedule for another machine; kernels still compile for this one.

`TEIR_HOST=NAME` (or `pinned(NAME)` in Python) replaces the whole description
by one of `PINNED_HOSTS`: what the scheduler and the planner decide then no
longer depends on the machine, which is how tests whose expected IR follows
the host stay green on every CI host (the lit suite runs pinned). Kernels
still compile for this CPU's instruction set (LLVM legalizes wider vectors),
so a pinned kernel runs correctly anywhere, only not at its best.
"""

from __future__ import annotations

import os
import platform
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)", re.IGNORECASE)
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


CACHE_LINE = 64
"""Bytes per cache line (x86)."""

SET_SPAN = 4096
"""Bytes between addresses that share an L1 data cache set on x86 (its size over its
ways: a 4 KiB page, as the L1 is indexed by the page offset)."""

CROWDED_SETS = 4
"""The fewest L1 sets that the stores of one transposed block may fall in before the
lowering walks the blocks down the rows of out instead of along them (`crowds`,
`teir_lowering.codegen.tile_primitives`, `TileEmitter.crowded`)."""

BUFFERED_SETS = 2
"""The most L1 sets that the rows of out of a transposing tile may fall in for it to go
through buffers (`buffers_transpose`: two only with short rows of in0, or an out
that is not large)."""

BUFFERED_SIDE_BYTES = 256
"""The longest rows of in0 and of out (bytes) of a tile that goes through buffers
(`buffers_transpose`)."""

BLOCK_ROWS = 16
"""The rows of a transposed block that `l1_sets` places."""

NARROW_MAX = 6
"""Transposes with a packed side of 2 to this many elements, fewer than a vector's
lanes, take the narrow forms (`teir_lowering.codegen.tile_primitives`,
`TileEmitter.narrow`): about log2(k) two-source permutes per vector
(`select_lanes`), against the L x L blocks' log2(L) shuffles on vectors of only k
lanes or fewer. `ab->ba` with a side of 3 to 8 elements, FP32 and FP64 on one Zen 5
host (README, Benchmarks): narrow faster up to 6, mixed at 7, slower at 8. Here,
not in the emitter, as the einsum frontend plans with it too."""

SHIFTED_MIN_LINES = 4
"""Lines of out per row (at least) for a tile whose rows of out are not whole lines
to store them shifted (`teir_lowering.codegen.tile_primitives`,
`TileEmitter.shifted_tile`): the rows before the first line and after the
last are stored plainly, lines read for ownership. `Host.shifted_min_lines`
asks for more where plainly stored rows are prefetched."""

SHIFTED_MIN_LINES_PREFETCHED = 16
"""`SHIFTED_MIN_LINES` on a host whose L3 serves like memory, where rows of out stored
plainly are prefetched into the L2 ahead of their stores (README, Benchmarks)."""


def l1_sets(stride_bytes: int) -> int:
    """How many L1 sets `BLOCK_ROWS` rows `stride_bytes` apart (the first on a line)
    spread over: the rows over those that the fullest set takes. A power of two
    apart they share few sets evenly (4 KiB: one; 1 KiB: four); just off one they
    crowd one set all the same (8190 bytes: every row a line earlier in its page
    than the one before, 15 of 16 in one set: one)."""
    counts = Counter(k * abs(stride_bytes) // CACHE_LINE % (SET_SPAN // CACHE_LINE)
                     for k in range(BLOCK_ROWS))
    return BLOCK_ROWS // max(counts.values())


def crowds(stride_bytes: int) -> bool:
    """Whether rows `stride_bytes` apart fall in at most `CROWDED_SETS` L1 sets."""
    return l1_sets(stride_bytes) <= CROWDED_SETS


SCRATCH_BYTES = 256 << 10
"""The most scratch a microkernel keeps on the stack of the thread that runs it (a
packed X block, a widened Y): far inside the 2 MiB glibc gives a thread's stack
at least; at most half the host's L2 (`Host.scratch_bytes`), where the block
stays while the column panels stream over it."""


L3_PER_CORE = 16 << 20
"""The most last-level cache counted per core this process may run on: sysfs reports
the whole socket's L3 (a guest of two vCPUs on a 60-core part sees its 300 MiB),
shared with the cores of other processes and tenants; 16 MiB is above every
x86 part's L3 per core, so a machine that owns its cores keeps what it reports.
A planner that took the socket's L3 for its own read a 32 MB operand in place,
its k steps on other pages, as if the caches held it."""


def widened_bytes(scratch: int) -> int:
    """The largest f32 copy of a 16-bit operand a kernel widens whole, out of its
    `scratch` bytes: half, the other half for the packed X. The microkernel widens
    a Y that fits once (`teir_lowering.codegen.gemm_plan.widen_pays`); the
    auto-scheduler keeps the tiles of an FP16 Y within it (`teir_passes.auto_schedule`)."""
    return scratch // 2


@dataclass(frozen=True)
class Host:
    """What the scheduler and the microkernels need to know about the CPU."""

    cpu: str
    vector_bytes: int  # 64 with AVX-512, 32 with AVX/AVX2, else 16
    vector_registers: int  # 32 with AVX-512, else 16
    features: frozenset[str]
    l1d: int  # bytes of L1 data cache one core sees
    l2: int  # bytes of L2 one core sees
    l3: int  # bytes of the last-level cache (shared)
    cores: int  # cores this process may run on
    virtualized: bool = False
    """A guest of a hypervisor (the CPU's `hypervisor` flag): waking an idle core
    (a parallel loop's fork) costs a VM exit there, several times a bare core's."""
    vendor: str = ""
    """/proc/cpuinfo's `vendor_id` ("GenuineIntel", "AuthenticAMD"; "" unknown)."""

    @property
    def shuffles_on_fma_ports(self) -> bool:
        """Whether vector shuffles compete with the FMAs for their ports: on Intel's
        cores they issue on port 5, with 512-bit vectors one of the two FMA ports
        (AMD's Zen cores shuffle on pipes the FMAs leave free). A 16-bit operand
        widened element by element as the FMAs broadcast it (a word broadcast and
        an unpack for a bf16, each a port-5 op) then costs FMA slots, so the
        microkernel widens it to f32 first, as it does an f16 one
        (`widens_before_fmas`)."""
        return self.vendor == "GenuineIntel"

    def widens_before_fmas(self, element: str) -> bool:
        """Whether a Contraction's operands stored as `element` (an xDSL type's name:
        "f16", "bf16", ...) are planned as widened to f32 before the FMAs (Y whole
        or per column panel where that fits, X as it is packed) rather than element
        by element as they are read: f16 always (a vcvtph2ps on an FMA pipe per element read), bf16
        where shuffles take FMA ports (`shuffles_on_fma_ports`). What the GEMM
        planner's `converts` and the auto-scheduler's `widens_operands` read."""
        return element == "f16" or element == "bf16" and self.shuffles_on_fma_ports

    @property
    def stores_walk_down(self) -> bool:
        """Whether a transposing tile's blocks walk down the rows of out (the next block
        stores the next lines of the same rows) rather than along in0's rows (the
        next block stores into other rows of out, every row of the tile's height
        taking part of a line per strip) when the rows of out lie farther apart
        than in0's: Intel's cores, whose stores of partial lines scattered over
        that many rows (a page each) stalled where the walk down wrote each line
        whole in two blocks back to back; with in0's rows the farther apart, the
        walk along them keeps its loads in order
        (`teir_lowering.codegen.tile_primitives`, `TileEmitter.region`). Elsewhere
        blocks walk along in0's rows unless their stores crowd a few L1 sets."""
        return self.vendor == "GenuineIntel"

    def lanes(self, element_width: int) -> int:
        """Elements of `element_width` bytes in one vector register."""
        return self.vector_bytes // element_width

    @property
    def scratch_bytes(self) -> int:
        """A microkernel's scratch on this host (`SCRATCH_BYTES`, half the L2)."""
        return min(SCRATCH_BYTES, self.l2 // 2)

    @property
    def streamed_bytes(self) -> int:
        """The output size from which a transposing tile's out is written past the
        caches with streaming stores (`teir_lowering.codegen.tile_primitives`), and
        the auto-scheduler orders the loops around it for its reads: half the
        largest cache that serves a core faster than memory does, whose other half
        keeps the input and what else the caller holds. That is the last-level
        cache on AMD's cores; on Intel's (`l3_serves_like_memory`) the L2."""
        return (self.l2 if self.l3_serves_like_memory else self.l3) // 2

    @property
    def splits_line_loads(self) -> bool:
        """Whether a vector load that straddles two cache lines costs a load of each:
        Intel's cores with 64-byte vectors, every one a whole line, so that a vector
        read in place from numpy's large arrays (16 bytes past a line) always
        straddles two. The GEMM planner then counts that against reading X in place
        where packing it once would serve several column panels."""
        return self.vendor == "GenuineIntel" and self.vector_bytes >= 64

    @property
    def l3_serves_like_memory(self) -> bool:
        """Whether one core reads and writes its L3 no faster than memory: Intel's
        server cores, whose L3 lies across the mesh (a copy that leaves the L2 runs
        at memory's speed there: README, Benchmarks). Ordinary stores of an out the
        L2 does not hold then cost a read for ownership at memory's speed."""
        return self.vendor == "GenuineIntel"

    @property
    def streams_short_rows(self) -> bool:
        """Whether a transposing tile whose rows of out are whole lines apart but hold
        fewer than four streams them from the registers however far apart they lie
        (`lines_apart`): Intel's cores, where such rows stored plainly (`abcd->dcba`
        48 x 44 x 44 x 48 FP32, rows of 3 lines) ran several times slower than
        streamed (README, Benchmarks). On AMD's hosts, where the rule was first
        written, such rows stream only when they lie 4 KiB apart."""
        return self.vendor == "GenuineIntel"

    @property
    def shifted_min_lines(self) -> int:
        """Lines of out per row from which a transposing tile of a large out whose rows
        are not whole lines stores them shifted (`TileEmitter.shifted_tile`) rather
        than plainly: `SHIFTED_MIN_LINES`, or `SHIFTED_MIN_LINES_PREFETCHED` where
        the L3 serves like memory and rows stored plainly are prefetched into the
        L2 ahead (`TileEmitter.block`): there rows of 4.5 to 12.5 lines ran up to
        twice as fast plainly, the shifted tile's partial lines at both ends of
        every row read for ownership one by one (README, Benchmarks)."""
        if self.l3_serves_like_memory:
            return SHIFTED_MIN_LINES_PREFETCHED
        return SHIFTED_MIN_LINES

    def fingerprint(self) -> str:
        """The description as stable text (for cache keys: a frozenset's repr is not)."""
        return repr((self.cpu, self.vector_bytes, self.vector_registers,
                     sorted(self.features), self.l1d, self.l2, self.l3, self.cores,
                     self.virtualized, self.vendor))


def parse_size(text: str) -> int | None:
    """'32K' -> 32768 (sysfs and TEIR_HOST_CACHE spell sizes so)."""
    match = _SIZE.match(text)
    return int(match.group(1)) * _UNIT[match.group(2).upper()] if match else None


def _sysfs_caches() -> dict[str, int]:
    """{'l1': bytes, 'l2': ..., 'l3': ...} of cpu0 (data and unified caches)."""
    sizes: dict[str, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = (index / "level").read_text().strip()
            size = parse_size((index / "size").read_text())
        except OSError:
            continue
        if kind in ("Data", "Unified") and size:
            sizes[f"l{level}"] = size
    return sizes


def _overrides() -> dict[str, int]:
    result: dict[str, int] = {}
    for item in os.environ.get("TEIR_HOST_CACHE", "").split(","):
        key, _, value = item.partition("=")
        if key.strip() in ("l1", "l2", "l3") and (size := parse_size(value)):
            result[key.strip()] = size
    return result


def _cpuinfo(field: str) -> str | None:
    """The value of `field` for the first CPU in /proc/cpuinfo (None without one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (else what Python knows)."""
    if model := _cpuinfo("model name"):
        return model
    return platform.processor() or platform.machine()


PINNED_HOSTS: dict[str, Host] = {
    "avx2": Host("pinned avx2 (Zen 3-like)", 32, 16, frozenset({"avx", "avx2", "fma", "f16c"}),
                 32 << 10, 512 << 10, 32 << 20, 2),
    "avx512": Host("pinned avx512 (Zen 5-like)", 64, 32,
                   frozenset({"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                              "avx512bf16"}),
                   48 << 10, 1 << 20, 32 << 20, 2),
    "avx2-small": Host("pinned avx2 (Haswell-like)", 32, 16,
                       frozenset({"avx", "avx2", "fma", "f16c"}), 32 << 10, 256 << 10,
                       8 << 20, 4),
    "avx512-intel": Host("pinned avx512 (Sapphire Rapids-like)", 64, 32,
                         frozenset({"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                    "avx512bf16", "avx512fp16"}),
                         48 << 10, 2 << 20, 32 << 20, 2, vendor="GenuineIntel"),
    "avx512-16": Host("pinned avx512, 16 cores (Zen 5 server-like)", 64, 32,
                      frozenset({"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                 "avx512bf16"}),
                      48 << 10, 1 << 20, 64 << 20, 16),
}
"""Host descriptions tests pin (`TEIR_HOST`), one per kind of CI machine."""

_pinned: Host | None = None


def pinned_host(name: str) -> Host:
    """The description `name` stands for; a ValueError naming the choices otherwise."""
    if name not in PINNED_HOSTS:
        raise ValueError(
            f"TEIR_HOST: unknown host description {name!r} "
            f"(one of {', '.join(sorted(PINNED_HOSTS))})"
        )
    return PINNED_HOSTS[name]


@contextmanager
def pinned(name: str | Host) -> Iterator[Host]:
    """Decide as if on host `name` (a `PINNED_HOSTS` key or a Host) inside the block."""
    global _pinned
    previous = _pinned
    _pinned = name if isinstance(name, Host) else pinned_host(name)
    try:
        yield _pinned
    finally:
        _pinned = previous


def host() -> Host:
    """The description decisions use: a pinned one (`pinned`, then `TEIR_HOST`), else
    this machine's."""
    if _pinned is not None:
        return _pinned
    if name := os.environ.get("TEIR_HOST"):
        return pinned_host(name)
    return native_host()


@cache
def native_host() -> Host:
    """This machine, as LLVM and sysfs describe it."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    features = frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)
    if "avx512f" in features:
        vector_bytes, registers = 64, 32
    elif "avx" in features:
        vector_bytes, registers = 32, 16
    else:
        vector_bytes, registers = 16, 16
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    caches = {"l1": 32 << 10, "l2": 512 << 10, "l3": 8 << 20}  # only if sysfs is silent
    caches |= _sysfs_caches()
    caches["l3"] = min(caches["l3"], max(cores * L3_PER_CORE, caches["l2"]))
    caches |= _overrides()
    return Host(cpu_model(), vector_bytes, registers, features,
                caches["l1"], caches["l2"], caches["l3"], cores,
                "hypervisor" in (_cpuinfo("flags") or "").split(),
                _cpuinfo("vendor_id") or "")


def lines_apart(pitch: int, row_bytes: int, machine: Host) -> bool:
    """Whether rows of out `pitch` bytes apart, `row_bytes` long, may be stored as whole
    lines straight from the registers (`teir_lowering.codegen.tile_primitives`,
    `TileEmitter.streams`, which asks more of the tile): they start a whole
    number of lines apart, and hold four lines or more whatever their
    alignment, or lie 4 KiB apart, which puts a block's rows in one L1 set,
    where ordinary stores of a block evict each other's lines, or the host
    streams short rows anyway (`Host.streams_short_rows`: `machine`'s)."""
    return pitch % CACHE_LINE == 0 and (row_bytes >= 4 * CACHE_LINE or pitch % SET_SPAN == 0
                                        or machine.streams_short_rows)


def stores_rows_plainly(pitch: int, row_bytes: int, machine: Host) -> bool:
    """Whether a transposing tile of a large out whose rows of out hold `row_bytes` and
    lie `pitch` bytes apart stores them as they are (ordinary stores, lines read
    for ownership) rather than streaming whole lines, as
    `teir_lowering.codegen.tile_primitives` decides: its rows are not a line or
    more `lines_apart`, nor back to back (`streams_block`), nor long enough to
    shift (`Host.shifted_min_lines`)."""
    streams = row_bytes >= CACHE_LINE and lines_apart(pitch, row_bytes, machine)
    return (not streams and pitch != row_bytes
            and row_bytes < machine.shifted_min_lines * CACHE_LINE)


def buffers_transpose(out_rows: int, row_bytes: int, column_bytes: int,
                      large_output: bool) -> bool:
    """Whether a transposing tile whose rows of out lie `out_rows` bytes apart and hold
    `row_bytes`, and whose rows of in0 hold `column_bytes`, goes through buffers in
    the L1 (`teir_lowering.codegen.tile_primitives`, `TileEmitter.buffered`;
    `teir-auto-schedule` widens it): its rows of out at most `BUFFERED_SIDE_BYTES`
    long and not whole lines (those stream), in one L1 set, or in two when the rows
    of in0 are at most `BUFFERED_SIDE_BYTES` long too or out is not
    `large_output` (half the last-level cache or more, `Host.streamed_bytes`). The
    stores of a block then evict the lines that the next tiles write again
    (README, Benchmarks: `abcd->dcba` 33 x 32 x 32 x 33, `abcd->dbac` 16 x 64 x 24
    x 48, `abcd->dacb` 48 x 4 x 8 x 65 and 16 x 24 x 4 x 128 faster; HPTT's
    `abcdef->fedcba` 26 x 4 x 12 x 12 x 12 x 90 at 64 MiB, two sets and rows of in0
    of 360 bytes, and `abcd->dcba` 33 x 8 x 32 x 33, rows of out in four sets,
    slower)."""
    sets = l1_sets(out_rows)
    return (sets <= BUFFERED_SETS and row_bytes <= BUFFERED_SIDE_BYTES
            and row_bytes % CACHE_LINE != 0
            and (sets == 1 or column_bytes <= BUFFERED_SIDE_BYTES or not large_output))
