"""Shared fixtures (the spec examples shipped in examples/spec) and the two test tiers.

The default tier is what `.ci/run` runs, under five minutes on two cores;
`--slow` (`./run-tests --slow`) adds the exhaustive sweeps: tests marked
`slow` (deselected otherwise), the full example counts of the
property-based tests, which the default tier runs at a quarter (`examples`),
and the second vector width of the tests run at both (`alternate_widths`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
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


def _bf16_pairs_run() -> bool:
    from teir_dialect.host import host, native_host

    return all("avx512bf16" in h.features for h in (native_host(), host()))


BF16_PAIRS = pytest.mark.skipif(
    not _bf16_pairs_run(),
    reason="vdpbf16ps needs AVX512-BF16 on this CPU and in the host description "
           "(TEIR_HOST) decisions follow; the IR is checked on every host: "
           "teir-to-scf-bf16-pairs.mlir")
"""For tests that run `bf16_products="pairs"` kernels."""


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
    alternate_widths(items)
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


WIDTH_FIXTURE = "vector_bytes"
"""The fixture that emits a test's kernels for 64-byte and for 32-byte vectors."""


def alternate_widths(items: list[pytest.Item]) -> None:
    """Mark slow half of the runs of a test that takes `WIDTH_FIXTURE` and other
    parameters: its cases, in order, alternate between the two widths, so the
    default tier runs every case and both widths once each (the emitters for the
    two widths share their case analysis; the slow tier runs every pair)."""
    cases: dict[object, dict[tuple, int]] = defaultdict(dict)
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is None or WIDTH_FIXTURE not in spec.indices or len(spec.indices) < 2:
            continue
        case = tuple(sorted((k, v) for k, v in spec.indices.items() if k != WIDTH_FIXTURE))
        function = (item.path, item.originalname)  # type: ignore[attr-defined]
        order = cases[function].setdefault(case, len(cases[function]))
        if order % 2 != spec.indices[WIDTH_FIXTURE]:
            item.add_marker(pytest.mark.slow)


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


def rotate(cases: list[tuple], values: list[Any]) -> list[Any]:
    """Every case (a tuple of arguments) with each of `values` as its last argument,
    as `pytest.param`s: the default tier runs case i with value i, both taken round
    until every case and every value has run (a data type over a list of shapes:
    the shapes exercise the planner, the type its emitters), the slow tier the rest."""
    chosen = {(i % len(cases), i % len(values)) for i in range(max(len(cases), len(values)))}
    return [pytest.param(*case, value,
                         marks=() if (c, v) in chosen else pytest.mark.slow)
            for c, case in enumerate(cases) for v, value in enumerate(values)]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def brgemm_record() -> dict:
    """§10.7.7, the parallel BRGEMM contraction, as a tree-form record."""
    return load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
