"""`teir-tune`: search schedules for a configuration on this host and keep the best.

    teir-tune examples/spec/tree/10_7_5_scalar_contraction.json --budget 60
    teir-tune 'trus,pqtu->pqrs' --extents p=32,q=64,r=32,s=64,t=8,u=64
    teir-tune --show
    teir-tune --clear

A beam search over the auto-scheduler's choices (teir_lowering.frontends.tune), each
candidate compiled, checked against the auto-scheduler's kernel and timed.
The best script is stored per user, keyed by the configuration, the CPU model
and the thread count; `compile_kernel` and `teir_lowering.einsum(...,
tune=True)` use it from then on. Exit code 1 on bad input, with a diagnostic;
3 for an internal error (TEIR_DEBUG=1 shows its traceback).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

from teir_dialect.records import TeirError
from teir_tools.cli import run_tool


def _extents(text: str) -> dict[str, int]:
    result: dict[str, int] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if not name.strip() or not value.strip().isdigit():
            raise TeirError(f"--extents takes index=extent pairs like p=32,q=64, got '{item}'")
        result[name.strip()] = int(value)
    return result


def einsum_record(subscripts: str, extents: dict[str, int], dtype: str) -> dict:
    """The plain record of an einsum over C-contiguous operands of these extents."""
    from teir_dialect import einsum_config

    inputs = subscripts.split("->")[0].split(",")
    missing = sorted({i for term in inputs for i in term} - set(extents))
    if missing:
        raise TeirError(f"--extents lacks the index(es) {', '.join(missing)}")
    shapes = [tuple(extents[i] for i in term) for term in inputs]
    return einsum_config(subscripts, *shapes, dtype=dtype)


def show() -> int:
    from teir_passes import schedule_cache

    entries = schedule_cache.entries()
    print(f"{len(entries)} tuned schedule(s) in {schedule_cache.cache_dir()}")
    for entry in entries:
        gain = entry.baseline / entry.seconds if entry.seconds else float("nan")
        print(f"  {entry.label}: {entry.data_type}, {entry.threads} thread(s) on {entry.cpu}, "
              f"{entry.seconds * 1e6:.1f} us ({gain:.2f}x the auto-scheduler), "
              f"{len(entry.script)} steps")
        for step in entry.script:
            print(f"      {step}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="teir-tune", description=__doc__.split("\n")[0])
    parser.add_argument("config", nargs="?",
                        help="a .json record, a .mlir file, or an einsum with --extents")
    parser.add_argument("--extents", help="index extents of an einsum: p=32,q=64,...")
    parser.add_argument("--dtype", default="FP32", help="data type of an einsum (FP32)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds to search")
    parser.add_argument("--threads", type=int, default=None, help="threads (all cores)")
    parser.add_argument("--beam", type=int, default=3, help="settings kept per round")
    parser.add_argument("--show", action="store_true", help="print the tuned schedules")
    parser.add_argument("--clear", action="store_true", help="forget every tuned schedule")
    args = parser.parse_args(argv)
    if not (args.show or args.clear) and args.config is None:
        parser.error("give a configuration to tune, or --show / --clear")
    if args.show and args.clear or (args.show or args.clear) and args.config is not None:
        parser.error("--show and --clear take no configuration and go alone")

    def body() -> int:
        if args.show:
            return show()
        if args.clear:
            from teir_passes import schedule_cache

            print(f"removed {schedule_cache.clear()} tuned schedule(s)")
            return 0
        return tune(args)

    return run_tool("teir-tune", body, (TeirError, ValueError, TypeError, OSError))


def tune(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from teir_lowering.frontends.tune import tune as search

    if not (math.isfinite(args.budget) and args.budget > 0) or args.beam < 1:
        raise ValueError("--budget must be a positive number of seconds (finite) and "
                         "--beam at least 1")
    if args.threads is not None:
        from teir_lowering.runtime.kernel import check_threads

        check_threads(args.threads, "--threads")
    source: object = args.config
    label = args.config
    if args.extents is not None:
        source = einsum_record(args.config, _extents(args.extents), args.dtype)
        label = f"{args.config} {args.extents}"
    elif "->" in args.config and not os.path.exists(args.config):
        raise TeirError(
            f"'{args.config}' is an einsum: give the extents of its indices with "
            "--extents, e.g. --extents " + ",".join(
                f"{index}=64" for index in dict.fromkeys(
                    c for c in args.config if c.isalpha()))
        )
    bars: list[tqdm] = []  # made at the first candidate: bad input gets no bar

    def bar() -> tqdm:
        if not bars:
            bars.append(tqdm(total=args.budget, unit="s", desc="tuning", leave=True,
                             bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s{postfix}"))
        return bars[0]

    def progress(elapsed: float, best: float, candidates: int) -> None:
        bar()
        bars[0].n = min(elapsed, args.budget)
        bars[0].set_postfix(best=f"{best * 1e6:.1f}us", candidates=candidates)
        bars[0].refresh()

    entry = search(source, threads=args.threads, budget=args.budget, beam=args.beam,
                   label=label, progress=progress)
    done = bar()
    done.n = done.total  # done: the search ends early once no setting is new
    done.refresh()
    done.close()
    print(f"best: {entry.seconds * 1e6:.1f} us, {entry.baseline / entry.seconds:.2f}x the "
          f"auto-scheduler's {entry.baseline * 1e6:.1f} us, on {entry.cpu}, "
          f"{entry.threads} thread(s); stored as {entry.key}")
    for step in entry.script:
        print(f"  {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
