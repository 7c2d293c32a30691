"""teir_lowering.einsum against np.einsum: numpy's signature and semantics.

Generated expressions (one or two operands, ellipses, size-1 broadcasting,
repeated indices, sums, scalars, views that are transposed, sliced or walk
backwards, float16/32/64 mixed) against np.einsum on float64 copies, within
the rounding of the result's type; opt_einsum's own test expressions; and one
test per refusal (the exception numpy raises, with a message saying why).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opt_einsum.testing import build_views
from opt_einsum.tests.test_contract import tests as OPT_EINSUM_TESTS

from conftest import examples
from teir_dialect import TeirError
from teir_dialect.arrays import ALIGNED_MIN_BYTES, result_array
from teir_lowering import einsum

RNG = np.random.default_rng(22)


def _close(got: object, operands: list, subscripts: object, *, out_dtype=None) -> None:
    """`got` has np.einsum's shape and dtype and its value within the rounding of
    that dtype: |got - exact| <= eps * (terms + 2) * sum of |products|."""
    wide = [np.asarray(op, dtype=np.float64) for op in operands]
    exact = np.einsum(subscripts, *wide)
    bound = np.einsum(subscripts, *[np.abs(w) for w in wide])
    got = np.asarray(got)
    assert got.shape == np.shape(exact)
    if out_dtype is None:  # numpy's einsum has no bfloat16 products: given then
        out_dtype = np.asarray(np.einsum(subscripts, *operands)).dtype
    assert got.dtype == out_dtype
    eps = np.finfo(np.float16 if got.dtype == ml_dtypes.bfloat16 else got.dtype).eps
    if got.dtype == ml_dtypes.bfloat16:
        eps = 2.0 ** -7
    terms = max(1, np.prod([n for op in wide for n in op.shape]) // max(1, exact.size))
    error = np.abs(got.astype(np.float64) - exact)
    assert (error <= eps * (terms + 2) * bound + 1e-300).all(), (subscripts, error.max())


# --------------------------------------------------------------------------
# numpy's semantics, case by case
# --------------------------------------------------------------------------


A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
S = RNG.standard_normal((4, 4))
T = RNG.standard_normal((4, 5, 2))


@pytest.mark.parametrize("subscripts, operands", [
    ("ij,jk", (A, B)),                                 # implicit output: ik
    ("ji,jk", (B[:, :3], B)),                          # implicit output sorted: ik
    ("ij,jks->ik", (A, T)),                            # s of one operand summed first
    ("ij->i", (A,)), ("ij->", (A,)), ("ji", (A,)),     # unary sums, a transpose
    ("ii->i", (S,)), ("ii", (S,)), ("iij->ji", (RNG.standard_normal((3, 3, 2)),)),
    ("i,i", (A[0], A[1])), ("i,j", (A[0], A[1])), ("i,i->i", (A[0], A[1])),
    (",i->i", (2.5, A[0])), (",", (2.0, 3.0)), ("", (np.float32(3.0),)),
    ("...ij,...jk->...ik", (RNG.standard_normal((2, 1, 3, 4)),
                            RNG.standard_normal((5, 4, 2)))),
    ("...i,...i", (RNG.standard_normal((2, 3)), RNG.standard_normal(3))),
    ("ij,jk->ik", (RNG.standard_normal((3, 1)), B)),   # size-1 broadcast of a named index
    ("ii->i", (S[::-1],)),                             # antidiagonal: flipped
    ("ij,jk->ik", (A[::-1, ::2], S[::2, ::-1])),       # i flipped, k copied
    ("ij,jk->ki", (A[:, ::-1], B[::-1])),              # j flipped in both
    ("i,i", ([1.0, 2.0], [3.0, 4.0])),                 # lists, as numpy reads them
])
def test_numpy_semantics(subscripts: str, operands: tuple) -> None:
    _close(einsum(subscripts, *operands), list(operands), subscripts)


def test_sublists_spell_labels_as_numpy_does() -> None:
    """Labels 0-25 are A-Z and 26-51 a-z for numpy: the implicit output of [0, 30]
    keeps the operand's order."""
    for args in ((A, [0, 30]), (A, [0, 1], B, [1, 2], [0, 2]), (A, [Ellipsis, 1], [Ellipsis]),
                 (A, [1, 0]), (A, [0, 1], B, [1, 2])):
        np.testing.assert_allclose(einsum(*args), np.einsum(*args), rtol=1e-12)


