"""Shared fixtures (the spec examples shipped in examples/spec) and the two test tiers.

The default tier is what `.ci/run` runs, under five minutes on two cores;
`--slow` (`./run-tests --slow`) adds the exhaustive sweeps: tests marked
`slow` (deselected otherwise) and the full example counts of the
property-based tests, which the default tier runs at a quarter (`examples`).
"""

from __future__ import annotations

import json
from pathlib import Path

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


def examples(full: int) -> int:
    """Hypothesis examples for a property test: `full` in the slow tier, a quarter
    (at least 10) in the default one."""
    return full if SLOW else max(10, full // 4)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def brgemm_record() -> dict:
    """§10.7.7, the parallel BRGEMM contraction, as a tree-form record."""
    return load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
