"""TEIR kernels as dask.array's per-chunk einsum and tensordot.

    import teir_lowering.frontends.dask
    teir_lowering.frontends.dask.register(client)      # client: a distributed.Client, or None
    da.einsum("ij,jk,kl->il", x, y, z).compute()

`da.einsum` and `da.tensordot` look the chunk function up by the chunk's type
in `dask.array.core.einsum_lookup` / `tensordot_lookup`; `register` puts
TEIR's there for numpy chunks, in this process and, given a client, on every
worker of its cluster, also those that join later (a `distributed.WorkerPlugin`
registers them when a worker starts). Each chunk runs `einsum_tree.contract`
(any number of operands) or `einsum_tree.tensordot` on `threads` threads (1 by
default: dask already runs one chunk per worker thread). A chunk TEIR cannot
compute (integer or mixed dtypes, a `dtype=` asking for a conversion, a
repeated index) raises; nothing falls back to numpy.

dask is an optional extra: `pip install -e '.[dask]'`.
"""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np

from teir_dialect.records import TeirError
from teir_lowering.frontends import einsum_tree

try:  # distributed is needed only for `register(client)`
    from distributed import WorkerPlugin
except ImportError:  # pragma: no cover - dask without distributed
    WorkerPlugin = object

__all__ = ["TeirWorkerPlugin", "calls", "chunk_einsum", "chunk_tensordot", "register"]

_CALLS: Counter[str] = Counter()
_CALLS_LOCK = threading.Lock()
_THREADS: list[int | None] = [1]
_ORDERS = {"K": "C", "A": "C", "C": "C", "F": "F"}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


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
    False or np.einsum_path's path, and the user's casting and order)."""
    if not isinstance(subscripts, str) or "->" not in subscripts or "." in subscripts:
        raise TeirError(f"einsum: chunk subscripts {subscripts!r} are not explicit")
    if order not in _ORDERS:
        raise ValueError(f"einsum: order must be one of K, A, C, F, got {order!r}")
    if casting not in _CASTINGS:
        raise ValueError(f"einsum: casting must be one of {', '.join(_CASTINGS)}, "
                         f"got {casting!r}")
    left, output = subscripts.replace(" ", "").split("->")
    inputs = left.split(",")
    arrays = [np.asarray(op) if isinstance(op, np.generic) else op for op in operands]
    common = einsum_tree._common_dtype(arrays) if arrays else None
    if dtype is not None and np.dtype(dtype) != common:  # pyright: ignore
        raise TypeError(f"einsum: dtype={np.dtype(dtype)} asks to convert {common} "  # pyright: ignore
                        "chunks; TEIR's chunk einsum computes in the chunks' dtype")
    extents = einsum_tree._extents(inputs, output, arrays)
    out = np.empty(tuple(extents[x] for x in output), dtype=common,  # pyright: ignore
                   order=_ORDERS[order])
    result = einsum_tree.contract(inputs, output, arrays, out=out,
                                  path=None if optimize is False else optimize,
                                  threads=_THREADS[0])
    _count("einsum")
    return result


def chunk_tensordot(a: np.ndarray, b: np.ndarray, axes: object = 2) -> np.ndarray:
    """`np.tensordot` on numpy chunks (dask passes axes as a pair of tuples)."""
    result = einsum_tree.tensordot(a, b, axes, threads=_THREADS[0])
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
    _register_here(threads)
    if client is not None:
        client.register_plugin(TeirWorkerPlugin(threads))  # pyright: ignore
