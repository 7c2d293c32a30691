"""`teir-run CONFIG`: compile a configuration, run it on random data, check and time it.

    teir-run examples/spec/tree/10_7_7_parallel_brgemm.json --check --bench
    teir-run --example 10_7_7_parallel_brgemm --check      # a shipped record
    teir-run --list-examples

--check compares the kernel's `out` with the reference interpreter and, where
the operation is an einsum (with a Zero before and a ReLU after it, optionally)
or a transpose, with numpy. --bench times the kernel and the numpy peer in the
same run (median of --repeat batches) and prints GFLOP/s for contractions, GB/s
for copies. Exit code 1 when a check fails or the input is bad, 2 for a bad
command line, 3 for an internal error; never a traceback (TEIR_DEBUG=1 shows
one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import func

from teir_dialect.analysis import work
from teir_dialect.dialect import ConfigOp
from teir_dialect.records import TeirError, find_configs
from teir_lowering.timing import median_time
from teir_tools.cli import run_tool
from teir_tools.examples import examples, find_example

if TYPE_CHECKING:
    from teir_lowering.kernel import Kernel, TensorSpec


REFERENCE_LIMIT = 5e7
"""Above this many element operations the interpreter is too slow for --check."""


class OutOfMemory(Exception):
    """The tensors do not fit in memory; the message says what each one needs."""


def allocated_bytes(spec: TensorSpec) -> int:
    """What make_inputs allocates for a tensor: its footprint in whole elements."""
    return max(1, -(-spec.needed_bytes // spec.dtype.itemsize)) * spec.dtype.itemsize


def available_memory() -> int | None:
    """Bytes this machine can still give (Linux's MemAvailable), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _size(count: int) -> str:
    for power, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if count >= 1 << power:
            return f"{count / (1 << power):.3g} {unit}"
    return f"{count} B"


def _needs(kernel: Kernel) -> str:
    needs = [(spec.name, allocated_bytes(spec)) for spec in kernel.tensors]
    return ", ".join(
        f"{name} needs {count} bytes ({_size(count)})" for name, count in needs
    )


def check_memory(kernel: Kernel, copies: int, mode: str) -> None:
    """Refuses, before allocating, tensors that would not fit in the available memory.

    numpy would raise MemoryError only for what it cannot reserve at once; on an
    overcommitting kernel a footprint close to the memory size ends in the OOM
    killer instead, so the whole run's need is compared with MemAvailable.
    """
    total = copies * sum(allocated_bytes(spec) for spec in kernel.tensors)
    available = available_memory()
    if available is not None and total > available:
        raise OutOfMemory(
            f"the tensors do not fit in memory: {_needs(kernel)}; {mode} holds "
            f"{copies} {'copies' if copies > 1 else 'copy'} of them, {_size(total)}, and "
            f"this machine has {_size(available)} available"
        )


def make_inputs(kernel: Kernel, rng: np.random.Generator) -> list[np.ndarray]:
    """Random tensors covering each footprint; an OutOfMemory names what each needs."""
    try:
        return [
            rng.standard_normal(
                allocated_bytes(spec) // spec.dtype.itemsize, dtype=spec.dtype
            )
            for spec in kernel.tensors
        ]
    except MemoryError as err:
        raise OutOfMemory(
            f"cannot allocate the tensors: {_needs(kernel)} ({err})"
        ) from None


def _rate(config: ConfigOp, seconds: float) -> str:
    flops, moved = work(config)
    if flops:
        return f"{flops / seconds / 1e9:8.2f} GFLOP/s"
    return f"{moved / seconds / 1e9:8.2f} GB/s"


def _func_name(config: ConfigOp) -> str | None:
    parent = config.parent_op()
    return parent.sym_name.data if isinstance(parent, func.FuncOp) else None


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="teir-run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "config", nargs="?", help="a .json record (tree or flat form) or a .mlir file"
    )
    parser.add_argument(
        "--example",
        metavar="NAME",
        help="run a record shipped with TEIR instead of CONFIG",
    )
    parser.add_argument(
        "--list-examples", action="store_true", help="list the shipped records and exit"
    )
    parser.add_argument("--name", help="the func.func to run when the file holds several")
    parser.add_argument(
        "--check", action="store_true", help="compare with the reference and numpy"
    )
    parser.add_argument("--bench", action="store_true", help="time the kernel and numpy")
    parser.add_argument(
        "--threads", type=_positive, default=None, help="threads (default: all cores)"
    )
    parser.add_argument(
        "--repeat", type=_positive, default=20, help="timed batches for --bench"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reference",
        choices=("auto", "always", "never"),
        default="auto",
        help="run the reference interpreter in --check (auto: when the work is "
        f"below {REFERENCE_LIMIT:.0e} element operations)",
    )
    args = parser.parse_args(argv)
    if not args.list_examples and (args.config is None) == (args.example is None):
        parser.error("give either CONFIG or --example NAME (--list-examples lists them)")

    def body() -> int:
        if args.list_examples:
            return list_examples()
        if args.example is not None:
            example = find_example(args.example)
            with resources.as_file(example.resource) as path:
                return run(args, str(path), f"example {example.name}")
        if args.config.endswith(".mlir") and _holds_linalg(args.config):
            return run_linalg_program(args, args.config)
        return run(args, args.config, args.config)

    return run_tool(
        "teir-run", body, (TeirError, OutOfMemory, ValueError, TypeError, OSError)
    )


