"""The 48 contractions of the TCCG benchmark through `teir_lowering.einsum`, against numpy.

    python benchmarks/tccg.py                      # every case, scaled to <= 0.2 GFLOP each
    python benchmarks/tccg.py --max-gflop 2 --threads 1,2 --dtypes FP32,FP64
    python benchmarks/tccg.py --cases 1-8 --rounds 5

Cases come from ../shared/benchmarks/tccg.txt (Springer & Bientinesi). Each is
scaled down by one factor on every extent until its work is at most
`--max-gflop` (the scale is printed per case). Peers, on the same arrays:
`np.einsum(optimize=True)`, `opt_einsum.contract` (when installed) and
`np.tensordot` followed by the transpose into the output's order (a copy:
the peer must deliver the same array). numpy's BLAS runs with the row's
thread count (threadpoolctl), in a process started without OPENBLAS_* or
similar variables that could make it slower (the script re-executes itself
without them), and its library, version and kernel architecture are
printed. TEIR and the peers are timed interleaved in rounds (each sample of a
multi-threaded row after a 0.25 s idle pause, so that no thread pool timed
before it still spins on a core); a row gives
medians and the median of the per-round ratios (best peer time / TEIR time:
above 1 TEIR is faster). The FMA peak of the same run gives the fraction of
peak. Compile time is the first call of `einsum` for the case. Results go to
benchmarks/results/<cpu>/tccg.csv (and tccg.png with matplotlib).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from teir_dialect.host import cpu_model
from teir_lowering import einsum
from teir_lowering.measure.blas import blas_info, blas_text
from teir_lowering.measure.peaks import measure_peak
from teir_lowering.measure.timing import SETTLE_SECONDS, interleaved
from teir_tools.environment import clean_environment

HERE = Path(__file__).resolve().parent
CASES = HERE.parent.parent / "shared" / "benchmarks" / "tccg.txt"
NP_TYPE = {"FP32": np.float32, "FP64": np.float64}


@dataclass(frozen=True)
class Case:
    number: int
    subscripts: str
    extents: dict[str, int]

    @property
    def flops(self) -> float:
        return 2.0 * math.prod(self.extents.values())

    def scaled(self, max_gflop: float) -> tuple[Case, float]:
        """The case with every extent times one factor, so that it does at most
        `max_gflop`; the factor (1 when it already fits)."""
        scale = min(1.0, (max_gflop * 1e9 / self.flops) ** (1 / len(self.extents)))
        extents = {i: max(1, round(n * scale)) for i, n in self.extents.items()}
        return Case(self.number, self.subscripts, extents), scale


def read_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        subscripts, sizes = line.split()
        letters = sorted(set(subscripts) - set(",->"))
        cases.append(Case(len(cases) + 1, subscripts,
                          dict(zip(letters, map(int, sizes.split(","))))))
    return cases


def tensordot_peer(subscripts: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
    """np.tensordot over the contracted indices, then the copy into out's order."""
    inputs, output = subscripts.split("->")
    a_term, b_term = inputs.split(",")
    summed = [i for i in a_term if i in b_term]
    axes = ([a_term.index(i) for i in summed], [b_term.index(i) for i in summed])
    result = [i for i in a_term if i not in summed] + [i for i in b_term if i not in summed]
    order = [result.index(i) for i in output]

    def run(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, np.tensordot(a, b, axes=axes).transpose(order))

    return run


def peers(subscripts: str) -> dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], None]]:
    result = {
        "np.einsum": lambda a, b, out: np.einsum(subscripts, a, b, out=out, optimize=True),
        "tensordot": tensordot_peer(subscripts),
    }
    if importlib.util.find_spec("opt_einsum") is not None:
        import opt_einsum

        result["opt_einsum"] = lambda a, b, out: opt_einsum.contract(subscripts, a, b, out=out)
    return result


def fma_peaks(dtypes: list[str]) -> dict[tuple[str, int], float]:
    """GFLOP/s of independent vector FMAs on 1 and 2 threads (teir_lowering.measure.peaks)."""
    peaks: dict[tuple[str, int], float] = {}
    for dtype in dtypes:
        peak = measure_peak(dtype, True)
        peaks[(dtype, 1)], peaks[(dtype, 2)] = peak.one_thread, peak.two_threads
    return peaks


@dataclass
class Row:
    case: Case
    scale: float
    dtype: str
    threads: int
    teir: float
    peers: dict[str, float]
    ratio: float  # median over rounds of best peer / teir
    compile_seconds: float
    error: float

    @property
    def gflops(self) -> float:
        return self.case.flops / self.teir / 1e9


