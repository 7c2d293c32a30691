"""Shared fixtures (the spec examples shipped in examples/spec) and the two test tiers.

The default tier is what `.ci/run` runs, under five minutes on two cores;
`--slow` (`./run-tests --slow`) adds the exhaustive sweeps: tests marked
`slow` (deselected otherwise) and the full example counts of the
property-based tests, which the default tier runs at a quarter (`examples`).
"""

from __future__ import annotations

import json
import os
import tempfile
from itertools import combinations, product
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_EXAMPLES = ROOT / "examples" / "spec"
TREE_EXAMPLES = sorted((SPEC_EXAMPLES / "tree").glob("*.json"))
FLAT_EXAMPLES = sorted((SPEC_EXAMPLES / "flat").glob("*.json"))


SLOW = False
"""Whether this run is the slow tier (set from --slow before test modules load)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the exhaustive sweeps (tests marked slow, full example counts)")


def pytest_configure(config: pytest.Config) -> None:
    # Tuned schedules and compiled kernels of this run only: a test compiles, it
    # never loads what the user's cache (or an earlier run) holds.
    os.environ["TEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="teir-test-cache-")
    global SLOW
    SLOW = bool(config.getoption("--slow"))
    config.addinivalue_line("markers", "slow: an exhaustive sweep, run with --slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SLOW:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def examples(full: int, default: int | None = None) -> int:
    """Hypothesis examples for a property test: `full` in the slow tier; in the
    default one `default`, or a quarter (at least 10) when not given."""
    if SLOW:
        return full
    return default if default is not None else max(10, full // 4)


def pairwise(**axes: list[Any]) -> list[Any]:
    """Every combination of the values in `axes` (keyword order = argument order),
    as `pytest.param`s: the default tier runs a subset in which every pair of
    values of two arguments occurs (picked greedily, most new pairs first), the
    slow tier the rest. For a product of independent parameters, where a fault
    that needs three of them at once is not more likely than one that needs two."""
    cases = list(product(*axes.values()))

    def pairs(case: tuple) -> set[tuple]:  # of one argument's values when it is alone
        return {tuple(x for i in chosen for x in (i, case[i]))
                for chosen in combinations(range(len(case)), min(2, len(case)))}

    uncovered = set().union(*map(pairs, cases))
    chosen: set[tuple] = set()
    while uncovered:
        best = max(cases, key=lambda case: len(pairs(case) & uncovered))
        chosen.add(best)
        uncovered -= pairs(best)
    return [pytest.param(*case, id="-".join(map(str, case)),
                         marks=() if case in chosen else pytest.mark.slow)
            for case in cases]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def brgemm_record() -> dict:
    """§10.7.7, the parallel BRGEMM contraction, as a tree-form record."""
    return load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
