"""All of TEIR's performance figures in one run of one process.

    python benchmarks/run.py [--quick] [--out benchmarks/results]

Measures, in this order and in this process:

1. the CPU's FMA peak (FP32, FP64; 1 and 2 threads) with a JIT-compiled loop
   of independent vector FMA chains on registers (llvmlite, host CPU, O3);
2. plain-copy bandwidth (`np.copyto` of 256 MiB, counted as read + write);
3. TEIR kernels built from records generated here and compiled with
   `compile_kernel`: GEMM tiles, the spec's contraction `trus,pqtu->pqrs` in
   BRGEMM form, the tiled permutation `abcd->dcba`; FP32 and FP64; 1 and 2 threads;
4. numpy peers on the same data (einsum, tensordot, matmul, opt_einsum when
   importable; transpose copies for the permutation), each checked once
   against the kernel's result, timed interleaved with the kernel in rounds
   (benchmarks/harness.py); the table gives medians of per-round ratios.

The script first re-executes itself without the variables that steer numpy's
BLAS or OpenMP (OPENBLAS_CORETYPE, ...; harness.clean_environment), so every
peer runs at its best, and names the CPU and numpy's BLAS (threadpoolctl:
internal_api, architecture, version) in every output. It writes `results.csv`
(every kernel and peer measurement) and `results.png` (when matplotlib is
importable) to --out/<cpu-slug>/, so figures from different hosts never mix.
"""

from __future__ import annotations

import argparse
import csv
import gc
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from harness import (
    HostInfo,
    blas_threads,
    clean_environment,
    describe_host,
    interleaved,
    measure_copy_bandwidth,
    median_ratio,
    results_dir,
)

from teir_dialect.vocabulary import DataType
from teir_lowering.measure.peaks import (
    Peak,
    build_fma_loop,
    calibrate,
    measure_peak,
    time_one,
    time_together,
    vector_bits,
)
from teir_lowering.measure.timing import SETTLE_SECONDS

HERE = Path(__file__).resolve().parent


# --------------------------------------------------------------------------- FMA peak
# The loop and its measurement are teir_lowering.measure.peaks (teir-run --bench uses them too).


class CoreProbe:
    """How many cores the host gives two threads right now (1.0 to 2.0).

    Runs the FP64 FMA loop for ~50 ms on one thread and on two threads at once;
    cores = 2 * (best 1-thread time) / (2-thread wall time), the better of two
    tries. Some hosts (VMs whose vCPUs share a physical core at times) swing
    between 1 and 2.
    """

    def __init__(self) -> None:
        bits = vector_bits()
        self.function, _, self._keep = build_fma_loop("FP64", bits, 16 if bits == 512 else 12)
        self.ios = [np.ones((18) * 8, np.float64) for _ in range(2)]
        self.n = calibrate(self.function, self.ios[0], 0.05, 1 << 18)
        self.one = min(time_one(self.function, self.n, self.ios[0]) for _ in range(3))

    def cores(self) -> float:
        """The better of two 2-thread runs."""
        return max(self._cores_once(), self._cores_once())

    def _cores_once(self) -> float:
        self.one = min(self.one, time_one(self.function, self.n, self.ios[0]))
        return min(2.0, 2 * self.one / time_together(self.function, self.n, self.ios))


# --------------------------------------------------------------------------- records

WIDTH = {t.value: t.width for t in DataType}
NP_TYPE = {"FP32": np.float32, "FP64": np.float64}


