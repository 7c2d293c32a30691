"""The auto-scheduler against the spec's hand schedule, on the main job's contraction.

    python benchmarks/auto_schedule.py [--threads 1,2] [--rounds 5]

`trus,pqtu->pqrs` at p32 q64 r32 s64 t8 u64, FP32. The baseline is §10.7.7's
hand-written parallel BRGEMM schedule (examples/brgemm_large.json) compiled as
written (`optimize=False`). Against it: the plain record `einsum_config` builds
(one loop per index, output order), and scalar loop nests of the six indices
in several orders with the Zero guarded by `first()` of both reduction loops,
each through `teir-optimize` (the auto-scheduler decides everything). Every
kernel's result is checked against numpy once; then each round times every
kernel once (interleaved, so load drifts over all alike); the table gives
medians of the per-round ratios to the hand schedule (target: plain record
within 5 %, scalar nests within 10 %). Compile times are the first
compile of each (no kernel cache).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from teir_dialect import einsum_config
from teir_dialect.builders import scalar_nest
from teir_dialect.host import cpu_model
from teir_lowering.measure.timing import median_time
from teir_lowering.runtime.kernel import Kernel, compile_kernel

os.environ["TEIR_KERNEL_CACHE"] = "0"  # compile times of real compiles

HERE = Path(__file__).resolve().parent
HAND = HERE.parent / "examples" / "brgemm_large.json"
EXTENTS = {"p": 32, "q": 64, "r": 32, "s": 64, "t": 8, "u": 64}
SUBSCRIPTS = "trus,pqtu->pqrs"
ORDERS = ["pqrstu", "tupqrs", "rtpusq", "utsrqp", "sruqtp"]
"""Loop orders of the scalar nests, outermost first: output order with the
reductions inside, reductions outermost, two mixed orders, everything reversed."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    shapes = [tuple(EXTENTS[i] for i in term) for term in ("trus", "pqtu")]
    records = {"hand (§10.7.7, as written)": HAND.read_text(),
               "einsum_config + teir-optimize": einsum_config(SUBSCRIPTS, *shapes)}
    plain = einsum_config(SUBSCRIPTS, *shapes)
    records.update({f"scalar nest {o} + teir-optimize": scalar_nest(plain, o) for o in ORDERS})
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    expected = np.einsum(SUBSCRIPTS, a.astype(np.float64), b.astype(np.float64))
    flops = 2 * np.prod(list(EXTENTS.values()))
    print(f"{SUBSCRIPTS} {EXTENTS}, FP32, on {cpu_model()}")
    status = 0
    for threads in (int(t) for t in args.threads.split(",")):
        kernels: dict[str, Kernel] = {}
        compile_seconds: dict[str, float] = {}
        for label, record in records.items():
            start = time.perf_counter()
            kernels[label] = compile_kernel(record, threads=threads,
                                            optimize=not label.startswith("hand"))
            compile_seconds[label] = time.perf_counter() - start
            out = np.zeros(expected.shape, np.float32)
            kernels[label](a.ravel(), b.ravel(), out.ravel())
            error = float(np.max(np.abs(out - expected)))
            if error > 1e-3 * max(1.0, float(np.max(np.abs(expected)))):
                print(f"  {label}: WRONG (max abs error {error:.3g})")
                status = 1
        target = np.zeros(expected.shape, np.float32).ravel()
        times: dict[str, list[float]] = {label: [] for label in kernels}
        for _ in range(args.rounds):
            for label, kernel in kernels.items():
                times[label].append(median_time(
                    lambda k=kernel, t=target: k(a.ravel(), b.ravel(), t), 5, 0.5))
        hand = next(iter(kernels))
        print(f"\n{threads} thread(s), median of {args.rounds} rounds")
        print(f"  {'schedule':40} {'GFLOP/s':>8} {'vs hand':>8} {'compile':>8}")
        for label in kernels:
            ratios = [times[hand][r] / times[label][r] for r in range(args.rounds)]
            print(f"  {label:40} {flops / np.median(times[label]) / 1e9:8.1f} "
                  f"{np.median(ratios):8.3f} {compile_seconds[label]:7.2f}s")
    return status


if __name__ == "__main__":
    sys.exit(main())
