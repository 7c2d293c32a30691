"""teir-match-gemm: Table 10.6.1 kernel selection and Table 10.6.2 parameters.

The semantic cross-check rebuilds C with numpy from nothing but the recorded
`#teir.kernel` parameters (column-major buffers, lda/ldb/ldc, trans flags,
batch strides; the tile bases are the role axes' offsets) and compares it with
the reference interpreter running the configuration.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from conftest import SPEC_EXAMPLES
from strategies import random_arrays
from teir_dialect import from_json, teir_context, to_json
from teir_dialect.dialect import ConfigOp, KernelAttr, PrimitiveOp
from teir_dialect.gemm import match_contraction
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_passes.match_gemm import MatchGemmPass

TREE = SPEC_EXAMPLES / "tree"
WIDTH = {"FP32": 4, "FP64": 8}


def _contraction(module: Any) -> PrimitiveOp:
    config = find_configs(module)[0]
    (prim,) = [p for p in config.primitives if p.kind == "Contraction"]
    return prim


def _annotated(source: Any) -> Any:
    module = from_json(source)
    MatchGemmPass().apply(teir_context(), module)
    module.verify()
    return module


# --------------------------------------------------------------------------
# The spec's examples
# --------------------------------------------------------------------------

SPEC = {
    "10_6_3_gemm": KernelAttr("gemm", "NNN", m=8, n=4, k=16, lda=8, ldb=16, ldc=8),
    "10_7_6_contraction_gemm": KernelAttr(
        "gemm", "NNN", m=16, n=8, k=8, lda=16, ldb=16, ldc=48
    ),
    "10_7_7_parallel_brgemm": KernelAttr(
        "brgemm", "NNN", m=16, n=8, k=8, lda=16, ldb=16, ldc=48,
        br_size=2, br_stride_a=384, br_stride_b=8,
    ),
    "10_7_5_scalar_contraction": KernelAttr("scalar"),
}


@pytest.mark.parametrize("name", sorted(SPEC))
def test_spec_examples(name: str) -> None:
    module = from_json(TREE / f"{name}.json")
    assert _contraction(module).matched_kernel() == SPEC[name]
    annotated = _annotated(TREE / f"{name}.json")
    assert _contraction(annotated).attributes["kernel"] == SPEC[name]


def test_spec_parameters_from_extents() -> None:
    """§10.7.6/§10.7.7's formulas: lda = |s|, ldb = |t||u|, ldc = |r||s|, ..."""
    module = from_json(TREE / "10_7_7_parallel_brgemm.json")
    ext = {a.axis_id: a.size for a in find_configs(module)[0].axes}
    kernel = _contraction(module).matched_kernel()
    assert kernel.params == {
        "m": ext["s"], "n": ext["q"], "k": ext["u"],
        "lda": ext["s"], "ldb": ext["t"] * ext["u"], "ldc": ext["r"] * ext["s"],
        "br_size": ext["t"], "br_stride_a": ext["r"] * ext["u"] * ext["s"],
        "br_stride_b": ext["u"],
    }
    assert (kernel.trans_a, kernel.trans_b, kernel.trans_c) == ("N", "N", "N")


def test_pass_is_idempotent_and_only_annotates() -> None:
    path = TREE / "10_7_7_parallel_brgemm.json"
    once = _annotated(path)
    twice = once.clone()
    MatchGemmPass().apply(teir_context(), twice)
    assert str(twice) == str(once)
    assert to_json(once) == to_json(from_json(path))
    zero = find_configs(once)[0].primitive("zero_sq")
    assert "kernel" not in zero.attributes


def test_stale_kernel_is_overwritten() -> None:
    module = from_json(TREE / "10_6_3_gemm.json")
    _contraction(module).attributes["kernel"] = KernelAttr("general")
    MatchGemmPass().apply(teir_context(), module)
    assert _contraction(module).attributes["kernel"] == SPEC["10_6_3_gemm"]


def test_non_contraction_is_rejected() -> None:
    zero = find_configs(from_json(TREE / "10_6_3_gemm.json"))[0].primitive("zero_mn")
    with pytest.raises(ValueError, match="not a Contraction"):
        match_contraction(zero)


