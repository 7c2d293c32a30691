"""TEIR's permutations on HPTT's 57 transposition cases, against plain copy.

    python benchmarks/hptt.py [--quick] [--mib N] [--threads 1,2] [--out benchmarks/results]

The cases are HPTT's (`../shared/benchmarks/hptt.txt`: permutation and input
extents, dimension 0 fastest), each scaled by one factor per dimension so that
a tensor holds about `--mib` MiB (default: twice the host's last-level cache,
so that the copies run from memory as at HPTT's full 200 MiB scale). Per case
and thread count, timed interleaved in rounds (benchmarks/harness.py):

- teir: `teir_lowering.einsum` with the permutation's subscripts into a
  preallocated `out` (compiled once; a call is a cache lookup and the kernel);
- copy: `np.copyto` of as many bytes between two contiguous arrays, the
  bandwidth a permutation can at best reach;
- numpy: `np.copyto(out, x.transpose(axes))`.

Every result is checked once against numpy's, exactly. The table gives GB/s
(bytes read + written per second), the median per-round ratio of copy's time
to teir's (teir as a fraction of copy bandwidth) and of numpy's time to
teir's. Results go to OUT/<cpu-slug>/hptt.csv, with the host and numpy's BLAS
named in the file and in the output.
"""

from __future__ import annotations

import argparse
import csv
import string
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from harness import (
    clean_environment,
    describe_host,
    interleaved,
    median_ratio,
    results_dir,
)

HERE = Path(__file__).resolve().parent
CASES = HERE.parent.parent / "shared" / "benchmarks" / "hptt.txt"


@dataclass(frozen=True)
class Case:
    number: int
    perm: tuple[int, ...]  # HPTT's: output dimension i is input dimension perm[i]
    extents: tuple[int, ...]  # input extents, dimension 0 fastest (scaled)

    @property
    def numpy_shape(self) -> tuple[int, ...]:
        """The input's numpy shape (C order: HPTT's dimension 0 last)."""
        return self.extents[::-1]

    @property
    def axes(self) -> tuple[int, ...]:
        """`x.transpose(axes)` is the output as a numpy array."""
        n = len(self.perm)
        return tuple(n - 1 - self.perm[n - 1 - k] for k in range(n))

    @property
    def subscripts(self) -> str:
        letters = string.ascii_lowercase[:len(self.perm)]
        return f"{letters}->{''.join(letters[a] for a in self.axes)}"

    @property
    def label(self) -> str:
        return f"{','.join(map(str, self.perm))} {'x'.join(map(str, self.extents))}"


def read_cases(path: Path, mib: float) -> list[Case]:
    """HPTT's cases from `path`, scaled to about `mib` MiB of FP32 per tensor."""
    cases: list[Case] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        perm_text, extents_text = line.split()
        perm = tuple(int(x) for x in perm_text.split(","))
        extents = tuple(int(x) for x in extents_text.split(","))
        if sorted(perm) != list(range(len(perm))) or len(extents) != len(perm):
            raise SystemExit(f"{path}: not a permutation and its extents: {line!r}")
        factor = (mib * (1 << 20) / 4 / float(np.prod(extents))) ** (1 / len(extents))
        scaled = tuple(max(1, round(e * factor)) for e in extents)
        cases.append(Case(len(cases) + 1, perm, scaled))
    return cases


@dataclass
class Row:
    case: Case
    threads: int
    teir_gbs: float
    copy_gbs: float
    numpy_gbs: float
    of_copy: float  # median per-round copy time / teir time
    vs_numpy: float  # median per-round numpy time / teir time
    rounds: int


