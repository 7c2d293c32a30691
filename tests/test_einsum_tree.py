"""Einsum trees (teir_lowering.frontends.einsum_tree) against np.einsum: generated
expressions of 3 to 6 operands, opt_einsum's paths, the layouts, the buffer
reuse and the plan cache; tensordot against np.tensordot.

Every step compiles TEIR kernels (the test run's kernel cache starts empty),
so the default tier generates few expressions of small extents; the
deterministic cases share one expression so that their kernels are compiled
once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from teir_dialect import TeirError
from teir_lowering import tensordot
from teir_lowering.frontends import einsum_tree
from teir_lowering.frontends.einsum_tree import _step_cost, contract, plan_for

RNG = np.random.default_rng(11)
CHAIN = (["ij", "jk", "kl", "lm", "mn"], "in")
CHAIN_EXTENTS = {"i": 5, "j": 4, "k": 6, "l": 3, "m": 7, "n": 2}


def _operands(inputs, extents, dtype=np.float64):
    return [RNG.standard_normal([extents[x] for x in term]).astype(dtype) for term in inputs]


def _expected(inputs, output, operands):
    return np.einsum(",".join(inputs) + "->" + output,
                     *(op.astype(np.float64) for op in operands))


def _view(array: np.ndarray, kind: str) -> np.ndarray:
    """`array`'s values in a layout of `kind`: C-contiguous, transposed (the
    strides of a transposed copy) or strided (every other element of a larger
    array along the first axis)."""
    if array.ndim == 0:
        return array
    if kind == "transposed":
        return np.ascontiguousarray(array.T).T
    if kind == "strided":
        wider = np.zeros((2 * array.shape[0], *array.shape[1:]), array.dtype)
        wider[::2] = array
        return wider[::2]
    return array


@st.composite
def expressions(draw):
    """3 to 6 terms over letters a-f, each letter at most once per term, extents
    1 to 4, an output of some of the letters in any order."""
    letters = "abcdef"
    count = draw(st.integers(3, 6))
    inputs = ["".join(draw(st.permutations(letters))[:draw(st.integers(0, 3))])
              for _ in range(count)]
    used = sorted(set("".join(inputs)))
    output = "".join(draw(st.permutations(used))[:draw(st.integers(0, min(3, len(used))))])
    extents = {x: draw(st.integers(1, 4)) for x in used}
    return inputs, output, extents


@settings(max_examples=examples(40, 3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(expression=expressions(), dtype=st.sampled_from([np.float32, np.float64]),
       path=st.sampled_from([None, "greedy", "optimal"]),
       views=st.lists(st.sampled_from(["c", "transposed", "strided"]), min_size=6,
                      max_size=6))
def test_tree_matches_numpy(expression, dtype, path, views):
    inputs, output, extents = expression
    operands = [_view(op, kind)
                for op, kind in zip(_operands(inputs, extents, dtype), views)]
    result = contract(inputs, output, operands, path=path, threads=1)
    assert result.shape == tuple(extents[x] for x in output)
    assert result.dtype == dtype
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(result, _expected(inputs, output, operands),
                               rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("path", [
    "greedy", "optimal", True, None,
    ["einsum_path", (0, 1), (0, 1), (0, 1), (0, 1)],   # as np.einsum_path returns it
    [(3, 4), (2, 3), (1, 2), (0, 1)],                    # right to left
    [(0, 1, 2, 3, 4)],                                   # one step of all: left to right
])
def test_paths(path):
    inputs, output = CHAIN
    operands = _operands(inputs, CHAIN_EXTENTS)
    result = contract(inputs, output, operands, path=path)
    np.testing.assert_allclose(result, _expected(inputs, output, operands), rtol=1e-10)
    plan = plan_for(inputs, output, operands, path=path)
    if isinstance(path, list):
        assert plan.path == [tuple(p) for p in path if not isinstance(p, str)]
    assert sum(len(step.subscripts.split("->")[0].split(",")) == 2
               for step in plan.steps) == len(plan.steps) == 4


def test_explicit_path_from_numpy_is_followed():
    inputs, output = CHAIN
    operands = _operands(inputs, CHAIN_EXTENTS)
    path, _ = np.einsum_path(",".join(inputs) + "->" + output, *operands,
                             optimize="optimal")
    plan = plan_for(inputs, output, operands, path=path)
    assert plan.path == path[1:]


def test_buffers_are_reused_and_pooled(monkeypatch):
    """The chain's three intermediates need two slots (the third reuses the
    first), and a second call allocates nothing."""
    allocations: list[int] = []
    allocate = einsum_tree._allocate
    monkeypatch.setattr(einsum_tree, "_allocate",
                        lambda n: allocations.append(n) or allocate(n))
    inputs, output = CHAIN
    operands = _operands(inputs, CHAIN_EXTENTS)
    path = [(0, 1), (0, 3), (0, 2), (0, 1)]  # always one intermediate and one input
    out = np.empty((5, 2))
    contract(inputs, output, operands, path=path, out=out)
    plan = plan_for(inputs, output, operands, path=path)
    slots = [step.output[1] for step in plan.steps if step.output[0] == "slot"]
    assert len(slots) == 3 and len(set(slots)) == 2
    assert len(allocations) == 2
    contract(inputs, output, operands, path=path, out=out)
    assert len(allocations) == 2
    np.testing.assert_allclose(out, _expected(inputs, output, operands), rtol=1e-10)


def test_plan_is_cached_per_layout(monkeypatch):
    made: list[str] = []
    make = einsum_tree._make_plan
    monkeypatch.setattr(einsum_tree, "_make_plan",
                        lambda *args: made.append(args[1]) or make(*args))
    inputs, output = ["ij", "jk", "kl"], "il"
    operands = _operands(inputs, {"i": 3, "j": 4, "k": 5, "l": 6})
    first = contract(inputs, output, operands, path="greedy")
    second = contract(inputs, output, operands, path="greedy")
    assert made == ["il"]
    np.testing.assert_array_equal(first, second)
    # Another layout (a transposed view) is another plan.
    viewed = [operands[0], np.ascontiguousarray(operands[1].T).T, operands[2]]
    np.testing.assert_allclose(contract(inputs, output, viewed, path="greedy"), first,
                               rtol=1e-12)
    assert made == ["il", "il"]


def test_a_plan_runs_its_steps_kernels_again(monkeypatch):
    """A plan's steps look their kernels up on the first call into an out of
    some layout (per bf16_products mode too) and run them directly on later
    calls: new values, a new workspace, the same answer as numpy."""
    import ml_dtypes

    from teir_lowering.frontends import einsum_frontend

    monkeypatch.setattr(einsum_tree, "_PLANS", {})  # plans of this test's own
    looked_up: list[str] = []
    lookup = einsum_frontend.kernel_plan
    monkeypatch.setattr(einsum_frontend, "kernel_plan",
                        lambda *args: looked_up.append(args[0]) or lookup(*args))
    inputs, output = CHAIN
    path = [(0, 1), (0, 3), (0, 2), (0, 1)]
    operands = _operands(inputs, CHAIN_EXTENTS)
    contract(inputs, output, operands, path=path)
    assert len(looked_up) == 4
    for _ in range(2):
        operands = _operands(inputs, CHAIN_EXTENTS)
        plan = plan_for(inputs, output, operands, path=path)
        plan._free.clear()  # a fresh workspace
        np.testing.assert_allclose(contract(inputs, output, operands, path=path),
                                   _expected(inputs, output, operands), rtol=1e-10)
    assert len(looked_up) == 4
    # Another out layout: its own kernels (the last step writes out).
    for out in (np.empty((2, 5)).T, np.empty((5, 4))[:, ::2]):
        contract(inputs, output, operands, path=path, out=out)
        np.testing.assert_allclose(out, _expected(inputs, output, operands), rtol=1e-10)
    assert len(looked_up) == 12
    # Plans made under another bf16_products mode are apart.
    halves = [op.astype(ml_dtypes.bfloat16) for op in operands]
    contract(inputs, output, halves, path=path)
    with einsum_frontend.bf16_products("sequential"):
        contract(inputs, output, halves, path=path)
    assert len(looked_up) == 20


@pytest.mark.parametrize("inputs, output, extents", [
    (["ai", "bj", "ck", "ijk"], "abc", {"a": 9, "b": 8, "c": 7, "i": 4, "j": 5, "k": 6}),
    (["ij", "jk", "kl", "lm"], "im", {"i": 9, "j": 8, "k": 7, "l": 6, "m": 5}),
    (["bij", "bjk", "bkl"], "bil", {"b": 3, "i": 9, "j": 8, "k": 7, "l": 6}),
    # Alphabetical orders for the intermediates would need transposes here:
    (["bc", "cga", "fab", "cd"], "dgf", {"a": 8, "b": 6, "c": 6, "d": 7, "f": 9, "g": 6}),
    (["aed", "dcf", "gad", "af"], "egc", {"a": 7, "c": 9, "d": 5, "e": 6, "f": 9, "g": 9}),
])
def test_intermediates_need_no_transpose(inputs, output, extents):
    """Each intermediate's index order lets both the step that makes it and the
    one that reads it run as a GEMM in place (einsum_ir's layouts), where the
    inputs' and the output's orders allow it."""
    operands = [np.empty([extents[x] for x in term]) for term in inputs]
    plan = plan_for(inputs, output, operands, path="optimal")
    for step in plan.steps:
        terms, made = step.subscripts.split("->")
        a, b = terms.split(",")
        assert _step_cost(a, b, made, extents) == 0, plan.describe()


def test_cost_model_sees_transposes():
    extents = dict.fromkeys("ijk", 4)
    assert _step_cost("ij", "jk", "ik", extents) == 0
    assert _step_cost("ji", "jk", "ki", extents) == 0
    assert _step_cost("ij", "kj", "ik", extents) == 0
    assert _step_cost("ibj", "jk", "ik", extents | {"b": 2}) > 0


def test_single_index_sums_and_scalars():
    inputs, output = ["ijs", "jk", "", "kt"], "i"
    operands = _operands(inputs, {"i": 3, "j": 4, "k": 5, "s": 2, "t": 3})
    operands[2] = np.array(1.5)
    np.testing.assert_allclose(contract(inputs, output, operands),
                               _expected(inputs, output, operands), rtol=1e-12)


def test_zero_extent_sums_to_zero():
    operands = [np.ones((3, 0)), np.ones((0, 4)), np.ones((4, 2))]
    result = contract(["ij", "jk", "kl"], "il", operands)
    np.testing.assert_array_equal(result, np.zeros((3, 2)))


@pytest.mark.parametrize("operands, error, match", [
    ([np.ones((2, 2), np.float32), np.ones((2, 2)), np.ones((2, 2))], TypeError, "dtypes"),
    ([np.ones((2, 2), int)] * 3, TypeError, "int64"),
    ([np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 2))], TeirError, "extent"),
])
def test_bad_operands_raise(operands, error, match):
    with pytest.raises(error, match=match):
        contract(["ij", "jk", "kl"], "il", operands)


@pytest.mark.parametrize("path, match", [
    ([(0, 1)], "leaves 2 operands"),
    ([(0, 5), (0, 1)], "does not name distinct operands"),
    ("sideways", "path 'sideways'"),
])
def test_bad_paths_raise(path, match):
    operands = [np.ones((2, 2))] * 3
    with pytest.raises(TeirError, match=match):
        contract(["ij", "jk", "kl"], "il", operands, path=path)


@pytest.mark.parametrize("a_shape, b_shape, axes", [
    ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4, 5), (4, 3, 2), ([1, 0], [0, 1])),
    ((3, 4), (5, 2), 0),
    ((3, 4, 5), (5, 4), (-1, 0)),
    ((3, 4), (3, 4), 2),
])
def test_tensordot_matches_numpy(a_shape, b_shape, axes):
    a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
    got, want = tensordot(a, b, axes), np.tensordot(a, b, axes)
    assert type(got) is type(want) and got.shape == want.shape  # 0-d: an array too
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_tensordot_shape_mismatch_raises():
    with pytest.raises(ValueError, match="shape-mismatch"):
        tensordot(np.ones((3, 4)), np.ones((5, 2)), 1)