# --------------------------------------------------------------------------
# Layouts
# --------------------------------------------------------------------------


def gemm_record(
    m: int, n: int, k: int, trans: str, *,
    data_type: str = "FP32",
    pads: tuple[int, int, int] = (0, 0, 0),
    batch: tuple[int, int, int] | None = None,
    offsets: dict[str, tuple[int, int, int]] | None = None,
) -> dict[str, Any]:
    """A one-invocation Contraction laid out column-major per `trans` ("ABC").

    A is m x k ("N": m unit stride, lda = m + pad) or stored k x m ("T");
    B is k x n ("N") or stored n x k ("T"); C is m x n ("N") or stored n x m
    ("T"). `batch` = (br_size, br_stride_a, br_stride_b) in elements adds the
    batch-reduce axis b as K[0]. `offsets` are element offsets per axis.
    """
    w = WIDTH[data_type]
    ta, tb, tc = trans
    pa, pb, pc = pads
    strides = {"m": [0, 0, 0], "n": [0, 0, 0], "k": [0, 0, 0]}
    lda = (m if ta == "N" else k) + pa
    ldb = (k if tb == "N" else n) + pb
    ldc = (m if tc == "N" else n) + pc
    strides["m"][0], strides["k"][0] = (1, lda) if ta == "N" else (lda, 1)
    strides["k"][1], strides["n"][1] = (1, ldb) if tb == "N" else (ldb, 1)
    strides["m"][2], strides["n"][2] = (1, ldc) if tc == "N" else (ldc, 1)
    extents = {"m": m, "n": n, "k": k}
    ks = ["k"]
    if batch is not None:
        extents["b"] = batch[0]
        strides["b"] = [batch[1], batch[2], 0]
        ks = ["b", "k"]
    offsets = offsets or {}
    axes = [
        {
            "id": a,
            "extent": extents[a],
            "strides": [s * w for s in strides[a]],
            "offsets": [o * w for o in offsets.get(a, (0, 0, 0))],
        }
        for a in extents
    ]
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": axes,
        "primitives": [
            {
                "id": "c",
                "operation": "Contraction",
                "axes": {"M": ["m"], "N": ["n"], "K": ks},
                "metadata": {"data_type": data_type},
            }
        ],
        "schedule": {
            "roots": ["x"],
            "iterations": [],
            "invocations": [{"id": "x", "primitive": "c", "guard": None}],
        },
    }


ORIENTATIONS = ["".join(t) for t in itertools.product("NT", repeat=3)]


@pytest.mark.parametrize("trans", ORIENTATIONS)
def test_every_gemm_orientation(trans: str) -> None:
    record = gemm_record(6, 5, 7, trans, pads=(1, 2, 3))
    lda = (6 if trans[0] == "N" else 7) + 1
    ldb = (7 if trans[1] == "N" else 5) + 2
    ldc = (6 if trans[2] == "N" else 5) + 3
    kernel = _contraction(from_json(record)).matched_kernel()
    assert kernel == KernelAttr("gemm", trans, m=6, n=5, k=7, lda=lda, ldb=ldb, ldc=ldc)


@pytest.mark.parametrize("trans", ORIENTATIONS)
def test_every_brgemm_orientation(trans: str) -> None:
    record = gemm_record(4, 3, 5, trans, batch=(3, 97, 0), data_type="FP64")
    kernel = _contraction(from_json(record)).matched_kernel()
    assert kernel.kind_name == "brgemm"
    assert kernel.trans.data == trans
    assert (kernel.get("br_size"), kernel.get("br_stride_a"), kernel.get("br_stride_b")) == (3, 97, 0)


def _set_stride(record: dict[str, Any], axis: str, tensor: int, value: int) -> dict[str, Any]:
    for a in record["axes"]:
        if a["id"] == axis:
            a["strides"][tensor] = value
    return record


