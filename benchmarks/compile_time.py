"""Compile time of TEIR, stage by stage: the figure issue 21's changes are judged by.

    python benchmarks/compile_time.py                     # all 48 TCCG cases, spec examples
    python benchmarks/compile_time.py --cases 1-8 --no-spec --no-warm
    python benchmarks/compile_time.py --tools             # also import, teir-opt, teir-tune

One thread, FP32, each TCCG case scaled to at most `--max-gflop` like
benchmarks/tccg.py. Cold: an empty kernel cache (TEIR_CACHE_DIR points at a new
temporary folder), in a process that has imported teir_lowering; per case the
first `teir_lowering.einsum` call (wall and CPU seconds; the machine may be
shared, so CPU time is the steadier figure) and, for every kernel that call
compiled, each stage of the pipeline (teir_lowering.stages): seconds and the
ops the stage left. Warm: a new process on the same, now full, cache: its
first call of each case minus its second call. The spec examples
(examples/spec) are compiled with `compile_kernel` the same way. `--tools`
adds `import teir_lowering`, `teir-opt` on a spec example (new processes) and
`teir-tune`'s candidates per second on one case.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEC_EXAMPLES = sorted((ROOT / "examples" / "spec").rglob("*.json"))
TUNE_CASE = 12
"""The TCCG case teir-tune searches for `--tools` (a GEMM, above the size where the
tuner runs the reference interpreter)."""


def parse_cases(text: str) -> list[int]:
    numbers: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        numbers += range(int(low), int(high or low) + 1)
    return numbers


def tccg_inputs(number: int, max_gflop: float):
    import numpy as np

    sys.path.insert(0, str(HERE))
    from tccg import CASES, read_cases

    case, _ = read_cases(CASES)[number - 1].scaled(max_gflop)
    inputs, output = case.subscripts.split("->")
    rng = np.random.default_rng(number)
    arrays = [rng.random([case.extents[i] for i in term], dtype=np.float32)
              for term in inputs.split(",")]
    out = np.empty([case.extents[i] for i in output], np.float32)
    return case.subscripts, arrays, out


def timed(function, *args, **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds of `function(*args, **kwargs)`."""
    wall, cpu = time.perf_counter(), time.process_time()
    function(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu


def cold(numbers: list[int], max_gflop: float, spec: bool) -> dict:
    """First calls on an empty cache; the stage totals of each."""
    from teir_dialect.records import TeirError
    from teir_lowering import compile_kernel, einsum
    from teir_lowering.stages import StageLog

    rows = []
    for number in numbers:
        subscripts, arrays, out = tccg_inputs(number, max_gflop)
        with StageLog() as log:
            wall, cpu = timed(einsum, subscripts, *arrays, out=out, threads=1)
        second, _ = timed(einsum, subscripts, *arrays, out=out, threads=1)
        rows.append(_row(f"tccg {number} {subscripts}", wall, cpu, second, log))
        print(f"{rows[-1]['name']:40s} {wall:7.3f} s wall {cpu:7.3f} s cpu "
              f"{rows[-1]['kernels']} kernel(s)", flush=True)
    for path in SPEC_EXAMPLES if spec else ():
        with StageLog() as log:
            try:
                wall, cpu = timed(compile_kernel, path, threads=1)
            except TeirError as error:  # a record compile_kernel does not take
                print(f"spec {path.name}: {type(error).__name__}: {error}")
                continue
        rows.append(_row(f"spec {path.stem}", wall, cpu, 0.0, log))
        print(f"{rows[-1]['name']:40s} {wall:7.3f} s wall {cpu:7.3f} s cpu", flush=True)
    return {"rows": rows}


def _row(name: str, wall: float, cpu: float, second: float, log) -> dict:
    return {
        "name": name, "wall": wall, "cpu": cpu, "second": second,
        "kernels": sum(s.name == "record -> module (verified)" for s in log.stages),
        "stages": {s.name: [s.wall, s.cpu, s.ops] for s in log.totals().values()},
    }


def warm(numbers: list[int], max_gflop: float) -> dict:
    """In this (new) process on a full cache: first call minus second call per case."""
    from teir_lowering import einsum

    rows = []
    for number in numbers:
        subscripts, arrays, out = tccg_inputs(number, max_gflop)
        first, first_cpu = timed(einsum, subscripts, *arrays, out=out, threads=1)
        second, _ = timed(einsum, subscripts, *arrays, out=out, threads=1)
        rows.append({"name": f"tccg {number}", "extra": first - second,
                     "extra_cpu": first_cpu, "second": second})
    return {"rows": rows}


def child_cpu(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of a new process running `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tools(tune_seconds: float) -> dict:
    env = dict(os.environ)
    results: dict[str, object] = {}
    imports = [child_cpu([sys.executable, "-c", "import teir_lowering"], env) for _ in range(3)]
    results["import teir_lowering"] = [statistics.median(x) for x in zip(*imports)]
    bindir = Path(sys.executable).parent
    for example in ("tree/10_6_3_gemm.json", "tree/10_7_7_parallel_brgemm.json"):
        path = str(ROOT / "examples" / "spec" / example)
        for passes in ("teir-optimize", "teir-optimize,teir-to-llvm"):
            runs = [child_cpu([str(bindir / "teir-opt"), path, "-p", passes], env)
                    for _ in range(3)]
            results[f"teir-opt {example} -p {passes}"] = [statistics.median(x)
                                                          for x in zip(*runs)]
    if tune_seconds > 0:
        from teir_lowering.frontends.tune import tune
        from teir_tools.teir_tune import einsum_record

        sys.path.insert(0, str(HERE))
        from tccg import CASES, read_cases

        case, _ = read_cases(CASES)[TUNE_CASE - 1].scaled(0.2)
        record = einsum_record(case.subscripts, case.extents, "FP32")
        seen: list[tuple[float, float, int]] = []
        start = time.process_time()
        tune(record, threads=1, budget=tune_seconds,
             progress=lambda elapsed, _best, count: seen.append(
                 (elapsed, time.process_time() - start, count)))
        if len(seen) > 1:  # from the first candidate on: the baseline's setup aside
            (w0, c0, n0), (w1, c1, n1) = seen[0], seen[-1]
            rates = [(n1 - n0) / (w1 - w0), (n1 - n0) / (c1 - c0)]
        else:
            rates = [0.0, 0.0]
        results[f"teir-tune candidates/s (TCCG {TUNE_CASE}, {len(seen)} candidates)"] = rates
    return results


def summary(report: dict) -> None:
    rows = [r for r in report["cold"]["rows"] if r["name"].startswith("tccg")]
    if rows:
        walls = [r["wall"] for r in rows]
        cpus = [r["cpu"] for r in rows]
        print(f"\nTCCG first call, cold ({len(rows)} cases): wall median {statistics.median(walls):.3f}"
              f" s, max {max(walls):.3f} s; CPU median {statistics.median(cpus):.3f} s, "
              f"max {max(cpus):.3f} s")
    stages: dict[str, list[float]] = {}
    for row in report["cold"]["rows"]:
        for name, (wall, cpu, ops) in row["stages"].items():
            total = stages.setdefault(name, [0.0, 0.0, 0])
            total[0] += wall
            total[1] += cpu
            total[2] = max(total[2], ops or 0)
    all_cpu = sum(r["cpu"] for r in report["cold"]["rows"]) or 1.0
    print(f"\nStages over every cold compile (CPU total {all_cpu:.2f} s):")
    print(f"  {'stage':36s} {'wall s':>8s} {'cpu s':>8s} {'cpu %':>6s} {'max ops':>8s}")
    for name, (wall, cpu, ops) in sorted(stages.items(), key=lambda kv: -kv[1][1]):
        print(f"  {name:36s} {wall:8.2f} {cpu:8.2f} {100 * cpu / all_cpu:6.1f} {ops:8d}")
    other = all_cpu - sum(v[1] for v in stages.values())
    print(f"  {'(outside the stages: planning, ...)':36s} {'':8s} {other:8.2f} "
          f"{100 * other / all_cpu:6.1f}")
    if report.get("warm"):
        extra = [r["extra"] for r in report["warm"]["rows"]]
        print(f"\nWarm disk cache, new process, first minus second call: median "
              f"{statistics.median(extra) * 1e3:.1f} ms, max {max(extra) * 1e3:.1f} ms")
    for name, (a, b) in report.get("tools", {}).items():
        unit = "" if "candidates" in name else " s"
        print(f"{name}: {a:.3f}{unit} (wall), {b:.3f}{unit} (CPU)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="1-48", help="TCCG case numbers: 1-8,12")
    parser.add_argument("--max-gflop", type=float, default=0.2)
    parser.add_argument("--no-spec", action="store_true", help="skip the spec examples")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-cache run")
    parser.add_argument("--tools", action="store_true",
                        help="also time import teir_lowering, teir-opt, teir-tune")
    parser.add_argument("--tune-seconds", type=float, default=20.0)
    parser.add_argument("--tools-only", action="store_true",
                        help="only import teir_lowering, teir-opt, teir-tune")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument("--warm-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    numbers = parse_cases(args.cases)
    if args.warm_child:
        print(json.dumps(warm(numbers, args.max_gflop)))
        return 0
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TEIR_CACHE_DIR"] = cache
        os.environ.setdefault("TEIR_NUM_THREADS", "1")
        wall, cpu = timed(__import__, "teir_lowering")
        print(f"import teir_lowering (this process): {wall:.3f} s wall {cpu:.3f} s cpu")
        report: dict = {"cold": {"rows": []}}
        if not args.tools_only:
            report["cold"] = cold(numbers, args.max_gflop, not args.no_spec)
        if not args.no_warm and not args.tools_only:
            done = subprocess.run(
                [sys.executable, __file__, "--warm-child", "--cases", args.cases,
                 "--max-gflop", str(args.max_gflop)],
                check=True, capture_output=True, text=True)
            report["warm"] = json.loads(done.stdout.splitlines()[-1])
        if args.tools or args.tools_only:
            report["tools"] = tools(args.tune_seconds)
    summary(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
