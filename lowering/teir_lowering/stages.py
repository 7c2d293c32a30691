"""Per-stage compile times, for `benchmarks/compile_time.py`.

The compile path (teir_lowering.runtime.kernel, .llvm.pipeline, .jit) wraps each of its
stages in `stage(name, module)`. Nothing is measured unless a `StageLog` is
active (`with StageLog() as log:`); then each stage appends its wall time,
CPU time and, when given a module, the number of ops it left.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Self

from xdsl.ir import Operation

_ACTIVE: ContextVar[StageLog | None] = ContextVar("teir_stage_log", default=None)


@dataclass
class Stage:
    name: str
    wall: float
    cpu: float
    ops: int | None


@dataclass
class StageLog:
    """The stages run while the log is active, in order (repeated per kernel)."""

    stages: list[Stage] = field(default_factory=list)

    def __enter__(self) -> Self:
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *_: object) -> None:
        _ACTIVE.reset(self._token)

    def totals(self) -> dict[str, Stage]:
        """Per stage name: wall and CPU time summed, the most ops seen."""
        result: dict[str, Stage] = {}
        for s in self.stages:
            if (t := result.get(s.name)) is None:
                result[s.name] = Stage(s.name, s.wall, s.cpu, s.ops)
            else:
                t.wall += s.wall
                t.cpu += s.cpu
                if s.ops is not None:
                    t.ops = max(t.ops or 0, s.ops)
        return result


def active() -> bool:
    return _ACTIVE.get() is not None


@contextmanager
def stage(name: str, module: Operation | None = None) -> Iterator[None]:
    """Times the body as stage `name` when a log is active (else costs one lookup)."""
    log = _ACTIVE.get()
    if log is None:
        yield
        return
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ops = None if module is None else sum(1 for _ in module.walk())
    log.stages.append(Stage(name, wall, cpu, ops))