@pytest.mark.parametrize(
    ("axis", "tensor", "stride"),
    [
        ("n", 2, 12),    # out: ldc = 3 < |m|
        ("m", 2, 0),     # out: m at stride 0 (every row the same)
        ("m", 2, 8),     # out: incc = 2 but ldc = 6 < 2 |m| (columns interleave)
        ("k", 2, 4),     # k addresses out
        ("n", 0, 4),     # n addresses in0
        ("m", 1, 64),    # m addresses in1
    ],
)
def test_strides_that_do_not_fit_are_general(axis: str, tensor: int, stride: int) -> None:
    record = _set_stride(gemm_record(6, 5, 7, "NNN"), axis, tensor, stride)
    assert _contraction(from_json(record)).matched_kernel() == KernelAttr("general")


@pytest.mark.parametrize(
    ("axis", "tensor", "stride", "expected"),
    [
        # in0: m two elements apart, k not unit either: m is A's increment axis
        ("m", 0, 8, 'lda = 6, ldb = 7, ldc = 6, inca = 2, trans = "NNN"'),
        # in0: lda = 4 < |m| = 6 (overlapping columns: A is only read)
        ("k", 0, 16, 'lda = 4, ldb = 7, ldc = 6, trans = "NNN"'),
        # in1: a broadcast along n (stride 0): n is B's increment axis
        ("n", 1, 0, 'lda = 6, ldb = 1, ldc = 6, incb = 0, trans = "NTN"'),
        # out: m every other element, ldc = 24 >= 2 |m|: C's elements stay apart
        ("m", 2, 8, None),
        # in0 and in1 both stepped (k 3 apart on in1): increments on both
        ("k", 1, 12, 'lda = 6, ldb = 7, ldc = 6, incb = 3, trans = "NNN"'),
    ],
)
def test_general_strides_are_a_gemm_with_increments(axis: str, tensor: int, stride: int,
                                                    expected: str | None) -> None:
    """TEIR's extension of Table 10.6.1: operands without a unit-stride role axis
    (views, broadcasts) are GEMMs whose increments the attribute records."""
    record = _set_stride(gemm_record(6, 5, 7, "NNN"), axis, tensor, stride)
    if expected is None:  # out: n's stride raised too, so the columns do not overlap
        record = _set_stride(record, "n", 2, 4 * 2 * 6)
        expected = 'lda = 6, ldb = 7, ldc = 12, incc = 2, trans = "NNN"'
    kernel = _contraction(from_json(record)).matched_kernel()
    assert str(kernel) == f"#teir.kernel<gemm m = 6, n = 5, k = 7, {expected}>"


def test_brgemm_batch_axis_on_out_is_general() -> None:
    record = _set_stride(gemm_record(4, 3, 5, "NNN", batch=(2, 20, 15)), "b", 2, 4 * 64)
    assert _contraction(from_json(record)).matched_kernel() == KernelAttr("general")


def test_cardinalities() -> None:
    record = gemm_record(4, 3, 5, "NNN", batch=(2, 20, 15))
    record["axes"].append({"id": "x", "extent": 2, "strides": [400, 0, 400], "offsets": [0, 0, 0]})
    prim = record["primitives"][0]
    for roles, kind in [
        ({"M": [], "N": [], "K": []}, "scalar"),
        ({"M": ["m"], "N": ["n"], "K": ["k"]}, "gemm"),
        ({"M": ["m"], "N": ["n"], "K": ["b", "k"]}, "brgemm"),
        # K[1] = b is the GEMM's k, stepped on both inputs: general strides
        ({"M": ["m"], "N": ["n"], "K": ["k", "b"]}, "brgemm"),
        ({"M": ["m", "x"], "N": ["n"], "K": ["k"]}, "general"),
        ({"M": ["m"], "N": ["n"], "K": []}, "general"),
        ({"M": [], "N": [], "K": ["k"]}, "general"),
    ]:
        prim["axes"] = roles
        assert _contraction(from_json(record)).matched_kernel().kind_name == kind, roles


# --------------------------------------------------------------------------
# The attribute's syntax
# --------------------------------------------------------------------------