def gemm_record(m: int, n: int, k: int, dtype: str) -> dict:
    """Column-major C(m,n) = A(m,k) B(k,n): a Zero then one GEMM primitive, no loops."""
    w = WIDTH[dtype]
    meta = {"data_type": dtype}
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": [
            {"id": "m", "extent": m, "strides": [w, 0, w], "offsets": [0, 0, 0]},
            {"id": "n", "extent": n, "strides": [0, k * w, m * w], "offsets": [0, 0, 0]},
            {"id": "k", "extent": k, "strides": [m * w, w, 0], "offsets": [0, 0, 0]},
        ],
        "primitives": [
            {"id": "zero_mn", "operation": "Zero", "axes": {"M": ["m"], "N": ["n"]},
             "metadata": meta},
            {"id": "gemm_mnk", "operation": "Contraction",
             "axes": {"M": ["m"], "N": ["n"], "K": ["k"]}, "metadata": meta},
        ],
        "schedule": {
            "roots": ["zero", "gemm"],
            "iterations": [],
            "invocations": [
                {"id": "zero", "primitive": "zero_mn", "guard": None},
                {"id": "gemm", "primitive": "gemm_mnk", "guard": None},
            ],
        },
    }


def contraction_record(p: int, q: int, r: int, s: int, t: int, u: int, dtype: str) -> dict:
    """trus,pqtu->pqrs in flat BRGEMM form (like examples/brgemm_large.json)."""
    return {
        "dim_ids": ["p", "r", "t", "s", "q", "u"],
        "dim_types": ["N", "M", "K", "M", "N", "K"],
        "exec_types": ["parallel", "parallel", "prim", "prim", "prim", "prim"],
        "dim_sizes": [p, r, t, s, q, u],
        "strides": [
            [0, u * s, r * u * s, 1, 0, s],  # in0: t r u s
            [q * t * u, 0, u, 0, t * u, 1],  # in1: p q t u
            [q * r * s, s, 0, 1, r * s, 0],  # out: p q r s
        ],
        "data_type": dtype,
        "prim_first": "Zero",
        "prim_main": "BRGEMM",
        "prim_last": "None",
    }


def permutation_record(a: int, b: int, c: int, d: int, dtype: str) -> dict:
    """abcd->dcba as §10.7.2: b, c iterated (parallel), Copy over d (M) and a (N)."""
    w = WIDTH[dtype]
    return {
        "tensors": ["in0", "out"],
        "axes": [
            {"id": "b", "extent": b, "strides": [c * d * w, a * w], "offsets": [0, 0]},
            {"id": "c", "extent": c, "strides": [d * w, b * a * w], "offsets": [0, 0]},
            {"id": "d", "extent": d, "strides": [w, c * b * a * w], "offsets": [0, 0]},
            {"id": "a", "extent": a, "strides": [b * c * d * w, w], "offsets": [0, 0]},
        ],
        "primitives": [
            {"id": "copy_da", "operation": "Copy", "axes": {"M": ["d"], "N": ["a"]},
             "metadata": {"data_type": dtype}},
        ],
        "schedule": {
            "roots": ["b"],
            "iterations": [
                {"id": "b", "axis": "b", "policy": "parallel", "children": ["c"], "guard": None},
                {"id": "c", "axis": "c", "policy": "parallel", "children": ["copy"],
                 "guard": None},
            ],
            "invocations": [{"id": "copy", "primitive": "copy_da", "guard": None}],
        },
    }


# --------------------------------------------------------------------------- peers

Peer = Callable[[Sequence[np.ndarray]], np.ndarray]


def _opt_einsum():
    try:
        import opt_einsum  # type: ignore[import-not-found]
    except ImportError:
        return None
    return opt_einsum


