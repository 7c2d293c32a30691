"""What every benchmark script here shares: a clean environment, the host's
description, interleaved timing, and a results folder per CPU.

- `clean_environment()` re-executes the script without the variables that steer
  numpy's BLAS or the OpenMP runtimes (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE,
  OPENBLAS_VERBOSE, GOTO_*, MKL_*, NVPL_*, OMP_*, ...) or TEIR's own defaults
  (TEIR_NUM_THREADS, TEIR_HOST_CACHE), so that the peers run as a user's fresh
  process would, with the kernels their library picks for this CPU; the names
  it removed are reported.
- `describe_host()`: the CPU model (teir_passes.host), its vector ISA and
  caches, and numpy's BLAS as threadpoolctl reports it (internal_api,
  architecture: the kernel set it picked for this CPU, version, threading).
- `interleaved(...)`: every round times each implementation once (a batch of
  calls lasting about `batch_seconds`), in a rotated order, so that whatever
  the host gives this process (other jobs, frequency) drifts over all of them
  alike; callers report medians of per-round ratios.
- `results_dir(...)`: benchmarks/results/<cpu-slug>/, so that figures from
  different hosts never mix.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CLEAN_MARK = "TEIR_BENCH_CLEANED"
"""Set (to the removed names) in the re-executed process."""

STEERING_PREFIXES = ("OPENBLAS_", "GOTO_", "GOTOBLAS", "MKL_", "NVPL_", "BLIS_", "OMP_",
                     "KMP_", "GOMP_", "VECLIB_", "ACCELERATE_", "NUMEXPR_", "ARMPL_")
STEERING_NAMES = ("TEIR_NUM_THREADS", "TEIR_HOST_CACHE")


def steering_variables(environment: Mapping[str, str]) -> list[str]:
    """The variables of `environment` that steer a BLAS, an OpenMP runtime or TEIR."""
    return sorted(name for name in environment
                  if name.startswith(STEERING_PREFIXES) or name in STEERING_NAMES)


def clean_environment() -> list[str]:
    """Re-executes this script without `steering_variables` (once); returns the names
    removed (in the re-executed process: those its parent removed)."""
    if CLEAN_MARK in os.environ:
        removed = os.environ[CLEAN_MARK]
        return removed.split(",") if removed else []
    removed = steering_variables(os.environ)
    if not removed:
        os.environ[CLEAN_MARK] = ""
        return []
    environment = {k: v for k, v in os.environ.items() if k not in removed}
    environment[CLEAN_MARK] = ",".join(removed)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], environment)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class HostInfo:
    cpu: str
    slug: str
    isa: str  # "avx512f", "avx2", ...: the widest vector ISA LLVM sees
    vector_bytes: int
    vector_registers: int
    l1d: int
    l2: int
    l3: int
    cores: int
    blas: dict[str, str]  # threadpoolctl's fields for numpy's BLAS
    removed: tuple[str, ...]  # steering variables removed from the environment

    def blas_text(self) -> str:
        b = self.blas
        return (f"{b.get('internal_api', '?')} {b.get('version', '?')} "
                f"architecture {b.get('architecture', '?')} "
                f"({b.get('filename', '?')}, {b.get('threading_layer', '?')})")

    def header(self) -> list[str]:
        """Lines naming the host and the peer's BLAS, for every output."""
        cpu = (f"host CPU: {self.cpu} ({self.isa}, {self.vector_registers} x "
               f"{self.vector_bytes * 8}-bit vector registers; L1d {self.l1d >> 10} KiB, "
               f"L2 {self.l2 >> 10} KiB, L3 {self.l3 >> 20} MiB; {self.cores} cores)")
        lines = [cpu, f"numpy {np.__version__} BLAS: {self.blas_text()}"]
        if self.removed:
            lines.append("removed from the environment (peers and TEIR run as a fresh "
                         f"process would): {', '.join(self.removed)}")
        return lines


def cpu_slug(cpu: str) -> str:
    """'AMD EPYC' -> 'amd-epyc-f25-m1': the model name, with the family and model
    numbers of /proc/cpuinfo when it has them (hypervisors often shorten the name)."""
    slug = re.sub(r"[^a-z0-9]+", "-", cpu.lower().replace("(r)", "").replace("(tm)", ""))
    slug = slug.strip("-") or "unknown-cpu"
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "cpu family" in fields and "model" in fields:
        slug += f"-f{fields['cpu family']}-m{fields['model']}"
    return slug


def blas_info() -> dict[str, str]:
    """threadpoolctl's description of numpy's BLAS (the first one numpy loaded)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"internal_api": "unknown (threadpoolctl not importable)"}
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            info = {key: str(value) for key, value in pool.items()}
            info["filename"] = Path(pool.get("filepath", "?")).name
            return info
    return {"internal_api": "none found"}


def describe_host(removed: Sequence[str] = ()) -> HostInfo:
    from teir_passes.host import host

    machine = host()
    isa = next((f for f in ("avx512f", "avx2", "avx", "sse4.2") if f in machine.features), "?")
    return HostInfo(machine.cpu, cpu_slug(machine.cpu), isa, machine.vector_bytes,
                    machine.vector_registers, machine.l1d, machine.l2, machine.l3,
                    machine.cores, blas_info(), tuple(removed))


def results_dir(base: Path, info: HostInfo) -> Path:
    path = base / info.slug
    path.mkdir(parents=True, exist_ok=True)
    return path


def blas_threads(threads: int):
    """A context limiting numpy's BLAS to `threads` (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def interleaved(functions: Mapping[str, Callable[[], object]], rounds: int,
                budget: float = 2.0, batch_seconds: float = 0.01,
                max_batch: int = 10_000, settle: float = 0.0) -> dict[str, list[float]]:
    """Seconds per call of each function, one sample per round (see the module doc).

    Each function is warmed up and gets a batch size (calls per sample) from a
    second call. Rounds stop early once `budget` seconds have passed and at
    least three rounds are in. `settle` seconds are slept before each sample:
    multi-threaded runs need it, as a thread pool keeps spinning for a while
    after its call (OpenBLAS's workers for about 2^28 cycles, libgomp's for its
    spin count), which takes a core from whatever runs next in the round (the
    project's 2-thread kernel ran at 0.45x of its speed right after np.matmul).
    """
    names = list(functions)
    batches: dict[str, int] = {}
    for name in names:
        functions[name]()  # warm-up: page faults, caches, thread start
        start = time.perf_counter()
        functions[name]()
        once = time.perf_counter() - start
        batches[name] = max(1, min(max_batch, int(batch_seconds / max(once, 1e-7))))
    samples: dict[str, list[float]] = {name: [] for name in names}
    deadline = time.perf_counter() + budget + settle * len(names) * rounds
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            function, count = functions[name], batches[name]
            if settle:
                time.sleep(settle)
            start = time.perf_counter()
            for _ in range(count):
                function()
            samples[name].append((time.perf_counter() - start) / count)
        if round_number >= 2 and time.perf_counter() > deadline:
            break
    return samples


def median_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The median over rounds of numerator / denominator."""
    return float(np.median([a / b for a, b in zip(numerator, denominator)]))


def measure_copy_bandwidth(quick: bool, size: int = 256 << 20) -> float:
    """GB/s of np.copyto on `size` bytes (bytes read + bytes written per second), the
    median of repeated copies."""
    source = np.ones(size // 8, np.float64)
    target = np.zeros_like(source)
    samples = interleaved({"copy": lambda: np.copyto(target, source)}, 3 if quick else 9,
                          budget=10.0, batch_seconds=0.0)
    return 2 * size / float(np.median(samples["copy"])) / 1e9
