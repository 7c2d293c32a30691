"""The files of TEIR's per-user caches (tuned schedules, compiled kernels).

Whatever is found in a cache folder is read as untrusted: a file planted or
damaged there must be a miss, never a hang, a crash or a memory blow-up. So
`read` opens the entry itself without following a symlink and without
blocking (a FIFO), takes it only if it is a regular file owned by this user
and no larger than the caller's limit, and reads at most that many bytes.
`write` writes a fresh temporary file (created exclusively, so nothing
planted at its name is followed) and renames it over the entry: a reader sees
the old file or the new one.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


def read(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file `path` of this user, or None if there is none, it
    is something else (symlink, FIFO, directory, device, another user's file) or it
    holds more than `limit` bytes."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        if hasattr(os, "geteuid") and status.st_uid != os.geteuid():
            return None
        with open(descriptor, "rb", closefd=False) as file:
            data = file.read(limit + 1)  # the file may have grown since fstat
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return data if len(data) <= limit else None


def read_json(path: Path, limit: int) -> object:
    """The JSON value in `path` (as `read` takes it), or None if there is none or it
    is not JSON (nested too deep for Python's parser included)."""
    data = read(path, limit)
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def write(folder: Path, name: str, data: bytes) -> None:
    """Writes `data` as `folder/name` atomically; OSError if it cannot (e.g. a
    directory stands at that name)."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with open(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, folder / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
