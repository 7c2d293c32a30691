"""What a call of `teir_lowering.einsum` costs beyond its kernel, on tensors so small
that the call is all there is, next to numpy on the same arrays.

    python benchmarks/call_overhead.py [--rounds 9]

Per case, timed interleaved in rounds (`teir_lowering.measure.timing.interleaved`,
batches of calls): `einsum` into a preallocated `out` and into a new result, the
compiled kernel called alone (`Kernel.call_planned`, what the plan calls), and
numpy's `np.einsum` (and `@` for the GEMM). Medians over the rounds, microseconds
per call. One thread; each result is checked against numpy once.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from harness import clean_environment, describe_host, table_header

CASES = (
    ("ab->ba", ((4, 4),)),
    ("ab->ba", ((64, 64),)),
    ("ij,jk->ik", ((8, 8), (8, 8))),
    ("ij,j->i", ((16, 16), (16,))),
    ("bij,bjk->bik", ((2, 8, 8), (2, 8, 8))),
)


def time_case(subscripts: str, arrays: list[np.ndarray], rounds: int) -> dict[str, float]:
    """Microseconds per call of each way (median of interleaved rounds)."""
    from teir_lowering import einsum
    from teir_lowering.frontends import einsum_frontend
    from teir_lowering.measure.timing import interleaved

    expected = np.einsum(subscripts, *arrays)
    out = np.empty_like(expected)
    einsum(subscripts, *arrays, out=out, threads=1)
    if not np.allclose(out, expected, rtol=1e-5, atol=1e-5):
        raise SystemExit(f"{subscripts}: einsum's result differs from numpy's")
    # the kernel the plan runs, as it runs it (plans of one kernel only)
    plan = einsum_frontend._plan(subscripts, arrays, out, False, None, 1, False)
    kernel = getattr(plan, "kernel", None)
    calls = {
        "out": lambda: einsum(subscripts, *arrays, out=out, threads=1),
        "new": lambda: einsum(subscripts, *arrays, threads=1),
        "numpy": lambda: np.einsum(subscripts, *arrays, out=out),
    }
    if kernel is not None:
        calls["kernel"] = lambda: kernel.call_planned((*arrays, out), 1)
    if len(arrays) == 2 and subscripts != "ij,j->i":
        calls["matmul"] = lambda: np.matmul(*arrays, out=out)
    samples = interleaved(calls, rounds, budget=2.0)
    return {name: float(np.median(times)) * 1e6 for name, times in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    removed = clean_environment()
    for line in describe_host(removed).header():
        print(line)
    print("one thread; medians of interleaved rounds, microseconds per call")
    print(table_header("case", "einsum, out=", "einsum", "its kernel", "np.einsum", "@"))
    rng = np.random.default_rng(0)
    for subscripts, shapes in CASES:
        arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        us = time_case(subscripts, arrays, args.rounds)
        shape = " ".join("x".join(map(str, s)) for s in shapes)
        cells = [f"{us[name]:.2f}" if name in us else "-"
                 for name in ("out", "new", "kernel", "numpy", "matmul")]
        print(f"| {subscripts} {shape} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