def run_case(case: Case, scale: float, dtype: str, threads: int, rounds: int) -> Row:
    rng = np.random.default_rng(case.number)
    inputs, output = case.subscripts.split("->")
    arrays = [rng.standard_normal([case.extents[i] for i in term]).astype(NP_TYPE[dtype])
              for term in inputs.split(",")]
    shape = [case.extents[i] for i in output]
    out = np.empty(shape, NP_TYPE[dtype])
    start = time.perf_counter()
    einsum(case.subscripts, *arrays, out=out, threads=threads)
    compile_seconds = time.perf_counter() - start
    expected = np.einsum(case.subscripts, *arrays, optimize=True)
    error = float(np.max(np.abs(out - expected)) / max(1.0, float(np.max(np.abs(expected)))))
    others = peers(case.subscripts)
    target = np.empty(shape, NP_TYPE[dtype])
    functions: dict[str, Callable[[], object]] = {
        "teir": lambda: einsum(case.subscripts, *arrays, out=out, threads=threads),
        **{name: (lambda p=peer: p(*arrays, target)) for name, peer in others.items()}}
    with threadpool_limits(limits=threads):
        # a multi-threaded sample follows an idle pause: a thread pool timed just
        # before (OpenBLAS's workers spin ~0.1 s after a call) takes a core from it
        times = interleaved(functions, rounds, budget=0.3 * rounds * len(functions),
                            settle=SETTLE_SECONDS if threads > 1 else 0.0)
    ratios = [min(times[n][r] for n in others) / times["teir"][r]
              for r in range(len(times["teir"]))]
    return Row(case, scale, dtype, threads, float(np.median(times["teir"])),
               {n: float(np.median(t)) for n, t in times.items() if n != "teir"},
               float(np.median(ratios)), compile_seconds, error)


def _selection(text: str | None, count: int) -> list[int]:
    if not text:
        return list(range(1, count + 1))
    chosen: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        chosen += list(range(int(low), int(high or low) + 1))
    return chosen


def write_outputs(rows: list[Row], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tccg.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case", "subscripts", "extents", "scale", "dtype", "threads",
                         "teir_s", "teir_gflops", "best_peer", "best_peer_s", "ratio",
                         "compile_s", "rel_error"])
        for row in rows:
            best = min(row.peers, key=row.peers.get)  # pyright: ignore[reportArgumentType]
            writer.writerow([row.case.number, row.case.subscripts,
                             ",".join(f"{i}={n}" for i, n in row.case.extents.items()),
                             f"{row.scale:.3f}", row.dtype, row.threads, row.teir,
                             row.gflops, best, row.peers[best], row.ratio,
                             row.compile_seconds, row.error])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no chart; pip install -e '.[bench]')")
        return
    figure, axis = plt.subplots(figsize=(14, 4))
    for offset, key in enumerate(sorted({(r.dtype, r.threads) for r in rows})):
        chosen = [r for r in rows if (r.dtype, r.threads) == key]
        axis.bar([r.case.number + 0.2 * offset for r in chosen], [r.ratio for r in chosen],
                 width=0.2, label=f"{key[0]}, {key[1]} thread(s)")
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xlabel("TCCG case")
    axis.set_ylabel("best numpy peer time / TEIR time")
    axis.set_title(f"TCCG on {cpu_model()}")
    axis.legend()
    figure.tight_layout()
    figure.savefig(folder / "tccg.png", dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-gflop", type=float, default=0.2)
    parser.add_argument("--threads", default="1", help="comma-separated, e.g. 1,2")
    parser.add_argument("--dtypes", default="FP32", help="FP32 and/or FP64")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", help="e.g. 1-8,12 (default: all 48)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    removed = clean_environment()  # peers at their best: a process without OPENBLAS_* ...
    all_cases = read_cases(CASES)
    dtypes = args.dtypes.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    print(f"TCCG on {cpu_model()}; numpy {np.__version__}, BLAS: {blas_text(blas_info())}")
    if removed:
        print(f"removed from the environment (peers run at their best): {', '.join(removed)}")
    peaks = fma_peaks(dtypes)
    print("FMA peak: " + ", ".join(f"{d} {t}T {v:.0f} GFLOP/s" for (d, t), v in peaks.items()))
    print(f"{'case':>4} {'subscripts':20} {'scale':>6} {'type':4} {'T':>1} {'teir GF/s':>9} "
          f"{'%peak':>6} {'best peer':>10} {'ratio':>6} {'compile':>8}")
    rows: list[Row] = []
    for number in _selection(args.cases, len(all_cases)):
        case, scale = all_cases[number - 1].scaled(args.max_gflop)
        for dtype in dtypes:
            for count in threads:
                row = run_case(case, scale, dtype, count, args.rounds)
                rows.append(row)
                best = min(row.peers, key=row.peers.get)  # pyright: ignore[reportArgumentType]
                flag = "" if row.error < (1e-4 if dtype == "FP32" else 1e-10) else "  WRONG"
                print(f"{case.number:4d} {case.subscripts:20} {scale:6.3f} {dtype:4} {count:1d} "
                      f"{row.gflops:9.1f} {100 * row.gflops / peaks[(dtype, min(count, 2))]:5.1f}% "
                      f"{best:>10} {row.ratio:6.2f} {row.compile_seconds:7.2f}s{flag}",
                      flush=True)
    for key in sorted({(r.dtype, r.threads) for r in rows}):
        chosen = [r.ratio for r in rows if (r.dtype, r.threads) == key]
        geomean = math.exp(sum(math.log(x) for x in chosen) / len(chosen))
        print(f"geometric mean of ratios, {key[0]}, {key[1]} thread(s): {geomean:.2f} "
              f"(min {min(chosen):.2f}, {sum(x < 0.9 for x in chosen)} case(s) below 0.9)")
    slug = "".join(c if c.isalnum() else "-" for c in cpu_model()).strip("-").lower()
    write_outputs(rows, args.out or HERE / "results" / slug)
    return 1 if any(r.error >= (1e-4 if r.dtype == "FP32" else 1e-10) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
