"""The record builder and einsum_config: exact records, clear errors, and a
differential check against np.einsum on strided views (interpreter; a few compiled)."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from conftest import SPEC_EXAMPLES, load
from teir_dialect import TeirError, einsum_config, from_json, to_json
from teir_dialect.builders import Dimension, build_record, scalar_nest, writes_each_once
from teir_dialect.interpreter import round_tf32, run_reference


def test_contraction_is_the_spec_scalar_contraction() -> None:
    """§10.7.5 at the spec's sizes, written by the builder."""
    record = einsum_config("trus,pqtu->pqrs", (2, 3, 8, 16), (4, 8, 2, 8))
    assert record == load(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json")
    assert to_json(from_json(record)) == record


def test_permutation_iterates_in_output_order() -> None:
    record = einsum_config("abcd->dcba", np.zeros((2, 3, 4, 5), np.float32))
    assert [axis["id"] for axis in record["axes"]] == ["d", "c", "b", "a"]
    assert record["axes"][0]["strides"] == [4, 96]
    assert record["primitives"] == [{
        "id": "copy_scalar", "operation": "Copy", "axes": {"M": [], "N": []},
        "metadata": {"data_type": "FP32"},
    }]
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    out = np.zeros(120, np.float32)
    run_reference(record, [x, out])
    np.testing.assert_array_equal(out.reshape(5, 4, 3, 2), x.transpose(3, 2, 1, 0))


def test_relu_last_follows_the_reduction_loops() -> None:
    record = einsum_config("ik,kj->ij", (2, 3), (3, 4), relu=True)
    assert record["schedule"]["iterations"][1]["children"] == ["zero", "k", "relu"]
    assert all(node["guard"] is None for node in record["schedule"]["invocations"])


def test_base_offsets_go_on_an_enclosing_dimension() -> None:
    """A full reduction has no free dimension, so Zero and the offsets need a unit one."""
    dims = [Dimension("k", 4, (4, 4, 0))]
    record = build_record(dims, ["Zero", "Contraction"], "FP32", base_offsets=(0, 8, 12))
    assert record["axes"][0] == {
        "id": "base", "extent": 1, "strides": [0, 0, 0], "offsets": [0, 8, 12]
    }
    a, b = np.arange(4, dtype=np.float32), np.arange(6, dtype=np.float32)
    out = np.full(5, 9, np.float32)
    run_reference(record, [a, b, out])
    assert out[3] == a @ b[2:] and list(out[[0, 1, 2, 4]]) == [9, 9, 9, 9]
    # A lone Contraction can carry them on its reduction dimension.
    alone = build_record(dims, ["Contraction"], "FP32", base_offsets=(0, 8, 12))
    assert alone["axes"][0]["offsets"] == [0, 8, 12] and len(alone["axes"]) == 1


def test_offsets_of_reduction_dimensions_move_to_a_free_one() -> None:
    dims = [Dimension("i", 2, (4, 0, 4)), Dimension("k", 3, (8, 4, 0), (0, 0, 4))]
    record = build_record(dims, ["Zero", "Contraction", "ReLU"], "FP32")
    assert [axis["offsets"] for axis in record["axes"]] == [[0, 0, 4], [0, 0, 0]]


def test_names_of_invocations_avoid_dimension_names() -> None:
    record = build_record([Dimension("zero", 2, (0, 8))], ["Zero"], "FP64")
    assert record["schedule"]["invocations"][0]["id"] == "zero_1"


def test_in_place_relu_and_zero_alone() -> None:
    dims = [Dimension("i", 3, (0, 0, 8))]
    relu = build_record(dims, ["ReLU"], "FP64")
    out = np.array([-1.0, 2.0, -0.0])
    run_reference(relu, [np.zeros(1), np.zeros(1), out])
    assert list(out) == [0.0, 2.0, 0.0] and np.signbit(out[2])  # -0.0 passes unchanged
    zero = build_record([Dimension("i", 3, (0, 8))], ["Zero"], "FP64")
    run_reference(zero, [np.zeros(1), out])
    assert not out.any()


@pytest.mark.parametrize(
    ("dims", "operations", "message"),
    [
        ([Dimension("i", 2, (4, 4))], ["Contraction"], "takes 3 tensors, got 2"),
        ([Dimension("i", 2, (4, 4))], ["ReLU", "Zero"], "not an operation"),
        ([Dimension("i", 2, (4, 4))], ["Sum"], "not an operation"),
        ([Dimension("i", 0, (4, 4))], ["Copy"], "extents are positive"),
        ([Dimension("i", 2, (4, -4))], ["Copy"], "non-negative"),
        ([Dimension("i", 2, (4, 4)), Dimension("j", 2, (4,))], ["Copy"], "must be 2 integers"),
        ([Dimension("i", 2, (4, 4)), Dimension("i", 2, (8, 8))], ["Copy"], "used twice"),
        ([Dimension("i", 2, (4, 0))], ["Copy"], "stride 0 on out"),
        ([Dimension("i", 2, (4, 4)), Dimension("j", 2, (8, 4))], ["Copy"],
         "reach some out element twice"),
    ],
)
def test_builder_errors(dims: list[Dimension], operations: list[str], message: str) -> None:
    with pytest.raises(TeirError, match=message):
        build_record(dims, operations, "FP32")


def test_builder_rejects_unknown_data_type() -> None:
    with pytest.raises(TeirError, match="not a TEIR data type"):
        build_record([Dimension("i", 2, (4, 4))], ["Copy"], "FP8")
    with pytest.raises(TeirError, match="not a TEIR data type"):
        build_record([Dimension("i", 2, (4, 4))], ["Copy"], None)  # type: ignore


def test_writes_each_once_beyond_the_mixed_radix_rule() -> None:
    assert writes_each_once([(3, 8), (2, 12)], 4)  # 0 8 16 12 20 28: distinct
    assert not writes_each_once([(3, 8), (2, 16)], 4)  # 16 twice
    assert not writes_each_once([(2, 2)], 4)  # elements overlap by bytes


# --------------------------------------------------------------------------
# einsum_config: errors
# --------------------------------------------------------------------------

A = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize(
    ("subscripts", "operands", "options", "message"),
    [
        ("ii->i", (np.zeros((2, 2)),), {}, "appears twice in operand 0"),
        ("ij->ii", (A,), {}, "appears twice in the output"),
        ("...i->i", (A,), {}, "ellipsis"),
        ("ij,jk", (A, np.zeros((3, 4), np.float32)), {}, "no '->'"),
        ("i,i,i->i", (np.zeros(2),) * 3, {}, "not more"),
        ("ij,jk->ik", (A,), {}, "names 2 operand"),
        ("ij->ijk", (A,), {}, "output index 'k' is in no input"),
        ("ij->i", (A,), {}, "summing needs two operands"),
        ("ij,jk->ik", (A, np.zeros((4, 4), np.float32)), {}, "they must agree"),
        ("ij,jk->ik", (A, np.zeros((1, 4), np.float32)), {}, "broadcasting"),
        ("ij,jk->ik", (A, np.zeros((3, 4))), {}, "disagree on the element type"),
        ("ij->ji", (A,), {"dtype": "FP64"}, "holds float32 but FP64"),
        ("ij->ji", (A[:, ::-1],), {}, "negative stride"),
        ("ij->ji", (A,), {"out": ((3, 2), (0, 1))}, "overlapping output"),
        ("ij->ji", (A,), {"out": (2, 3)}, "out has shape"),
        ("ij->ji", (A.astype(np.int32),), {}, "not a TEIR data type"),
        ("ij->ji", ([[1, 2]],), {}, "must be a numpy array"),
        ("ij->ji", (np.zeros((0, 3), np.float32),), {}, "extent 0"),
        ("i j->j$", (A,), {}, "indices are letters"),
        ("ij->ji", ((2, 3, 4),), {}, "has 3 dimensions"),
    ],
)
def test_einsum_errors(subscripts: str, operands: tuple, options: dict, message: str) -> None:
    with pytest.raises(TeirError, match=message):
        einsum_config(subscripts, *operands, **options)


def test_einsum_data_types() -> None:
    def data_type(*args, **kwargs) -> str:
        return einsum_config(*args, **kwargs)["primitives"][0]["metadata"]["data_type"]

    assert data_type("ij->ji", A.astype(np.float16)) == "FP16"
    assert data_type("ij->ji", A.astype(np.float64)) == "FP64"
    assert data_type("ij->ji", (2, 3)) == "FP32"
    assert data_type("ij->ji", A, dtype="TF32") == "TF32"
    assert data_type("ij->ji", np.zeros((2, 3), np.uint16), dtype="BF16") == "BF16"
    assert data_type("ij->ji", (2, 3), dtype="BF16") == "BF16"
    assert data_type("ij->ji", ((2, 3), (1, 2)), dtype=np.float64) == "FP64"


def test_einsum_shapes_and_element_strides_are_scaled_by_the_width() -> None:
    record = einsum_config("ij->ji", ((2, 3), (1, 2)), out=((3, 2), (4, 1)), dtype="FP64")
    assert [axis["strides"] for axis in record["axes"]] == [[16, 32], [8, 8]]


def test_einsum_tf32_and_bf16_run_in_the_interpreter() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    out = np.zeros(6, np.float32)
    run_reference(
        einsum_config("ik,kj->ij", a.astype(np.float32), b.astype(np.float32), dtype="TF32"),
        [a.astype(np.float32), b.astype(np.float32), out],
    )
    # TF32 rounds each input to 10 explicit mantissa bits, then accumulates in FP32.
    rounded = [round_tf32(x.astype(np.float32)).astype(np.float64) for x in (a, b)]
    np.testing.assert_allclose(out.reshape(3, 2), rounded[0] @ rounded[1], rtol=1e-5)
    # BF16: the upper halves of float32 values, stored as uint16.
    bits = [(x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for x in (a, b)]
    wide = [(x.astype(np.uint32) << 16).view(np.float32).astype(np.float64) for x in bits]
    out16 = np.zeros(6, np.uint16)
    run_reference(einsum_config("ik,kj->ij", *bits, dtype="BF16"), [*bits, out16])
    got = (out16.astype(np.uint32) << 16).view(np.float32).reshape(3, 2)
    np.testing.assert_allclose(got, wide[0] @ wide[1], rtol=1e-2)


# --------------------------------------------------------------------------
# Differential: random einsums on strided views against np.einsum
# --------------------------------------------------------------------------

LETTERS = "abcdef"


def relu(x: np.ndarray) -> np.ndarray:
    """The spec's ReLU (x < 0 ? +0 : x); np.maximum(x, 0) differs only in the sign of -0.0."""
    return np.where(x < 0, 0.0, x)


class Case(NamedTuple):
    subscripts: str
    shapes: list[tuple[int, ...]]  # inputs, then out
    layout: list[tuple[tuple[int, ...], int]]  # element strides and start, per tensor
    dtype: type
    relu: bool


@st.composite
def layouts(draw, shape: tuple[int, ...], broadcast: bool) -> tuple[tuple[int, ...], int]:
    """Element strides (a random dense order, padded, zero strides if `broadcast`) and
    the element where the view starts."""
    order = draw(st.permutations(range(len(shape))))
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        if broadcast and shape[dim] > 1 and draw(st.integers(0, 4)) == 0:
            continue
        strides[dim] = step
        step *= shape[dim] + draw(st.sampled_from([0, 0, 1]))
    return tuple(strides), draw(st.integers(0, 3))


@st.composite
def einsums(draw):
    extents = {x: draw(st.integers(1, 4)) for x in LETTERS}
    unary = draw(st.booleans())
    in0 = "".join(draw(st.permutations(LETTERS))[: draw(st.integers(0 if not unary else 1, 4))])
    if unary:
        inputs = [in0]
        output = "".join(draw(st.permutations(in0)))
    else:
        in1 = "".join(draw(st.permutations(LETTERS))[: draw(st.integers(0, 4))])
        union = list(dict.fromkeys(in0 + in1))
        output = "".join(draw(st.permutations(union))[: draw(st.integers(0, len(union)))])
        inputs = [in0, in1]
    shapes = [tuple(extents[x] for x in term) for term in [*inputs, output]]
    layout = [draw(layouts(shape, i < len(inputs))) for i, shape in enumerate(shapes)]
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return Case(f"{','.join(inputs)}->{output}", shapes, layout, dtype, draw(st.booleans()))


def strided_case(case: Case, rng: np.random.Generator):
    """Buffers (C-contiguous, from each view's first element) and the views on them."""
    buffers, views = [], []
    shapes = case.shapes
    for index, (shape, (strides, start)) in enumerate(zip(shapes, case.layout)):
        size = start + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        base = rng.standard_normal(size).astype(case.dtype)
        if index == len(shapes) - 1:
            base[:] = 7.0  # out: bytes outside the view must keep this
        buffer = base[start:]
        buffers.append(buffer)
        views.append(as_strided(buffer, shape, [s * buffer.itemsize for s in strides]))
    return buffers, views


def expected_out(case: Case, views: list[np.ndarray]) -> np.ndarray:
    result = np.einsum(case.subscripts, *(v.astype(np.float64) for v in views[:-1]))
    return relu(result) if case.relu else result


def check_out(case: Case, buffers, views, expected) -> None:
    tolerance = 1e-5 if case.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(views[-1], expected, rtol=tolerance, atol=tolerance)
    touched = np.zeros(buffers[-1].shape, bool)
    as_strided(touched, views[-1].shape, [
        s // buffers[-1].itemsize * touched.itemsize for s in views[-1].strides
    ])[...] = True
    assert np.all(buffers[-1][~touched] == 7.0)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=einsums(), seed=st.integers(0, 2**16))
def test_einsum_config_matches_numpy(case: Case, seed: int) -> None:
    rng = np.random.default_rng(seed)
    buffers, views = strided_case(case, rng)
    record = einsum_config(case.subscripts, *views[:-1], out=views[-1], relu=case.relu)
    json.dumps(record)  # a plain JSON record
    expected = expected_out(case, views)
    run_reference(record, buffers)
    check_out(case, buffers, views, expected)


COMPILED = [
    ("trus,pqtu->pqrs", [(2, 0, 1, 3), (3, 2, 0, 1), (0, 1, 2, 3)], np.float32, False),
    ("abcd->dcba", [(0, 1, 2, 3), (0, 1, 2, 3)], np.float32, True),
    ("bij,bjk->bik", [(0, 2, 1), (0, 1, 2), (2, 0, 1)], np.float64, True),
    ("ij,j->i", [(1, 0), (0,), (0,)], np.float32, False),
]


@pytest.mark.parametrize(("subscripts", "orders", "dtype", "use_relu"), COMPILED,
                         ids=[c[0] for c in COMPILED])
def test_compiled_einsums_match_numpy(subscripts, orders, dtype, use_relu) -> None:
    """A handful of compiles: padded, permuted layouts starting inside their buffers."""
    from teir_lowering import compile_kernel

    terms = subscripts.replace("->", ",").split(",")
    extents = dict(zip("abcdijkpqrstu", (3, 2, 4, 5, 6, 7, 5, 2, 3, 4, 5, 3, 6)))
    shapes = [tuple(extents[x] for x in term) for term in terms]
    layout = []
    for shape, order in zip(shapes, orders):
        strides, step = [0] * len(shape), 1
        for dim in reversed(order):
            strides[dim] = step
            step *= shape[dim] + 1  # padded
        layout.append((tuple(strides), 2))
    case = Case(subscripts, shapes, layout, dtype, use_relu)
    buffers, views = strided_case(case, np.random.default_rng(0))
    record = einsum_config(subscripts, *views[:-1], out=views[-1], relu=use_relu)
    expected = expected_out(case, views)
    compile_kernel(record)(*buffers)
    check_out(case, buffers, views, expected)


def test_scalar_nest_needs_a_plain_contraction_and_every_axis() -> None:
    record = einsum_config("ik,kj->ij", (2, 3), (3, 4))
    nest = scalar_nest(record, "kji")
    assert [n["axis"] for n in nest["schedule"]["iterations"]] == ["k", "j", "i"]
    assert nest["schedule"]["invocations"][0]["guard"] == ["first(k)"]
    from_json(nest)  # a valid record
    with pytest.raises(TeirError, match=r"one loop per axis \(i, j, k\)"):
        scalar_nest(record, "ij")
    with pytest.raises(TeirError, match=r"needs a Zero and a Contraction"):
        scalar_nest(einsum_config("ik,kj->ij", (2, 3), (3, 4), relu=True), "ijk")
