"""The one timing loop of TEIR: the tuner, `teir-run --bench` and every benchmark."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_time(
    function: Callable[[], object],
    repeat: int,
    budget: float = 2.0,
    *,
    batch_seconds: float = 0.005,
    max_batch: int = 10_000,
) -> float:
    """Median seconds per call over `repeat` timed batches, after a warm-up call.

    Calls shorter than `batch_seconds` are batched (at most `max_batch` a batch)
    so that the timer's resolution and the loop's cost do not matter; a median
    of batches, not a minimum, because a kernel's typical call is what a user
    gets. Stops early once `budget` seconds have passed and at least 3 batches
    are in, so that slow calls do not make a run take minutes.
    """
    function()  # warm-up: page faults, caches, libgomp/BLAS thread start
    # The batch size is what fits in batch_seconds after the warm-up: one call
    # timed alone can be slow (a thread's start, a wake-up on a busy machine) and
    # would leave every batch one call long.
    inner = 0
    start = time.perf_counter()
    while inner < max_batch and time.perf_counter() - start < batch_seconds:
        function()
        inner += 1
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
