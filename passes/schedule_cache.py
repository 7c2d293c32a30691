"""Tuned schedules, kept per user: the best script `teir-tune` found for a configuration.

An entry is keyed by a hash of the configuration as written (its IR before any
scheduling), the CPU model and the thread count, so a script tuned on one
machine or for one thread count is never used for another. Entries are small
JSON files in the user's cache directory (`platformdirs`), or in
`TEIR_CACHE_DIR` when that is set (tests set it). `compile_kernel` looks a
configuration up on every compile (one small file read) and, when an entry
exists, applies its script instead of the auto-scheduler.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from teir_passes.host import cpu_model


@dataclass(frozen=True)
class Entry:
    """One tuned schedule."""

    key: str
    cpu: str
    threads: int
    script: list[dict]
    seconds: float  # the kernel's median time with this script when it was tuned
    baseline: float  # the auto-scheduler's, measured in the same run
    label: str  # what was tuned (a file name or an einsum), for `teir-tune --show`
    when: float


def cache_dir() -> Path:
    if where := os.environ.get("TEIR_CACHE_DIR"):
        return Path(where)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("teir")) / "schedules"


def key(ir: str, threads: int, cpu: str | None = None) -> str:
    text = json.dumps([ir, cpu or cpu_model(), threads])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def lookup(ir: str, threads: int) -> Entry | None:
    """The entry for this configuration on this CPU and thread count, if any."""
    path = cache_dir() / f"{key(ir, threads)}.json"
    try:
        data = json.loads(path.read_text())
        return Entry(**data)
    except (OSError, ValueError, TypeError):
        return None  # no entry, or one this version cannot read: not tuned


def store(ir: str, threads: int, script: list[dict], seconds: float, baseline: float,
          label: str) -> Entry:
    entry = Entry(key(ir, threads), cpu_model(), threads, script, seconds, baseline, label,
                  time.time())
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{entry.key}.tmp"
    temporary.write_text(json.dumps(asdict(entry), indent=1))
    temporary.replace(folder / f"{entry.key}.json")  # atomic: readers see old or new
    return entry


def entries() -> list[Entry]:
    found: list[Entry] = []
    for path in sorted(cache_dir().glob("*.json")):
        try:
            found.append(Entry(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return found


def clear() -> int:
    removed = 0
    for path in cache_dir().glob("*.json"):
        path.unlink(missing_ok=True)
        removed += 1
    return removed
