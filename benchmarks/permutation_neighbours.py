"""Slow paths among permutations: each random permutation against its neighbour shapes.

    python benchmarks/permutation_neighbours.py [--cases 24] [--seed 0] [--rounds 5]
    python benchmarks/permutation_neighbours.py --memory [--cases 12] [--seed 0]
    python benchmarks/permutation_neighbours.py [--memory] --case "abcd->dcba 72x57x57x72 FP32"

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

With `--memory` the cases are 2 to 4 axes of any extents (17 to a few thousand)
holding two to three times the last-level cache, where the stores decide: each
against its round neighbour, every extent rounded down to a multiple of 16
(rows of whole cache lines in every type), per element, and more than
`MEMORY_LIMIT` x it is a slow path (`ab->ba` 686 x 24472 FP32 ran about 3x its
672 x 24464 neighbour's time per element before its rows of out, not whole
lines, were streamed: README, Benchmarks).

`--case "SUBSCRIPTS SHAPE TYPE"` (repeatable) runs the cases given instead of
random ones: HPTT's reversals whose extents are not multiples of 16, e.g.
`abcd->dcba 72x57x57x72 FP32`, a slow path on an Intel Xeon host that the
random memory cases did not draw (README, Benchmarks).
"""

from __future__ import annotations

import argparse
import sys
from math import prod

import ml_dtypes
import numpy as np
from harness import clean_environment, describe_host, table_header

from teir_lowering import einsum
from teir_lowering.measure.timing import interleaved, median_ratio

LIMIT = 3.0
"""The largest time per element of a case over its faster neighbour's that is not a
slow path."""

TYPES = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32,
         "FP64": np.float64}
EXTENTS = (4, 8, 12, 16, 24, 31, 32, 33, 48, 63, 64, 65, 96, 128)
LETTERS = "abcde"
MEMORY_LIMIT = 2.0
"""`--memory`: the largest time per element over the round neighbour's that is not a
slow path (memory-bound: both move the same bytes per element)."""


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


