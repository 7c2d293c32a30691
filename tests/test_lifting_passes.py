"""teir-drop-unit-iterations and teir-lift-brgemm preserve results and are idempotent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.passes import ModulePass

from conftest import FLAT_EXAMPLES, SPEC_EXAMPLES, TREE_EXAMPLES
from strategies import configs, random_arrays
from teir_dialect import from_json, teir_context, to_json
from teir_dialect.interpreter import run_reference
from teir_lowering.kernel import compile_kernel
from teir_passes.drop_unit_iterations import DropUnitIterationsPass
from teir_passes.lift_brgemm import LiftBrgemmPass

PASSES = [DropUnitIterationsPass(), LiftBrgemmPass()]


def _apply(pass_: ModulePass, source: object):  # noqa: ANN202
    module = from_json(source)
    pass_.apply(teir_context(), module)
    module.verify()
    return module


def _same_results(before: object, after: object, record: object) -> None:
    rng = np.random.default_rng(0)
    inputs = random_arrays(to_json(from_json(record)), rng, fill=3.0)
    expected = [a.copy() for a in inputs]
    run_reference(before, expected)
    got = [a.copy() for a in inputs]
    run_reference(after, got)
    compiled = [a.copy() for a in inputs]
    compile_kernel(after)(*compiled)
    for e, g, c in zip(expected, got, compiled):
        if e.dtype == np.float64:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pass_", PASSES, ids=lambda p: p.name)
@pytest.mark.parametrize("path", TREE_EXAMPLES + FLAT_EXAMPLES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_spec_examples_keep_their_results(pass_: ModulePass, path: Path) -> None:
    after = _apply(pass_, path)
    _same_results(from_json(path), after, path)
    again = after.clone()
    pass_.apply(teir_context(), again)
    assert str(again) == str(after)


def test_lift_brgemm_turns_10_7_6_into_10_7_7() -> None:
    lifted = to_json(_apply(LiftBrgemmPass(), SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json"))
    target = to_json(from_json(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"))
    assert lifted["primitives"] == target["primitives"]
    assert lifted["axes"] == target["axes"]
    assert [i["id"] for i in lifted["schedule"]["iterations"]] == ["p", "r"]
    assert [i["primitive"] for i in lifted["schedule"]["invocations"]] == ["zero_sq", "brgemm_sqtu"]


@pytest.mark.parametrize("pass_", PASSES, ids=lambda p: p.name)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=configs())
def test_fuzzed_configurations_keep_their_results(pass_: ModulePass, generated) -> None:  # noqa: ANN001
    after = _apply(pass_, generated.record)
    _same_results(generated.record, after, generated.record)
