"""A 2-thread TEIR kernel in a process that also calls numpy (issue 23, scope 3).

Two measurements, in a clean environment (harness.clean_environment):

1. cores a process burns while its main thread sleeps, in 50 ms windows, right
   after one call of each thread pool: OpenBLAS's worker keeps spinning (about
   2^28 cycles, OPENBLAS_THREAD_TIMEOUT), libgomp's for its spin count;
2. the spec contraction `trus,pqtu->pqrs` p32 q64 r32 s64 t8 u64 FP32, in
   interleaved rounds (medians): 1 thread and 2 threads after an idle pause, 2
   threads right after np.matmul with 2 BLAS threads (its worker still
   spinning) and with 1 (no worker).

    python benchmarks/mixed_pools.py [--rounds N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from harness import blas_threads, clean_environment, describe_host
from run import contraction_record

from teir_lowering.runtime.kernel import compile_kernel

SHAPE = (32, 64, 32, 64, 8, 64)  # p q r s t u
PAUSE = 0.25  # seconds: longer than any pool keeps spinning


def busy_cores(after: Callable[[], object], windows: int = 4, seconds: float = 0.05) -> list[float]:
    """Cores this process used in each window while its main thread slept, after `after()`."""
    after()
    busy = []
    for _ in range(windows):
        start = time.process_time()
        time.sleep(seconds)
        busy.append((time.process_time() - start) / seconds)
    return busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    removed = clean_environment()
    for line in describe_host(removed).header():
        print(line)

    p, q, r, s, t, u = SHAPE
    kernel = compile_kernel(contraction_record(p, q, r, s, t, u, "FP32"))
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n).astype(np.float32)
              for n in (t * r * u * s, p * q * t * u, p * q * r * s)]
    flops = 2.0 * p * q * r * s * t * u
    matrix = rng.standard_normal((384, 384))

    def numpy_call() -> None:
        matrix @ matrix

    def rate(threads: int, seconds: float = 0.02) -> float:
        """GFLOP/s of back-to-back calls for about `seconds`."""
        kernel(*arrays, threads=threads)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            kernel(*arrays, threads=threads)
            calls += 1
        return flops * calls / (time.perf_counter() - start) / 1e9

    print("cores busy while the main thread sleeps, 50 ms windows:")
    with blas_threads(2):
        print("  after np.matmul 384^2 (2 BLAS threads):",
              " ".join(f"{c:.2f}" for c in busy_cores(numpy_call)))
    print("  after the TEIR kernel at 2 threads:     ",
          " ".join(f"{c:.2f}" for c in busy_cores(lambda: kernel(*arrays, threads=2))))

    samples: dict[str, list[float]] = {
        "1 thread": [], "2 threads": [], "2 threads after numpy (2 BLAS threads)": [],
        "2 threads after numpy (1 BLAS thread)": []}
    for _ in range(args.rounds):
        time.sleep(PAUSE)
        samples["1 thread"].append(rate(1))
        time.sleep(PAUSE)
        samples["2 threads"].append(rate(2))
        with blas_threads(2):
            numpy_call()
        samples["2 threads after numpy (2 BLAS threads)"].append(rate(2))
        time.sleep(PAUSE)
        with blas_threads(1):
            numpy_call()
        samples["2 threads after numpy (1 BLAS thread)"].append(rate(2))
    print(f"trus,pqtu->pqrs p{p}q{q}r{r}s{s}t{t}u{u} FP32, medians of {args.rounds} rounds:")
    for name, values in samples.items():
        print(f"  {name:<40} {np.median(values):7.1f} GFLOP/s")


if __name__ == "__main__":
    main()
