"""Tuned schedules, kept per user: the best script `teir-tune` found for a configuration.

An entry is keyed by a hash of the configuration as written (its IR before any
scheduling), the CPU model and the thread count, so a script tuned on one
machine or for one thread count is never used for another. Entries are small
JSON files in the user's cache directory (`platformdirs`), or in
`TEIR_CACHE_DIR` when that is set (tests set it). `compile_kernel` looks a
configuration up on every compile (one small file read) and, when an entry
exists, applies its script instead of the auto-scheduler. An entry is read as
`cache_files` reads (a regular file of this user, at most `LIMIT` bytes) and
used only if it is one for this key, CPU and thread count with fields of the
right types; anything else is no entry (not tuned).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from teir_dialect import cache_files
from teir_dialect.host import cpu_model

LIMIT = 1 << 20
"""The largest entry file read (bytes)."""


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
    data_type: str = "?"  # of its primitives, for `teir-tune --show` ("?": an older entry)


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
    name = key(ir, threads)
    entry = _read(cache_dir() / f"{name}.json")
    if entry is None or (entry.key, entry.cpu, entry.threads) != (name, cpu_model(), threads):
        return None  # another configuration's entry under this name: not tuned
    return entry


def _read(path: Path) -> Entry | None:
    """The entry in `path`, or None: none, or one this version cannot read."""
    data = cache_files.read_json(path, LIMIT)
    fields = Entry.__dataclass_fields__.keys()
    if not isinstance(data, dict) or data.keys() not in (fields, fields - {"data_type"}):
        return None
    entry = Entry(**data)
    number = (int, float)
    types = {"key": str, "cpu": str, "threads": int, "script": list, "seconds": number,
             "baseline": number, "label": str, "when": number, "data_type": str}
    if not all(isinstance(getattr(entry, field), kind) for field, kind in types.items()):
        return None
    return entry


def store(ir: str, threads: int, script: list[dict], seconds: float, baseline: float,
          label: str, data_type: str = "?") -> Entry:
    entry = Entry(key(ir, threads), cpu_model(), threads, script, seconds, baseline, label,
                  time.time(), data_type)
    cache_files.write(cache_dir(), f"{entry.key}.json",
                      json.dumps(asdict(entry), indent=1).encode())
    return entry


def entries() -> list[Entry]:
    found: list[Entry] = []
    for path in sorted(cache_dir().glob("*.json")):
        if (entry := _read(path)) is not None:
            found.append(entry)
    return found


def clear() -> int:
    removed = 0
    for path in cache_dir().glob("*.json"):
        try:
            path.unlink(missing_ok=True)
        except OSError:  # e.g. a directory someone put there
            continue
        removed += 1
    return removed
