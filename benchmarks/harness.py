"""What every benchmark script here shares: a clean environment, the host's
description, interleaved timing, and a results folder per CPU.

- `clean_environment()` (teir_tools.environment) re-executes the script without
  the variables that steer numpy's BLAS or the OpenMP runtimes
  (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, OPENBLAS_VERBOSE, GOTO_*, MKL_*, NVPL_*,
  OMP_*, NPY_DISABLE_CPU_FEATURES, ...; teir_lowering.measure.blas) or TEIR's own
  defaults (TEIR_NUM_THREADS, TEIR_HOST_CACHE, TEIR_HOST), so that the peers run
  as a user's fresh process would, with the kernels their library picks for
  this CPU; the names it removed are reported.
- `describe_host()`: the CPU model (teir_dialect.host), its vector ISA and
  caches, and numpy's BLAS as threadpoolctl reports it (internal_api,
  architecture: the kernel set it picked for this CPU, version, threading).
- `interleaved(...)` (teir_lowering.measure.timing, shared with `teir-run --bench`):
  every round times each implementation once, in a rotated order, so that
  whatever the host gives this process drifts over all of them alike; callers
  report medians of per-round ratios (`median_ratio`).
- `results_dir(...)`: benchmarks/results/<cpu-slug>/, so that figures from
  different hosts never mix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from teir_lowering.measure.blas import blas_info, blas_text, blas_threads
from teir_lowering.measure.peaks import measure_copy_bandwidth
from teir_lowering.measure.timing import interleaved, median_ratio
from teir_tools.environment import clean_environment

__all__ = ["HostInfo", "blas_threads", "clean_environment", "cpu_slug", "describe_host",
           "interleaved", "measure_copy_bandwidth", "median_ratio", "results_dir"]

HERE = Path(__file__).resolve().parent


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
        return blas_text(self.blas)

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


def table_header(*columns: str) -> str:
    """A Markdown table's first two lines for `columns` (the separator row has as
    many cells)."""
    return f"| {' | '.join(columns)} |\n|{' --- |' * len(columns)}"


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


def describe_host(removed: Sequence[str] = ()) -> HostInfo:
    from teir_dialect.host import host

    machine = host()
    isa = next((f for f in ("avx512f", "avx2", "avx", "sse4.2") if f in machine.features), "?")
    return HostInfo(machine.cpu, cpu_slug(machine.cpu), isa, machine.vector_bytes,
                    machine.vector_registers, machine.l1d, machine.l2, machine.l3,
                    machine.cores, blas_info(), tuple(removed))


def results_dir(base: Path, info: HostInfo) -> Path:
    path = base / info.slug
    path.mkdir(parents=True, exist_ok=True)
    return path