def test_zero_d_results_are_numpy_scalars() -> None:
    assert type(einsum("i,i", A[0], A[1])) is np.float64
    assert type(einsum("ij->", A.astype(np.float32))) is np.float32
    out = np.empty(())
    assert einsum("i,i->", A[0], A[1], out=out) is out


@pytest.mark.parametrize("dtypes, expected", [
    ((np.float16, np.float32), np.float32),
    ((np.float32, np.float64), np.float64),
    ((np.float16, np.float16), np.float16),
    ((ml_dtypes.bfloat16, np.float32), np.float32),
    ((ml_dtypes.bfloat16, ml_dtypes.bfloat16), ml_dtypes.bfloat16),
])
def test_result_type_is_numpys(dtypes: tuple, expected: type) -> None:
    a, b = A.astype(dtypes[0]), B.astype(dtypes[1])
    got = einsum("ij,jk->ik", a, b)
    assert got.dtype == np.dtype(expected)
    _close(got, [a, b], "ij,jk->ik", out_dtype=np.dtype(expected))


def test_dtype_and_casting() -> None:
    a32, b64 = A.astype(np.float32), B
    got = einsum("ij,jk->ik", a32, b64, dtype=np.float32, casting="same_kind")
    assert got.dtype == np.float32
    _close(got, [a32, b64.astype(np.float32)], "ij,jk->ik")
    assert einsum("ij,jk->ik", a32, B.astype(np.float32),
                  dtype="float64").dtype == np.float64
    assert einsum("ij,jk->ik", a32, B.astype(np.float32), dtype="TF32").dtype == np.float32


def test_out_takes_numpys_common_type() -> None:
    """float32 operands into a float64 out are computed in float64, as numpy does."""
    a = np.array([1e8, 1.0, -1e8], np.float32)
    out = np.zeros((), np.float64)
    einsum("i,i->", a, np.ones(3, np.float32), out=out)
    assert out == 1.0 == np.einsum("i,i->", a, np.ones(3, np.float32), out=np.zeros(()))
    half = np.zeros((3, 5), np.float16)
    assert einsum("ij,jk->ik", A, B, out=half, casting="unsafe") is half
    np.testing.assert_allclose(half, (A @ B).astype(np.float16), rtol=2e-3, atol=2e-3)


def test_integer_and_bool_operands_are_cast_as_numpy_casts_them() -> None:
    """A Python int, an integer or bool array beside a float computes in numpy's
    common type (`einsum('ij,->ij', x, 2)`); an integer out takes the result
    under casting='unsafe'."""
    x32 = A.astype(np.float32)
    for subscripts, operands in [
        ("ij,->ij", (A, 2)),
        ("ij,->ij", (x32, 3)),                                     # float64, as numpy
        ("ij,jk->ik", (x32, np.arange(20, dtype=np.int16).reshape(4, 5))),  # float32
        ("ij,jk->ik", (A, np.arange(20).reshape(4, 5))),
        ("i,i->", (np.array([True, False, True]), np.array([1.5, 2.0, 4.0]))),
        ("ij,jk,k->i", (A, np.arange(20).reshape(4, 5), [1, 2, 3, 4, 5])),
    ]:
        expected = np.einsum(subscripts, *operands)
        got = einsum(subscripts, *operands)
        assert np.asarray(got).dtype == expected.dtype, subscripts
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert einsum("i,i->", np.arange(3), np.arange(3), dtype="float64") == 5.0
    out = np.zeros((), np.int64)
    einsum("i->", np.array([0.5, 0.5, 0.25]), out=out, casting="unsafe")
    assert out == 1 == np.einsum("i->", np.array([0.5, 0.5, 0.25]),
                                 out=np.zeros((), np.int64), casting="unsafe")


@pytest.mark.parametrize("make_out", [
    lambda: np.zeros((5, 3)).T,                         # transposed
    lambda: np.zeros((6, 10))[::-2, 1::2],              # backwards, sliced
    lambda: np.zeros((5, 3))[::-1, ::-1].T,             # both backwards
    lambda: np.zeros((3, 5), order="F"),
    lambda: np.zeros((3, 5), dtype=np.dtype(">f8")),    # byte-swapped
])
def test_out_of_any_layout(make_out) -> None:
    out = make_out()
    assert einsum("ij,jk->ik", A, B, out=out) is out
    np.testing.assert_allclose(out, A @ B, rtol=1e-12)
    flipped = np.zeros((6, 10))[::-2, 1::2]
    einsum("ij,jk->ik", A[::-1], B, out=flipped)   # i backwards in an operand and out
    np.testing.assert_allclose(flipped, A[::-1] @ B, rtol=1e-12)


