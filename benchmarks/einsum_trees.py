"""Multi-operand einsums as TEIR einsum trees, against np.einsum(optimize=True) and
opt_einsum.contract.

    python benchmarks/einsum_trees.py [--quick] [--threads 1,2] [--dtypes FP32,FP64]

Cases: matrix chains, a batched chain, a small tensor network and a Tucker
reconstruction `ai,bj,ck,ijk->abc`, at sizes where the steps are BLAS-sized
GEMMs. Each side plans its own way and the plan is printed: TEIR runs
`teir_lowering.frontends.einsum_tree.contract` (opt_einsum's 'auto' path, intermediates
laid out for the next step, pooled buffers) into a preallocated `out`;
np.einsum with optimize=True (numpy's greedy path over BLAS tensordot) and
opt_einsum.contract (its 'auto' path, BLAS where it can) into the same kind of
`out`. numpy's BLAS gets the row's thread count (threadpoolctl) in a process
started without the variables that steer it (benchmarks/harness.py). The three
are timed interleaved in rounds, at one thread in the calling thread's CPU time
(`time.thread_time`: all three run on the calling thread then, and the
machine's other jobs do not count), at more in wall time; a row gives medians
and the median over rounds of best peer time / TEIR time (above 1 TEIR is
faster); GFLOP/s count the FLOPs of the path each side took (opt_einsum's
count). Results go to
benchmarks/results/<cpu>/einsum_trees.csv.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from harness import (
    blas_threads,
    clean_environment,
    describe_host,
    interleaved,
    results_dir,
)

HERE = Path(__file__).resolve().parent
NP_TYPE = {"FP32": np.float32, "FP64": np.float64}


@dataclass(frozen=True)
class Case:
    name: str
    subscripts: str
    extents: dict[str, int]

    def scaled(self, factor: float) -> Case:
        return Case(self.name, self.subscripts,
                    {x: max(1, round(n * factor)) for x, n in self.extents.items()})


CASES = [
    Case("chain4", "ij,jk,kl,lm->im", {"i": 512, "j": 256, "k": 1024, "l": 128, "m": 512}),
    Case("chain5", "ij,jk,kl,lm,mn->in", dict.fromkeys("ijklmn", 384)),
    Case("batched chain", "bij,bjk,bkl->bil", {"b": 16, "i": 256, "j": 64, "k": 256, "l": 64}),
    Case("network", "pqa,qrb,abc->prc",
         {"p": 128, "q": 128, "r": 128, "a": 16, "b": 16, "c": 32}),
    Case("tucker", "ai,bj,ck,ijk->abc", {"a": 128, "b": 128, "c": 128, "i": 64, "j": 64,
                                          "k": 64}),
]


@dataclass
class Row:
    case: Case
    dtype: str
    threads: int
    seconds: dict[str, float]  # median per side
    ratio: float  # median over rounds of best peer / teir
    gflops: dict[str, float]
    plans: dict[str, str]
    compile_seconds: float


def _path_flops(subscripts: str, shapes: list[tuple[int, ...]], path: object) -> float:
    import opt_einsum

    _, info = opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=path)
    return float(info.opt_cost)


def run_case(case: Case, dtype: str, threads: int, rounds: int, budget: float) -> Row:
    import opt_einsum

    from teir_lowering.frontends.einsum_tree import contract, plan_for
    from teir_lowering.measure.timing import SETTLE_SECONDS

    inputs, output = case.subscripts.split("->")
    terms = inputs.split(",")
    rng = np.random.default_rng(len(case.name))
    operands = [rng.standard_normal([case.extents[x] for x in t]).astype(NP_TYPE[dtype])
                for t in terms]
    shape = tuple(case.extents[x] for x in output)
    outs = {name: np.empty(shape, NP_TYPE[dtype]) for name in ("teir", "np", "oe")}
    start = time.perf_counter()
    contract(terms, output, operands, out=outs["teir"], threads=threads)
    compile_seconds = time.perf_counter() - start
    expected = np.einsum(case.subscripts, *(o.astype(np.float64) for o in operands),
                         optimize=True)
    error = float(np.max(np.abs(outs["teir"] - expected)) / np.max(np.abs(expected)))
    if error > (1e-3 if dtype == "FP32" else 1e-10):
        raise SystemExit(f"{case.name}: TEIR's result is off by {error:.2e} (relative)")
    plan = plan_for(terms, output, operands)
    np_path = np.einsum_path(case.subscripts, *operands, optimize=True)[0][1:]
    oe_path, _ = opt_einsum.contract_path(case.subscripts, *operands)
    shapes = [o.shape for o in operands]
    flops = {"teir": _path_flops(case.subscripts, shapes, plan.path),
             "np": _path_flops(case.subscripts, shapes, np_path),
             "oe": _path_flops(case.subscripts, shapes, oe_path)}
    functions = {
        "teir": lambda: contract(terms, output, operands, out=outs["teir"], threads=threads),
        "np": lambda: np.einsum(case.subscripts, *operands, out=outs["np"], optimize=True),
        "oe": lambda: opt_einsum.contract(case.subscripts, *operands, out=outs["oe"]),
    }
    with blas_threads(threads):
        samples = interleaved(functions, rounds, budget, batch_seconds=0.0,
                              settle=SETTLE_SECONDS if threads > 1 else 0.0,
                              clock=time.thread_time if threads == 1 else time.perf_counter)
    count = min(len(s) for s in samples.values())
    ratios = [min(samples["np"][r], samples["oe"][r]) / samples["teir"][r]
              for r in range(count)]
    seconds = {name: float(np.median(s)) for name, s in samples.items()}
    return Row(case, dtype, threads, seconds, float(np.median(ratios)),
               {name: flops[name] / seconds[name] / 1e9 for name in seconds},
               {"teir": plan.describe(), "np": str(np_path), "oe": str(oe_path)},
               compile_seconds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="extents halved, 3 rounds")
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts (default: %(default)s)")
    parser.add_argument("--dtypes", default="FP32",
                        help="comma-separated, of FP32, FP64 (default: %(default)s)")
    parser.add_argument("--cases", default="",
                        help="comma-separated case names (default: all)")
    parser.add_argument("--rounds", type=int, default=0, help="default 3 with --quick, else 7")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="results go to OUT/<cpu-slug>/einsum_trees.csv")
    args = parser.parse_args(argv)
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error("--threads takes comma-separated integers")
    dtypes = args.dtypes.split(",")
    if any(d not in NP_TYPE for d in dtypes):
        parser.error(f"--dtypes: of {', '.join(NP_TYPE)}")
    cases = CASES
    if args.cases:
        cases = [c for c in CASES if c.name in args.cases.split(",")]
        if not cases:
            parser.error(f"--cases: of {', '.join(c.name for c in CASES)}")
    if args.quick:
        cases = [c.scaled(0.5) for c in cases]
    removed = clean_environment()

    import teir_lowering  # noqa: F401  (imports xDSL once, before any timing)

    info = describe_host(removed)
    rounds = args.rounds or (3 if args.quick else 7)
    budget = 1.0 if args.quick else 4.0
    for line in info.header():
        print(line, flush=True)
    print(f"{len(cases)} cases, {', '.join(dtypes)}, threads {args.threads}, {rounds} "
          "rounds; ratio = median over rounds of best peer time / TEIR time", flush=True)
    header = (f"{'case':<14} {'type':<4} {'thr':>3} {'teir ms':>8} {'np ms':>8} "
              f"{'oe ms':>8} {'ratio':>6} {'teir GF/s':>9} {'np GF/s':>8} {'oe GF/s':>8} "
              f"{'compile s':>9}")
    print(header, flush=True)
    rows: list[Row] = []
    for case in cases:
        for dtype in dtypes:
            for count in threads:
                row = run_case(case, dtype, count, rounds, budget)
                rows.append(row)
                ms = {k: v * 1e3 for k, v in row.seconds.items()}
                print(f"{case.name:<14} {dtype:<4} {count:>3} {ms['teir']:>8.2f} "
                      f"{ms['np']:>8.2f} {ms['oe']:>8.2f} {row.ratio:>5.2f}x "
                      f"{row.gflops['teir']:>9.1f} {row.gflops['np']:>8.1f} "
                      f"{row.gflops['oe']:>8.1f} {row.compile_seconds:>9.2f}", flush=True)
    print("\nplans (TEIR: its steps; numpy and opt_einsum: their paths)")
    for case in cases:
        row = next(r for r in rows if r.case is case)
        print(f"  {case.name} {case.subscripts} "
              f"{','.join(f'{x}={n}' for x, n in case.extents.items())}")
        for side in ("teir", "np", "oe"):
            print(f"    {side:<4} {row.plans[side]}")
    for dtype in dtypes:
        for count in threads:
            mine = [r.ratio for r in rows if (r.dtype, r.threads) == (dtype, count)]
            geomean = math.exp(sum(math.log(r) for r in mine) / len(mine))
            print(f"{dtype}, {count} thread(s): geomean {geomean:.2f}x the best peer, "
                  f"min {min(mine):.2f}x over {len(mine)} cases")
    path = results_dir(args.out, info) / "einsum_trees.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        for line in info.header():
            writer.writerow([f"# {line}"])
        writer.writerow(["case", "subscripts", "extents", "dtype", "threads", "teir_s",
                         "np_s", "oe_s", "ratio", "teir_gflops", "np_gflops", "oe_gflops",
                         "teir_plan", "np_path", "oe_path", "compile_s"])
        for row in rows:
            writer.writerow([row.case.name, row.case.subscripts,
                             ",".join(f"{x}={n}" for x, n in row.case.extents.items()),
                             row.dtype, row.threads, row.seconds["teir"], row.seconds["np"],
                             row.seconds["oe"], row.ratio, row.gflops["teir"],
                             row.gflops["np"], row.gflops["oe"], row.plans["teir"],
                             row.plans["np"], row.plans["oe"], row.compile_seconds])
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
