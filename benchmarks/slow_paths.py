"""Slow paths behind a correct answer: random views and shapes through `einsum`.

    python benchmarks/slow_paths.py [--cases 40] [--seed 0] [--rounds 7] [--threads 1]

Each case is a contraction (GEMM, batched GEMM, GEMV, batched GEMV, a 3-D
contraction) in FP16, BF16, FP32 or FP64, whose operands are random views:
transposed (a view with permuted strides), sliced with steps (`a[:, ::2]`,
`a[::3]`), offset (`a[1:, 2:]`, leading dimensions larger than the extents),
broadcast (stride 0 along an index, `np.broadcast_to`) or contiguous. It is
timed against the same call on C-contiguous copies of the operands (its
"contiguous twin") and against `np.einsum` on the views (on float32 copies
of them for BF16, which numpy's einsum lacks), interleaved in
rounds (`teir_lowering.measure.timing.interleaved`), and the table gives the median
over the rounds of each ratio (robust on a machine shared with other jobs).
A case more than 2x slower than its twin is a slow path: the run lists them
and exits 1. The limit is on time per cache line: a view that spans s times
its twin's cache lines (a step along the contiguous axis: `a[:, ::3]` reads
every line of `a`) may take s times its twin's time, since every way to read
it (packing, a copy first, in place) moves those lines; the table prints both
ratios. Each result is checked against the twin's first (1e-2 relative
in the 16-bit types, the same sums in another order otherwise).

`--narrow` sweeps GEMMs with one free extent of 2 to 8 (`ij,jk->ik` with k = 2:
two GEMVs sharing their matrix), C-contiguous, each timed against its bound:
the same call with that extent 1 (the GEMV, which reads the other operand
once) plus narrow/16 of the call with that extent 16 (the multiply-adds at a
GEMM's rate); more than 2x the bound is a slow path. `ij,jk->ik` 1024 x 1024
x 2 ran 10x its GEMV in the outer kernel's two-lane vectors (README,
Benchmarks).

`--neighbours` sweeps shapes instead of views: each case is a contraction of
C-contiguous operands whose extents are random (17-399; a batch 2-8), timed
against its round neighbour, the same call with every extent rounded down to a
multiple of 16, per multiply-add; more than 2x the neighbour's time per
multiply-add is a slow path. The table also gives both shapes' first calls
(plan, compile and run, the kernel cache off), the "first call of a new shape"
a user waits for. A GEMM of 257 x 129 x 255 rows (FP64) was such a case: its
one-row remainder's K blocks cut the whole GEMM's K (README, Benchmarks).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import ml_dtypes
import numpy as np
from harness import blas_threads, clean_environment, describe_host, table_header

from teir_lowering import einsum
from teir_lowering.measure.timing import interleaved, median_ratio

LIMIT = 2.0
"""The largest time of a case over its contiguous twin's that is not a slow path."""

TYPES = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32,
         "FP64": np.float64}

SHAPES = (
    "ij,jk->ik", "ji,jk->ik", "ij,kj->ik", "bij,bjk->bik", "ij,j->i", "ji,j->i",
    "j,ij->i", "bij,bj->bi", "abc,cd->abd",
)
VIEWS = ("contiguous", "transposed", "stepped", "offset", "broadcast")