def einsum_peers(subscripts: str, views: Callable) -> dict[str, Peer]:
    """np.einsum(optimize=True), and opt_einsum.contract when importable, on the
    (in0, in1, out) numpy views that `views(arrays)` gives."""

    def einsum(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x, y, z = views(arrays)
        np.einsum(subscripts, x, y, optimize=True, out=z)
        return arrays[-1]

    peers: dict[str, Peer] = {"np.einsum": einsum}
    if (oe := _opt_einsum()) is not None:
        def opt(arrays: Sequence[np.ndarray]) -> np.ndarray:
            x, y, z = views(arrays)
            oe.contract(subscripts, x, y, out=z)
            return arrays[-1]

        peers["opt_einsum"] = opt
    return peers


def gemm_peers(m: int, n: int, k: int) -> dict[str, Peer]:
    # Column-major A (m,k), B (k,n), C (m,n) are row-major A^T (k,m), B^T (n,k), C^T (n,m):
    # C^T = B^T A^T.
    def views(arrays: Sequence[np.ndarray]):
        a, b, c = arrays
        return a[: m * k].reshape(k, m), b[: k * n].reshape(n, k), c[: m * n].reshape(n, m)

    def tensordot(arrays: Sequence[np.ndarray]) -> np.ndarray:
        at, bt, ct = views(arrays)
        ct[...] = np.tensordot(bt, at, axes=(1, 0))
        return arrays[-1]

    def matmul(arrays: Sequence[np.ndarray]) -> np.ndarray:
        at, bt, ct = views(arrays)
        np.matmul(bt, at, out=ct)
        return arrays[-1]

    return {**einsum_peers("km,nk->nm", views), "np.tensordot": tensordot, "np.matmul": matmul}


def contraction_peers(p: int, q: int, r: int, s: int, t: int, u: int) -> dict[str, Peer]:
    def views(arrays: Sequence[np.ndarray]):
        a, b, c = arrays
        return (
            a[: t * r * u * s].reshape(t, r, u, s),
            b[: p * q * t * u].reshape(p, q, t, u),
            c[: p * q * r * s].reshape(p, q, r, s),
        )

    def tensordot(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x, y, z = views(arrays)
        z[...] = np.tensordot(y, x, axes=([2, 3], [0, 2]))  # (p q), (r s) -> p q r s
        return arrays[-1]

    def matmul(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x, y, z = views(arrays)
        left = y.reshape(p * q, t * u)  # a view: pqtu is (pq)(tu)
        right = x.transpose(0, 2, 1, 3).reshape(t * u, r * s)  # (tu)(rs): a copy
        np.matmul(left, right, out=z.reshape(p * q, r * s))
        return arrays[-1]

    return {
        **einsum_peers("trus,pqtu->pqrs", views), "np.tensordot": tensordot, "np.matmul": matmul
    }


def permutation_peers(a: int, b: int, c: int, d: int) -> dict[str, Peer]:
    def ascontiguous(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x = arrays[0]
        result = np.ascontiguousarray(x[: a * b * c * d].reshape(a, b, c, d).transpose(3, 2, 1, 0))
        return result.reshape(-1)  # a new array: compared, not stored in out

    def copyto(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x, y = arrays
        np.copyto(y[: a * b * c * d].reshape(d, c, b, a),
                  x[: a * b * c * d].reshape(a, b, c, d).transpose(3, 2, 1, 0))
        return y

    return {"np.ascontiguousarray(x.T)": ascontiguous, "np.copyto(out, x.T)": copyto}


PLAIN_COPY = "plain copy"
"""The permutation's bound, timed with it: np.copyto between contiguous arrays."""

# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    group: str  # "gemm", "contraction", "permutation"
    name: str
    dtype: str
    record: dict
    flops: float  # 0 for a permutation
    bytes_moved: float  # read + write, for a permutation
    peers: dict[str, Peer]


def build_cases(quick: bool) -> list[Case]:
    cases: list[Case] = []
    gemm_sizes = (32, 128) if quick else (32, 64, 128)
    contraction_sizes = (
        [(8,) * 6, (16,) * 6, (32, 64, 32, 64, 8, 64)]
        if quick
        else [(8,) * 6, (16,) * 6, (32,) * 6, (32, 64, 32, 64, 8, 64)]
    )
    for dtype in ("FP32", "FP64"):
        for size in gemm_sizes:
            cases.append(Case("gemm", f"gemm {size}^3", dtype, gemm_record(size, size, size, dtype),
                              2.0 * size ** 3, 0.0, gemm_peers(size, size, size)))
        for p, q, r, s, t, u in contraction_sizes:
            label = (f"trus,pqtu->pqrs all {p}" if len({p, q, r, s, t, u}) == 1
                     else f"trus,pqtu->pqrs p{p}q{q}r{r}s{s}t{t}u{u}")
            cases.append(Case("contraction", label, dtype,
                              contraction_record(p, q, r, s, t, u, dtype),
                              2.0 * p * q * r * s * t * u, 0.0,
                              contraction_peers(p, q, r, s, t, u)))
    e = 64
    cases.append(Case("permutation", f"abcd->dcba {e}^4", "FP32",
                      permutation_record(e, e, e, e, "FP32"), 0.0, 2.0 * 4 * e ** 4,
                      permutation_peers(e, e, e, e)))
    return cases


# --------------------------------------------------------------------------- running


@dataclass
class Row:
    case: str
    group: str
    dtype: str
    threads: int
    implementation: str  # "teir" or a peer's name
    seconds: float
    rate: float  # GFLOP/s or GB/s
    unit: str
    peak_fraction: float | None
    vs_best_numpy: float | None  # median over rounds of the peer's time / teir's
    best_peer: str = ""
    compile_seconds: float | None = None
    check: str = ""
    host_cores: float | None = None  # 2-thread rows: CoreProbe before and after (the lower)
    rounds: int = 0  # interleaved rounds timed


def close(got: np.ndarray, expected: np.ndarray, dtype: str) -> bool:
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    rtol = 1e-4 if dtype == "FP32" else 1e-10
    return bool(np.allclose(got, expected, rtol=rtol, atol=rtol * scale))


def compile_fresh(record: dict):
    """(kernel, seconds): records -> callable kernel with an empty kernel cache."""
    from teir_lowering.runtime import kernel as kernel_module

    with kernel_module._CACHE_LOCK:
        kernel_module._CACHE.clear()
    gc.collect()
    start = time.perf_counter()
    kernel = kernel_module.compile_kernel(record)
    return kernel, time.perf_counter() - start


def run_case(case: Case, peaks: dict[str, Peak], copy_gbs: float, probe: CoreProbe,
             rounds: int, budget: float, rng: np.random.Generator) -> list[Row]:
    kernel, compile_seconds = compile_fresh(case.record)
    numpy_type = NP_TYPE[case.dtype]
    inputs = [
        rng.standard_normal(max(1, -(-spec.needed_bytes // spec.dtype.itemsize))).astype(numpy_type)
        for spec in kernel.tensors
    ]
    is_copy = case.group == "permutation"
    unit = "GB/s" if is_copy else "GFLOP/s"
    amount = case.bytes_moved if is_copy else case.flops

    def rate(seconds: float) -> float:
        return amount / seconds / 1e9

    def fraction(value: float, threads: int) -> float | None:
        if is_copy:
            return value / copy_gbs if copy_gbs else None
        peak = peaks[case.dtype]
        return value / (peak.one_thread if threads == 1 else peak.two_threads)

    # Results once, checked: kernel (1 and 2 threads) against every peer.
    results: dict[str, np.ndarray] = {}
    for threads in (1, 2):
        arrays = [a.copy() for a in inputs]
        arrays[-1][...] = np.nan  # the Zero (or the copy) must overwrite everything
        kernel(*arrays, threads=threads)
        results[f"teir {threads}T"] = arrays[-1].copy()
    peer_ok: dict[str, bool] = {}
    reference = results["teir 1T"]
    with blas_threads(1):
        for name, peer in case.peers.items():
            arrays = [a.copy() for a in inputs]
            got = peer(arrays)
            size = got.size if got is not arrays[-1] else reference.size
            peer_ok[name] = close(got[:size], reference[:size], case.dtype)
    two_thread_same = bool(np.array_equal(results["teir 2T"], reference, equal_nan=True))
    finite = bool(np.all(np.isfinite(reference)))
    bad = [name for name, ok in peer_ok.items() if not ok]
    if not finite:
        bad.insert(0, "teir: NaN left in out")
    if not two_thread_same:
        bad.insert(0, "teir 2T != 1T")
    if not bad:
        check = "ok"
    elif len(bad) == len(case.peers):
        check = "MISMATCH: teir vs all peers"
    else:
        check = "MISMATCH: " + ", ".join(bad)

    # Per thread count: the kernel and every peer (numpy's BLAS limited to as many
    # threads) timed interleaved in rounds; 1 thread first. The permutation's peers
    # are numpy copies, single-threaded at both counts.
    rows: list[Row] = []
    for threads in (1, 2):
        cores_before = probe.cores() if threads == 2 else None
        kernel_arrays = [a.copy() for a in inputs]
        functions: dict[str, Callable[[], object]] = {
            "teir": lambda arrays=kernel_arrays, count=threads: kernel(*arrays, threads=count)}
        for name, peer in case.peers.items():
            peer_arrays = [a.copy() for a in inputs]
            functions[name] = lambda peer=peer, peer_arrays=peer_arrays: peer(peer_arrays)
        if is_copy:  # the bound: a plain copy of as many bytes, in the same rounds
            plain = (inputs[0][:reference.size].copy(), np.empty_like(reference))
            functions[PLAIN_COPY] = lambda plain=plain: np.copyto(plain[1], plain[0])
        with blas_threads(threads):
            samples = interleaved(functions, rounds, budget,
                                  settle=SETTLE_SECONDS if threads > 1 else 0.0)
        teir = samples.pop("teir")
        seconds = float(np.median(teir))
        kernel_row = Row(case.name, case.group, case.dtype, threads, "teir", seconds,
                         rate(seconds), unit, fraction(rate(seconds), threads), None,
                         compile_seconds=compile_seconds, check=check, rounds=len(teir))
        if is_copy:
            # of a same-size copy's bandwidth, per round (the 256 MiB copy's figure,
            # with huge pages and no cache left, is not this size's bound)
            kernel_row.peak_fraction = median_ratio(samples.pop(PLAIN_COPY), teir)
        if cores_before is not None:
            kernel_row.host_cores = min(cores_before, probe.cores())
        peer_rows = []
        for name, times in samples.items():
            peer_seconds = float(np.median(times))
            peer_rows.append(Row(case.name, case.group, case.dtype, threads, name,
                                 peer_seconds, rate(peer_seconds), unit,
                                 fraction(rate(peer_seconds), threads),
                                 median_ratio(times, teir),
                                 check="ok" if peer_ok[name] else "MISMATCH",
                                 rounds=len(times)))
        best = min(peer_rows, key=lambda row: row.seconds)
        kernel_row.best_peer = best.implementation
        kernel_row.vs_best_numpy = best.vs_best_numpy
        rows.append(kernel_row)
        rows.extend(peer_rows)
    return rows


# --------------------------------------------------------------------------- output


def print_table(rows: list[Row], peaks: dict[str, Peak], copy_gbs: float, info: HostInfo,
                notes: Sequence[str]) -> None:
    for line in info.header():
        print(line)
    kernel_rows = [r for r in rows if r.implementation == "teir"]
    header = (f"{'case':<32} {'type':<4} {'thr':>3} {'median':>10} {'rate':>14} "
              f"{'%peak':>6} {'best numpy peer':>26} {'peer rate':>10} {'teir/peer':>9} "
              f"{'rounds':>6} {'compile':>8} {'cores':>5}  check")
    print(header)
    print("-" * len(header))
    by_key = {(r.case, r.dtype, r.threads, r.implementation): r for r in rows}
    for row in kernel_rows:
        peer_row = by_key.get((row.case, row.dtype, row.threads, row.best_peer))
        peer_rate = f"{peer_row.rate:10.2f}" if peer_row else f"{'-':>10}"
        frac = f"{100 * row.peak_fraction:5.1f}%" if row.peak_fraction is not None else "   -  "
        cores = f"{row.host_cores:.2f}" if row.host_cores is not None else ""
        print(f"{row.case:<32} {row.dtype:<4} {row.threads:>3} {format_seconds(row.seconds):>10} "
              f"{row.rate:8.2f} {row.unit:<5} {frac:>6} {row.best_peer:>26} {peer_rate} "
              f"{row.vs_best_numpy:8.3g}x {row.rounds:>6} "
              f"{1e3 * (row.compile_seconds or 0):6.0f}ms {cores:>5}  {row.check}")
    print()
    for peak in peaks.values():
        each = " / ".join(f"{one:.0f}, {two:.0f}" for one, two in peak.measurements)
        print(f"peak {peak.dtype}: {peak.one_thread:8.1f} GFLOP/s 1 thread, "
              f"{peak.two_threads:8.1f} GFLOP/s 2 threads ({peak.chains} chains of "
              f"<{peak.lanes} x {peak.dtype}> FMA, {peak.bits}-bit; best of the runs at "
              f"start / end: {each})")
    print(f"copy bandwidth (np.copyto 256 MiB, 1 thread): {copy_gbs:.1f} GB/s (read + write)")
    if any(p.two_threads < 1.3 * p.one_thread for p in peaks.values()):
        print("NOTE: the 2-thread FMA peak is not ~2x the 1-thread peak: two threads did not "
              "run concurrently on this host (e.g. vCPUs sharing one physical core); "
              "2-thread figures measure that contention, not parallel scaling")
    print("%peak: GFLOP/s over the measured FMA peak of that type and thread count; "
          "GB/s: median over the rounds of a same-size plain copy's time / teir's "
          "(np.copyto between contiguous arrays, 1 thread, timed in the same rounds)")
    print("cores (2-thread rows): cores the host gave two threads around that measurement, "
          "from 50 ms FMA probes before and after (the lower; 2.00 = two full cores)")
    print("teir/peer: median over the interleaved rounds of the best peer's time / teir's "
          "(> 1: teir faster); median: of the rounds' times per call")
    for note in notes:
        print(note)


def format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def write_csv(path: Path, rows: list[Row], peaks: dict[str, Peak], copy_gbs: float,
              info: HostInfo) -> None:
    """Every measurement, each row naming the CPU and numpy's BLAS (its architecture:
    the kernel set it chose for this CPU)."""
    blas = f"{info.blas.get('internal_api', '?')} {info.blas.get('version', '?')}"
    host = [info.cpu, info.isa, blas, info.blas.get("architecture", "?")]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case", "group", "dtype", "threads", "implementation", "median_seconds",
                         "rate", "unit", "peak_fraction", "peer_seconds_over_teir",
                         "best_peer", "compile_seconds", "check", "host_cores", "rounds",
                         "cpu", "isa", "blas", "blas_architecture"])
        for peak in peaks.values():
            for threads, value in ((1, peak.one_thread), (2, peak.two_threads)):
                writer.writerow([f"fma peak {peak.bits}-bit x{peak.chains}", "peak", peak.dtype,
                                 threads, "llvmlite fma loop", "", f"{value:.3f}", "GFLOP/s", 1.0,
                                 "", "", "", "", "", "", *host])
        writer.writerow(["copy 256 MiB", "bandwidth", "", 1, "np.copyto", "", f"{copy_gbs:.3f}",
                         "GB/s", 1.0, "", "", "", "", "", "", *host])
        for r in rows:
            writer.writerow([
                r.case, r.group, r.dtype, r.threads, r.implementation, f"{r.seconds:.9g}",
                f"{r.rate:.4f}", r.unit,
                "" if r.peak_fraction is None else f"{r.peak_fraction:.4f}",
                "" if r.vs_best_numpy is None else f"{r.vs_best_numpy:.4f}",
                r.best_peer,
                "" if r.compile_seconds is None else f"{r.compile_seconds:.4f}",
                r.check,
                "" if r.host_cores is None else f"{r.host_cores:.3f}",
                r.rounds, *host,
            ])


def write_chart(path: Path, rows: list[Row], peaks: dict[str, Peak], copy_gbs: float,
                info: HostInfo) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not importable: no chart written "
              "(pip install matplotlib to get results.png)")
        return False

    series = [("teir", 1), ("teir", 2), ("numpy", 1), ("numpy", 2)]
    colors = {("teir", 1): "#1f77b4", ("teir", 2): "#6baed6",
              ("numpy", 1): "#d62728", ("numpy", 2): "#fc9272"}

    def value(case: str, dtype: str, kind: str, threads: int) -> float:
        if kind == "teir":
            found = [r.rate for r in rows if r.case == case and r.dtype == dtype
                     and r.threads == threads and r.implementation == "teir"]
        else:
            found = [r.rate for r in rows if r.case == case and r.dtype == dtype
                     and r.threads == threads and r.implementation != "teir"]
            if not found:  # peers timed at one thread count only
                found = [r.rate for r in rows if r.case == case and r.dtype == dtype
                         and r.implementation != "teir"]
        return max(found) if found else 0.0

    figure, axes = plt.subplots(1, 3, figsize=(17, 5.5),
                                gridspec_kw={"width_ratios": [4, 4, 1.3]})
    for axis, dtype in zip(axes[:2], ("FP32", "FP64")):
        cases = list(dict.fromkeys(r.case for r in rows if r.dtype == dtype and r.unit == "GFLOP/s"))
        positions = np.arange(len(cases))
        width = 0.2
        for index, (kind, threads) in enumerate(series):
            values = [value(c, dtype, kind, threads) for c in cases]
            label = f"{'TEIR' if kind == 'teir' else 'best numpy peer'}, {threads} thread(s)"
            axis.bar(positions + (index - 1.5) * width, values, width, label=label,
                     color=colors[(kind, threads)])
        if dtype in peaks:
            axis.axhline(peaks[dtype].one_thread, color="k", linestyle="--", linewidth=1,
                         label=f"FMA peak 1T {peaks[dtype].one_thread:.0f}")
            axis.axhline(peaks[dtype].two_threads, color="k", linestyle=":", linewidth=1,
                         label=f"FMA peak 2T {peaks[dtype].two_threads:.0f}")
        axis.set_xticks(positions)
        axis.set_xticklabels([c.replace("trus,pqtu->pqrs ", "trus,pqtu->pqrs\n") for c in cases],
                             rotation=30, ha="right", fontsize=8)
        axis.set_ylabel("GFLOP/s")
        axis.set_title(f"{dtype} contractions")
        axis.legend(fontsize=7)
        axis.grid(axis="y", alpha=0.3)
    axis = axes[2]
    perm = sorted((r for r in rows if r.unit == "GB/s"),
                  key=lambda r: (r.implementation != "teir", r.threads))
    labels, values, bar_colors = [], [], []
    for r in perm:
        labels.append(f"{'TEIR' if r.implementation == 'teir' else r.implementation} {r.threads}T")
        values.append(r.rate)
        bar_colors.append("#1f77b4" if r.implementation == "teir" else "#d62728")
    axis.bar(range(len(values)), values, color=bar_colors)
    axis.axhline(copy_gbs, color="k", linestyle="--", linewidth=1,
                 label=f"np.copyto {copy_gbs:.0f} GB/s")
    axis.set_xticks(range(len(values)))
    axis.set_xticklabels(labels, rotation=40, ha="right", fontsize=7)
    axis.set_ylabel("GB/s (read + write)")
    axis.set_title(perm[0].case if perm else "permutation")
    axis.legend(fontsize=7)
    figure.suptitle(f"TEIR on {info.cpu} ({info.isa}, {info.cores} cores); "
                    f"numpy peers: {info.blas_text()}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer sizes and rounds (about a minute)")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="results go to OUT/<cpu-slug>/ (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=0,
                        help="interleaved rounds per case and thread count "
                             "(default 5 with --quick, else 15)")
    args = parser.parse_args(argv)
    removed = clean_environment()
    started = time.perf_counter()
    rounds = args.rounds or (5 if args.quick else 15)
    budget = 1.0 if args.quick else 4.0

    import teir_lowering  # noqa: F401  (imports xDSL once, before any timing)

    info = describe_host(removed)
    out = results_dir(args.out, info)
    for line in info.header():
        print(line, flush=True)
    peaks = {}
    for dtype in ("FP32", "FP64"):
        peaks[dtype] = measure_peak(dtype, args.quick)
        peak = peaks[dtype]
        print(f"[{time.perf_counter() - started:5.1f}s] FMA peak {dtype}: "
              f"{peak.one_thread:.1f} GFLOP/s (1T), {peak.two_threads:.1f} GFLOP/s (2T)",
              flush=True)
    copy_gbs = measure_copy_bandwidth(args.quick)
    print(f"[{time.perf_counter() - started:5.1f}s] copy bandwidth: {copy_gbs:.1f} GB/s", flush=True)

    # One throw-away compile so that the compile times below exclude one-time warm-up
    # (xDSL contexts, LLVM initialization, libgomp loading).
    compile_fresh(gemm_record(4, 4, 4, "FP64"))
    compile_fresh(permutation_record(2, 2, 2, 2, "FP64"))

    probe = CoreProbe()
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    for case in build_cases(args.quick):
        rows.extend(run_case(case, peaks, copy_gbs, probe, rounds, budget, rng))
        kernel_rows = [r for r in rows if r.case == case.name and r.dtype == case.dtype
                       and r.implementation == "teir"]
        summary = ", ".join(f"{r.threads}T {r.rate:.1f} {r.unit} ({r.vs_best_numpy:.2f}x)"
                            for r in kernel_rows)
        print(f"[{time.perf_counter() - started:5.1f}s] {case.name} {case.dtype}: {summary} "
              f"({kernel_rows[0].check})", flush=True)

    # The peaks again at the end: the host may give more (or less) than at the start.
    for dtype in ("FP32", "FP64"):
        again = measure_peak(dtype, args.quick)
        peaks[dtype] = peaks[dtype].merge(again)
        print(f"[{time.perf_counter() - started:5.1f}s] FMA peak {dtype} again: "
              f"{again.one_thread:.1f} GFLOP/s (1T), {again.two_threads:.1f} GFLOP/s (2T)",
              flush=True)
    for row in rows:
        if row.unit == "GFLOP/s":
            peak = peaks[row.dtype]
            row.peak_fraction = row.rate / (peak.one_thread if row.threads == 1
                                            else peak.two_threads)

    notes = [("numpy's BLAS limited to the row's thread count (threadpoolctl); the "
              "permutation's peers are numpy copies, single-threaded at both counts"),
             (f"2-thread samples each follow {SETTLE_SECONDS} s idle, so that the thread "
              "pool of the implementation timed before (OpenBLAS's, libgomp's) has "
              "stopped spinning")]
    if _opt_einsum() is None:
        notes.append("opt_einsum not importable (not measured)")
    print()
    print_table(rows, peaks, copy_gbs, info, notes)
    csv_path = out / "results.csv"
    write_csv(csv_path, rows, peaks, copy_gbs, info)
    written = [str(csv_path)]
    png_path = out / "results.png"
    if write_chart(png_path, rows, peaks, copy_gbs, info):
        written.append(str(png_path))
    print(f"wrote {', '.join(written)}; total {time.perf_counter() - started:.0f} s")
    failed = any(r.check != "ok" for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
