"""`teir-run CONFIG`: compile a configuration, run it on random data, check and time it.

    teir-run examples/spec/tree/10_7_7_parallel_brgemm.json --check --bench

--check compares the kernel's `out` with the reference interpreter and, where
the operation is an einsum or a transpose, with numpy. --bench times the kernel
and the numpy peer in the same run (median of --repeat runs) and prints
GFLOP/s for contractions, GB/s for copies. Exit code 1 when a check fails or
the input is bad; no traceback (TEIR_DEBUG=1 shows one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from teir_dialect.dialect import ConfigOp
from teir_dialect.records import TeirError, find_configs
from teir_tools.timing import median_time


REFERENCE_LIMIT = 5e7
"""Above this many element operations the interpreter is too slow for --check."""


def make_inputs(kernel, rng: np.random.Generator) -> list[np.ndarray]:  # noqa: ANN001
    arrays = []
    for spec in kernel.tensors:
        count = max(1, -(-spec.needed_bytes // spec.dtype.itemsize))
        arrays.append(rng.standard_normal(count).astype(spec.dtype))
    return arrays


def work(config: ConfigOp) -> tuple[float, float]:
    """(floating-point operations, bytes moved) of one run, from the schedule."""
    from teir_dialect.dialect import InvokeOp

    flops = 0.0
    moved = 0.0
    for node in config.schedule.walk_nodes():
        if not isinstance(node, InvokeOp):
            continue
        prim = node.primitive_op()
        calls = 1
        for ancestor in node.ancestors():
            calls *= ancestor.axis_op().size
        elements = 1
        for axis in prim.all_role_axes:
            elements *= axis.size
        if prim.kind == "Contraction":
            flops += 2.0 * calls * elements
        else:
            moved += calls * elements * prim.element_width * (1 if prim.kind == "Zero" else 2)
    return flops, moved


def _rate(config: ConfigOp, seconds: float) -> str:
    flops, moved = work(config)
    if flops:
        return f"{flops / seconds / 1e9:8.2f} GFLOP/s"
    return f"{moved / seconds / 1e9:8.2f} GB/s"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="teir-run", description=__doc__.split("\n")[0])
    parser.add_argument("config", help="a .json record (tree or flat form) or a .mlir file")
    parser.add_argument("--name", help="the func.func to run when the file holds several")
    parser.add_argument("--check", action="store_true", help="compare with the reference and numpy")
    parser.add_argument("--bench", action="store_true", help="time the kernel and numpy")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    parser.add_argument("--repeat", type=int, default=20, help="timed batches for --bench")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reference",
        choices=("auto", "always", "never"),
        default="auto",
        help="run the reference interpreter in --check (auto: when the work is "
        f"below {REFERENCE_LIMIT:.0e} element operations)",
    )
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (TeirError, ValueError, TypeError, OSError) as err:
        if os.environ.get("TEIR_DEBUG"):
            raise
        print(f"teir-run: error: {err}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    from teir_dialect.interpreter import run_reference
    from teir_lowering.kernel import compile_kernel

    from teir_dialect.records import load_module
    from teir_lowering.numpy_peer import numpy_peer

    start = time.perf_counter()
    kernel = compile_kernel(args.config, name=args.name, threads=args.threads)
    compile_seconds = time.perf_counter() - start
    module = load_module(args.config)
    configs = [
        c for c in find_configs(module)
        if args.name is None or getattr(c.parent_op(), "sym_name").data == args.name
    ]
    config = configs[0]
    peer = numpy_peer(config)
    threads = args.threads or kernel.threads
    print(f"{args.config}: kernel @{kernel.name}, compiled in {compile_seconds * 1e3:.0f} ms, "
          f"{threads if kernel.parallel else 1} thread(s)")

    rng = np.random.default_rng(args.seed)
    inputs = make_inputs(kernel, rng)
    failed = False
    if args.bench:
        # Timed before numpy runs: OpenBLAS's threads keep spinning after a call
        # and would take the core TEIR's second thread needs (seen: half the rate).
        arrays = [a.copy() for a in inputs]
        seconds = median_time(lambda: kernel(*arrays, threads=threads), args.repeat)
    if args.check:
        result = [a.copy() for a in inputs]
        kernel(*result, threads=threads)
        flops, moved = work(config)
        size = flops / 2 + moved / 4
        if args.reference == "always" or (args.reference == "auto" and size < REFERENCE_LIMIT):
            expected = [a.copy() for a in inputs]
            run_reference(config, expected)
            failed |= _compare("reference interpreter", result[-1], expected[-1])
        else:
            print(f"  reference interpreter not run ({size:.2g} element operations; "
                  "--reference=always forces it)")
        if peer is not None:
            description, compute = peer
            from_numpy = [a.copy() for a in inputs]
            compute(from_numpy)
            failed |= _compare(f"numpy ({description})", result[-1], from_numpy[-1])
    if args.bench:
        print(f"  teir   {seconds * 1e6:10.1f} us  {_rate(config, seconds)}")
        if peer is not None:
            description, compute = peer
            arrays = [a.copy() for a in inputs]
            numpy_seconds = median_time(lambda: compute(arrays), args.repeat)
            print(f"  numpy  {numpy_seconds * 1e6:10.1f} us  {_rate(config, numpy_seconds)}"
                  f"  [{description}]")
            print(f"  speedup over numpy: {numpy_seconds / seconds:.2f}x")
    return 1 if failed else 0


def _compare(what: str, got: np.ndarray, expected: np.ndarray) -> bool:
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    error = float(np.max(np.abs(got - expected))) if got.size else 0.0
    tolerance = (1e-5 if got.dtype == np.float32 else 1e-12) * scale * 10
    ok = error <= tolerance
    print(f"  check against {what}: max abs error {error:.3g} "
          f"({'ok' if ok else 'MISMATCH'}, tolerance {tolerance:.1g})")
    return not ok


if __name__ == "__main__":
    sys.exit(main())
