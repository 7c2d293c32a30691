"""Shared fixtures: the spec examples shipped in examples/spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_EXAMPLES = ROOT / "examples" / "spec"
TREE_EXAMPLES = sorted((SPEC_EXAMPLES / "tree").glob("*.json"))
FLAT_EXAMPLES = sorted((SPEC_EXAMPLES / "flat").glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def brgemm_record() -> dict:
    """§10.7.7, the parallel BRGEMM contraction, as a tree-form record."""
    return load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