KERNELS = [
    KernelAttr("scalar"),
    KernelAttr("general"),
    SPEC["10_6_3_gemm"],
    SPEC["10_7_7_parallel_brgemm"],
    KernelAttr("gemm", "TNT", m=1, n=2, k=3, lda=4, ldb=5, ldc=6),
    KernelAttr("brgemm", "NTT", m=2, n=2, k=2, lda=2, ldb=2, ldc=2,
               br_size=1, br_stride_a=0, br_stride_b=0),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_custom_syntax_round_trips(kernel: KernelAttr) -> None:
    text = str(kernel)
    assert text.startswith(f"#teir.kernel<{kernel.kind_name}")
    parsed = Parser(teir_context(), text).parse_attribute()
    assert parsed == kernel
    assert str(parsed) == text


def test_custom_syntax_text() -> None:
    assert str(SPEC["10_7_7_parallel_brgemm"]) == (
        "#teir.kernel<brgemm m = 16, n = 8, k = 8, lda = 16, ldb = 16, ldc = 48, "
        'br_size = 2, br_stride_a = 384, br_stride_b = 8, trans = "NNN">'
    )
    assert str(KernelAttr("scalar")) == "#teir.kernel<scalar>"
    # parameters may come in any order
    text = '#teir.kernel<gemm trans = "NNN", ldc = 8, ldb = 16, lda = 8, k = 16, n = 4, m = 8>'
    assert Parser(teir_context(), text).parse_attribute() == SPEC["10_6_3_gemm"]


@pytest.mark.parametrize(
    "text",
    [
        "#teir.kernel<matmul>",
        "#teir.kernel<gemm m = 8>",
        '#teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN", br_size = 2>',
        '#teir.kernel<gemm m = 8, m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">',
        '#teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNX">',
        '#teir.kernel<gemm m = 0, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">',
        "#teir.kernel<scalar m = 1>",
    ],
)
def test_bad_syntax_is_rejected(text: str) -> None:
    with pytest.raises((ParseError, VerifyException)):
        Parser(teir_context(), text).parse_attribute()


@pytest.mark.parametrize("name", sorted(SPEC))
def test_generic_syntax_round_trips(name: str) -> None:
    """The annotated op prints generically and parses back to the same attribute."""
    import io

    module = _annotated(TREE / f"{name}.json")
    for generic in (True, False):
        out = io.StringIO()
        Printer(stream=out, print_generic_format=generic).print_op(module)
        text = out.getvalue()
        assert "#teir.kernel<" in text
        reparsed = Parser(teir_context(), text).parse_module()
        reparsed.verify()
        assert _contraction(reparsed).attributes["kernel"] == SPEC[name]
        assert str(reparsed) == str(module)


# --------------------------------------------------------------------------
# Semantic cross-check against the reference interpreter
# --------------------------------------------------------------------------


def _column_major(buf: np.ndarray, base: int, rows: int, cols: int, ld: int) -> np.ndarray:
    """Element indices of a rows x cols column-major matrix at `base` with `ld`."""
    return base + np.arange(rows)[:, None] + ld * np.arange(cols)[None, :]


def kernel_result(
    kernel: KernelAttr, config: ConfigOp, arrays: list[np.ndarray]
) -> np.ndarray:
    """The out buffer after running `kernel` as a BLAS-style (BR)GEMM, in numpy."""
    prim = _contraction_of(config)
    width = prim.element_width
    bases = [
        sum(a.offset_on(t) for a in prim.all_role_axes) // width
        for t in ("in0", "in1", "out")
    ]
    p = {name: kernel.get(name) for name in ("m", "n", "k", "lda", "ldb", "ldc")}
    m, n, k = p["m"], p["n"], p["k"]
    batches, stride_a, stride_b = 1, 0, 0
    if kernel.kind_name == "brgemm":
        batches = kernel.get("br_size")
        stride_a, stride_b = kernel.get("br_stride_a"), kernel.get("br_stride_b")
    a_buf, b_buf, c_buf = (arr.astype(np.float64) for arr in arrays)
    ta, tb, tc = kernel.trans_a, kernel.trans_b, kernel.trans_c
    c_idx = (
        _column_major(c_buf, bases[2], m, n, p["ldc"])
        if tc == "N"
        else _column_major(c_buf, bases[2], n, m, p["ldc"]).T
    )
    acc = c_buf[c_idx].copy()
    for i in range(batches):
        a_base, b_base = bases[0] + i * stride_a, bases[1] + i * stride_b
        a = (
            a_buf[_column_major(a_buf, a_base, m, k, p["lda"])]
            if ta == "N"
            else a_buf[_column_major(a_buf, a_base, k, m, p["lda"])].T
        )
        b = (
            b_buf[_column_major(b_buf, b_base, k, n, p["ldb"])]
            if tb == "N"
            else b_buf[_column_major(b_buf, b_base, n, k, p["ldb"])].T
        )
        acc += a @ b
    out = c_buf.copy()
    out[c_idx] = acc
    return out


def _contraction_of(config: ConfigOp) -> PrimitiveOp:
    (prim,) = [p for p in config.primitives if p.kind == "Contraction"]
    return prim


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    m, n, k = (draw(st.integers(1, 6)) for _ in range(3))
    trans = draw(st.sampled_from(ORIENTATIONS))
    pads = tuple(draw(st.integers(0, 3)) for _ in range(3))
    data_type = draw(st.sampled_from(["FP32", "FP64"]))
    batch = None
    if draw(st.booleans()):
        batch = (draw(st.integers(1, 4)), draw(st.integers(0, 60)), draw(st.integers(0, 60)))
    offsets = {
        axis: (draw(st.integers(0, 3)), draw(st.integers(0, 3)), draw(st.integers(0, 3)))
        for axis in draw(st.sets(st.sampled_from(["m", "n", "k"])))
    }
    return gemm_record(
        m, n, k, trans, data_type=data_type, pads=pads, batch=batch, offsets=offsets
    )


@settings(max_examples=80, deadline=None)
@given(record=layouts(), seed=st.integers(0, 2**32 - 1))
def test_recorded_parameters_compute_the_contraction(record: dict[str, Any], seed: int) -> None:
    module = _annotated(record)
    config = find_configs(module)[0]
    kernel = _contraction_of(config).attributes["kernel"]
    assert isinstance(kernel, KernelAttr)
    assert kernel.kind_name == ("brgemm" if len(record["axes"]) == 4 else "gemm")
    arrays = random_arrays(record, np.random.default_rng(seed))
    expected = kernel_result(kernel, config, arrays)
    run_reference(module, arrays)
    tolerance = 1e-12 if arrays[2].dtype == np.float64 else 1e-5
    np.testing.assert_allclose(arrays[2], expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", ["10_6_3_gemm", "10_7_7_parallel_brgemm"])
def test_spec_example_parameters_compute_one_invocation(name: str) -> None:
    """At the first tile of the spec examples, the parameters give the invocation's result."""
    record = to_json(from_json(TREE / f"{name}.json"))
    prim = next(p for p in record["primitives"] if p["operation"] == "Contraction")
    record["primitives"] = [prim]
    record["schedule"] = {
        "roots": ["x"],
        "iterations": [],
        "invocations": [{"id": "x", "primitive": prim["id"], "guard": None}],
    }
    module = _annotated(record)
    config = find_configs(module)[0]
    kernel = _contraction_of(config).attributes["kernel"]
    arrays = random_arrays(record, np.random.default_rng(7))
    expected = kernel_result(kernel, config, arrays)
    run_reference(module, arrays)
    np.testing.assert_allclose(arrays[2], expected, rtol=1e-5, atol=1e-5)


def test_annotated_configuration_still_compiles_and_runs() -> None:
    """The attribute is discardable: the lowering ignores it and results are unchanged."""
    from teir_lowering import compile_kernel

    path = TREE / "10_7_7_parallel_brgemm.json"
    record = to_json(from_json(path))
    arrays = random_arrays(record, np.random.default_rng(1))
    expected = [a.copy() for a in arrays]
    run_reference(from_json(path), expected)
    compile_kernel(_annotated(path))(*arrays)
    np.testing.assert_allclose(arrays[2], expected[2], rtol=1e-5, atol=1e-5)
