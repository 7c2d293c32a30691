"""A process whose numpy peers run at their best: re-executed without the
environment variables that steer numpy's BLAS (teir_lowering.measure.blas).

A BLAS reads them once, when numpy loads it, so they cannot be cleared in the
running process: `clean_environment` re-executes the same command line without
them (once) and the new process learns from CLEAN_MARK which names its parent
removed, so that the output can name them.
"""

from __future__ import annotations

import os
import sys

from teir_lowering.measure.blas import steering_variables

CLEAN_MARK = "TEIR_BENCH_CLEANED"
"""Set, in the re-executed process, to the names its parent removed (comma-separated)."""


def clean_environment(teir: bool = True) -> list[str]:
    """The steering variables removed from this process's environment (`teir`: TEIR's
    defaults too), re-executing the command line without them first when some are
    set. The re-executed process runs the same `sys.orig_argv` (the console script
    or `python -m ...`), so call this before any output or work worth keeping."""
    removed = steering_variables(os.environ, teir)
    if not removed:
        recorded = os.environ.pop(CLEAN_MARK, "")
        return recorded.split(",") if recorded else []
    environment = {k: v for k, v in os.environ.items() if k not in removed}
    environment[CLEAN_MARK] = ",".join(removed)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)
    raise AssertionError("unreachable")
