"""`teir-run CONFIG`: compile a configuration, run it on random data, check and time it.

    teir-run examples/spec/tree/10_7_7_parallel_brgemm.json --check --bench
    teir-run --example 10_7_7_parallel_brgemm --check      # a shipped record
    teir-run --list-examples

--check compares the kernel's `out` with the reference interpreter and, where
the operation is an einsum (with a Zero before and a ReLU after it, optionally)
or a transpose, with numpy computing in float64. Copies and ReLUs must match
exactly; contractions within an error bound derived from the data type's
unit roundoffs and the reduction length (`tolerance`).

--bench times the kernel and every numpy formulation of the operation (einsum
with and without optimize, with a path planned once, tensordot or matmul) in
--repeat interleaved rounds, numpy's BLAS at the kernel's thread count, in a
process re-executed without the variables that steer numpy's BLAS
(OPENBLAS_CORETYPE ...; --keep-env keeps them), and prints GFLOP/s for
contractions (GB/s for copies), the best peer and the median of the per-round
ratios, next to numpy's BLAS, the CPU, the FMA peak timed in the same rounds
and copy bandwidth. Exit code 1 when a check fails or the input is bad, 2 for a bad
command line, 3 for an internal error; never a traceback (TEIR_DEBUG=1 shows
one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np
from xdsl.dialects import func

from teir_dialect.analysis import work
from teir_dialect.dialect import ConfigOp, InvokeOp
from teir_dialect.records import TeirError, find_configs, load_module
from teir_dialect.vocabulary import DataType, OperationKind, Role
from teir_lowering.measure.timing import median_time
from teir_tools.cli import run_tool
from teir_tools.examples import examples, find_example

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from teir_lowering.frontends.linalg_run import LinalgProgram
    from teir_lowering.frontends.numpy_peer import NumpyPeer
    from teir_lowering.runtime.kernel import Kernel, TensorSpec


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
    """Random standard normal tensors covering each footprint, rounded to each tensor's
    format (float16, bfloat16 ...); an OutOfMemory names what each needs."""

    def normal(spec: TensorSpec) -> np.ndarray:
        count = allocated_bytes(spec) // spec.dtype.itemsize
        if spec.dtype in (np.float32, np.float64):
            return rng.standard_normal(count, dtype=spec.dtype)
        return rng.standard_normal(count).astype(spec.dtype)

    try:
        return [normal(spec) for spec in kernel.tensors]
    except MemoryError as err:
        raise OutOfMemory(
            f"cannot allocate the tensors: {_needs(kernel)} ({err})"
        ) from None


def reduction_counts(config: ConfigOp) -> tuple[int, int]:
    """(stores, terms) for an out element, at most: how many Contraction invocations
    update it (each rounds it to its format: schedule loops over axes that do not move
    out) and how many products they sum in all; (0, 0) without a Contraction."""
    stores = terms = 0
    for node in config.schedule.walk_nodes():
        if not isinstance(node, InvokeOp):
            continue
        primitive = node.primitive_op()
        if primitive.kind != OperationKind.CONTRACTION:
            continue
        loops = [ancestor.axis_op() for ancestor in node.ancestors()]
        repeats = int(np.prod([a.size for a in loops if a.stride_on("out") == 0]))
        stores += repeats
        terms += repeats * int(np.prod([a.size for a in primitive.role_axes(Role.K)]))
    return stores, terms


def tolerance(data_type: DataType, stores: int, terms: int) -> float:
    """The error of an out element relative to its magnitude |c| + sum |a b| (first
    order): each store rounds to the format (unit roundoff u), each of the `terms`
    products is added in the accumulator's precision, and TF32 inputs are rounded
    (2 u_tf32 per product); none for copies (no terms)."""
    stored = float(ml_dtypes.finfo(data_type.numpy_dtypes[0]).eps) / 2
    accumulated = 2.0 ** -(53 if data_type.accumulator_type.bitwidth == 64 else 24)
    inputs = 2.0 ** -(data_type.mantissa_bits + 1) if data_type.rounds_inputs else 0.0
    return stores * stored + terms * accumulated + (2 * inputs if terms else 0.0)


def error_bound(data_type: DataType, stores: int, terms: int,
                magnitude: np.ndarray) -> np.ndarray:
    """The allowed |got - exact| per element: `tolerance` times the magnitude, plus the
    format's smallest subnormal per store (results that underflow)."""
    smallest = float(ml_dtypes.finfo(data_type.numpy_dtypes[0]).smallest_subnormal)
    return tolerance(data_type, stores, terms) * magnitude + stores * smallest


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
        "--repeat", type=_positive, default=20,
        help="--bench: interleaved rounds (each times the kernel and every numpy peer once)",
    )
    parser.add_argument(
        "--keep-env", action="store_true",
        help="--bench: keep the variables that steer numpy's BLAS (OPENBLAS_CORETYPE, "
        "OMP_*, ...) instead of re-running without them; the output names them",
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
    if args.bench:
        args.environment = bench_environment(args.keep_env, command_line=argv is None)

    def body() -> int:
        if args.list_examples:
            return list_examples()
        if args.example is not None:
            example = find_example(args.example)
            with resources.as_file(example.resource) as path:
                return run(args, str(path), f"example {example.name}")
        if args.config.endswith(".mlir"):  # read once, whichever level it is at
            start = time.perf_counter()
            module = load_module(args.config)
            if _holds_linalg(module):
                return run_linalg_program(args, args.config, module, start)
            return run(args, args.config, args.config, module, start)
        return run(args, args.config, args.config)

    return run_tool(
        "teir-run", body, (TeirError, OutOfMemory, ValueError, TypeError, OSError)
    )


def _holds_linalg(module: ModuleOp) -> bool:
    """Whether a module read from a .mlir file holds no teir.config (a function at
    the linalg level, to convert): read as IR, not searched as text (a comment may
    name either)."""
    return not any(isinstance(op, ConfigOp) for op in module.walk())


def run_linalg_program(args: argparse.Namespace, path: str, module: ModuleOp | None = None,
                       start: float | None = None) -> int:
    """A linalg-level func.func (at `path`, or `module` read from it since `start`):
    converted to TEIR (convert-linalg-to-teir), compiled, run on random data,
    checked against numpy evaluating the linalg ops themselves."""
    from teir_lowering.frontends.linalg_run import TOLERANCE, prepare_linalg

    start = time.perf_counter() if start is None else start
    program = prepare_linalg(path if module is None else module, name=args.name,
                             threads=args.threads)
    print(f"{path}: {len(program.steps)} TEIR configuration(s) from linalg, compiled in "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms")
    arrays = program.random_arrays(args.seed)
    failed = False
    if args.bench:
        timed = [a.copy() for a in arrays]
        seconds = median_time(lambda: program.run(timed), args.repeat)
        print(f"  teir   {seconds * 1e6:10.1f} us")
        peers = [a.copy() for a in arrays]
        described, call = linalg_numpy(program, peers)
        seconds = median_time(call, args.repeat)
        print(f"  numpy  {seconds * 1e6:10.1f} us  {described}")
    if args.check:
        result = [a.copy() for a in arrays]
        program.run(result)
        expected = program.reference(arrays)
        for argument, got, want in zip(program.arguments, result, expected):
            finite = np.abs(want[np.isfinite(want)])
            bound = TOLERANCE[argument.dtype] * max(1.0, float(finite.max(initial=0.0)))
            failed |= _compare(f"numpy on the linalg ops ({argument.name})", got, want,
                               np.asarray(bound))
    return 1 if failed else 0


def linalg_numpy(program: LinalgProgram,
                 arrays: Sequence[np.ndarray]) -> tuple[str, Callable[[], object]]:
    """(description, call) of numpy computing the linalg function on `arrays`: the numpy
    peer of each converted configuration in order, or, when one has none, the reference
    evaluator (numpy per linalg op, reductions one index at a time)."""
    from teir_lowering.frontends.numpy_peer import numpy_peer

    calls, texts = [], []
    buffers = [*arrays, *(np.zeros(t.elements, t.dtype) for t in program.temporaries)]
    for step, config in zip(program.steps, find_configs(program.converted)):
        peer = numpy_peer(config)
        if peer is None:
            text = ("the reference evaluator (numpy per linalg op, reductions one index "
                    "at a time; a configuration has no numpy peer)")
            return text, lambda: program.reference(arrays)
        texts.append(peer[0])
        calls.append(peer[1].bind([buffers[i].reshape(-1) for i in step.arguments]))
    return "; ".join(texts), lambda: [call() for call in calls]


def list_examples() -> int:
    """One line per shipped record: its name for --example, its form and file."""
    shipped = examples()
    width = max(len(example.name) for example in shipped)
    for example in shipped:
        print(f"{example.name:<{width}}  {example.form} form  {example.path}")
    return 0


def run(args: argparse.Namespace, config_path: str, label: str,
        module: ModuleOp | None = None, start: float | None = None) -> int:
    """Compiles, checks and times the configuration at config_path, read once
    (`module`: read from it already, since `start`)."""
    from teir_lowering.frontends.numpy_peer import numpy_peers
    from teir_lowering.runtime.kernel import compile_kernel

    start = time.perf_counter() if start is None else start
    module = load_module(config_path) if module is None else module
    kernel = compile_kernel(module, name=args.name, threads=args.threads)
    compile_seconds = time.perf_counter() - start
    configs = [c for c in find_configs(module) if args.name in (None, _func_name(c))]
    if not configs:
        raise TeirError(f"{label} holds no configuration in a func.func @{args.name}")
    config = configs[0]
    peers = numpy_peers(config)
    peer = peers[0] if peers else None
    threads = args.threads or kernel.threads
    print(
        f"{label}: kernel @{kernel.name}, compiled in {compile_seconds * 1e3:.0f} ms, "
        f"{threads if kernel.parallel else 1} thread(s)"
    )

    # Copies alive at once: the inputs, plus for --check the kernel's result,
    # one expected result and one float64 copy of the inputs (numpy's), for
    # --bench the kernel's arrays and the peers' arrays.
    if args.check:
        check_memory(kernel, 3 + 8 // kernel.tensors[0].dtype.itemsize, "--check")
    else:
        check_memory(
            kernel, 3 if args.bench else 1, "--bench" if args.bench else "teir-run"
        )
    inputs = make_inputs(kernel, np.random.default_rng(args.seed))
    failed = False
    if args.check:
        failed = check(args, config, kernel, inputs, peer, threads)
    if args.bench:
        bench(args, config, kernel, inputs, peers, threads)
    return 1 if failed else 0


SLOW_PEER = 5.0
"""A numpy peer whose call takes over this many times the fastest peer's is timed
once, not in the rounds (np.einsum without BLAS takes seconds on large contractions)."""

PEAK_SECONDS = 0.02
"""How long one call of the FMA loop timed in --bench's rounds lasts."""

COPY_BYTES = 256 << 20
"""The plain copy --bench measures copy bandwidth with (bytes of its source)."""


def bench_environment(keep: bool, command_line: bool) -> tuple[list[str], list[str], str]:
    """(removed, kept, why kept): the variables steering numpy's BLAS, an OpenMP runtime
    or numpy's SIMD dispatch (OPENBLAS_CORETYPE ...) that --bench removed, re-executing
    the command without them so that numpy runs as in a fresh process, and those it
    kept (--keep-env; a call from Python, which cannot re-execute). TEIR's own
    variables (TEIR_NUM_THREADS ...) are the user's settings for the kernel: kept."""
    from teir_lowering.measure.blas import steering_variables
    from teir_tools.environment import clean_environment

    if keep:
        return [], steering_variables(os.environ, teir=False), "--keep-env"
    if not command_line:
        return [], steering_variables(os.environ, teir=False), "called from Python"
    return clean_environment(teir=False), [], ""


def bench(args: argparse.Namespace, config: ConfigOp, kernel: Kernel,
          inputs: Sequence[np.ndarray], peers: Sequence[tuple[str, NumpyPeer]],
          threads: int) -> None:
    """--bench: the kernel and every numpy peer timed interleaved in `args.repeat`
    rounds, numpy's BLAS limited to the kernel's thread count; prints the medians,
    the best peer (the smallest median of per-round ratios) and that ratio, next to
    what bounds them in this run: the FMA peak of the data type at the kernel's
    thread count, plain-copy bandwidth, numpy's BLAS and the CPU."""
    from teir_dialect.host import native_host
    from teir_lowering.measure.blas import blas_info, blas_text, blas_threads
    from teir_lowering.measure.peaks import FmaPeak, measure_copy_bandwidth
    from teir_lowering.measure.timing import SETTLE_SECONDS, interleaved, median_ratio

    removed, kept, why = getattr(args, "environment", ([], [], ""))
    used = threads if kernel.parallel else 1
    kernel_arrays = [a.copy() for a in inputs]
    peer_arrays = [a.copy() for a in inputs]  # peers run one at a time: one set
    functions: dict[str, Callable[[], object]] = {
        "teir": lambda: kernel(*kernel_arrays, threads=threads)
    }
    for index, (_, peer) in enumerate(peers):  # views made once, as a numpy user has
        functions[str(index)] = peer.bind(peer_arrays)
    description = {str(index): text for index, (text, _) in enumerate(peers)}
    once: dict[str, float] = {}
    failures: dict[str, str] = {}
    with blas_threads(threads):
        blas = blas_info()
        for name, function in functions.items():  # warm-up and one timed call each
            try:
                function()
                start = time.perf_counter()
                function()
                once[name] = time.perf_counter() - start
            except Exception as err:  # numpy lacks a loop for the type (bfloat16 ...)
                if name == "teir":
                    raise
                failures[name] = f"{type(err).__name__}: {err}"
        fastest = min((once[n] for n in once if n != "teir"), default=0.0)
        timed = [n for n in once if n == "teir" or once[n] <= SLOW_PEER * fastest]
        # A pool spins on its cores after a call (SETTLE_SECONDS); numpy's BLAS
        # starts its threads only for calls this long.
        slowest = max(once[n] for n in timed)
        settle = (0.0 if max(threads, used) == 1
                  else SETTLE_SECONDS if slowest >= 1e-3 else 0.01)
        flops, moved = work(config)
        primitives = config.primitives
        data_type = DataType(primitives[0].data_type) if primitives else DataType.FP32
        peak_type = "FP64" if data_type is DataType.FP64 else "FP32"
        rounds = {n: functions[n] for n in timed}
        if flops:  # the FMA peak in the same rounds: what the host gives at each time
            run_peak, peak_flops = FmaPeak(peak_type).call(used, PEAK_SECONDS)
            rounds["peak"] = run_peak
        time.sleep(settle)
        available = available_memory()
        copy_bytes = min(COPY_BYTES, available // 8) if available else COPY_BYTES
        copy_gbs = measure_copy_bandwidth(True, copy_bytes)
        time.sleep(settle)
        samples = interleaved(rounds, args.repeat, settle=settle, once=once)

    machine = native_host()
    isa = next((f for f in ("avx512f", "avx2", "avx") if f in machine.features), "no AVX")
    print(f"  host: {machine.cpu} ({isa}, {machine.cores} cores); TEIR at {used} thread(s)")
    print(f"  numpy {np.__version__}, BLAS: {blas_text(blas)} at "
          f"{blas.get('num_threads', '?')} thread(s) (threadpoolctl; numpy's own loops, einsum "
          "without BLAS and copies, on 1)")
    if removed:
        print("  removed from the environment (they steer numpy's BLAS; the peers run at "
              f"their best without them): {', '.join(removed)}")
    if kept:  # names of this process's environment
        kept_text = ", ".join(f"{name}={os.environ[name]}" for name in kept)
        print(f"  kept in the environment ({why}): {kept_text}: they steer numpy's BLAS "
              "and may handicap the numpy peers (teir-run without --keep-env removes them)")
    teir = samples.pop("teir")
    seconds = float(np.median(teir))
    if flops:
        peaks = samples.pop("peak")
        fraction = flops / peak_flops * median_ratio(peaks, teir)
        bound = (f"{100 * fraction:5.1f}% of the {peak_type} FMA peak at {used} thread(s) "
                 f"(median of per-round ratios; the peak: {peak_flops / min(peaks) / 1e9:.1f}"
                 f" GFLOP/s at best, {peak_flops / float(np.median(peaks)) / 1e9:.1f} median"
                 + (")" if data_type.value == peak_type
                    else "; BF16 paired products (vdpbf16ps): up to twice that rate)"
                    if any(p.pairs_bf16_products for p in config.primitives)
                    else f"; {data_type.value} multiplies in FP32)"))
    else:
        bound = f"{100 * moved / seconds / 1e9 / copy_gbs:5.1f}% of the copy bandwidth"
    print(f"  {'teir':<16} {seconds * 1e6:10.1f} us  {_rate(config, seconds)}  {bound}")
    ratios = {name: median_ratio(times, teir) for name, times in samples.items()}
    best = min(ratios, key=ratios.__getitem__, default=None)
    order = sorted(samples, key=lambda n: n != best)
    for name in order:
        peer_seconds = float(np.median(samples[name]))
        label = "best numpy peer" if name == best else "other peer"
        print(f"  {label:<16} {peer_seconds * 1e6:10.1f} us  {_rate(config, peer_seconds)}"
              f"  {ratios[name]:5.2f}x  {description[name]}")
    for name, call in once.items():
        if name not in samples and name != "teir":
            print(f"  {'other peer':<16} {call * 1e6:10.1f} us  "
                  f"{_rate(config, call)}      -   {description[name]} (one call: over "
                  f"{SLOW_PEER:.0f}x the fastest peer's, not timed in the rounds)")
    for name, error in failures.items():
        print(f"  {'other peer':<16} {'fails':>13}  {description[name]}: {error}")
    if best is not None:
        print(f"  TEIR / best numpy peer: median of {len(teir)} per-round ratios: "
              f"{ratios[best]:.2f}x (the peer's time over TEIR's in each round, > 1: "
              "TEIR faster; each peer's above, the best's the smallest)")
    print(f"  copy bandwidth: {copy_gbs:.1f} GB/s (np.copyto of {_size(copy_bytes)}, "
          "1 thread, bytes read + written, in this run)")


def check(args: argparse.Namespace, config: ConfigOp, kernel: Kernel,
          inputs: Sequence[np.ndarray], peer: tuple[str, NumpyPeer] | None,
          threads: int) -> bool:
    """--check: the kernel's out against the interpreter and numpy; whether one failed.

    The bound is `error_bound` of the magnitude |c| + sum |a b| of each element
    (numpy's peer on the absolute values in float64, else the interpreter on them);
    against numpy in float64 (exact but for its own float64 rounding) once, against
    the interpreter (which rounds as the format does too) twice that.
    """
    from teir_dialect.interpreter import run_reference
    from teir_lowering.frontends.numpy_peer import out_aliases_itself

    primitives = config.primitives
    data_type = DataType(primitives[0].data_type) if primitives else DataType.FP32
    stores, terms = reduction_counts(config)
    result = [a.copy() for a in inputs]
    kernel(*result, threads=threads)
    failed = False
    magnitude = exact = None
    if peer is not None:  # one float64 copy of the inputs at a time
        exact = peer_output(peer[1], as_float64(inputs))
        magnitude = peer_output(peer[1], [np.abs(a) for a in as_float64(inputs)])
    flops, moved = work(config)
    size = flops / 2 + moved / 4
    if args.reference == "always" or (args.reference == "auto" and size < REFERENCE_LIMIT):
        expected = [a.copy() for a in inputs]
        run_reference(config, expected)
        if magnitude is None:
            absolute = [np.abs(a) for a in inputs]
            run_reference(config, absolute)
            magnitude = absolute[-1].astype(np.float64)
        bound = 2 * error_bound(data_type, stores, terms, magnitude)
        failed |= _compare("reference interpreter", result[-1], expected[-1], bound)
        del expected
    else:
        print(
            f"  reference interpreter not run ({size:.2g} element operations; "
            "--reference=always forces it)"
        )
    if peer is None and out_aliases_itself(config):
        print("  numpy not compared: out's strides address some element from several "
              "index tuples, which the kernel updates once per tuple and a numpy view "
              "once")
    if peer is not None and exact is not None and magnitude is not None:
        bound = error_bound(data_type, stores, terms, magnitude)
        failed |= _compare(f"numpy ({peer[0]}) in float64", result[-1], exact, bound)
    return failed


def peer_output(compute: NumpyPeer, arrays: list[np.ndarray]) -> np.ndarray:
    """The out array after numpy's peer ran on `arrays`."""
    compute(arrays)
    return arrays[-1]


def as_float64(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """float64 copies of the elements (bfloat16 included)."""
    return [np.asarray(a).astype(np.float64) for a in arrays]


def _compare(what: str, got: np.ndarray, expected: np.ndarray, bound: np.ndarray) -> bool:
    """Whether some element of `got` differs from `expected` by more than `bound`
    (NaN must meet NaN, an infinity the same infinity); prints the verdict."""
    got, expected = as_float64([got, expected])
    with np.errstate(invalid="ignore"):
        difference = np.where(got == expected, 0.0, np.abs(got - expected))
    difference = np.where(np.isnan(got) & np.isnan(expected), 0.0, difference)
    over = np.nan_to_num(difference, nan=np.inf) > bound
    ok = not over.any()
    error = float(np.max(difference)) if difference.size else 0.0
    allowed = float(np.max(bound)) if np.size(bound) else 0.0
    print(
        f"  check against {what}: max abs error {error:.3g} "
        f"({'ok' if ok else 'MISMATCH'}, tolerance {allowed:.1g}"
        f"{'' if ok else f', {int(over.sum())} elements beyond'})"
    )
    return not ok


if __name__ == "__main__":
    sys.exit(main())
