"""TEIR kernels as dask.array's per-chunk einsum and tensordot.

    import teir_lowering.frontends.dask
    teir_lowering.frontends.dask.register(client)      # client: a distributed.Client, or None
    da.einsum("ij,jk,kl->il", x, y, z).compute()

`da.einsum` and `da.tensordot` look the chunk function up by the chunk's type
in `dask.array.core.einsum_lookup` / `tensordot_lookup`; `register` puts
TEIR's there for numpy chunks, in this process and, given a client, on every
worker of its cluster, also those that join later (a `distributed.WorkerPlugin`
registers them when a worker starts). Each chunk runs `teir_lowering.einsum`
(numpy's semantics, any number of operands) or its `tensordot` on `threads` threads (1 by
default: dask already runs one chunk per worker thread). A chunk TEIR cannot
compute (integer, complex or object chunks) raises; nothing falls back to
numpy.

dask is an optional extra: `pip install -e '.[dask]'`.
"""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np

try:  # distributed is needed only for `register(client)`
    from distributed import WorkerPlugin
except ImportError:  # pragma: no cover - dask without distributed
    WorkerPlugin = object

__all__ = ["TeirWorkerPlugin", "calls", "chunk_einsum", "chunk_tensordot", "register"]

_CALLS: Counter[str] = Counter()
_CALLS_LOCK = threading.Lock()
_THREADS: list[int | None] = [1]


def calls() -> dict[str, int]:
    """How many chunks TEIR computed in this process, per function (a worker's
    count is what `client.run(teir_lowering.frontends.dask.calls)` returns)."""
    with _CALLS_LOCK:
        return dict(_CALLS)


def _count(name: str) -> None:
    with _CALLS_LOCK:
        _CALLS[name] += 1


def chunk_einsum(subscripts: str, *operands: np.ndarray, dtype: object = None,
                 optimize: object = False, casting: str = "safe",
                 order: str = "K") -> np.ndarray:
    """`np.einsum` on numpy chunks with the keywords dask passes (dtype, optimize:
    False or np.einsum_path's path, and the user's casting and order), in numpy's
    semantics (`teir_lowering.einsum`: conversions, diagonals, sums, trees)."""
    from teir_lowering.frontends.einsum_semantics import einsum

    result = einsum(subscripts, *operands, dtype=dtype, optimize=optimize,
                    casting=casting, order=order, threads=_THREADS[0])
    _count("einsum")
    return result


def chunk_tensordot(a: np.ndarray, b: np.ndarray, axes: object = 2) -> np.ndarray:
    """`np.tensordot` on numpy chunks (dask passes axes as a pair of tuples)."""
    from teir_lowering.frontends.einsum_semantics import tensordot

    result = tensordot(a, b, axes, threads=_THREADS[0])
    _count("tensordot")
    return result


def _register_here(threads: int | None) -> None:
    from dask.array.dispatch import einsum_lookup, tensordot_lookup

    _THREADS[0] = threads
    einsum_lookup.register(np.ndarray, chunk_einsum)
    tensordot_lookup.register(np.ndarray, chunk_tensordot)


class TeirWorkerPlugin(WorkerPlugin):  # pyright: ignore[reportGeneralTypeIssues]
    """Registers TEIR's chunk functions on each worker as it starts (and on the
    workers running when it is registered)."""

    name = "teir-einsum"

    def __init__(self, threads: int | None = 1) -> None:
        self.threads = threads

    def setup(self, worker: object) -> None:
        _register_here(self.threads)


def register(client: object = None, threads: int | None = 1) -> None:
    """Make dask.array's einsum and tensordot run TEIR kernels on numpy chunks:
    here, and with a `distributed.Client` on all its workers, present and future."""
    from teir_lowering.runtime.kernel import check_threads

    if threads is not None:  # here, not in every chunk of every worker
        check_threads(threads, "register: threads")
    if client is not None and not callable(getattr(client, "register_plugin", None)):
        raise TypeError("register: client must be a distributed.Client (or None), got "
                        f"{type(client).__name__}")
    _register_here(threads)
    if client is not None:
        client.register_plugin(TeirWorkerPlugin(threads))  # pyright: ignore