def run_case(case: Case, threads: int, rounds: int, budget: float,
             rng: np.random.Generator) -> Row:
    from teir_lowering import einsum

    x = rng.standard_normal(case.numpy_shape, dtype=np.float32)
    expected = np.ascontiguousarray(x.transpose(case.axes))
    out = np.full_like(expected, np.nan)
    einsum(case.subscripts, x, out=out, threads=threads)
    if not np.array_equal(out, expected):
        raise SystemExit(f"case {case.number} ({case.label}): teir's result differs from numpy's")
    flat_in, flat_out = x.reshape(-1), np.empty(x.size, np.float32)
    numpy_out = np.empty_like(expected)
    transposed = x.transpose(case.axes)
    samples = interleaved({
        "teir": lambda: einsum(case.subscripts, x, out=out, threads=threads),
        "copy": lambda: np.copyto(flat_out, flat_in),
        "numpy": lambda: np.copyto(numpy_out, transposed),
    }, rounds, budget, batch_seconds=0.0)
    moved = 2.0 * x.nbytes / 1e9

    def gbs(name: str) -> float:
        return moved / float(np.median(samples[name]))

    return Row(case, threads, gbs("teir"), gbs("copy"), gbs("numpy"),
               median_ratio(samples["copy"], samples["teir"]),
               median_ratio(samples["numpy"], samples["teir"]), len(samples["teir"]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="every fourth case, 16 MiB tensors, 3 rounds")
    parser.add_argument("--mib", type=float, default=0.0,
                        help="MiB per tensor (default: 2 x the last-level cache; 16 with --quick)")
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts (default: %(default)s)")
    parser.add_argument("--cases", default="",
                        help="comma-separated case numbers (1-57; default all, or every "
                             "fourth with --quick)")
    parser.add_argument("--rounds", type=int, default=0, help="default 3 with --quick, else 7")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="results go to OUT/<cpu-slug>/hptt.csv (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        threads = [int(t) for t in args.threads.split(",")]
        chosen = [int(c) for c in args.cases.split(",")] if args.cases else []
    except ValueError:
        parser.error("--threads and --cases take comma-separated integers")
    if any(t < 1 for t in threads):
        parser.error("--threads: counts from 1 on")
    removed = clean_environment()
    started = time.perf_counter()

    import teir_lowering  # noqa: F401  (imports xDSL once, before any timing)

    info = describe_host(removed)
    mib = args.mib or (16.0 if args.quick else 2 * info.l3 / (1 << 20))
    cases = read_cases(CASES, mib)
    if chosen:
        bad = [c for c in chosen if not 1 <= c <= len(cases)]
        if bad:
            parser.error(f"--cases: no case {bad[0]} (1-{len(cases)})")
        cases = [cases[c - 1] for c in chosen]
    elif args.quick:
        cases = cases[::4]
    rounds = args.rounds or (3 if args.quick else 7)
    budget = 1.0 if args.quick else 3.0
    for line in info.header():
        print(line, flush=True)
    print(f"{len(cases)} HPTT cases at about {mib:.0f} MiB per FP32 tensor, "
          f"threads {args.threads}, {rounds} rounds", flush=True)
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    header = (f"{'#':>3} {'perm':<14} {'extents':<22} {'thr':>3} {'teir GB/s':>9} "
              f"{'copy GB/s':>9} {'of copy':>7} {'numpy GB/s':>10} {'vs numpy':>8}")
    print(header)
    for case in cases:
        for count in threads:
            row = run_case(case, count, rounds, budget, rng)
            rows.append(row)
            print(f"{case.number:>3} {','.join(map(str, case.perm)):<14} "
                  f"{'x'.join(map(str, case.extents)):<22} {count:>3} {row.teir_gbs:>9.1f} "
                  f"{row.copy_gbs:>9.1f} {row.of_copy:>6.0%} {row.numpy_gbs:>10.1f} "
                  f"{row.vs_numpy:>7.2f}x", flush=True)
    for count in threads:
        mine = [r for r in rows if r.threads == count]
        print(f"{count} thread(s): median of copy {np.median([r.of_copy for r in mine]):.0%} "
              f"(min {min(r.of_copy for r in mine):.0%}), median vs numpy "
              f"{np.median([r.vs_numpy for r in mine]):.2f}x over {len(mine)} cases")
    path = results_dir(args.out, info) / "hptt.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        for line in info.header():
            writer.writerow([f"# {line}"])
        writer.writerow(["case", "perm", "extents", "threads", "teir_gbs", "copy_gbs",
                         "of_copy", "numpy_gbs", "vs_numpy", "rounds"])
        for r in rows:
            writer.writerow([r.case.number, ",".join(map(str, r.case.perm)),
                             "x".join(map(str, r.case.extents)), r.threads,
                             f"{r.teir_gbs:.2f}", f"{r.copy_gbs:.2f}", f"{r.of_copy:.3f}",
                             f"{r.numpy_gbs:.2f}", f"{r.vs_numpy:.3f}", r.rounds])
    print(f"wrote {path}; total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
