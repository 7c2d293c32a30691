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
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Median seconds per call over `repeat` timed batches, after a warm-up call.

    Calls shorter than `batch_seconds` are batched (at most `max_batch` a batch)
    so that the timer's resolution and the loop's cost do not matter; a median
    of batches, not a minimum, because a kernel's typical call is what a user
    gets. Stops early once `budget` seconds have passed and at least 3 batches
    are in, so that slow calls do not make a run take minutes.

    `clock` reads the time of each batch: wall time by default; `time.thread_time`
    (the calling thread's CPU time) does not count the time other processes of a
    loaded machine take from it, for calls that run on the calling thread only.
    """
    function()  # warm-up: page faults, caches, libgomp/BLAS thread start
    # The batch size is what fits in batch_seconds after the warm-up: one call
    # timed alone can be slow (a thread's start, a wake-up on a busy machine) and
    # would leave every batch one call long.
    inner = 0
    start = clock()
    while inner < max_batch and clock() - start < batch_seconds:
        function()
        inner += 1
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    for _ in range(repeat):
        start = clock()
        for _ in range(inner):
            function()
        samples.append((clock() - start) / inner)
        if len(samples) >= 3 and time.perf_counter() > deadline:
            break
    return float(np.median(samples))
