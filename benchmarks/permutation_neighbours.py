"""Slow paths among permutations: each random permutation against its neighbour shapes.

    python benchmarks/permutation_neighbours.py [--cases 24] [--seed 0] [--rounds 5]

Each case is a random permutation (`einsum("abcd->dbca", x)`, 3 to 5 axes) of a
random array whose extents mix powers of two and their neighbours, in FP16,
BF16, FP32 or FP64, of 0.5 to 4 MiB (in the last-level cache, where the layout
and not the memory bound decides). Its neighbours are the same permutation
with every extent one larger, and every extent one smaller. The table gives the
case's time per element over its faster neighbour's (the median over
interleaved rounds, `teir_lowering.measure.timing.interleaved`) and the
fraction of a same-size `np.copyto` it reaches. Rows of in0 and of out a power
of two apart put a tile's loads and stores in a few cache sets
(`abcd->dcba` 33 x 32 x 32 x 33 FP32 took 10x its 32 x 33 x 33 x 32 neighbour's
time per element before the buffered tiles: README, Benchmarks). A case
more than `LIMIT` x its faster neighbour is a slow path: the run lists them and
exits 1.
"""

from __future__ import annotations

import argparse
import sys
from math import prod

import ml_dtypes
import numpy as np
from harness import clean_environment, describe_host

from teir_lowering import einsum
from teir_lowering.measure.timing import interleaved, median_ratio

LIMIT = 3.0
"""The largest time per element of a case over its faster neighbour's that is not a
slow path."""

TYPES = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32,
         "FP64": np.float64}
EXTENTS = (4, 8, 12, 16, 24, 31, 32, 33, 48, 63, 64, 65, 96, 128)
LETTERS = "abcde"


def cases(count: int, seed: int) -> list[tuple[str, str, tuple[int, ...]]]:
    """(subscripts, type, shape) for `count` random cases of 0.5 to 4 MiB."""
    rng = np.random.default_rng(seed)
    chosen: list[tuple[str, str, tuple[int, ...]]] = []
    while len(chosen) < count:
        rank = int(rng.integers(3, 6))
        name = list(TYPES)[int(rng.integers(len(TYPES)))]
        shape = tuple(int(e) for e in rng.choice(EXTENTS, rank))
        size = prod(shape) * np.dtype(TYPES[name]).itemsize
        order = rng.permutation(rank)
        if not (1 << 19) <= size <= (4 << 20) or (order == np.arange(rank)).all():
            continue
        inputs = LETTERS[:rank]
        chosen.append((f"{inputs}->{''.join(inputs[i] for i in order)}", name, shape))
    return chosen


def run_case(subscripts: str, name: str, shape: tuple[int, ...],
             rounds: int) -> tuple[float, float, float]:
    """(time per element / the faster neighbour's, fraction of a copy, seconds per call)."""
    rng = np.random.default_rng(1)
    shapes = {"case": shape, "larger": tuple(e + 1 for e in shape),
              "smaller": tuple(max(1, e - 1) for e in shape)}
    arrays = {key: rng.standard_normal(s).astype(TYPES[name]) for key, s in shapes.items()}
    order = [subscripts.split("->")[0].index(c) for c in subscripts.split("->")[1]]
    for key, x in arrays.items():
        if not np.array_equal(einsum(subscripts, x), x.transpose(order)):
            raise SystemExit(f"{subscripts} {shapes[key]} {name}: not numpy's transpose")
    copy = np.empty_like(arrays["case"])
    functions = {key: (lambda x=x: einsum(subscripts, x)) for key, x in arrays.items()}
    functions["copy"] = lambda: np.copyto(copy, arrays["case"])
    samples = interleaved(functions, rounds, budget=3.0)
    per_element = {key: [t / arrays[key].size for t in samples[key]] for key in arrays}
    slower = min(median_ratio(per_element["case"], per_element[key])
                 for key in ("larger", "smaller"))
    return (slower, median_ratio(samples["copy"], samples["case"]),
            float(np.median(samples["case"])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    removed = clean_environment()
    for line in describe_host(removed).header():
        print(line)
    print("1 thread; ratios are medians over interleaved rounds: the case's time per "
          "element over its faster neighbour's (every extent +1 or -1), and a same-size "
          "np.copyto's time over the case's")
    print("| case | type | us | / neighbour | of copy |\n| --- | --- | --- | --- | --- |")
    slow = []
    for subscripts, name, shape in cases(args.cases, args.seed):
        neighbour, of_copy, seconds = run_case(subscripts, name, shape, args.rounds)
        label = f"{subscripts} {'x'.join(map(str, shape))}"
        flag = " **slow**" if neighbour > LIMIT else ""
        print(f"| {label} | {name} | {seconds * 1e6:.0f} | {neighbour:.2f}{flag} "
              f"| {of_copy:.0%} |", flush=True)
        if neighbour > LIMIT:
            slow.append(f"{label} {name}")
    print(f"{len(slow)} slow path(s) (> {LIMIT}x the faster neighbour's time per element)"
          + "".join(f"\n  {case}" for case in slow))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
