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
one made. `TEIR_KERNEL_CACHE=0` turns the cache off.

An entry is trusted only if one SHA-256 stored with it covers its key, every
field that says how the code is called (the function's name, whether it
launches threads) and its IR and object code: a field edited, files copied
from another key, code truncated or damaged, are a miss, compiled and written
again. MCJIT would run whatever object code it is given, so nothing of an
entry is used before the hash matches. Files are read and written as
`teir_dialect.cache_files` does (regular files of this user, size limits,
atomic writes), so a FIFO, symlink, directory or huge file is a miss too.
The hash guards against damage and mix-ups, not against someone who can
write the user's cache folder on purpose: they could write code and a
matching hash.
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
from teir_dialect import cache_files
from teir_dialect.host import cpu_model, host


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
    lowering = Path(__file__).parents[1]  # this package's root: every lowering source
    for folder in [Path(p.__file__).parent for p in (teir_dialect, teir_passes)] + [lowering]:
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


META_LIMIT = 1 << 16
"""The largest metadata or note file read (bytes); they hold a few fields."""
CODE_LIMIT = 1 << 28
"""The largest IR or object file read (bytes); a larger kernel is not cached."""


def _write(files: list[tuple[str, bytes]]) -> None:
    """Writes (name, data) pairs into the cache folder in order, each atomically;
    best effort: a cache that cannot be written is no error."""
    folder = kernel_dir()
    try:
        for name, data in files:
            cache_files.write(folder, name, data)
    except OSError:
        pass


@dataclass(frozen=True)
class CachedKernel:
    """What a later process needs besides the configuration: the code and how to call it."""

    name: str
    parallel: bool
    llvm_ir: str
    object_code: bytes


def _digest(key: str, name: str, parallel: bool, llvm_ir: bytes, object_code: bytes) -> str:
    """The hash binding an entry's fields and code to its key (lengths first, so no
    two entries hash the same bytes)."""
    header = json.dumps([key, name, parallel, len(llvm_ir), len(object_code)])
    digest = hashlib.sha256(header.encode())
    digest.update(b"\n")
    digest.update(llvm_ir)
    digest.update(object_code)
    return digest.hexdigest()


def load(key: str) -> CachedKernel | None:
    """The entry for `key`, or None (none, damaged, not this key's, or the cache is off)."""
    if not enabled():
        return None
    folder = kernel_dir()
    meta = cache_files.read_json(folder / f"{key}.json", META_LIMIT)
    if not (isinstance(meta, dict) and meta.keys() == {"name", "parallel", "sha256"}
            and isinstance(meta["name"], str) and isinstance(meta["parallel"], bool)):
        return None
    llvm_ir = cache_files.read(folder / f"{key}.ll", CODE_LIMIT)
    object_code = cache_files.read(folder / f"{key}.o", CODE_LIMIT)
    if llvm_ir is None or object_code is None:
        return None
    if meta["sha256"] != _digest(key, meta["name"], meta["parallel"], llvm_ir, object_code):
        return None
    try:
        text = llvm_ir.decode()
    except UnicodeDecodeError:
        return None
    return CachedKernel(meta["name"], meta["parallel"], text, object_code)


def store(key: str, entry: CachedKernel) -> None:
    """Writes the entry (best effort, see `_write`)."""
    llvm_ir = entry.llvm_ir.encode()
    if not enabled() or max(len(llvm_ir), len(entry.object_code)) > CODE_LIMIT:
        return
    meta = {"name": entry.name, "parallel": entry.parallel,
            "sha256": _digest(key, entry.name, entry.parallel, llvm_ir, entry.object_code)}
    # The metadata goes last: a reader that finds it finds the code too.
    _write([(f"{key}.ll", llvm_ir), (f"{key}.o", entry.object_code),
            (f"{key}.json", json.dumps(meta).encode())])


def _note_digest(key: str, answer: object) -> str:
    return hashlib.sha256(json.dumps([key, answer]).encode()).hexdigest()


def recall(question: str) -> object:
    """A small JSON answer stored for `question` (text the answer depends on, e.g. a
    module's IR) by this compiler on this host, or None (none, damaged, or not
    this question's: its SHA-256 covers the key and the answer, which may be code,
    the launchers' LLVM IR)."""
    if not enabled():
        return None
    key = kernel_key("note", question)
    note = cache_files.read_json(kernel_dir() / f"{key}.note", META_LIMIT)
    if (isinstance(note, dict) and note.keys() == {"key", "answer", "sha256"}
            and note["key"] == key and note["sha256"] == _note_digest(key, note["answer"])):
        return note["answer"]
    return None


def remember(question: str, answer: object) -> None:
    """Stores `answer` (JSON, up to META_LIMIT bytes with its key) for `question`
    (best effort, see `_write`)."""
    if enabled():
        key = kernel_key("note", question)
        text = json.dumps({"key": key, "answer": answer,
                           "sha256": _note_digest(key, answer)}).encode()
        if len(text) <= META_LIMIT:
            _write([(f"{key}.note", text)])


def clear() -> int:
    """Removes every entry; returns how many kernels were removed."""
    folder = kernel_dir()
    removed = 0
    for path in folder.glob("*") if folder.is_dir() else ():
        try:
            path.unlink(missing_ok=True)
        except OSError:  # e.g. a directory someone put there
            continue
        removed += path.suffix == ".json"
    return removed
