"""TEIR's timing loops: `median_time` for one implementation (the tuner, the
benchmarks' single series), `interleaved` for comparisons (`teir-run --bench`
and every benchmark against numpy)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

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


SETTLE_SECONDS = 0.25
"""Idle time before each multi-threaded sample of `interleaved`, so that no thread
pool of the implementation timed before still spins on a core (OpenBLAS's workers
took a 2-thread kernel to half its speed until 0.25 s after a large call)."""


CALIBRATION_CALLS = 3
"""Calls timed to size an implementation's batch (the fastest counts): one slow
call (a thread pool's wake-up, a page fault) sized a 2-thread kernel's batches
at two calls, so its samples timed mostly the first call after the settle."""


def interleaved(
    functions: Mapping[str, Callable[[], object]],
    rounds: int,
    budget: float = 2.0,
    batch_seconds: float = 0.01,
    max_batch: int = 10_000,
    settle: float = 0.0,
    once: Mapping[str, float] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds per call of each function, one sample per round.

    Every round times each function once (a batch of calls lasting about
    `batch_seconds`), in a rotated order, so that whatever the host gives this
    process (other jobs, frequency) drifts over all of them alike; compare them
    with `median_ratio` of the rounds, not with ratios of medians.

    Each function is warmed up and gets its batch size from the fastest of
    CALIBRATION_CALLS more calls, or from `once` (seconds of a call the caller
    timed after a warm-up). Rounds stop early once `budget` seconds have passed
    and at least three rounds are in. `settle` seconds are slept before each
    sample: multi-threaded runs need it, as a thread pool keeps spinning for a
    while after its call (OpenBLAS's workers for about 2^28 cycles, libgomp's
    for its spin count), which takes a core from whatever runs next in the round
    (a 2-thread kernel ran at 0.45x of its speed right after np.matmul).

    `clock` reads each sample's time, as in `median_time`: `time.thread_time`
    leaves out what other processes take from calls that run on the calling
    thread only (one-thread kernels and BLAS on a loaded machine).
    """
    names = list(functions)
    batches: dict[str, int] = {}
    for name in names:
        if once is not None and name in once:
            seconds = once[name]
        else:
            functions[name]()  # warm-up: page faults, caches, thread start
            seconds = float("inf")
            for _ in range(CALIBRATION_CALLS):
                start = time.perf_counter()
                functions[name]()
                seconds = min(seconds, time.perf_counter() - start)
        batches[name] = max(1, min(max_batch, int(batch_seconds / max(seconds, 1e-7))))
    samples: dict[str, list[float]] = {name: [] for name in names}
    deadline = time.perf_counter() + budget + settle * len(names) * rounds
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            function, count = functions[name], batches[name]
            if settle:
                time.sleep(settle)
            start = clock()
            for _ in range(count):
                function()
            samples[name].append((clock() - start) / count)
        if round_number >= 2 and time.perf_counter() > deadline:
            break
    return samples


def median_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The median over rounds of numerator / denominator (two `interleaved` series)."""
    return float(np.median([a / b for a, b in zip(numerator, denominator, strict=True)]))