def test_an_out_laid_out_in_another_axis_order_is_taken() -> None:
    """An out whose memory order is not the output's axis order (`np.empty_like` of a
    transposed view, or `o.transpose(...)`) writes each element once by the
    mixed-radix rule; the exact overlap search alone ran past its budget on this
    4-D one and refused it as an overlapping output."""
    rng = np.random.default_rng(8)
    out = np.empty((2, 187, 144, 41), np.float16).transpose(2, 3, 0, 1)
    x = rng.standard_normal(out.shape).astype(np.float16)
    assert einsum("abcd->abcd", x, out=out) is out
    np.testing.assert_array_equal(out, x)
    y = rng.standard_normal((41, 144, 2, 187)).astype(np.float16)
    einsum("dcab->cdab", y, out=out)
    np.testing.assert_array_equal(out, y.transpose(1, 0, 2, 3))


def test_out_overlapping_an_operand_gets_numpys_result() -> None:
    x = A.copy()
    expected = np.einsum("ij,jk->ik", A[:, :3], S[:3, :3])
    einsum("ij,jk->ik", x[:, :3], S[:3, :3], out=x[:, 1:])
    np.testing.assert_allclose(x[:, 1:], expected, rtol=1e-12)
    # out the very operand (both own their memory), or the array an operand views
    square = S.copy()
    einsum("ij,jk->ik", square, S, out=square)
    np.testing.assert_allclose(square, S @ S, rtol=1e-12)
    square = S.copy()
    einsum("ij,jk->ik", S, square.T, out=square)
    np.testing.assert_allclose(square, S @ S.T, rtol=1e-12)


def test_zero_extents_give_numpys_empty_or_zero_result() -> None:
    for subscripts, shape in (("ij->", (0, 3)), ("ij->i", (2, 0)), ("ij->ji", (0, 3))):
        got, expected = einsum(subscripts, np.ones(shape)), np.einsum(subscripts,
                                                                     np.ones(shape))
        assert np.shape(got) == np.shape(expected)
        np.testing.assert_array_equal(got, expected)


def test_order_lays_out_a_new_result() -> None:
    assert einsum("ij,jk->ik", A, B, order="F").flags.f_contiguous
    assert einsum("ij,jk->ik", A, B, order="C").flags.c_contiguous
    fortran = np.asfortranarray(A)
    assert einsum("ij->ij", fortran, order="A").flags.f_contiguous
    np.testing.assert_allclose(einsum("ij,jk->ik", A, B, order="F"), A @ B, rtol=1e-12)


def test_relu_optimize_and_threads_with_numpy_semantics() -> None:
    got = einsum("ij,jk", A, B, relu=True, optimize=["einsum_path", (0, 1)], threads=1)
    np.testing.assert_allclose(got, np.maximum(A @ B, 0), rtol=1e-12)
    np.testing.assert_allclose(einsum("ii->i", S, relu=True, optimize="greedy"),
                               np.maximum(np.diag(S), 0))


def test_repeated_calls_reuse_the_plan() -> None:
    from teir_lowering.frontends.einsum_semantics import _PLANS

    a, b = A.astype(np.float32), B.astype(np.float32)
    einsum("ij,jk", a, b)
    before = len(_PLANS)
    for _ in range(3):
        np.testing.assert_allclose(einsum("ij,jk", a + 1, b), (a + 1) @ b, rtol=1e-5)
    assert len(_PLANS) == before


