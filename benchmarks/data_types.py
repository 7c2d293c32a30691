"""FP16 and BF16 kernels next to FP32: GEMM (a hand-made record and `einsum`'s),
BRGEMM (the spec's record and the one `einsum` schedules) and the permutation
abcd->dcba.

    python benchmarks/data_types.py [--rounds 5] [--threads 1] [--quick]

Every case is compiled once per data type with `compile_kernel`; then each
round times every (case, data type) once, one after the other (`median_time`
of short batches), so that a machine whose load changes during the run slows
all of them alike. The table gives the median over the rounds of each rate
and of each round's ratio to FP32 (the ratio of two rates measured seconds
apart, so less noisy than the ratio of two medians). Rates: GFLOP/s (2 flops
per multiply-add) for contractions, GB/s read + written for the permutation,
and for the permutation its element rate (elements per second) relative to
FP32's, the figure the 16-bit formats should double.

On hosts with AVX512-BF16 the contractions get one more row, "BF16 pairs": the
BF16 record whose Contraction opts into `bf16_products = pairs` (vdpbf16ps). Its
bound is printed with it: the peak of a `vdpbf16ps` loop against the FP32 FMA
peak, measured in the same run (`teir_lowering.measure.peaks.PAIRS`); the 1.0x
target holds that row only where the first is the larger (on Intel's Emerald
Rapids it is about half: the paired products cannot catch FP32 there).

Peers on the same data: numpy's float16 `matmul`/`einsum` (numpy computes
float16 products without BLAS; timed only where a call takes under a
second), numpy on bfloat16 (ml_dtypes) where numpy has the loop, `np.copyto`
of the transposed view for the permutation, and numpy's FP32 path (OpenBLAS).
Each kernel's result is checked once against numpy in float64 with a
tolerance from the format's epsilon and the reduction length.

The header names the CPU model (`teir_dialect.host.cpu_model()`), its vector
width and whether it has F16C (vcvtph2ps/vcvtps2ph) and half-precision FMAs.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from harness import blas_threads, clean_environment, describe_host
from run import contraction_record as brgemm_record  # benchmarks/run.py: the same records
from run import gemm_record, permutation_record
from xdsl.dialects.builtin import DictionaryAttr, StringAttr

from teir_dialect import einsum_config
from teir_dialect.host import host
from teir_dialect.records import find_configs, load_module
from teir_dialect.vocabulary import DataType, OperationKind
from teir_lowering.measure.timing import median_time
from teir_lowering.runtime.kernel import Kernel, compile_kernel
from teir_tools.teir_run import tolerance

TYPES = ("FP32", "FP16", "BF16")
PAIRS = "BF16 pairs"
"""BF16 with the primitive's opt-in `bf16_products = pairs` (vdpbf16ps): a row of its
own for the contractions, on hosts with AVX512-BF16."""
NUMPY = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16}
EPSILON = {"FP32": 2.0**-24, "FP16": 2.0**-11, "BF16": 2.0**-8}
"""Unit roundoff of each storage format."""

Peer = Callable[[Sequence[np.ndarray]], object]


@dataclass
class Case:
    """One operation: a record per data type, its work, numpy's expected result."""

    name: str
    record: Callable[[str], dict]
    flops: float  # 0 for the permutation
    elements: int  # elements read (and written) by the permutation
    reduction: int  # terms per output element (0: a copy)
    expected: Callable[[Sequence[np.ndarray]], np.ndarray]  # float64, flat out
    peers: Callable[[str], dict[str, Peer]]
    kernels: dict[str, Kernel] = field(default_factory=dict)
    arrays: dict[str, list[np.ndarray]] = field(default_factory=dict)


