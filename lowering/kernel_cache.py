"""Compiled kernels on disk, so that another process skips the lowering.

Lowering a configuration through xDSL's rewriters to LLVM IR, then LLVM's O3
and code generation, takes seconds; loading the object code it produced takes
milliseconds. `compile_kernel` keeps, per kernel, the optimized LLVM IR and the
object code MCJIT generated, in `<cache>/kernels/` (the user's cache directory
from `platformdirs`, or `$TEIR_CACHE_DIR/kernels`), and loads them when the
same key comes again.

The key is a hash of everything the machine code depends on: the function's
IR as given, whether teir-optimize runs and which tuned script it used, the
host (CPU model, LLVM's CPU name and features), the llvmlite and numpy
versions (numpy's array layout is in the entry point) and the source of the
TEIR packages themselves, so that a changed compiler never loads code an older
one made. `TEIR_KERNEL_CACHE=0` turns the cache off. An entry that cannot be
read, or whose code does not match the hash stored with it, is ignored and
written again; entries are written atomically (a reader
sees the old file or the new one).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numpy as np

import teir_dialect
import teir_passes
from teir_passes.host import cpu_model, host


def enabled() -> bool:
    return os.environ.get("TEIR_KERNEL_CACHE", "1") not in ("0", "off", "no", "false")


def kernel_dir() -> Path:
    if where := os.environ.get("TEIR_CACHE_DIR"):
        return Path(where) / "kernels"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("teir")) / "kernels"


@cache
def _compiler_fingerprint() -> str:
    """A hash of the TEIR sources and of the host and libraries code depends on."""
    digest = hashlib.sha256()
    folders = [Path(p.__file__).parent for p in (teir_dialect, teir_passes)]
    for folder in [*folders, Path(__file__).parent]:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    llvm.initialize_native_target()
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:
        features = ""
    for text in (cpu_model(), llvm.get_host_cpu_name(), features, llvmlite.__version__,
                 np.__version__):
        digest.update(text.encode())
    return digest.hexdigest()


def kernel_key(*parts: object) -> str:
    """A file name for what `parts` (JSON values) and this compiler on this host give."""
    # host(): the description plans were made for, which a test may pin
    text = json.dumps([*parts, _compiler_fingerprint(), host().fingerprint()])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _write(files: list[tuple[str, bytes]]) -> None:
    """Writes (name, data) pairs into the cache folder in order, each atomically (a
    temporary file renamed over the entry); best effort: a cache that cannot be
    written is no error."""
    folder = kernel_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in files:
            temporary = folder / f".{name}.{os.getpid()}.tmp"
            temporary.write_bytes(data)
            temporary.replace(folder / name)
    except OSError:
        pass


@dataclass(frozen=True)
class CachedKernel:
    """What a later process needs besides the configuration: the code and how to call it."""

    name: str
    parallel: bool
    llvm_ir: str
    object_code: bytes


def load(key: str) -> CachedKernel | None:
    """The entry for `key`, or None (none, unreadable, or the cache is off)."""
    if not enabled():
        return None
    folder = kernel_dir()
    try:
        meta = json.loads((folder / f"{key}.json").read_text())
        entry = CachedKernel(meta["name"], bool(meta["parallel"]),
                             (folder / f"{key}.ll").read_text(),
                             (folder / f"{key}.o").read_bytes())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # MCJIT would load damaged object code as it is: check it is what was written.
    if meta.get("sha256") != _digest(entry):
        return None
    return entry


def _digest(entry: CachedKernel) -> str:
    digest = hashlib.sha256(entry.object_code)
    digest.update(entry.llvm_ir.encode())
    return digest.hexdigest()


def store(key: str, entry: CachedKernel) -> None:
    """Writes the entry (best effort, see `_write`)."""
    if not enabled():
        return
    meta = {"name": entry.name, "parallel": entry.parallel, "sha256": _digest(entry)}
    # The metadata goes last: a reader that finds it finds the code too.
    _write([(f"{key}.ll", entry.llvm_ir.encode()), (f"{key}.o", entry.object_code),
            (f"{key}.json", json.dumps(meta).encode())])


def recall(question: str) -> object:
    """A small JSON answer stored for `question` (text the answer depends on, e.g. a
    module's IR) by this compiler on this host, or None."""
    if not enabled():
        return None
    try:
        path = kernel_dir() / f"{kernel_key('note', question)}.note"
        return json.loads(path.read_text())["answer"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(question: str, answer: object) -> None:
    """Stores `answer` (JSON) for `question` (best effort, see `_write`)."""
    if enabled():
        _write([(f"{kernel_key('note', question)}.note",
                 json.dumps({"answer": answer}).encode())])


def clear() -> int:
    """Removes every entry; returns how many kernels were removed."""
    folder = kernel_dir()
    removed = 0
    for path in folder.glob("*") if folder.is_dir() else ():
        removed += path.suffix == ".json"
        path.unlink(missing_ok=True)
    return removed