def test_a_call_on_arrays_as_planned_goes_straight_to_its_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Operands and out that are the kernel's own views (no copy, flip or conversion)
    run the kernel alone, with out or into a fresh result, and numpy's answer; a
    flipped operand or an out of another type keeps the steps between."""
    from teir_lowering.frontends import einsum_semantics

    monkeypatch.setattr(einsum_semantics, "_PLANS", {})
    a, b = A.astype(np.float32), B.astype(np.float32)
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    calls = [("ij,jk->ik", (a, b), out), ("ij,jk->ik", (a, b), None),
             ("ij->ji", (a,), None), ("ij,jk->ik", (a[::-1], b), out),
             ("ij,jk->ik", (a, b), np.empty_like(out, np.float64))]
    for spec, operands, target in calls:
        for _ in range(2):  # planned, then planned again
            got = einsum(spec, *operands, out=target, threads=1)
            np.testing.assert_allclose(got, np.einsum(spec, *operands), rtol=1e-5)
    runs = [run.__name__ for run in einsum_semantics._PLANS.values()]
    assert runs == ["run_kernel", "run_kernel", "run_kernel", "run", "run"]


# --------------------------------------------------------------------------
# opt_einsum's test expressions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("subscripts", [
    pytest.param(subscripts, marks=() if number % 2 == 0 else pytest.mark.slow)
    for number, subscripts in enumerate(OPT_EINSUM_TESTS)])
def test_opt_einsum_expressions(subscripts: str) -> None:
    """opt_einsum.tests.test_contract.tests (70), float64 views from its
    build_views; more than two operands run as einsum trees. The default tier
    takes every other one (the list runs in groups of alike expressions), the
    slow tier all."""
    views = build_views(subscripts)
    _close(einsum(subscripts, *views), list(views), subscripts)


def test_opt_einsum_list_is_the_seventy() -> None:
    assert len(OPT_EINSUM_TESTS) == 70


# --------------------------------------------------------------------------
# Generated expressions
# --------------------------------------------------------------------------


@dataclass
class Case:
    subscripts: str
    operands: list


@st.composite
def _view(draw: st.DrawFn, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """An array of `shape` that is a view: its axes transposed, sliced with steps
    of 1, 2, -1 or -2, from a larger random array."""
    order = draw(st.permutations(range(len(shape))))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in shape]
    base_shape = [n * abs(s) + 1 for n, s in zip(shape, steps)]
    base = RNG.standard_normal([base_shape[k] for k in order]).astype(dtype)
    base = base.transpose(np.argsort(order))
    stepped = base[(*(slice(None, None, s) for s in steps), Ellipsis)]
    return stepped[(*(slice(0, n) for n in shape), Ellipsis)]  # 0-d: an array still


@st.composite
def cases(draw: st.DrawFn) -> Case:
    letters = "abcde"
    extents = {x: draw(st.integers(1, 4)) for x in letters}
    count = draw(st.integers(1, 2))
    ellipsis = draw(st.booleans())
    batch = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    dtypes = draw(st.sampled_from([
        (np.float64,) * 2, (np.float32,) * 2, (np.float16,) * 2,
        (np.float32, np.float64), (np.float16, np.float32),
    ]))
    terms, operands = [], []
    for index in range(count):
        if draw(st.integers(0, 5)) == 0:
            terms.append("")
            operands.append(float(RNG.standard_normal()))
            continue
        term = "".join(draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3)))
        own = {x: (1 if draw(st.integers(0, 4)) == 0 else extents[x]) for x in term}
        shape = [own[x] for x in term]
        if ellipsis:
            rank = draw(st.integers(0, len(batch)))
            lead = [1 if draw(st.integers(0, 3)) == 0 else n for n in batch[len(batch) - rank:]]
            shape, term = lead + shape, "..." + term
        terms.append(term)
        operands.append(draw(_view(tuple(shape), dtypes[index])))
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        named = sorted({x for t in terms for x in t if x != "."})
        output = "".join(draw(st.permutations(named)))[: draw(st.integers(0, len(named)))]
        if ellipsis and any("..." in t for t in terms):
            output = "..." + output if draw(st.booleans()) else output + "..."
        subscripts += "->" + output
    return Case(subscripts, operands)


@settings(max_examples=examples(200, 12), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases(), data=st.data())
def test_generated_expressions_match_numpy(case: Case, data: st.DataObject) -> None:
    """Into a new array, or into an `out` view of any layout (half of the cases)."""
    try:
        expected = np.einsum(case.subscripts, *case.operands)
    except ValueError:
        with pytest.raises(ValueError):
            einsum(case.subscripts, *case.operands)
        return
    if data.draw(st.booleans()):
        got = einsum(case.subscripts, *case.operands)
    else:
        dtype = np.asarray(expected).dtype
        out = data.draw(_view(np.shape(expected), dtype))
        assert einsum(case.subscripts, *case.operands, out=out) is out
        got = out
    assert np.shape(got) == np.shape(expected)
    _close(got, case.operands, case.subscripts)


# --------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------


V = np.ones(3)
M = np.ones((3, 3))


@pytest.mark.parametrize("call, error, message", [
    (lambda: einsum("ié", M), ValueError, "invalid subscript 'é'"),
    (lambda: einsum("i->i->i", V), ValueError, "proper '->'"),
    (lambda: einsum("i-i", V), ValueError, "proper '->'"),
    (lambda: einsum("..i", V), ValueError, "not part of an ellipsis"),
    (lambda: einsum("i,i", V), ValueError, "names 2 operand"),
    (lambda: einsum("i"), ValueError, "no operands"),
    (lambda: einsum("ijk", M), ValueError, "names 3 dimensions for operand 0"),
    (lambda: einsum("i", M), ValueError, "no '...' to broadcast"),
    (lambda: einsum("...i->i", M), ValueError, "output 'i' has no '...'"),
    (lambda: einsum("i->ii", V), ValueError, "more than once"),
    (lambda: einsum("i->j", V), ValueError, "did not appear in the input"),
    (lambda: einsum("ii->i", np.ones((2, 3))), ValueError, "a diagonal needs them equal"),
    (lambda: einsum("i,i", V, np.ones(4)), ValueError, "could not be broadcast"),
    (lambda: einsum("i,i->i", V, V, out=np.ones(4)), ValueError, "out has shape"),
    (lambda: einsum("i->i", V, out=np.broadcast_to(V, (3,))), ValueError, "read-only"),
    (lambda: einsum("i->i", V, out=[0.0] * 3), TypeError, "out must be a numpy array"),
    (lambda: einsum("i", np.ones(3, complex)), TypeError, "holds complex128"),
    (lambda: einsum("i", np.ones(3, bool)), TypeError,
     "result type numpy gives these operands is bool"),
    (lambda: einsum("i", np.ones(3, object)), TypeError, "holds object"),
    (lambda: einsum("i", [1, 2]), TypeError, r"is int64; .* \(pass dtype="),
    (lambda: einsum("i,i", [1, 2], np.ones(2, np.int8), out=np.ones((), np.int64)),
     TypeError, "operands and out is int64"),
    (lambda: einsum("i->i", V, out=np.ones(3, np.int32)), TypeError,
     "result cannot be cast from float64 to out's int32"),
    (lambda: einsum("i->i", V, out=np.ones(3, complex)), TypeError, "out holds complex128"),
    (lambda: einsum("i", V, dtype=np.int16), TypeError, "is int16"),
    (lambda: einsum("i", V, dtype="bogus"), TypeError, "not a data type"),
    (lambda: einsum("i", V, casting="bogus"), ValueError, "casting must be one of"),
    (lambda: einsum("i", V, order="X"), ValueError, "order must be one of"),
    (lambda: einsum("i", V, dtype=np.float32), TypeError, "cannot be cast from float64"),
    (lambda: einsum("i,i", V.astype(np.float32), V, casting="no"), TypeError,
     "operand 0 cannot be cast from float32"),
    (lambda: einsum("i->i", V, out=np.ones(3, np.float32)), TypeError,
     "result cannot be cast from float64 to out's float32"),
    (lambda: einsum("i,i", V.astype(ml_dtypes.bfloat16), V.astype(np.float16)),
     TypeError, "no common type"),
    (lambda: einsum("i,i->,", V, V), ValueError, "invalid subscript ','"),
    (lambda: einsum("i,i->i,", V, V), ValueError, "invalid subscript ','"),
    (lambda: einsum("i\t->i", V), ValueError, r"invalid subscript '\\t'"),
    (lambda: einsum("i", V, order=1), TypeError, "order must be a str or None"),
    (lambda: einsum("i", V, casting=None), TypeError, "casting must be a str"),
    (lambda: einsum("i,i", V, V, bf16_products="pairs"), ValueError,
     "pairs the products of BF16 contractions; this einsum computes in FP64"),
    (lambda: einsum("i,i,i", V, V, V, optimize=["einsum_path", (), (0, 1), (0, 1)]),
     TeirError, r"path step \(\) does not name"),
    (lambda: einsum("i,i,i", V, V, V, optimize=["einsum_path", (0, 1.5), (0, 1)]),
     TeirError, "list of position tuples"),
    (lambda: einsum("i,i,i", V, V, V, optimize=np.einsum_path("i,i,i", V, V, V)),
     TeirError, r"returns \(path, report\): pass its first item"),
    (lambda: einsum(V, [0, 52]), ValueError, r"valid range \[0, 52\)"),
    (lambda: einsum(V, [0.5]), TypeError, "integer or an ellipsis"),
    (lambda: einsum(V, 7), TypeError, "list of integers"),
    (lambda: einsum("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ...",
                    np.ones((1,) * 53)), ValueError, "more than 52 distinct indices"),
])
def test_bad_calls_raise_like_numpy(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


class _Text(str):
    pass


@pytest.mark.parametrize("subscripts", [np.str_("ij,jk->ik"), _Text("ij,jk->ik"),
                                        b"ij,jk->ik", "ij, jk -> ik"])
@pytest.mark.parametrize("order", ["c", "f", None])
def test_subscripts_and_orders_numpy_takes(subscripts, order) -> None:
    """Subscripts as numpy takes them (a numpy or subclassed str, bytes, spaces: they
    were taken for the sublist form) and `order` in lower case or None."""
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    got = einsum(subscripts, a, b, order=order)
    want = np.einsum(subscripts, a, b, order=order)
    np.testing.assert_array_equal(got, want)
    assert got.flags.f_contiguous == want.flags.f_contiguous


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
def test_more_than_two_operands_run_as_a_tree(optimize) -> None:
    _close(einsum("ij,jk,kl->il", M, M, M, optimize=optimize), [M, M, M], "ij,jk,kl->il")
    path = np.einsum_path("ij,jk,kl->il", M, M, M, optimize="greedy")[0]
    _close(einsum("ij,jk,kl->il", M, M, M, optimize=path), [M, M, M], "ij,jk,kl->il")


def test_more_than_two_operands_reach_the_tree_hook_as_promised(monkeypatch) -> None:
    """The hook `einsum_tree.plan_for` (and its plan's `run`) gets what its
    interface promises: one ASCII letter per dimension, no letter twice in a
    term, no ellipsis, non-negative strides, arrays of the data type; numpy
    stands in for the tree here to check that the views it gets (diagonals,
    broadcasts, flipped axes) mean the same."""
    import sys
    import types

    from teir_lowering.frontends import einsum_semantics

    calls = []

    def plan_for(inputs, output, examples, *, path, data_type):
        calls.append((inputs, output, path, data_type))

        def run(operands, out, run_type, threads):
            assert run_type == data_type
            for term, operand, example in zip(inputs, operands, examples):
                assert term.isascii() and term.isalpha() or term == ""
                assert len(set(term)) == len(term) == operand.ndim
                assert all(s >= 0 for s in operand.strides)
                assert operand.dtype == out.dtype
                assert (operand.shape, operand.strides) == (example.shape, example.strides)
            assert all(s >= 0 for s in out.strides)
            np.einsum(f"{','.join(inputs)}->{output}", *operands, out=out)

        return types.SimpleNamespace(run=run)

    monkeypatch.setitem(sys.modules, "teir_lowering.frontends.einsum_tree",
                        types.SimpleNamespace(plan_for=plan_for))
    monkeypatch.setattr(einsum_semantics, "_PLANS", {})
    x = RNG.standard_normal((2, 4, 4))
    cases = [
        ("ij,jk,kl->il", [A[::-1], S[:, ::-1], B]),
        ("ii,ij,j->", [S[::-1], RNG.standard_normal((4, 1)), A[0]]),
        ("...ii,...ij,...j", [x, x[:1, :, :3], RNG.standard_normal(3).astype(np.float32)]),
    ]
    for subscripts, operands in cases:
        _close(einsum(subscripts, *operands, optimize="greedy"), operands, subscripts)
    out = np.zeros((4, 5))[::-1]
    einsum("ij,jk,kl->il", S, S, B, out=out, relu=True, optimize="optimal")
    np.testing.assert_allclose(out, np.maximum(S @ S @ B, 0), rtol=1e-12)
    assert [call[2:] for call in calls] == [("greedy", "FP64")] * 3 + [("optimal", "FP64")]


@pytest.mark.parametrize("order", ["C", "F"])
def test_large_results_start_on_a_cache_line(order: str) -> None:
    """Results of a MiB or more start on a 64-byte line (numpy's sit 16 bytes past
    one), so streamed transposes need no partial lines; smaller ones are numpy's."""
    x = np.random.default_rng(0).standard_normal((64, 64, 64, 2)).astype(np.float32)
    x = x if order == "C" else np.asfortranarray(x)
    got = einsum("abcd->dcba", x, order=order)
    assert got.ctypes.data % 64 == 0 and got.nbytes >= ALIGNED_MIN_BYTES
    assert got.flags.writeable and (got.flags.f_contiguous if order == "F"
                                    else got.flags.c_contiguous)
    np.testing.assert_array_equal(got, np.einsum("abcd->dcba", x, order=order))
    small = result_array((8, 8), np.float32)
    assert small.base is None and small.shape == (8, 8)
    large = result_array((512, 1024), np.float32, "F")
    assert large.ctypes.data % 64 == 0 and large.flags.f_contiguous