def gemm_case(size: int) -> Case:
    m = n = k = size

    def views(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        a, b = arrays[0], arrays[1]
        return a[: m * k].reshape(k, m).T, b[: k * n].reshape(n, k).T  # column-major

    def expected(arrays: Sequence[np.ndarray]) -> np.ndarray:
        a, b = views([x.astype(np.float64) for x in arrays])
        return (a @ b).T.reshape(-1)

    def peers(dtype: str) -> dict[str, Peer]:
        def matmul(arrays: Sequence[np.ndarray]) -> object:
            a, b = views(arrays)
            return np.matmul(a, b)

        return {f"np.matmul {NUMPY[dtype].__name__}": matmul}

    return Case(f"GEMM {size}^3", lambda dtype: gemm_record(m, n, k, dtype), 2.0 * m * n * k,
                0, k, expected, peers)


def brgemm_case(p: int, q: int, r: int, s: int, t: int, u: int) -> Case:
    subscripts = "trus,pqtu->pqrs"

    def views(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return (arrays[0][: t * r * u * s].reshape(t, r, u, s),
                arrays[1][: p * q * t * u].reshape(p, q, t, u))

    def expected(arrays: Sequence[np.ndarray]) -> np.ndarray:
        a, b = views([x.astype(np.float64) for x in arrays])
        return np.einsum(subscripts, a, b, optimize=True).reshape(-1)

    def peers(dtype: str) -> dict[str, Peer]:
        def einsum(arrays: Sequence[np.ndarray]) -> object:
            return np.einsum(subscripts, *views(arrays), optimize=True)

        return {f"np.einsum {NUMPY[dtype].__name__}": einsum}

    return Case(f"BRGEMM {subscripts} p{p} q{q} r{r} s{s} t{t} u{u}",
                lambda dtype: brgemm_record(p, q, r, s, t, u, dtype),
                2.0 * p * q * r * s * t * u, 0, t * u, expected, peers)


def einsum_case(p: int, q: int, r: int, s: int, t: int, u: int) -> Case:
    """The BRGEMM case as `teir_lowering.einsum` builds and schedules it (the record
    of `einsum_config`, teir-auto-schedule's tiles), not the spec's schedule."""
    subscripts = "trus,pqtu->pqrs"

    def record(dtype: str) -> dict:
        shapes = ((t, r, u, s), (p, q, t, u))
        return einsum_config(subscripts, *(np.empty(x, NUMPY[dtype]) for x in shapes),
                             dtype=dtype)

    return dataclasses.replace(brgemm_case(p, q, r, s, t, u), record=record,
                               name=f"einsum {subscripts} p{p} q{q} r{r} s{s} t{t} u{u}")


def einsum_gemm_case(size: int) -> Case:
    """GEMM as `teir_lowering.einsum` builds it (`ij,jk->ik`, row-major), scheduled
    for the row's thread count by teir-auto-schedule: whether it forks is the
    scheduler's choice per data type, the hand-made GEMM record's is fixed."""
    m = n = k = size

    def record(dtype: str) -> dict:
        return einsum_config("ij,jk->ik", np.empty((m, k), NUMPY[dtype]),
                             np.empty((k, n), NUMPY[dtype]), dtype=dtype)

    def expected(arrays: Sequence[np.ndarray]) -> np.ndarray:
        a, b = arrays[0][: m * k].reshape(m, k), arrays[1][: k * n].reshape(k, n)
        return (a.astype(np.float64) @ b.astype(np.float64)).reshape(-1)

    def peers(dtype: str) -> dict[str, Peer]:
        return {}  # the GEMM case's np.matmul peers

    return Case(f"einsum ij,jk->ik {size}^3", record, 2.0 * m * n * k, 0, k, expected,
                peers)


def permutation_case(extent: int) -> Case:
    a = b = c = d = extent
    count = a * b * c * d

    def expected(arrays: Sequence[np.ndarray]) -> np.ndarray:
        x = arrays[0][:count].astype(np.float64).reshape(a, b, c, d)
        return x.transpose(3, 2, 1, 0).reshape(-1)

    def peers(dtype: str) -> dict[str, Peer]:
        def copyto(arrays: Sequence[np.ndarray]) -> object:
            x, y = arrays
            np.copyto(y[:count].reshape(d, c, b, a),
                      x[:count].reshape(a, b, c, d).transpose(3, 2, 1, 0))
            return y

        return {f"np.copyto(out, x.T) {NUMPY[dtype].__name__}": copyto}

    return Case(f"abcd->dcba {extent}^4", lambda dtype: permutation_record(a, b, c, d, dtype),
                0.0, count, 0, expected, peers)


def prepare(case: Case, dtype: str, threads: int, rng: np.random.Generator) -> str | None:
    """Compiles `case` in `dtype`, makes its arrays and checks one call against numpy in
    float64 (teir-run's tolerance); the failure, or None."""
    record: object = case.record(stored_type(dtype))
    if dtype == PAIRS:
        record = load_module(record)
        for config in find_configs(record):
            for prim in config.primitives:
                if prim.kind is OperationKind.CONTRACTION:
                    prim.metadata = DictionaryAttr({**prim.metadata.data,
                                                    "bf16_products": StringAttr("pairs")})
    kernel = compile_kernel(record, threads=threads)
    arrays = [
        rng.standard_normal(spec.needed_bytes // spec.dtype.itemsize)
        .astype(NUMPY[stored_type(dtype)])
        for spec in kernel.tensors
    ]
    kernel(*arrays)
    case.kernels[dtype], case.arrays[dtype] = kernel, arrays
    wide = [x.astype(np.float64) for x in arrays]
    want = case.expected(wide)
    got = wide[-1][: want.size]
    if case.reduction == 0:
        return None if np.array_equal(got, want) else f"{case.name} {dtype}: not a permutation"
    magnitude = case.expected([np.abs(x) for x in wide])
    bound = tolerance(DataType(stored_type(dtype)), 1, case.reduction) * magnitude
    worst = float(np.max(np.abs(got - want) / np.maximum(bound, np.finfo(float).tiny)))
    if worst <= 1:
        return None
    return f"{case.name} {dtype}: error {worst:.3g} times the tolerance"


@dataclass
class Timing:
    """Seconds per call of each round, by data type; the peers' by name."""

    kernel: dict[str, list[float]] = field(default_factory=dict)
    peers: dict[str, list[float]] = field(default_factory=dict)


def measure(cases: Sequence[Case], rounds: int, repeat: int, threads: int,
            clock: Callable[[], float]) -> dict[str, Timing]:
    """`rounds` rounds, each timing every case in every data type and its peers."""
    timings = {case.name: Timing() for case in cases}
    peers = {
        case.name: {name: (peer, case.arrays[dtype]) for dtype in TYPES
                    for name, peer in case.peers(dtype).items() if quick_enough(peer, case.arrays[dtype])}
        for case in cases
    }
    for round_number in range(rounds):
        for case in cases:
            timing = timings[case.name]
            for dtype in types_of(case):
                kernel, arrays = case.kernels[dtype], case.arrays[dtype]
                seconds = median_time(lambda k=kernel, a=arrays: k(*a, threads=threads), repeat,
                                      budget=1.0, clock=clock)
                timing.kernel.setdefault(dtype, []).append(seconds)
            for name, (peer, arrays) in peers[case.name].items():
                seconds = median_time(lambda f=peer, a=arrays: f(a), repeat, budget=1.0,
                                      clock=clock)
                timing.peers.setdefault(name, []).append(seconds)
            if threads > 1 and peers[case.name]:
                # OpenBLAS's worker spins on a core after a call: the next case's
                # first kernel would share its cores (benchmarks/mixed_pools.py)
                time.sleep(POOL_PAUSE)
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    return timings


def quick_enough(peer: Peer, arrays: Sequence[np.ndarray]) -> bool:
    """Whether numpy has the loop and one call takes under PEER_LIMIT seconds."""
    try:
        start = time.perf_counter()
        peer([x.copy() for x in arrays])
    except TypeError:  # no loop for the dtype (numpy on ml_dtypes.bfloat16)
        return False
    return time.perf_counter() - start < PEER_LIMIT


def stored_type(dtype: str) -> str:
    """The data type of the arrays (a row's name otherwise)."""
    return "BF16" if dtype == PAIRS else dtype


def types_of(case: Case) -> tuple[str, ...]:
    """The rows of `case`: every type, and BF16 pairs for a contraction where it runs."""
    pairs = case.reduction > 0 and "avx512bf16" in host().features
    return (*TYPES, PAIRS) if pairs else TYPES


def rate(case: Case, dtype: str, seconds: float) -> str:
    if case.flops:
        return f"{case.flops / seconds / 1e9:8.1f} GFLOP/s"
    moved = 2 * case.elements * DataType(stored_type(dtype)).width
    return f"{moved / seconds / 1e9:8.1f} GB/s   "


def pairs_bound(threads: int, rounds: int) -> float:
    """The `vdpbf16ps` loop's GFLOP/s over the FP32 FMA loop's at `threads`, the
    median of per-round ratios (the two timed one after the other each round)."""
    from teir_lowering.measure.peaks import PAIRS as PAIRS_LOOP
    from teir_lowering.measure.peaks import FmaPeak

    runs = {dtype: FmaPeak(dtype).call(threads, 0.05) for dtype in ("FP32", PAIRS_LOOP)}
    ratios = []
    for _ in range(rounds):
        rates = {dtype: flops / run() for dtype, (run, flops) in runs.items()}
        ratios.append(rates[PAIRS_LOOP] / rates["FP32"])
    return float(np.median(ratios))


def report(cases: Sequence[Case], timings: dict[str, Timing],
           bound: float | None = None) -> bool:
    """Prints the table and the targets; whether every target is met. `bound`: the
    host's `pairs_bound`, which the pairs rows are held to instead of the target
    where it is below 1."""
    met = True
    for case in cases:
        timing = timings[case.name]
        print(f"\n{case.name}")
        base = timing.kernel["FP32"]
        for dtype in types_of(case):
            runs = timing.kernel[dtype]
            ratios = [fp32 / seconds for fp32, seconds in zip(base, runs)]
            ratio = float(np.median(ratios))
            line = (f"  TEIR {dtype:<10}  {rate(case, dtype, float(np.median(runs)))}"
                    f"  {float(np.median(runs)) * 1e6:10.1f} us")
            if dtype == PAIRS and bound is not None and bound < CONTRACTION_TARGET:
                line += (f"  {ratio:5.2f}x FP32's GFLOP/s (rounds {min(ratios):.2f}-"
                         f"{max(ratios):.2f}; no target: vdpbf16ps peaks at {bound:.2f}x"
                         " the FP32 FMAs here)")
            elif dtype != "FP32":
                target = PERMUTATION_TARGET if case.reduction == 0 else CONTRACTION_TARGET
                what = "element rate" if case.reduction == 0 else "GFLOP/s"
                ok = ratio >= target
                met &= ok
                line += (f"  {ratio:5.2f}x FP32's {what} (rounds {min(ratios):.2f}-"
                         f"{max(ratios):.2f}; target {target}x: {'met' if ok else 'MISSED'})")
            print(line)
        for name, runs in timing.peers.items():
            dtype = next(d for d in TYPES if name.endswith(NUMPY[d].__name__))
            seconds = float(np.median(runs))
            print(f"  numpy {name:<36} {rate(case, dtype, seconds)}  {seconds * 1e6:10.1f} us")
    return met


POOL_PAUSE = 0.25
"""Seconds: longer than OpenBLAS's worker spins after a call on these hosts."""
PEER_LIMIT = 1.0
"""Seconds: a numpy peer slower than this per call is not timed (float16 einsums)."""
PERMUTATION_TARGET = 1.7
"""FP16/BF16 permutations: at least this many times FP32's elements per second."""
CONTRACTION_TARGET = 1.0
"""FP16/BF16 GEMM/BRGEMM: at least FP32's GFLOP/s (issue 23)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="timed batches per measurement")
    parser.add_argument("--quick", action="store_true", help="smaller shapes, 3 rounds")
    parser.add_argument("--wall", action="store_true",
                        help="wall time also for 1 thread (default: the process's CPU time)")
    args = parser.parse_args(argv)
    removed = clean_environment()
    if args.quick:
        args.rounds = min(args.rounds, 3)
        cases = [gemm_case(64), einsum_gemm_case(64), brgemm_case(8, 16, 8, 64, 4, 64),
                 einsum_case(8, 16, 8, 64, 4, 64), permutation_case(32)]
    else:
        cases = [gemm_case(128), einsum_gemm_case(256), brgemm_case(32, 64, 32, 64, 8, 64),
                 einsum_case(32, 64, 32, 64, 8, 64), permutation_case(64)]
    wall = args.wall or args.threads > 1
    facts = host()
    for line in describe_host(removed).header():
        print(line)
    print(f"CPU: {facts.cpu}; {facts.vector_bytes * 8}-bit vectors, F16C "
          f"{'yes' if 'f16c' in facts.features else 'no'}, half-precision FMA "
          f"{'yes' if 'avx512fp16' in facts.features else 'no'}; {args.threads} thread(s); "
          f"{'wall time' if wall else 'process CPU time'}; median of {args.rounds} rounds")
    rng = np.random.default_rng(0)
    failures = [message for case in cases for dtype in types_of(case)
                if (message := prepare(case, dtype, args.threads, rng)) is not None]
    for message in failures:
        print(f"CHECK FAILED: {message}")
    clock = time.perf_counter if wall else time.process_time
    # numpy's BLAS at the row's thread count: a pool of more threads spinning after
    # a peer's call would be counted in the process CPU time of what follows
    with blas_threads(args.threads):
        timings = measure(cases, args.rounds, args.repeat, args.threads, clock)
    bound = None
    if any(PAIRS in types_of(case) for case in cases):
        bound = pairs_bound(args.threads, args.rounds)
        print(f"vdpbf16ps peak / FP32 FMA peak at {args.threads} thread(s): {bound:.2f}x "
              f"(median of {args.rounds} interleaved rounds; the pairs rows' bound)")
    met = report(cases, timings, bound)
    print(f"\ntargets: {'all met' if met else 'some missed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
