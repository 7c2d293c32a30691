"""`teir_lowering.dask`: TEIR kernels as dask.array's per-chunk einsum and
tensordot (the public name of `teir_lowering.frontends.dask`, where the code
and its documentation are).

    import teir_lowering.dask
    teir_lowering.dask.register(client)      # client: a distributed.Client, or None
"""

from teir_lowering.frontends.dask import (
    TeirWorkerPlugin,
    calls,
    chunk_einsum,
    chunk_tensordot,
    register,
)

__all__ = ["TeirWorkerPlugin", "calls", "chunk_einsum", "chunk_tensordot", "register"]
