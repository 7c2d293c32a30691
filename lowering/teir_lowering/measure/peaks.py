"""What this machine can do at best, measured in the run whose figures it bounds.

- `FmaPeak` / `measure_peak`: the FMA peak of FP32 or FP64 at a thread count, from
  a JIT-compiled loop of independent vector FMA chains on registers (llvmlite,
  host CPU and features, O3, as lowering/teir_lowering/runtime/jit.py compiles kernels), run on that
  many threads at once; `PAIRS` ("BF16 pairs") the same loop of AVX512-BF16's
  `vdpbf16ps` (two bf16 products a f32 lane), the bound of the opt-in paired
  products, which not every host runs at the FMAs' rate;
- `measure_copy_bandwidth`: plain-copy bandwidth (`np.copyto` between contiguous
  arrays larger than the caches), counted as bytes read + written.

`teir-run --bench` and benchmarks/run.py report a kernel's rate as a fraction of
these; both depend on what the host gives the process at the time, hence
measured in the same run.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from teir_lowering.measure.timing import interleaved

FmaLoop = Callable[[int, int], None]
"""`peak(n, io)` from build_fma_loop."""

PAIRS = "BF16 pairs"
"""The data type of `build_fma_loop`'s `vdpbf16ps` loop (AVX-512 hosts with
AVX512-BF16): 4 FLOPs a f32 lane an instruction."""


def vector_bits() -> int:
    """The widest vector the JIT uses on this host: 512 with AVX-512, else 256."""
    import llvmlite.binding as llvm

    from teir_lowering.runtime.jit import _host_features

    llvm.initialize_native_target()
    return 512 if _host_features().get("avx512f", False) else 256


def build_fma_loop(dtype: str, bits: int, chains: int) -> tuple[FmaLoop, int, tuple]:
    """`void peak(i64 n, ptr io)`: n iterations of `chains` independent vector FMAs
    (`PAIRS`: `vdpbf16ps`, x and y read as bf16 pairs).

    io holds [x, y, acc_0 ... acc_{chains-1}] as vectors; each iteration does
    acc_i = fma(acc_i, x, y) for every i, so all work stays in registers; the
    sum of the accumulators is stored back to io[0] so nothing is dead.
    Returns (ctypes function, lanes, keep-alive objects).
    """
    import llvmlite.binding as llvm
    from llvmlite import ir

    from teir_lowering.runtime.jit import host_target_machine

    element = ir.DoubleType() if dtype == "FP64" else ir.FloatType()
    width = 8 if dtype == "FP64" else 4
    lanes = bits // 8 // width
    vec = ir.VectorType(element, lanes)
    i64 = ir.IntType(64)
    ptr = ir.PointerType()

    module = ir.Module(name=f"peak_{dtype.replace(' ', '_')}")
    module.triple = llvm.get_default_triple()
    if dtype == PAIRS:  # x and y hold bf16 pairs; LLVM upgrades the i32 form
        pairs = ir.VectorType(ir.IntType(32), lanes)
        dot = ir.Function(module, ir.FunctionType(vec, [vec, pairs, pairs]),
                          name=f"llvm.x86.avx512bf16.dpbf16ps.{bits}")
    else:
        fma = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec]),
                          name=f"llvm.fma.v{lanes}f{width * 8}")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, ptr]), name="peak")
    n, io = function.args
    entry = function.append_basic_block("entry")
    loop = function.append_basic_block("loop")
    done = function.append_basic_block("done")

    builder = ir.IRBuilder(entry)
    slots = [
        builder.gep(io, [ir.Constant(i64, i)], source_etype=vec) for i in range(chains + 2)
    ]
    x = builder.load(slots[0], typ=vec, align=width)
    y = builder.load(slots[1], typ=vec, align=width)
    initial = [builder.load(slots[i + 2], typ=vec, align=width) for i in range(chains)]
    positive = builder.icmp_signed(">", n, ir.Constant(i64, 0))
    builder.cbranch(positive, loop, done)

    builder = ir.IRBuilder(loop)
    counter = builder.phi(i64)
    counter.add_incoming(ir.Constant(i64, 0), entry)
    accs = []
    for value in initial:
        phi = builder.phi(vec)
        phi.add_incoming(value, entry)
        accs.append(phi)
    if dtype == PAIRS:
        x_pairs, y_pairs = builder.bitcast(x, pairs), builder.bitcast(y, pairs)
        updated = [builder.call(dot, [acc, x_pairs, y_pairs]) for acc in accs]
    else:
        updated = [builder.call(fma, [acc, x, y]) for acc in accs]
    for phi, value in zip(accs, updated):
        phi.add_incoming(value, loop)
    following = builder.add(counter, ir.Constant(i64, 1))
    counter.add_incoming(following, loop)
    builder.cbranch(builder.icmp_signed("<", following, n), loop, done)

    builder = ir.IRBuilder(done)
    results = []
    for value, last in zip(initial, updated):
        merged = builder.phi(vec)
        merged.add_incoming(value, entry)
        merged.add_incoming(last, loop)
        results.append(merged)
    total = results[0]
    for value in results[1:]:
        total = builder.fadd(total, value)
    builder.store(total, slots[0], align=width)
    builder.ret_void()

    machine = host_target_machine(3)
    llvm_module = llvm.parse_assembly(str(module))
    llvm_module.verify()
    llvm_module.data_layout = str(machine.target_data)
    tuning = llvm.PipelineTuningOptions(speed_level=3)
    pass_builder = llvm.create_pass_builder(machine, tuning)
    pass_builder.getModulePassManager().run(llvm_module, pass_builder)
    engine = llvm.create_mcjit_compiler(llvm_module, machine)
    engine.finalize_object()
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
    callable_ = prototype(engine.get_function_address("peak"))
    return callable_, lanes, (engine, llvm_module, machine, pass_builder)


def calibrate(function: FmaLoop, io: np.ndarray, seconds: float, base: int) -> int:
    """Iterations (at least `base`) for one call of the loop to take about `seconds`."""
    function(1 << 16, io.ctypes.data)  # warm-up
    return max(base, int(seconds / time_one(function, base, io) * base))


def time_one(function: FmaLoop, n: int, io: np.ndarray) -> float:
    """Seconds of one call on this thread."""
    start = time.perf_counter()
    function(n, io.ctypes.data)
    return time.perf_counter() - start


def time_together(function: FmaLoop, n: int, ios: Sequence[np.ndarray]) -> float:
    """Wall seconds of one call per io, each on its own thread, all released at once
    (ctypes releases the GIL for the call)."""
    barrier = threading.Barrier(len(ios) + 1)

    def worker(io: np.ndarray) -> None:
        barrier.wait()
        function(n, io.ctypes.data)

    threads = [threading.Thread(target=worker, args=(io,)) for io in ios]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


class FmaPeak:
    """The FMA loop of one data type (FP32, FP64, or `PAIRS` on a host with
    AVX512-BF16) on this host's widest vectors."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.bits = vector_bits()
        self.chains = 16 if self.bits == 512 else 12  # 12 + x + y fit in 16 ymm registers
        self.function, self.lanes, self._keep = build_fma_loop(
            dtype, self.bits, self.chains
        )
        self.flops_per_lane = 4 if dtype == PAIRS else 2

    def io(self) -> np.ndarray:
        """x = 1, y = 1e-7 (as bf16 pairs for `PAIRS`): acc = acc * 1 + y never
        overflows nor goes denormal."""
        io = np.zeros((self.chains + 2) * self.lanes,
                      np.float64 if self.dtype == "FP64" else np.float32)
        io[: self.lanes] = 1.0
        io[self.lanes : 2 * self.lanes] = 1e-7
        if self.dtype == PAIRS:  # each f32 lane becomes two copies of its bf16
            bits = io[: 2 * self.lanes].view(np.uint32) >> 16
            io[: 2 * self.lanes] = (bits | bits << 16).view(np.float32)
        return io

    def call(self, threads: int, seconds: float) -> tuple[Callable[[], float], float]:
        """(run, FLOPs): `run()` runs the loop on `threads` threads at once, each call
        about `seconds` long, and returns its wall time; the FLOPs it does."""
        ios = [self.io() for _ in range(threads)]
        n = calibrate(self.function, ios[0], seconds, 1 << 20)
        if threads == 1:
            def run() -> float:
                return time_one(self.function, n, ios[0])
        else:
            def run() -> float:
                return time_together(self.function, n, ios)
        return run, threads * self.flops_per_lane * self.lanes * self.chains * n

    def gflops(self, threads: int, seconds: float, repeat: int) -> float:
        """GFLOP/s of `threads` threads running the loop at once (each call about
        `seconds`), the best of `repeat` runs: a peak."""
        run, flops = self.call(threads, seconds)
        return flops / min(run() for _ in range(repeat)) / 1e9


