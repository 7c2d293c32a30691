"""The machine TEIR compiles for, read from the machine itself.

Vector width and register count come from LLVM's view of the host CPU (the
features the JIT compiles with); cache sizes per core from Linux's sysfs
(`/sys/devices/system/cpu/cpu0/cache`), which reports what one core sees —
py-cpuinfo sums L1/L2 over cores on some hosts, so it is not used for sizes;
the model name from `/proc/cpuinfo`. Nothing is a constant tuned on one CPU:
the auto-scheduler and the microkernels size their tiles from this, and
every benchmark names the model it ran on.

`TEIR_HOST_CACHE` may override the cache sizes ("l1=32K,l2=512K,l3=32M") to
study a schedule for another machine; kernels still compile for this one.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)", re.IGNORECASE)
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


@dataclass(frozen=True)
class Host:
    """What the scheduler and the microkernels need to know about the CPU."""

    cpu: str
    vector_bytes: int  # 64 with AVX-512, 32 with AVX/AVX2, else 16
    vector_registers: int  # 32 with AVX-512, else 16
    features: frozenset[str]
    l1d: int  # bytes of L1 data cache one core sees
    l2: int  # bytes of L2 one core sees
    l3: int  # bytes of the last-level cache (shared)
    cores: int  # cores this process may run on

    def lanes(self, element_width: int) -> int:
        """Elements of `element_width` bytes in one vector register."""
        return self.vector_bytes // element_width


def parse_size(text: str) -> int | None:
    """'32K' -> 32768 (sysfs and TEIR_HOST_CACHE spell sizes so)."""
    match = _SIZE.match(text)
    return int(match.group(1)) * _UNIT[match.group(2).upper()] if match else None


def _sysfs_caches() -> dict[str, int]:
    """{'l1': bytes, 'l2': ..., 'l3': ...} of cpu0 (data and unified caches)."""
    sizes: dict[str, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = (index / "level").read_text().strip()
            size = parse_size((index / "size").read_text())
        except OSError:
            continue
        if kind in ("Data", "Unified") and size:
            sizes[f"l{level}"] = size
    return sizes


def _overrides() -> dict[str, int]:
    result: dict[str, int] = {}
    for item in os.environ.get("TEIR_HOST_CACHE", "").split(","):
        key, _, value = item.partition("=")
        if key.strip() in ("l1", "l2", "l3") and (size := parse_size(value)):
            result[key.strip()] = size
    return result


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (else what Python knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@cache
def host() -> Host:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    features = frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)
    if "avx512f" in features:
        vector_bytes, registers = 64, 32
    elif "avx" in features:
        vector_bytes, registers = 32, 16
    else:
        vector_bytes, registers = 16, 16
    caches = {"l1": 32 << 10, "l2": 512 << 10, "l3": 8 << 20}  # only if sysfs is silent
    caches |= _sysfs_caches()
    caches |= _overrides()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return Host(cpu_model(), vector_bytes, registers, features,
                caches["l1"], caches["l2"], caches.get("l3", caches["l2"]), cores)
