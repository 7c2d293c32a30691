"""numpy's BLAS as a speed comparison's peer sees it.

- `steering_variables`: the environment variables that steer numpy's BLAS, an
  OpenMP runtime or numpy's own SIMD dispatch (OPENBLAS_CORETYPE makes OpenBLAS
  run, say, its Haswell kernels on an AVX-512 CPU; OPENBLAS_L2_SIZE changes its
  blocking), and optionally TEIR's own defaults. A peer runs at its best only
  in a process started without them (teir_tools.environment re-executes one).
- `blas_info`: threadpoolctl's description of numpy's BLAS: library, version,
  the kernel set ("architecture") it picked for this CPU, threads.
- `blas_threads`: a context limiting numpy's BLAS to a thread count.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path

PEER_PREFIXES = ("OPENBLAS_", "GOTO_", "GOTOBLAS", "MKL_", "NVPL_", "BLIS_", "OMP_",
                 "KMP_", "GOMP_", "VECLIB_", "ACCELERATE_", "NUMEXPR_", "ARMPL_")
PEER_NAMES = ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES")
NOT_STEERING = ("KMP_DUPLICATE_LIB_OK",)
"""Names under those prefixes that change no speed: threadpoolctl sets
KMP_DUPLICATE_LIB_OK when it is imported, so a script importing it before
`clean_environment` would otherwise re-execute itself forever."""
TEIR_NAMES = ("TEIR_NUM_THREADS", "TEIR_HOST_CACHE", "TEIR_HOST")
"""TEIR's own defaults: thread count, cache sizes and host description it plans for."""


def steering_variables(environment: Mapping[str, str], teir: bool = True) -> list[str]:
    """The names in `environment` that steer a BLAS, an OpenMP runtime or numpy's SIMD
    dispatch, and with `teir` TEIR's defaults too."""
    names = PEER_NAMES + TEIR_NAMES if teir else PEER_NAMES
    return sorted(name for name in environment
                  if (name.startswith(PEER_PREFIXES) or name in names)
                  and name not in NOT_STEERING)


def blas_info() -> dict[str, str]:
    """threadpoolctl's fields for numpy's BLAS (the first BLAS numpy loaded), with
    `filename` the library's file name; {"internal_api": "none found"} without one."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl looks for)
    from threadpoolctl import threadpool_info

    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            info = {key: str(value) for key, value in pool.items()}
            info["filename"] = Path(pool.get("filepath", "?")).name
            return info
    return {"internal_api": "none found"}


def blas_text(info: Mapping[str, str]) -> str:
    """'openblas 0.3.27 architecture SkylakeX (libscipy_openblas64_.so, pthreads)'."""
    return (f"{info.get('internal_api', '?')} {info.get('version', '?')} "
            f"architecture {info.get('architecture', '?')} "
            f"({info.get('filename', '?')}, {info.get('threading_layer', '?')})")


def blas_threads(threads: int) -> AbstractContextManager:
    """A context limiting numpy's BLAS to `threads` (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")