@dataclass
class Peak:
    dtype: str
    bits: int
    chains: int
    lanes: int
    one_thread: float  # GFLOP/s
    two_threads: float  # GFLOP/s, two Python threads calling the loop concurrently
    measurements: list[tuple[float, float]] = field(default_factory=list)  # (1T, 2T) each time

    def merge(self, other: Peak) -> Peak:
        """Measured again (at the end of the run): keep the highest of each."""
        return Peak(self.dtype, self.bits, self.chains, self.lanes,
                    max(self.one_thread, other.one_thread),
                    max(self.two_threads, other.two_threads),
                    self.measurements + other.measurements)


def measure_peak(dtype: str, quick: bool) -> Peak:
    """The FMA peak of `dtype` ("FP32", "FP64") at 1 and 2 threads."""
    loop = FmaPeak(dtype)
    seconds, repeat = (0.04, 3) if quick else (0.1, 7)
    one = loop.gflops(1, seconds, repeat)
    two = loop.gflops(2, seconds, repeat)
    return Peak(dtype, loop.bits, loop.chains, loop.lanes, one, two, [(one, two)])


def measure_copy_bandwidth(quick: bool, size: int = 256 << 20) -> float:
    """GB/s of np.copyto on `size` bytes (bytes read + bytes written per second), the
    median of repeated copies."""
    source = np.ones(size // 8, np.float64)
    target = np.zeros_like(source)
    samples = interleaved({"copy": lambda: np.copyto(target, source)}, 3 if quick else 9,
                          budget=10.0, batch_seconds=0.0)
    return 2 * size / float(np.median(samples["copy"])) / 1e9
