"""Per-call overhead of the parallel runtimes considered for `scf.parallel`.

Runs §10.7.7 (the spec's small parallel BRGEMM, 12 tiles) three ways in one
process and prints the median time per call:

- libgomp: the compiled kernel as written (its p, r parallel; the auto-scheduler would
  keep so small a kernel on one thread), forking through libgomp, 1 and 2 threads;
- Python pool: the same outlined chunk function (`kernel__parallel0(ptrs..., lo, hi)`)
  called through ctypes from a `concurrent.futures.ThreadPoolExecutor`, one
  chunk per worker;
- serial ctypes: the chunk function called once over the whole range.

    python benchmarks/parallel_overhead.py
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from teir_lowering.measure.timing import median_time
from teir_lowering.runtime.kernel import compile_kernel

EXAMPLE = Path(__file__).resolve().parent.parent / "examples/spec/tree/10_7_7_parallel_brgemm.json"


def median_us(function: Callable[[], object]) -> float:
    """Microseconds per call: the median of 30 batches (teir_lowering.measure.timing)."""
    return median_time(function, 30) * 1e6


def main() -> None:
    kernel = compile_kernel(EXAMPLE, optimize=False)  # as written: p and r parallel
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(t.needed_bytes // 4).astype(np.float32) for t in kernel.tensors]
    pointers = [a.ctypes.data for a in arrays]
    total = 12  # |p| * |r|
    chunk_type = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * 3), ctypes.c_int64, ctypes.c_int64)
    chunk = chunk_type(kernel._engine.address("kernel__parallel0"))

    print(f"§10.7.7 at the spec's size ({total} tiles), median per call:")
    for threads in (1, 2):
        micros = median_us(lambda threads=threads: kernel(*arrays, threads=threads))
        print(f"  libgomp fork/join, {threads} thread(s): {micros:8.2f} us")
    print(f"  serial ctypes call of the chunk function: "
          f"{median_us(lambda: chunk(*pointers, 0, total)):8.2f} us")
    with ThreadPoolExecutor(max_workers=2) as pool:
        halves = [(0, total // 2), (total // 2, total)]

        def pooled() -> None:
            for future in [pool.submit(chunk, *pointers, lo, hi) for lo, hi in halves]:
                future.result()

        print(f"  Python ThreadPoolExecutor, 2 chunks:      {median_us(pooled):8.2f} us")


if __name__ == "__main__":
    main()