def view(rng: np.random.Generator, shape: tuple[int, ...], kind: str,
         dtype: type) -> np.ndarray:
    """A random array of `shape` as a `kind` view of a larger (or permuted) one."""
    def data(full: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(-1, 1, full).astype(dtype)

    axis = int(rng.integers(len(shape)))
    if kind == "transposed" and len(shape) > 1:
        order = rng.permutation(len(shape))
        while len(shape) > 1 and (order == np.arange(len(shape))).all():
            order = rng.permutation(len(shape))
        base = data(tuple(shape[i] for i in order))
        return base.transpose(np.argsort(order))
    if kind == "stepped":
        step = int(rng.integers(2, 4))
        full = tuple(n * step if i == axis else n for i, n in enumerate(shape))
        return data(full)[tuple(slice(None, None, step) if i == axis else slice(None)
                                for i in range(len(shape)))]
    if kind == "offset":
        full = tuple(n + int(rng.integers(1, 5)) for n in shape)
        return data(full)[tuple(slice(f - n, None) for f, n in zip(full, shape))]
    if kind == "broadcast":
        small = tuple(1 if i == axis else n for i, n in enumerate(shape))
        return np.broadcast_to(data(small), shape)
    return data(shape)


def pick(rng: np.random.Generator, number: int) -> tuple[str, str, list[str], list[str]]:
    """Case `number`'s subscripts (in turn), a random type, the inputs' terms and
    the indices."""
    subscripts = SHAPES[number % len(SHAPES)]
    name = list(TYPES)[int(rng.integers(len(TYPES)))]
    inputs = subscripts.split("->")[0].split(",")
    return subscripts, name, inputs, sorted(set("".join(inputs)))


def cases(count: int, seed: int) -> list[tuple[str, str, str, list[np.ndarray]]]:
    """(label, subscripts, type, operands) for `count` random cases."""
    rng = np.random.default_rng(seed)
    chosen = []
    for number in range(count):
        subscripts, name, inputs, letters = pick(rng, number)
        big = subscripts in ("ij,j->i", "ji,j->i", "j,ij->i")
        extents = {x: int(rng.integers(300, 1100) if big else rng.integers(24, 200))
                   for x in letters}
        if "b" in extents:
            extents["b"] = int(rng.integers(2, 9))
        kinds = [VIEWS[int(rng.integers(len(VIEWS)))] for _ in inputs]
        operands = [view(rng, tuple(extents[x] for x in term), kind, TYPES[name])
                    for term, kind in zip(inputs, kinds)]
        dims = "x".join(str(extents[x]) for x in letters)
        chosen.append((f"{subscripts} {dims} {'/'.join(kinds)}", subscripts, name, operands))
    return chosen


def neighbour_cases(count: int, seed: int) -> list[tuple[str, str, str, list[np.ndarray],
                                                        list[np.ndarray], float]]:
    """(label, subscripts, type, operands, the round neighbour's operands, its
    multiply-adds over the case's) for `count` random shapes."""
    rng = np.random.default_rng(seed)
    chosen = []
    for number in range(count):
        subscripts, name, inputs, letters = pick(rng, number)
        extents = {x: int(rng.integers(2, 9) if x == "b" else rng.integers(17, 400))
                   for x in letters}
        rounded = {x: n if x == "b" else max(16, n // 16 * 16) for x, n in extents.items()}
        arrays = [[rng.uniform(-1, 1, tuple(e[x] for x in term)).astype(TYPES[name])
                   for term in inputs] for e in (extents, rounded)]
        share = float(np.prod(list(rounded.values())) / np.prod(list(extents.values())))
        dims = "x".join(str(extents[x]) for x in letters)
        near = "x".join(str(rounded[x]) for x in letters)
        chosen.append((f"{subscripts} {dims} ({near})", subscripts, name, *arrays, share))
    return chosen


NARROW_SHAPES = ("ij,jk->ik", "ji,jk->ik", "ij,kj->ik", "ji,kj->ik", "bij,bjk->bik")


def narrow_cases(count: int, seed: int) -> list[tuple[str, str, str, int,
                                                      list[list[np.ndarray]]]]:
    """(label, subscripts, type, the narrow extent, operands with it as drawn, 1 and
    16) for `count` random GEMMs with one free extent of 2 to 8."""
    rng = np.random.default_rng(seed)
    chosen = []
    for number in range(count):
        subscripts = NARROW_SHAPES[number % len(NARROW_SHAPES)]
        name = list(TYPES)[int(rng.integers(len(TYPES)))]
        inputs = subscripts.split("->")[0].split(",")
        letters = sorted(set("".join(inputs)))
        extents = {x: int(rng.integers(2, 9) if x == "b" else rng.integers(64, 1025))
                   for x in letters}
        free = ("i", "k")[int(rng.integers(2))]
        narrow = extents[free] = int(rng.integers(2, 9))
        arrays = [[rng.uniform(-1, 1, tuple({**extents, free: n}[x] for x in term)).astype(
            TYPES[name]) for term in inputs] for n in (narrow, 1, 16)]
        dims = "x".join(str(extents[x]) for x in letters)
        chosen.append((f"{subscripts} {dims} ({free} = {narrow})", subscripts, name, narrow,
                       arrays))
    return chosen


def _calls(subscripts: str, name: str, threads: int,
           arrays: dict[str, list[np.ndarray]]) -> dict:
    """`einsum` on each named list of arrays, and as "numpy" `np.einsum` on the "case"
    arrays (on float32 copies of them for BF16, which numpy's einsum lacks), as
    callables for `interleaved`."""
    dtype = "BF16" if name == "BF16" else None
    peers = [op.astype(np.float32) if name == "BF16" else op for op in arrays["case"]]
    calls = {key: (lambda given=given: einsum(subscripts, *given, threads=threads,
                                              dtype=dtype))
             for key, given in arrays.items()}
    return calls | {"numpy": lambda: np.einsum(subscripts, *peers)}


def run_narrow(args: argparse.Namespace) -> list[str]:
    """The narrow sweep's table; its slow paths."""
    print(f"threads {args.threads}; medians over interleaved rounds of the case's time over "
          "its bound (its GEMV + narrow/16 of its 16-wide twin) and over numpy's")
    print(table_header("case", "type", "ms", "/ bound", "GEMV ms", "16-wide ms", "/ numpy"))
    slow = []
    for label, subscripts, name, narrow, (operands, gemv, wide) in narrow_cases(
            args.cases, args.seed):
        calls = _calls(subscripts, name, args.threads,
                       {"case": operands, "gemv": gemv, "wide": wide})
        with blas_threads(args.threads):
            for key in ("case", "gemv", "wide"):
                calls[key]()
            samples = interleaved(calls, args.rounds, budget=3.0)
        bounds = [g + narrow / 16 * w for g, w in zip(samples["gemv"], samples["wide"])]
        ratio = median_ratio(samples["case"], bounds)
        peer = median_ratio(samples["case"], samples["numpy"])
        slow_path = ratio > LIMIT
        flag = " **slow**" if slow_path else ""
        print(f"| {label} | {name} | {np.median(samples['case']) * 1e3:.3f} | {ratio:.2f}"
              f"{flag} | {np.median(samples['gemv']) * 1e3:.3f} | "
              f"{np.median(samples['wide']) * 1e3:.3f} | {peer:.2f} |", flush=True)
        if slow_path:
            slow.append(f"{label} {name}")
    return slow


def first_call(subscripts: str, operands: list[np.ndarray], threads: int,
               dtype: str | None) -> float:
    """Seconds of the first call on these shapes: plan, compile (the kernel cache
    off) and run."""
    os.environ["TEIR_KERNEL_CACHE"] = "0"
    try:
        start = time.perf_counter()
        einsum(subscripts, *operands, threads=threads, dtype=dtype)
        return time.perf_counter() - start
    finally:
        del os.environ["TEIR_KERNEL_CACHE"]


def run_neighbour(subscripts: str, name: str, operands: list[np.ndarray],
                  near: list[np.ndarray], threads: int, rounds: int,
                  ) -> tuple[float, float, float, tuple[float, float]]:
    """(time / the neighbour's, time / numpy's, seconds per call, both first calls'
    seconds) of one shape."""
    dtype = "BF16" if name == "BF16" else None
    firsts = (first_call(subscripts, operands, threads, dtype),
              first_call(subscripts, near, threads, dtype))
    return (*timed(subscripts, name, operands, near, threads, rounds), firsts)


def run_neighbours(args: argparse.Namespace) -> list[str]:
    """The shape sweep's table; its slow paths."""
    print(f"threads {args.threads}; ratios are medians over interleaved rounds of the "
          "shape's time per multiply-add over its round neighbour's / numpy's time")
    print(table_header("case (round neighbour)", "type", "ms", "/ neighbour", "/ numpy",
                       "first call s (neighbour's)"))
    slow = []
    warm = np.ones((8, 8), np.float32)  # imports and the JIT's start, outside the cases
    first_call("ij,jk->ik", [warm, warm], args.threads, None)
    for label, subscripts, name, operands, near, share in neighbour_cases(args.cases,
                                                                          args.seed):
        with blas_threads(args.threads):
            ratio, peer, seconds, firsts = run_neighbour(subscripts, name, operands, near,
                                                         args.threads, args.rounds)
        ratio *= share  # per multiply-add
        slow_path = ratio > LIMIT
        flag = " **slow**" if slow_path else ""
        print(f"| {label} | {name} | {seconds * 1e3:.3f} | {ratio:.2f}{flag} | {peer:.2f} "
              f"| {firsts[0]:.2f} ({firsts[1]:.2f}) |", flush=True)
        if slow_path:
            slow.append(f"{label} {name}")
    return slow


def cache_lines(array: np.ndarray) -> int:
    """How many distinct 64-byte lines the elements of `array` lie in."""
    index = np.indices(array.shape, dtype=np.int64).reshape(array.ndim, -1)
    offsets = np.asarray(array.strides, dtype=np.int64) @ index
    return len(np.unique((array.__array_interface__["data"][0] + offsets) // 64))


def line_ratio(operands: list[np.ndarray]) -> float:
    """The cache lines the views span over those of their C-contiguous copies."""
    return (sum(cache_lines(op) for op in operands)
            / sum(cache_lines(np.ascontiguousarray(op)) for op in operands))


def run_case(subscripts: str, name: str, operands: list[np.ndarray], threads: int,
             rounds: int) -> tuple[float, float, float]:
    """(time / twin's, time / numpy's, seconds per call) of one case."""
    twins = [np.ascontiguousarray(op) for op in operands]
    dtype = "BF16" if name == "BF16" else None
    got = einsum(subscripts, *operands, threads=threads, dtype=dtype)
    want = einsum(subscripts, *twins, threads=threads, dtype=dtype)
    tolerance = 1e-2 if name in ("FP16", "BF16") else 1e-4
    scale = float(np.abs(want.astype(np.float64)).max()) or 1.0
    error = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    if error > tolerance * scale:
        raise SystemExit(f"{subscripts} {name}: result differs from the twin's by {error}")
    return timed(subscripts, name, operands, twins, threads, rounds)


def timed(subscripts: str, name: str, operands: list[np.ndarray],
          others: list[np.ndarray], threads: int, rounds: int) -> tuple[float, float, float]:
    """(time / that on `others`, time / numpy's, seconds per call) of `einsum` on
    `operands`, the three timed in interleaved rounds."""
    samples = interleaved(_calls(subscripts, name, threads,
                                 {"case": operands, "other": others}), rounds, budget=3.0)
    return (median_ratio(samples["case"], samples["other"]),
            median_ratio(samples["case"], samples["numpy"]),
            float(np.median(samples["case"])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=36)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--neighbours", action="store_true",
                        help="random shapes against their round neighbours, not views")
    parser.add_argument("--narrow", action="store_true",
                        help="GEMMs with a free extent of 2 to 8 against their GEMV")
    args = parser.parse_args()
    removed = clean_environment()
    for line in describe_host(removed).header():
        print(line)
    if args.narrow:
        slow = run_narrow(args)
        print(f"{len(slow)} slow path(s) (> {LIMIT}x the GEMV's time plus narrow/16 of "
              "the 16-wide call's)" + "".join(f"\n  {case}" for case in slow))
        return 1 if slow else 0
    if args.neighbours:
        slow = run_neighbours(args)
        print(f"{len(slow)} slow path(s) (> {LIMIT}x the round neighbour's time per "
              "multiply-add)" + "".join(f"\n  {case}" for case in slow))
        return 1 if slow else 0
    print(f"threads {args.threads}; ratios are medians over interleaved rounds of the "
          "view's time over the contiguous twin's / numpy's (np.einsum on the views)")
    print(table_header("case", "type", "ms", "/ twin", "lines / twin's", "/ numpy"))
    slow = []
    for label, subscripts, name, operands in cases(args.cases, args.seed):
        with blas_threads(args.threads):
            twin, peer, seconds = run_case(subscripts, name, operands, args.threads,
                                           args.rounds)
        lines = line_ratio(operands)
        slow_path = twin > LIMIT * max(1.0, lines)
        flag = " **slow**" if slow_path else ""
        print(f"| {label} | {name} | {seconds * 1e3:.3f} | {twin:.2f}{flag} | {lines:.2f} "
              f"| {peer:.2f} |", flush=True)
        if slow_path:
            slow.append(f"{label} {name}")
    print(f"{len(slow)} slow path(s) (> {LIMIT}x the contiguous twin's time per cache line)"
          + "".join(f"\n  {case}" for case in slow))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