def _holds_linalg(path: str) -> bool:
    """Whether a .mlir file is at the linalg level (linalg ops, no teir.config)."""
    from teir_dialect.records import read_text

    text = read_text(path)
    return "linalg." in text and "teir.config" not in text


def run_linalg_program(args: argparse.Namespace, path: str) -> int:
    """A linalg-level func.func: converted to TEIR (convert-linalg-to-teir), compiled,
    run on random data, checked against numpy evaluating the linalg ops themselves."""
    from teir_lowering.linalg_run import prepare_linalg

    start = time.perf_counter()
    program = prepare_linalg(path, name=args.name, threads=args.threads)
    print(f"{path}: {len(program.steps)} TEIR configuration(s) from linalg, compiled in "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms")
    arrays = program.random_arrays(args.seed)
    failed = False
    if args.bench:
        timed = [a.copy() for a in arrays]
        seconds = median_time(lambda: program.run(timed), args.repeat)
        print(f"  teir   {seconds * 1e6:10.1f} us")
    if args.check:
        result = [a.copy() for a in arrays]
        program.run(result)
        expected = program.reference(arrays)
        for argument, got, want in zip(program.arguments, result, expected):
            failed |= _compare(f"numpy on the linalg ops ({argument.name})", got, want)
    return 1 if failed else 0


def list_examples() -> int:
    """One line per shipped record: its name for --example, its form and file."""
    shipped = examples()
    width = max(len(example.name) for example in shipped)
    for example in shipped:
        print(f"{example.name:<{width}}  {example.form} form  {example.path}")
    return 0


def run(args: argparse.Namespace, config_path: str, label: str) -> int:
    """Compiles, checks and times the configuration at config_path."""
    from teir_dialect.interpreter import run_reference
    from teir_dialect.records import load_module
    from teir_lowering.kernel import compile_kernel
    from teir_lowering.numpy_peer import numpy_peer

    start = time.perf_counter()
    kernel = compile_kernel(config_path, name=args.name, threads=args.threads)
    compile_seconds = time.perf_counter() - start
    module = load_module(config_path)
    configs = [c for c in find_configs(module) if args.name in (None, _func_name(c))]
    if not configs:
        raise TeirError(f"{label} holds no configuration in a func.func @{args.name}")
    config = configs[0]
    peer = numpy_peer(config)
    threads = args.threads or kernel.threads
    print(
        f"{label}: kernel @{kernel.name}, compiled in {compile_seconds * 1e3:.0f} ms, "
        f"{threads if kernel.parallel else 1} thread(s)"
    )

    # Copies alive at once: the inputs, plus for --check the kernel's result
    # and one expected result, for --bench the arrays being timed.
    if args.check:
        check_memory(kernel, 3, "--check")
    else:
        check_memory(
            kernel, 2 if args.bench else 1, "--bench" if args.bench else "teir-run"
        )
    inputs = make_inputs(kernel, np.random.default_rng(args.seed))
    failed = False
    seconds = 0.0
    if args.bench:
        # Timed before numpy runs: OpenBLAS's threads keep spinning after a call
        # and would take the core TEIR's second thread needs (seen: half the rate).
        arrays = [a.copy() for a in inputs]
        seconds = median_time(lambda: kernel(*arrays, threads=threads), args.repeat)
        del arrays
    if args.check:
        result = [a.copy() for a in inputs]
        kernel(*result, threads=threads)
        flops, moved = work(config)
        size = flops / 2 + moved / 4
        if args.reference == "always" or (
            args.reference == "auto" and size < REFERENCE_LIMIT
        ):
            expected = [a.copy() for a in inputs]
            run_reference(config, expected)
            failed |= _compare("reference interpreter", result[-1], expected[-1])
            del expected
        else:
            print(
                f"  reference interpreter not run ({size:.2g} element operations; "
                "--reference=always forces it)"
            )
        if peer is not None:
            description, compute = peer
            from_numpy = [a.copy() for a in inputs]
            compute(from_numpy)
            failed |= _compare(f"numpy ({description})", result[-1], from_numpy[-1])
            del from_numpy
        del result
    if args.bench:
        print(f"  teir   {seconds * 1e6:10.1f} us  {_rate(config, seconds)}")
        if peer is not None:
            description, compute = peer
            arrays = [a.copy() for a in inputs]
            numpy_seconds = median_time(lambda: compute(arrays), args.repeat)
            print(
                f"  numpy  {numpy_seconds * 1e6:10.1f} us  {_rate(config, numpy_seconds)}"
                f"  [{description}]"
            )
            print(f"  speedup over numpy: {numpy_seconds / seconds:.2f}x")
    return 1 if failed else 0


def _compare(what: str, got: np.ndarray, expected: np.ndarray) -> bool:
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    error = float(np.max(np.abs(got - expected))) if got.size else 0.0
    tolerance = (1e-5 if got.dtype == np.float32 else 1e-12) * scale * 10
    ok = error <= tolerance
    print(
        f"  check against {what}: max abs error {error:.3g} "
        f"({'ok' if ok else 'MISMATCH'}, tolerance {tolerance:.1g})"
    )
    return not ok


if __name__ == "__main__":
    sys.exit(main())
