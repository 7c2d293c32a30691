"""Timing shared by `teir-run --bench` and benchmarks/run.py."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_time(
    function: Callable[[], object],
    repeat: int,
    budget: float = 2.0,
    *,
    batch_seconds: float = 0.01,
    max_batch: int = 1000,
) -> float:
    """Median seconds per call over `repeat` timed batches, after a warm-up call.

    Calls shorter than `batch_seconds` are batched (at most `max_batch` a batch)
    so that timer resolution does not matter; stops early once `budget`
    seconds have passed and at least 3 batches are in.
    """
    start = time.perf_counter()
    function()  # warm-up: page faults, caches, libgomp/BLAS thread start
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, min(max_batch, int(batch_seconds / once)))
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            function()
        samples.append((time.perf_counter() - start) / inner)
        if len(samples) >= 3 and time.perf_counter() > deadline:
            break
    return float(np.median(samples))
