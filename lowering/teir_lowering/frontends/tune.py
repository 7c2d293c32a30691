"""The tuner: a beam search over auto-scheduler choices, timed on this host.

Each candidate is a `Knobs` setting of the auto-scheduler (K and M block
sizes of the microkernel calls, how many parallel iterations to aim for,
whether to fuse contiguous loops); its schedule is a script of
transformation steps, so two settings that give the same script are timed
once. Candidates are compiled, checked against the auto-scheduler's kernel
(itself checked against the reference once) and timed; the best `beam`
settings are expanded by changing one knob to a neighbouring value, until
the time budget is spent or nothing new is left. The best script is stored
in the per-user schedule cache (teir_passes.schedule_cache), where
`compile_kernel` finds it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from teir_dialect.context import teir_context
from teir_dialect.dialect import ConfigOp
from teir_dialect.interpreter import run_reference
from teir_dialect.records import TeirError, find_configs, load_module
from teir_lowering.measure.timing import median_time
from teir_lowering.runtime.kernel import (
    Kernel,
    check_threads,
    compile_kernel,
    default_threads,
)
from teir_passes import schedule_cache
from teir_passes.auto_schedule import Knobs, auto_schedule
from teir_passes.pipeline import default_passes

CHOICES: dict[str, tuple[object, ...]] = {
    "k_block": (None, 64, 128, 256, 512, 1024, 2048),
    "m_block": (None, 16, 32, 64, 128, 256, 512),
    "parallel_iterations": (None, 1, 2, 4, 8, 16, 32, 64),
    "fuse": (True, False),
}
"""The values each knob takes; a neighbour changes one knob by one step."""

REFERENCE_LIMIT = 2e7
"""Element operations above which the reference interpreter is skipped in the check."""


@dataclass
class Candidate:
    knobs: Knobs
    script: list[dict]
    seconds: float = float("inf")


def neighbours(knobs: Knobs) -> list[Knobs]:
    result: list[Knobs] = []
    for name, values in CHOICES.items():
        position = values.index(getattr(knobs, name))
        for step in (-1, 1):
            if 0 <= position + step < len(values):
                result.append(dataclasses.replace(knobs, **{name: values[position + step]}))
    return result


def _scheduled(module: ModuleOp, threads: int, knobs: Knobs) -> tuple[ModuleOp, list[dict]]:
    """A copy of `module` scheduled with `knobs`, and the script that did it."""
    copy = module.clone()
    ctx = teir_context()
    (config,) = find_configs(copy)
    script = auto_schedule(config, ctx, threads, knobs=knobs)
    for after_scheduling in default_passes()[1:]:
        after_scheduling.apply(ctx, copy)
    return copy, script


def _inputs(kernel: Kernel, rng: np.random.Generator) -> list[np.ndarray]:
    arrays = []
    for spec in kernel.tensors:
        count = max(1, -(-spec.needed_bytes // spec.dtype.itemsize))
        arrays.append(rng.standard_normal(count).astype(spec.dtype))
    return arrays


TOLERANCE = {"FP64": 1e-10, "FP32": 1e-4, "TF32": 1e-2, "FP16": 1e-2, "BF16": 1e-2}
"""How far a candidate schedule's result may lie from the auto-scheduler's (both
relative and absolute, on standard normal inputs), by data type."""


def tune(source: object, *, threads: int | None = None, budget: float = 60.0,
         beam: int = 3, label: str = "",
         progress: Callable[[float, float, int], None] | None = None) -> schedule_cache.Entry:
    """Searches schedules for `source` (a record, JSON text, path or module) and
    stores the best; `progress(elapsed, best_seconds, candidates)` is called after
    each candidate."""
    threads = default_threads() if threads is None else check_threads(threads)
    if not (isinstance(budget, int | float) and math.isfinite(budget) and budget > 0):
        raise ValueError(f"teir-tune: the budget is a positive number of seconds, got "
                         f"{budget!r}")
    module = load_module(source)
    configs = find_configs(module)
    if len(configs) != 1:
        raise TeirError(f"teir-tune tunes one teir.config, found {len(configs)}")
    primitives = configs[0].primitives
    data_type = primitives[0].data_type.value if primitives else "?"
    # a candidate sums in another order than the auto-scheduler's kernel: equal
    # within the type's rounding, never more (FP64 was held to FP32's 1e-4)
    tolerance = TOLERANCE.get(data_type, 1e-4)
    function = configs[0].parent_op()
    ir = str(function)
    start = time.perf_counter()
    baseline_module, baseline_script = _scheduled(module, threads, Knobs())
    baseline = compile_kernel(baseline_module, optimize=False, threads=threads)
    arrays = _inputs(baseline, np.random.default_rng(0))
    expected = [a.copy() for a in arrays]
    baseline(*expected)
    _check_against_reference(configs[0], arrays, expected[-1])

    def measure(kernel: Kernel) -> float:
        out = [a.copy() for a in arrays]
        kernel(*out)
        if not np.allclose(out[-1], expected[-1], rtol=tolerance, atol=tolerance,
                           equal_nan=True):
            return float("inf")  # never keep a schedule that computes something else
        return median_time(lambda: kernel(*out), 5, budget=0.5)

    best = Candidate(Knobs(), baseline_script, measure(baseline))
    baseline_seconds = best.seconds
    seen = {json.dumps(baseline_script): best}
    tried = {Knobs()}  # knobs scheduled already: a neighbour of several parents
    frontier = [best]
    evaluated = 1
    while time.perf_counter() - start < budget:
        fresh: list[Candidate] = []
        for parent in frontier:
            for knobs in neighbours(parent.knobs):
                if time.perf_counter() - start >= budget:
                    break
                if knobs in tried:
                    continue
                tried.add(knobs)
                scheduled, script = _scheduled(module, threads, knobs)
                if json.dumps(script) in seen:
                    continue
                candidate = Candidate(knobs, script)
                seen[json.dumps(script)] = candidate
                candidate.seconds = measure(
                    compile_kernel(scheduled, optimize=False, threads=threads)
                )
                evaluated += 1
                fresh.append(candidate)
                if candidate.seconds < best.seconds:
                    best = candidate
                if progress is not None:
                    progress(time.perf_counter() - start, best.seconds, evaluated)
        if not fresh:
            break
        frontier = sorted([*frontier, *fresh], key=lambda c: c.seconds)[:beam]
    return schedule_cache.store(ir, threads, best.script, best.seconds, baseline_seconds,
                                label or "configuration", data_type)


def _check_against_reference(config: ConfigOp, arrays: list[np.ndarray],
                             got: np.ndarray) -> None:
    """The auto-scheduler's kernel agrees with the reference interpreter (small cases)."""
    from teir_dialect.analysis import work

    flops, moved = work(config)
    if flops / 2 + moved / 4 > REFERENCE_LIMIT:
        return
    expected = [a.copy() for a in arrays]
    run_reference(config, expected)
    if not np.allclose(got, expected[-1], rtol=1e-4, atol=1e-4, equal_nan=True):
        raise TeirError("teir-tune: the auto-scheduled kernel disagrees with the reference")
