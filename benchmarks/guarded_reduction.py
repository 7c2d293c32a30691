"""The spec's guarded reduction, before and after teir-fold-guarded-reduction.

    python benchmarks/guarded_reduction.py [--m 64] [--n 64] [--k 256] [--rounds 7]

C(m, n) = relu(sum_k A(m, k) B(k, n)) written three ways, FP32, one thread:

- `guarded`: §10.2.2's form: a k loop around a Zero guarded by first(k), a
  rank-1-update Contraction (M = [m], N = [n], K = []) and a ReLU guarded by
  last(k), compiled without teir-optimize (what TEIR did before the fold);
- `folded`: the same record through teir-optimize, which folds k into the
  Contraction's K role (teir-fold-guarded-reduction) so the GEMM microkernel
  applies;
- `k-role`: the record written by hand with k in the K role.

The three are timed interleaved in rounds (one call of each per round) and
checked against each other; the table gives medians and the median of the
per-round ratios, and names the CPU.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

from teir_lowering import compile_kernel
from teir_lowering.measure.timing import median_time


def record(m: int, n: int, k: int, guarded: bool) -> dict:
    w = 4
    axes = [
        {"id": "m", "extent": m, "strides": [w, 0, w], "offsets": [0, 0, 0]},
        {"id": "n", "extent": n, "strides": [0, k * w, m * w], "offsets": [0, 0, 0]},
        {"id": "k", "extent": k, "strides": [m * w, w, 0], "offsets": [0, 0, 0]},
    ]
    meta = {"data_type": "FP32"}
    tile = {"M": ["m"], "N": ["n"]}
    prims = [
        {"id": "z", "operation": "Zero", "axes": tile, "metadata": meta},
        {"id": "c", "operation": "Contraction",
         "axes": {**tile, "K": [] if guarded else ["k"]}, "metadata": meta},
        {"id": "r", "operation": "ReLU", "axes": tile, "metadata": meta},
    ]
    invocations = [
        {"id": "zero", "primitive": "z", "guard": ["first(k)"] if guarded else None},
        {"id": "mac", "primitive": "c", "guard": None},
        {"id": "relu", "primitive": "r", "guard": ["last(k)"] if guarded else None},
    ]
    iterations = [{"id": "k", "axis": "k", "policy": "sequential",
                   "children": ["zero", "mac", "relu"], "guard": None}] if guarded else []
    roots = ["k"] if guarded else ["zero", "mac", "relu"]
    return {"tensors": ["in0", "in1", "out"], "axes": axes, "primitives": prims,
            "schedule": {"roots": roots, "iterations": iterations, "invocations": invocations}}


def cpu_model() -> str:
    try:
        import cpuinfo

        return cpuinfo.get_cpu_info().get("brand_raw", platform.processor())
    except ImportError:
        return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=64)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    m, n, k = args.m, args.n, args.k
    kernels = {
        "guarded": compile_kernel(record(m, n, k, True), optimize=False, threads=1),
        "folded": compile_kernel(record(m, n, k, True), threads=1),
        "k-role": compile_kernel(record(m, n, k, False), threads=1),
    }
    rng = np.random.default_rng(0)
    a = rng.standard_normal(m * k).astype(np.float32)
    b = rng.standard_normal(k * n).astype(np.float32)
    outputs = {}
    for name, kernel in kernels.items():
        outputs[name] = np.zeros(m * n, np.float32)
        kernel(a, b, outputs[name])
    for name in ("folded", "k-role"):
        np.testing.assert_allclose(outputs[name], outputs["guarded"], rtol=1e-4, atol=1e-4)
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(args.rounds):
        for name, kernel in kernels.items():
            out = outputs[name]
            times[name].append(median_time(lambda kernel=kernel, out=out: kernel(a, b, out), 5))
    flops = 2.0 * m * n * k
    print(f"guarded reduction, m={m} n={n} k={k}, FP32, 1 thread, {cpu_model()}")
    for name, samples in times.items():
        ratio = np.median([g / t for g, t in zip(times["guarded"], samples)])
        seconds = float(np.median(samples))
        print(f"  {name:8s} {seconds * 1e6:9.1f} us  {flops / seconds / 1e9:7.2f} GFLOP/s"
              f"  {ratio:6.2f}x the guarded form")


if __name__ == "__main__":
    main()