def memory_cases(count: int, seed: int, last_level: int) -> list[tuple[str, str, tuple[int, ...]]]:
    """(subscripts, type, shape) for `count` random cases of two to three times the
    last-level cache, 2 to 4 axes, each extent 17 or more."""
    rng = np.random.default_rng(seed)
    chosen: list[tuple[str, str, tuple[int, ...]]] = []
    while len(chosen) < count:
        rank = int(rng.integers(2, 5))
        name = list(TYPES)[int(rng.integers(len(TYPES)))]
        elements = rng.uniform(2, 3) * last_level / np.dtype(TYPES[name]).itemsize
        most = elements ** (1 / rank) * 8  # extents log-uniform in 17 .. most, the last
        first = [int(np.exp(rng.uniform(np.log(17), np.log(most)))) for _ in range(rank - 1)]
        last = int(elements // prod(first))
        shape = (*first, last)
        order = rng.permutation(rank)
        if last < 17 or (order == np.arange(rank)).all():
            continue
        inputs = LETTERS[:rank]
        chosen.append((f"{inputs}->{''.join(inputs[i] for i in order)}", name, shape))
    return chosen


def run_case(subscripts: str, name: str, shape: tuple[int, ...],
             rounds: int, memory: bool = False) -> tuple[float, float, float]:
    """(time per element / the faster neighbour's, fraction of a copy, seconds per call).
    `memory`: the one neighbour is the round one (extents down to a multiple of 16)."""
    rng = np.random.default_rng(1)
    shapes = ({"case": shape, "round": tuple(max(16, e // 16 * 16) for e in shape)}
              if memory else
              {"case": shape, "larger": tuple(e + 1 for e in shape),
               "smaller": tuple(max(1, e - 1) for e in shape)})
    arrays = {key: rng.standard_normal(s).astype(TYPES[name]) for key, s in shapes.items()}
    order = [subscripts.split("->")[0].index(c) for c in subscripts.split("->")[1]]
    for key, x in arrays.items():
        if not np.array_equal(einsum(subscripts, x), x.transpose(order)):
            raise SystemExit(f"{subscripts} {shapes[key]} {name}: not numpy's transpose")
    copy = np.empty_like(arrays["case"])
    if memory:  # into preallocated outs: a new result's page faults are the OS's time
        # C order: empty_like would keep the transposed view's strides (order "K"),
        # an out laid out as x, and time a copy
        outs = {key: np.empty(x.transpose(order).shape, x.dtype) for key, x in arrays.items()}
        functions = {key: (lambda x=x, out=outs[key]: einsum(subscripts, x, out=out, threads=1))
                     for key, x in arrays.items()}
    else:
        functions = {key: (lambda x=x: einsum(subscripts, x, threads=1)) for key, x in arrays.items()}
    functions["copy"] = lambda: np.copyto(copy, arrays["case"])
    samples = interleaved(functions, rounds, budget=3.0)
    per_element = {key: [t / arrays[key].size for t in samples[key]] for key in arrays}
    slower = min(median_ratio(per_element["case"], per_element[key])
                 for key in shapes if key != "case")
    return (slower, median_ratio(samples["copy"], samples["case"]),
            float(np.median(samples["case"])))


def _given(text: str) -> tuple[str, str, tuple[int, ...]]:
    """A `--case` as (subscripts, type, shape), or exit naming what is wrong."""
    try:
        subscripts, shape_text, name = text.split()
        shape = tuple(int(e) for e in shape_text.split("x"))
        inputs, output = subscripts.split("->")
    except ValueError:
        raise SystemExit(f"--case {text!r}: give 'SUBSCRIPTS SHAPE TYPE', "
                         "e.g. 'abcd->dcba 72x57x57x72 FP32'") from None
    if name not in TYPES or sorted(inputs) != sorted(output) or len(inputs) != len(shape) \
            or min(shape) < 1:
        raise SystemExit(f"--case {text!r}: a permutation of the shape's axes in one of "
                         f"{', '.join(TYPES)}")
    return subscripts, name, shape


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memory", action="store_true",
                        help="cases of 2-3x the last-level cache against round neighbours")
    parser.add_argument("--case", action="append", default=[], metavar="'SPEC SHAPE TYPE'",
                        help="a case of its own, e.g. 'abcd->dcba 72x57x57x72 FP32' (repeatable)")
    args = parser.parse_args()
    given = [_given(text) for text in args.case]
    removed = clean_environment()
    host = describe_host(removed)
    for line in host.header():
        print(line)
    limit = MEMORY_LIMIT if args.memory else LIMIT
    neighbours = ("its round neighbour's (every extent down to a multiple of 16)"
                  if args.memory else "its faster neighbour's (every extent +1 or -1)")
    print(f"1 thread; ratios are medians over interleaved rounds: the case's time per "
          f"element over {neighbours}, and a same-size np.copyto's time over the case's")
    print(table_header("case", "type", "us", "/ neighbour", "of copy"))
    slow = []
    chosen = given or (memory_cases(args.cases, args.seed, host.l3) if args.memory
                       else cases(args.cases, args.seed))
    for subscripts, name, shape in chosen:
        neighbour, of_copy, seconds = run_case(subscripts, name, shape, args.rounds,
                                               args.memory)
        label = f"{subscripts} {'x'.join(map(str, shape))}"
        flag = " **slow**" if neighbour > limit else ""
        print(f"| {label} | {name} | {seconds * 1e6:.0f} | {neighbour:.2f}{flag} "
              f"| {of_copy:.0%} |", flush=True)
        if neighbour > limit:
            slow.append(f"{label} {name}")
    print(f"{len(slow)} slow path(s) (> {limit}x the neighbour's time per element)"
          + "".join(f"\n  {case}" for case in slow))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
