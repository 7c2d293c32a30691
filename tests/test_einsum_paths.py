"""No slow path behind a correct answer: what `einsum` runs for 16-bit types, strided
views and GEMV-like shapes, against numpy and the reference interpreter.

Each case checks the plan (a microkernel, or copies in front of one, never the
scalar loop nest: the plan's function or `_has_microkernel` under a pinned host
description), the result against numpy in float64 within the type's rounding
(one rounding per store for FP16/BF16, the FP32 sums in any order), and that
1 and 2 threads give the same bits.
"""

from __future__ import annotations

import ctypes
import json
import mmap
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples, pairwise, rotate
from teir_dialect import TeirError, einsum_config
from teir_dialect.builders import with_unit_role
from teir_dialect.host import pinned
from teir_dialect.interpreter import run_reference
from teir_dialect.records import load_module
from teir_lowering import einsum
from teir_lowering.frontends.einsum_frontend import (
    _element_wise_nest,
    _gemv_record,
    _has_microkernel,
    _plan,
    output_shape,
)
from teir_lowering.runtime.kernel import compile_kernel

RNG = np.random.default_rng(23)
DTYPES = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32,
          "FP64": np.float64}
MANTISSA = {"FP16": 10, "BF16": 7, "FP32": 23, "FP64": 52}
"""Explicit significand bits: the type's rounding of a stored result is 2^-bits relative."""


def _operands(subscripts: str, extents: dict[str, int], name: str) -> list[np.ndarray]:
    terms = subscripts.split("->")[0].split(",")
    return [RNG.uniform(-1, 1, [extents[i] for i in t]).astype(DTYPES[name]) for t in terms]


def _bound(subscripts: str, operands: list[np.ndarray], name: str) -> np.ndarray:
    """Per element: one rounding to the type plus FP32 (FP64) sums in another order."""
    wide = [op.astype(np.float64) for op in operands]
    exact = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(w) for w in wide])
    inputs, output = subscripts.split("->")
    k = int(np.prod([n for term, op in zip(inputs.split(","), operands)
                     for i, n in zip(term, op.shape) if i not in output]) or 1)
    sums = 2.0**-52 if name == "FP64" else 2.0**-23
    return 2.0**-MANTISSA[name] * np.abs(exact) + 2 * k * sums * magnitude + 2.0**-24


def _check(subscripts: str, operands: list[np.ndarray], name: str,
           out: np.ndarray | None = None) -> np.ndarray:
    """The result at 1 thread, after checking it against numpy and 2 threads."""
    dtype = "BF16" if name == "BF16" else None
    results = []
    for threads in (1, 2):
        target = None if out is None else out.copy()
        result = einsum(subscripts, *operands, threads=threads, dtype=dtype,
                        **({} if target is None else {"out": target}))
        results.append(result if target is None else target)
    one, two = results
    assert one.tobytes() == two.tobytes(), "1 and 2 threads differ"
    exact = np.einsum(subscripts, *[op.astype(np.float64) for op in operands])
    error = np.abs(one.astype(np.float64) - exact)
    assert (error <= _bound(subscripts, operands, name)).all(), error.max()
    return one


def _interpreted(subscripts: str, operands: list[np.ndarray], name: str) -> np.ndarray:
    record = einsum_config(subscripts, *operands, dtype=name)
    arrays = [np.ascontiguousarray(op).view(np.uint16) if name == "BF16"
              else np.ascontiguousarray(op) for op in operands]
    out = np.zeros(np.einsum(subscripts, *[np.zeros(op.shape) for op in operands]).shape,
                   arrays[0].dtype)
    run_reference(record, [*arrays, out])
    return out.view(ml_dtypes.bfloat16) if name == "BF16" else out


# -- FP16/BF16: the Contraction's K role, the microkernel ----------------------------------

HALF_CASES = [
    ("ij,jk->ik", {"i": 37, "j": 29, "k": 23}),              # remainders everywhere
    ("ji,kj->ik", {"i": 33, "j": 40, "k": 17}),              # transposed A and B
    ("bij,bjk->bik", {"b": 3, "i": 19, "j": 21, "k": 35}),   # batched
    ("bhqd,bhkd->bhqk", {"b": 2, "h": 2, "q": 24, "k": 18, "d": 16}),  # attention scores
]


SLOW = pytest.mark.slow
"""Each kernel compiles in seconds: the default tier runs one case per path."""


@pytest.mark.parametrize("subscripts, extents, name", [
    (*HALF_CASES[0], "FP16"),
    (*HALF_CASES[3], "BF16"),
    *(pytest.param(*case, name, marks=SLOW) for case in HALF_CASES[:3] for name in ("BF16",)),
    *(pytest.param(*case, "FP16", marks=SLOW) for case in HALF_CASES[1:]),
])
def test_16_bit_einsum_runs_a_microkernel_with_one_rounding_per_store(
        subscripts: str, extents: dict[str, int], name: str) -> None:
    operands = _operands(subscripts, extents, name)
    with pinned("avx512"):
        record = einsum_config(subscripts, *operands, dtype=name)
        assert _has_microkernel(load_module(record))
    (contraction,) = [p for p in record["primitives"] if p["operation"] == "Contraction"]
    inputs, output = subscripts.split("->")
    reduced = [i for i in inputs.replace(",", "") if i not in output]
    assert contraction["axes"]["K"] == list(dict.fromkeys(reduced))
    result = _check(subscripts, operands, name)
    reference = _interpreted(subscripts, operands, name).astype(np.float64)
    ulps = 2.0**-MANTISSA[name] * np.abs(reference) + 2.0**-24
    assert (np.abs(result.astype(np.float64) - reference) <= ulps).all()


@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_16_bit_sums_are_rounded_once_not_per_k_step(name: str) -> None:
    """2048 + 1 + 1 rounds to 2048 at each step in both formats (FP16's spacing is 2
    there, BF16's 16) but is 2050 (FP16) or 2048 (BF16) rounded once; 2048 + 8 + 8:
    2048 per step in BF16, 2064 once."""
    dtype = DTYPES[name]
    small = 1.0 if name == "FP16" else 8.0
    a = np.array([[2048.0, small, small]], dtype)
    b = np.ones((3, 1), dtype)
    got = einsum("ij,jk->ik", a, b, dtype=name if name == "BF16" else None)
    assert float(got[0, 0]) == float(np.array(2048 + 2 * small, np.float32).astype(dtype))
    assert float(got[0, 0]) != 2048.0


def test_16_bit_records_keep_k_in_the_primitive() -> None:
    record = einsum_config("ij,jk->ik", (8, 4), (4, 16), dtype="FP16")
    schedule_axes = {node["axis"] for node in record["schedule"]["iterations"]}
    assert schedule_axes == {"i", "k"}
    record32 = einsum_config("ij,jk->ik", (8, 4), (4, 16), dtype="FP32")
    assert {node["axis"] for node in record32["schedule"]["iterations"]} == {"i", "j", "k"}


LINALG_F16 = """
func.func @mm(%A: memref<33x24xf16>, %B: memref<24x40xf16>, %C: memref<33x40xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%C : memref<33x40xf16>)
  linalg.matmul ins(%A, %B : memref<33x24xf16>, memref<24x40xf16>) outs(%C : memref<33x40xf16>)
  func.return
}
"""


def test_linalg_f16_matmul_runs_a_microkernel() -> None:
    from teir_dialect.context import teir_context
    from teir_dialect.records import find_configs
    from teir_lowering.frontends.linalg_run import prepare_linalg, run_linalg
    from teir_passes.pipeline import OptimizePass

    program = prepare_linalg(LINALG_F16, interpret=True)
    (step,) = program.steps
    module = load_module(step.record)
    with pinned("avx512"):
        OptimizePass().apply(teir_context(), module)
    kinds = {p.matched_kernel().kind_name for p in find_configs(module)[0].primitives
             if p.kind == "Contraction"}
    assert kinds == {"gemm"}
    results = [run_linalg(LINALG_F16, threads=threads) for threads in (1, 2)]
    assert all(result.ok for result in results), [r.summary() for r in results]
    assert results[0].arrays[2].tobytes() == results[1].arrays[2].tobytes()


# -- strided views ---------------------------------------------------------------------------

def _increments(subscripts: str, operands: list[np.ndarray], out: np.ndarray,
                name: str = "FP32") -> dict[str, int]:
    """The increments of the microkernel teir-optimize gives these arrays (pinned
    AVX2 host); asserts there is one."""
    from teir_dialect.context import teir_context
    from teir_dialect.records import find_configs
    from teir_passes.pipeline import OptimizePass

    record = einsum_config(subscripts, *operands, out=out, dtype=name)
    module = load_module(record)
    with pinned("avx2"):
        OptimizePass().apply(teir_context(), module)
    (kernel,) = [p.matched_kernel() for p in find_configs(module)[0].primitives
                 if p.kind == "Contraction"]
    assert kernel.is_gemm, kernel
    return {name: kernel.get(name) for name in ("inca", "incb", "incc")}


@pytest.mark.parametrize("name", ["FP32", *(pytest.param(n, marks=SLOW)
                                             for n in ("FP16", "BF16", "FP64"))])
def test_a_stepped_view_runs_the_microkernel_on_the_view(name: str) -> None:
    """GETT: the microkernel reads the stepped views (general strides, recorded as
    increments), no copy of either operand."""
    base = _operands("ij,jk->ik", {"i": 21, "j": 62, "k": 19}, name)
    a, b = base[0][:, ::2], base[1][::2]
    out = np.empty((21, 19), a.dtype)
    plan = _plan("ij,jk->ik", [a, b], out, False, "BF16" if name == "BF16" else None, 1,
                 False)
    assert plan.__qualname__.startswith("_direct")
    assert _increments("ij,jk->ik", [a, b], out, name) != {"inca": 1, "incb": 1, "incc": 1}
    _check("ij,jk->ik", [a, b], name)


def _view(array: np.ndarray, kind: str) -> np.ndarray:
    """`array`'s values as a view of another array: stepped along axis 0 or 1 (steps
    2 and 3), broadcast (stride 0) along axis 0 or 1, or the array itself."""
    if kind.startswith("step"):
        axis, step = int(kind[4]), int(kind[5])
        shape = [n * step if i == axis else n for i, n in enumerate(array.shape)]
        base = np.zeros(shape, array.dtype)
        index = tuple(slice(None, None, step) if i == axis else slice(None)
                      for i in range(array.ndim))
        base[index] = array
        return base[index]
    if kind.startswith("bcast"):
        axis = int(kind[5])
        return np.broadcast_to(array.take([0], axis=axis), array.shape)
    return array


VIEW_CASES = [
    # every orientation of A, B and C (trans), each with stepped or broadcast views
    ("ij,jk->ik", "step12", "step03", None),
    ("ji,jk->ik", "step02", "bcast0", None),
    ("ij,kj->ik", "bcast1", "step13", None),
    ("ji,kj->ik", "step13", "step02", None),
    ("ij,jk->ki", "step13", "plain", None),
    ("ji,jk->ki", "plain", "step12", "step12"),
    ("ij,kj->ki", "step13", "bcast1", None),
    ("ji,kj->ki", "bcast0", "step03", "step03"),
    ("bij,bjk->bik", "step22", "bcast1", None),
]
"""(subscripts, view of in0, view of in1, view of out or None): extents 37, 29, 23
(remainders along every vector dimension). The broadcasts are along the summed
index j: one along an output index is computed once (`_spread_plan`)."""


@pytest.mark.parametrize("subscripts, a_view, b_view, out_view, name", [
    # the default tier: every case in one type, the types taking turns
    pytest.param(*case, name, marks=() if (number + n) % 4 == 0 else SLOW)
    for number, case in enumerate(VIEW_CASES)
    for n, name in enumerate(("FP32", "FP64", "FP16", "BF16"))
])
def test_views_run_the_microkernel_in_every_layout(subscripts: str, a_view: str,
                                                    b_view: str, out_view: str | None,
                                                    name: str) -> None:
    """GETT: stepped and broadcast views of A, B and C, in every orientation, run one
    general-stride microkernel on the arrays (no copies), checked against numpy at
    1 and 2 threads in each data type."""
    extents = {"i": 37, "j": 29, "k": 23, "b": 3}
    a, b = _operands(subscripts, extents, name)
    a, b = _view(a, a_view), _view(b, b_view)
    output = subscripts.split("->")[1]
    out = None
    if out_view is not None:
        out = _view(np.zeros([extents[i] for i in output], a.dtype), out_view)
    target = np.empty([extents[i] for i in output], a.dtype) if out is None else out
    plan = _plan(subscripts, [a, b], target, False, "BF16" if name == "BF16" else None, 1,
                 False)
    assert plan.__qualname__.startswith("_direct"), plan.__qualname__
    assert _increments(subscripts, [a, b], target, name) != {"inca": 1, "incb": 1,
                                                             "incc": 1}
    _check(subscripts, [a, b], name, out=out)


@pytest.mark.parametrize("subscripts, extents, chosen", [
    # TCCG case 23's layout: B's k steps (f) 6.9 KiB apart: the transpose plan
    ("aecf,fbed->abcd", {"a": 3, "b": 12, "c": 5, "d": 12, "e": 12, "f": 7},
     "_transposed_plan"),
    # the spec's BRGEMM: k steps of 64 bytes on A, unit on B: its kernel, direct
    ("trus,pqtu->pqrs", {"p": 4, "q": 16, "r": 3, "s": 16, "t": 2, "u": 16}, "_direct"),
    # several indices per GEMM dimension, no Table 10.6.1 kernel: the transpose plan,
    # not one general-stride kernel (2-5x slower on TCCG's 4-D cases)
    ("aebf,fdec->abcd", {"a": 3, "b": 5, "c": 6, "d": 4, "e": 7, "f": 9},
     "_transposed_plan"),
    # TCCG 41's layout, 6 summed elements (at most SHORT_REDUCTION) into an out larger
    # than both operands, which the transposes would copy: the kernel on the arrays
    ("gdac,efgb->abcdef", {"a": 5, "b": 6, "c": 5, "d": 6, "e": 5, "f": 6, "g": 6},
     "_direct"),
    # the same with 40 summed elements: the copy is the lesser cost, transposes
    ("gdac,efgb->abcdef", {"a": 5, "b": 6, "c": 5, "d": 6, "e": 5, "f": 6, "g": 40},
     "_transposed_plan"),
])
def test_grouped_gemm_dimensions_choose_by_layout(subscripts: str, extents: dict[str, int],
                                                  chosen: str) -> None:
    operands = _operands(subscripts, extents, "FP32")
    out = np.empty([extents[i] for i in subscripts.split("->")[1]], np.float32)
    with pinned("avx2"):
        plan = _plan(subscripts, operands, out, False, None, 1, False)
    assert plan.__qualname__.startswith(chosen), plan.__qualname__
    _check(subscripts, operands, "FP32")


def test_a_short_reduction_keeps_the_transposes_where_c_would_be_transposed() -> None:
    """TCCG 36's layout in FP64 (15 summed elements into a 6-D out): its kernel on the
    arrays would put the vectors along the dimension C is not contiguous in and
    transpose C in registers (`_transposes_c`), several times slower there than
    the transposes; TCCG 41's layout takes the kernel on the arrays."""
    from teir_lowering.frontends.einsum_frontend import _transposes_c

    extents = {"a": 13, "b": 15, "c": 13, "d": 15, "e": 13, "f": 13, "g": 15}
    for subscripts, chosen in (("dfgc,geab->abcdef", "_transposed_plan"),
                               ("gdac,efgb->abcdef", "_direct")):
        operands = _operands(subscripts, extents, "FP64")
        out = np.empty([extents[i] for i in subscripts.split("->")[1]], np.float64)
        with pinned("avx512"):
            transposed = _transposes_c(load_module(einsum_config(subscripts, *operands,
                                                                 out=out)))
            plan = _plan(subscripts, operands, out, False, None, 1, False)
        assert transposed == (chosen == "_transposed_plan"), subscripts
        assert plan.__qualname__.startswith(chosen), (subscripts, plan.__qualname__)
        _check(subscripts, operands, "FP64")


def test_a_strided_out_and_a_broadcast_operand() -> None:
    a = _operands("ij,jk->ik", {"i": 17, "j": 13, "k": 9}, "FP32")[0]
    b = np.broadcast_to(RNG.uniform(-1, 1, (1, 9)).astype(np.float32), (13, 9))
    out = np.full((17, 18), np.nan, np.float32)
    plan = _plan("ij,jk->ik", [a, b], out[:, ::2], False, None, 1, False)
    assert plan.__qualname__.startswith("_direct")
    increments = _increments("ij,jk->ik", [a, b], out[:, ::2])
    assert 0 in increments.values() and 2 in increments.values(), increments
    _check("ij,jk->ik", [a, b], "FP32", out=out[:, ::2])
    view = out[:, ::2]
    einsum("ij,jk->ik", a, b, out=view, threads=1)
    np.testing.assert_allclose(view, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    assert np.isnan(out[:, 1::2]).all()  # the elements between are not touched


@pytest.mark.parametrize("machine", ["avx512", "avx2"])
def test_an_f16_operand_too_large_to_widen_keeps_its_tiles_apart(
        fresh_plans: list[Any], machine: str) -> None:
    """The spec's contraction in FP16 with p q x K = 8 x 64 x 128 (256 KiB widened to
    f32, over the 128 KiB a kernel widens whole): teir-auto-schedule leaves p and
    q apart, so that the tile's B (64 x 128) is widened whole, once per p, and the
    kernel keeps it across r; within FP16's rounding of numpy at 1 and 2 threads
    (the same bits); in FP32 p and q fuse."""
    from teir_dialect.context import teir_context
    from teir_dialect.records import find_configs
    from teir_passes.pipeline import OptimizePass

    subscripts = "trus,pqtu->pqrs"
    extents = {"p": 8, "q": 64, "r": 4, "s": 32, "t": 2, "u": 64}
    half = _operands(subscripts, extents, "FP16")
    for name, fused in (("FP16", False), ("FP32", True)):
        operands = [op.astype(DTYPES[name]) for op in half]
        module = load_module(einsum_config(subscripts, *operands, dtype=name))
        with pinned(machine):
            OptimizePass(threads=2).apply(teir_context(), module)
        script = str(find_configs(module)[0].attributes["script"])
        assert ("fuse-axes" in script) is fused, script
    with pinned(machine):
        _check(subscripts, half, "FP16")
    assert any(plan.widen_y for plan in fresh_plans), fresh_plans


# -- GEMV-like shapes -------------------------------------------------------------------------

GEMV_CASES = [
    ("ij,j->i", {"i": 37, "j": 29}),            # rows of A dotted with v
    ("ji,j->i", {"i": 37, "j": 29}),            # columns of A scaled by v
    ("j,ij->i", {"i": 21, "j": 45}),            # the vector first
    ("bij,bj->bi", {"b": 3, "i": 17, "j": 26}),  # batched
    ("ijk,jk->i", {"i": 9, "j": 5, "k": 7}),     # two contracted indices
]


@pytest.mark.parametrize("subscripts, extents, name", [
    (*GEMV_CASES[0], "FP32"),
    (*GEMV_CASES[1], "FP32"),
    (*GEMV_CASES[3], "FP16"),
    *(pytest.param(*case, name, marks=SLOW) for case in GEMV_CASES for name in ("FP32", "FP16")
      if (case, name) not in ((GEMV_CASES[0], "FP32"), (GEMV_CASES[1], "FP32"),
                              (GEMV_CASES[3], "FP16"))),
])
def test_gemv_shapes_run_the_gemm_microkernel(subscripts: str, extents: dict[str, int],
                                               name: str) -> None:
    operands = _operands(subscripts, extents, name)
    out = np.empty(np.einsum(subscripts, *operands).shape, operands[0].dtype)
    with pinned("avx512"):
        assert _gemv_record(subscripts, operands, out, False, None) is not None
    _check(subscripts, operands, name)


@SLOW
@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("subscripts, extents", GEMV_CASES + HALF_CASES)
def test_every_type_and_shape(subscripts: str, extents: dict[str, int], name: str) -> None:
    operands = _operands(subscripts, extents, name)
    _check(subscripts, operands, name)
    stepped = [np.repeat(op, 2, axis=-1)[..., ::2] for op in operands]
    _check(subscripts, stepped, name)


DOT_CASES = [
    ("i,i->", {"i": 1037}),                      # a dot product
    ("ij,ij->i", {"i": 13, "j": 301}),           # one per row
    ("bij,bij->b", {"b": 3, "i": 7, "j": 45}),   # one per batch, K over two indices
    ("ij,ji->", {"i": 21, "j": 21}),             # the trace of a product
]


@pytest.mark.parametrize("subscripts, extents, name", rotate(DOT_CASES, list(DTYPES)))
def test_dot_products_run_the_gemm_microkernel(subscripts: str, extents: dict[str, int],
                                               name: str) -> None:
    """Neither input has an index of its own: an extent-1 M and N (`_gemv_record`)
    make the GEMM microkernel's dot kernel take it, not the scalar loop nest (a
    chain of dependent adds: `i,i->` of 100,000 elements 6x numpy's time, `ij->`
    10x); within the type's rounding of numpy at 1 and 2 threads."""
    operands = _operands(subscripts, extents, name)
    out = np.empty(output_shape(subscripts, operands), operands[0].dtype)
    with pinned("avx512"):
        record = _gemv_record(subscripts, operands, out, False, name)
    assert record is not None  # (_gemv_record returns only what gets a microkernel)
    _check(subscripts, operands, name)


@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_a_16_bit_sum_over_contiguous_indices_is_one_k_axis(name: str) -> None:
    """`ijk->` in a 16-bit type: the K role (one rounding per store) holds i, j and
    k fused into one axis, as teir-fuse-axes fuses FP32's loops, so the dot kernel
    takes it; a sum over indices that are not contiguous keeps them apart."""
    x = RNG.uniform(-1, 1, (5, 6, 70)).astype(DTYPES[name])
    record = einsum_config("ijk,ijk->", x, np.broadcast_to(x.dtype.type(1), x.shape),
                           dtype=name)
    (contraction,) = [p for p in record["primitives"] if p["operation"] == "Contraction"]
    assert len(contraction["axes"]["K"]) == 1, contraction
    _check("ijk,ijk->", [x, np.ones_like(x)], name)
    apart = einsum_config("ijk,ijk->", x[:, :, :-1], x[:, :, :-1], dtype=name)
    (contraction,) = [p for p in apart["primitives"] if p["operation"] == "Contraction"]
    assert len(contraction["axes"]["K"]) == 2, contraction  # i and j fuse, k not
    total = einsum("ijk->", x, dtype=name if name == "BF16" else None)
    np.testing.assert_allclose(float(total), float(x.astype(np.float64).sum()), rtol=1e-2,
                               atol=1e-2)


@pytest.mark.parametrize("name", ["FP32", "FP64"])
@pytest.mark.parametrize("subscripts, extents", [
    ("ij,ij->j", {"i": 37, "j": 45}),             # column dot products
    ("ijk,jk->ik", {"i": 5, "j": 23, "k": 40}),   # k a batch at unit stride
    ("abc,abc->c", {"a": 9, "b": 5, "c": 31}),    # two sum indices
])
def test_sums_down_columns_run_outside_the_unit_stride_batch(
        subscripts: str, extents: dict[str, int], name: str) -> None:
    """A batch index at unit stride on both inputs and out: the kernel loops over the
    sums outside it (`_element_wise_nest`), out zeroed first, so the innermost
    loop multiplies and adds contiguous vectors; each element summed in the
    record's order: the bits of the record's own schedule, at 1 and 2 threads
    (and FP64's: the reference interpreter's)."""
    from teir_dialect.context import teir_context
    from teir_passes.pipeline import OptimizePass

    operands = _operands(subscripts, extents, name)
    out = np.empty(output_shape(subscripts, operands), operands[0].dtype)
    plan = _plan(subscripts, operands, out, False, None, 1, False)
    assert plan.__qualname__.startswith("_direct"), plan.__qualname__
    nest = _element_wise_nest(einsum_config(subscripts, *operands), subscripts, operands,
                              out, relu=False)
    assert nest is not None
    (innermost,) = [n["axis"] for n in nest["schedule"]["iterations"]
                    if n["children"] == ["mac"]]
    assert innermost == subscripts[-1], nest["schedule"]
    module = load_module(nest)  # teir-auto-schedule keeps that loop innermost
    OptimizePass().apply(teir_context(), module)
    lines = str(module).splitlines()
    mac = next(n for n, line in enumerate(lines) if "invoke mac" in line)
    assert f"over {innermost} {{" in lines[mac - 1], "\n".join(lines)
    assert any("Contraction {M = [], N = [], K = []}" in line for line in lines), lines
    expected = np.zeros_like(out)
    compile_kernel(einsum_config(subscripts, *operands), threads=1)(*operands, expected)
    if name == "FP64":
        assert expected.tobytes() == _interpreted(subscripts, operands, name).tobytes()
    for threads in (1, 2):
        got = einsum(subscripts, *operands, threads=threads)
        assert got.tobytes() == expected.tobytes(), threads
    assert _element_wise_nest(einsum_config(subscripts, *operands), subscripts, operands,
                              out, relu=True) is None
    half = [op.astype(np.float16) for op in operands]
    assert _element_wise_nest(einsum_config(subscripts, *half), subscripts, half,
                              np.empty(out.shape, np.float16), relu=False) is None


def _check_plan(subscripts: str, extents: dict[str, int], name: str,
                plan_name: str) -> list[np.ndarray]:
    """Random operands for which `_plan` takes `plan_name`, checked (`_check`, and
    with ReLU the ReLU of the result)."""
    operands = _operands(subscripts, extents, name)
    out = np.empty(output_shape(subscripts, operands), operands[0].dtype)
    plan = _plan(subscripts, operands, out, False, name, 1, False)
    assert plan.__qualname__.startswith(plan_name), plan.__qualname__
    _check(subscripts, operands, name)
    kind = "BF16" if name == "BF16" else None
    relu = einsum(subscripts, *operands, relu=True, dtype=kind)
    assert np.array_equal(relu, np.maximum(einsum(subscripts, *operands, dtype=kind), 0))
    return operands


@pytest.mark.parametrize("name", ["FP16", "BF16"])
@pytest.mark.parametrize("subscripts, extents", [
    ("ij,ij->j", {"i": 150, "j": 120}),
    ("ijk,jk->ik", {"i": 8, "j": 45, "k": 48}),
])
def test_16_bit_sums_down_columns_copy_the_batch_outside(
        subscripts: str, extents: dict[str, int], name: str) -> None:
    """In FP16/BF16 the sums stay in the Contraction (one rounding per store), so
    the loops cannot go outside the unit-stride batch: both operands are copied
    with the batch first (`_batch_outer_plan`) and each batch's sum is a dot
    product over contiguous memory; within the type's rounding of numpy at 1
    and 2 threads, with ReLU too. Under BATCH_OUTER_MIN elements the one kernel
    of the record (the copies' calls would cost more than they save), not the
    dot kernel on gathered vectors, which is slower still."""
    _check_plan(subscripts, extents, name, "_batch_outer_plan")
    small = _operands(subscripts, {i: min(n, 9) for i, n in extents.items()}, name)
    target = np.empty(output_shape(subscripts, small), small[0].dtype)
    assert _plan(subscripts, small, target, False, name, 1, False).__qualname__.startswith(
        "_direct")
    if subscripts == "ij,ij->j":  # not as a dot product with gathered vectors
        assert _gemv_record(subscripts, small, target, False, name) is None


@pytest.mark.parametrize("subscripts, extents, name", rotate([
    ("ij,ij->ji", {"i": 70, "j": 65}),
    ("ij,j->ji", {"i": 64, "j": 70}),
    ("bij,bij->bji", {"b": 3, "i": 40, "j": 37}),
], list(DTYPES)))
def test_a_product_into_a_transposed_out_is_computed_then_transposed(
        subscripts: str, extents: dict[str, int], name: str) -> None:
    """An element-wise product whose out runs along another index than its larger
    operand: the product in that operand's order, then a Copy into out
    (`_product_then_transpose`); within the type's rounding of numpy at 1 and 2
    threads, with ReLU too, and into a strided out (the product then written
    through its own copy). Under TRANSPOSED_PRODUCT_MIN elements, one kernel."""
    operands = _check_plan(subscripts, extents, name, "_product_then_transpose")
    small = _operands(subscripts, {i: min(n, 9) for i, n in extents.items()}, name)
    target = np.empty(output_shape(subscripts, small), small[0].dtype)
    assert not _plan(subscripts, small, target, False, name, 1,
                     False).__qualname__.startswith("_product_then_transpose")
    shape = output_shape(subscripts, operands)
    wide = np.full((*shape[:-1], 2 * shape[-1]), np.nan, operands[0].dtype)
    _check(subscripts, operands, name, out=wide[..., ::2])


@pytest.mark.parametrize("name", ["FP32", "FP16"])
@pytest.mark.parametrize("subscripts, extents", [
    ("ij,jk->ijk", {"i": 70, "j": 65, "k": 40}),
    ("bi,bj->bij", {"b": 70, "i": 64, "j": 30}),
    ("ij,k->ijk", {"i": 70, "j": 64, "k": 33}),
])
def test_an_outer_product_along_an_operands_memory_keeps_one_kernel(
        subscripts: str, extents: dict[str, int], name: str) -> None:
    """Out's last index at unit stride in an operand (outer products): the record's
    loops in out's order run along memory, so no product in another order and
    transpose (`ij,jk->ijk` 100^3 FP32 took 1.1 ms that way against 75 us)."""
    operands = _operands(subscripts, extents, name)
    target = np.empty(output_shape(subscripts, operands), operands[0].dtype)
    plan = _plan(subscripts, operands, target, False, name, 1, False)
    assert plan.__qualname__.startswith("_direct"), plan.__qualname__
    _check(subscripts, operands, name)


def test_a_stepped_gemv_runs_the_microkernel_on_the_views() -> None:
    a = RNG.uniform(-1, 1, (33, 58)).astype(np.float32)[:, ::2]
    v = np.broadcast_to(np.float32(0.5), (29,))
    plan = _plan("ij,j->i", [a, v], np.empty(33, np.float32), False, None, 1, False)
    assert plan.__qualname__.startswith("_direct")
    _check("ij,j->i", [a, v], "FP32")


def test_with_unit_role_names_what_it_refuses() -> None:
    record = einsum_config("ij,jz->iz", (4, 3), (3, 1))
    with pytest.raises(TeirError, match="'i' must be an extent-1 axis"):
        with_unit_role(record, "i", "N")
    with pytest.raises(TeirError, match="'K' M or N"):
        with_unit_role(record, "z", "K")
    gemv = with_unit_role(record, "z", "N")
    assert all(node["axis"] != "z" for node in gemv["schedule"]["iterations"])
    assert all(p["axes"]["N"] == ["z"] for p in gemv["primitives"])


@pytest.mark.parametrize("name", ["FP32", "FP64", "BF16", "FP16"])
@pytest.mark.parametrize("memory", ["ijb", "jib"])
def test_a_gemv_whose_batch_is_innermost_runs_on_it(name: str, memory: str) -> None:
    """A from an [i][j][b] or [j][i][b] array (b = 5, its unit stride): the GEMV
    runs on A as it lies, not on a copy: the segmented dot or the periodic
    product (`_segmented_plan`), with the vector as it lies when that is [j][b]
    (and, from [j][i][b], out as it lies when that is [i][b]: the kernel alone),
    else through scratch arrays so laid. Either operand order, either output
    order, with ReLU, at 1 and 2 threads, within the type's rounding of numpy; a
    vector changed in place between calls is read afresh. A batch of 17 (past
    SEGMENT_MAX) from [j][i][b] is copied first."""
    dtype = DTYPES[name]
    extents = {"b": 5, "i": 23, "j": 19}
    a = RNG.uniform(-1, 1, [extents[i] for i in memory]).astype(dtype).transpose(
        [memory.index(i) for i in "bij"])
    v = RNG.uniform(-1, 1, (19, 5)).astype(dtype).T
    broadcast = np.broadcast_to(v[:1], v.shape)
    for subscripts, operands in (("bij,bj->bi", [a, v]), ("bj,bij->ib", [v, a]),
                                 ("bij,bj->bi", [a, broadcast])):
        shape = (5, 23) if subscripts.endswith("bi") else (23, 5)
        plan = _plan(subscripts, operands, np.empty(shape, dtype), False, name, 1, False)
        direct = operands[1] is not broadcast and (
            memory == "ijb" or subscripts.endswith("ib"))
        expected = "_direct" if direct else "_segmented_plan"
        assert plan.__qualname__.startswith(expected), plan.__qualname__
        _check(subscripts, operands, name)
    relu = einsum("bij,bj->bi", a, v, relu=True, dtype="BF16" if name == "BF16" else None)
    plain = einsum("bij,bj->bi", a, v, dtype="BF16" if name == "BF16" else None)
    assert np.array_equal(relu, np.maximum(plain, 0))
    v[...] = RNG.uniform(-1, 1, v.shape).astype(dtype)  # the same address, new values
    _check("bij,bj->bi", [a, v], name)
    if name == "FP32":
        wide = RNG.uniform(-1, 1, (19, 23, 17)).astype(dtype).transpose(2, 1, 0)
        plan = _plan("bij,bj->bi", [wide, v[:1].repeat(17, 0)], np.empty((17, 23), dtype),
                     False, name, 1, False)
        assert plan.__qualname__.startswith("_copied_plan"), plan.__qualname__


@pytest.mark.parametrize("subscripts", [
    "abd,ad->abd", "ad,abd->abd", "abd,ad->d", "abd,bd->abd", "dba,ad->abd", "abd,bd->ab"])
def test_a_batch_innermost_product_that_is_no_gemv_keeps_its_indices(subscripts: str) -> None:
    """Three-index A whose unit stride is a short index both operands carry, times
    a two-index operand, where the other two indices of A are not one row of out
    and one summed index (a product with broadcast, or two sums): not the batched
    GEMV of `_segmented_plan` (the diagonal plan before it took `abd,ad->abd` for
    one, its `b` a row and `a` a sum, and returned wrong values or none of out's
    shape; found by test_einsum_tree's hypothesis search)."""
    extents = {"a": 3, "b": 4, "d": 2}
    terms, output = subscripts.split("->")
    operands = [RNG.uniform(-1, 1, [extents[i] for i in t]).astype(np.float32)
                for t in terms.split(",")]
    big = max(range(2), key=lambda n: operands[n].size)
    out = np.empty([extents[i] for i in output], np.float32)
    plan = _plan(subscripts, operands, out, False, "FP32", 1, False)
    assert not plan.__qualname__.startswith("_segmented_plan"), plan.__qualname__
    assert terms.split(",")[big][-1] in terms.split(",")[1 - big]  # the short unit stride
    _check(subscripts, operands, "FP32")


SPREAD_CASES = [
    # subscripts, extents, the broadcast (stride-0) index of each operand
    ("ji,jk->ik", {"i": 34, "j": 120, "k": 37}, ("i", "k")),    # one dot product
    ("ij,jk->ik", {"i": 23, "j": 200, "k": 31}, ("i", None)),   # rows of A alike
    ("bij,bjk->bik", {"b": 4, "i": 9, "j": 180, "k": 21}, ("b", "b")),  # one batch
]


def _broadcast(term: str, extents: dict[str, int], index: str | None,
               dtype: type) -> np.ndarray:
    shape = [extents[i] for i in term]
    small = [1 if i == index else n for i, n in zip(term, shape)]
    return np.broadcast_to(RNG.uniform(-1, 1, small).astype(dtype), shape)


@pytest.mark.parametrize("subscripts, extents, spread, name",
                         rotate(SPREAD_CASES, ["FP32", "FP64", "BF16", "FP16"]))
def test_an_output_index_broadcast_in_every_operand_is_computed_once(
        subscripts: str, extents: dict[str, int], spread: tuple[str | None, ...],
        name: str) -> None:
    """The result is the same along an output index at stride 0 in every operand
    that has it: `_spread_plan` computes it at one position and copies it along
    the index (a stride-0 Copy); within the type's rounding of numpy at 1 and 2
    threads, with ReLU, into a strided out, and every element of out written
    (out starts as NaN). A broadcast only one operand of two has along a batch
    index, a sum shorter than SPREAD_REDUCTION or less work than SPREAD_WORK
    keeps the other plans."""
    dtype = DTYPES[name]
    terms = subscripts.split("->")[0].split(",")
    operands = [_broadcast(t, extents, i, dtype) for t, i in zip(terms, spread)]
    output = subscripts.split("->")[1]
    shape = tuple(extents[i] for i in output)
    plan = _plan(subscripts, operands, np.empty(shape, dtype), False, name, 1, False)
    assert plan.__qualname__.startswith("_spread_plan"), plan.__qualname__
    out = np.full((*shape[:-1], 2 * shape[-1]), np.nan, dtype)
    one = _check(subscripts, operands, name, out=out[..., ::2])
    assert not np.isnan(one.astype(np.float64)).any()
    kind = "BF16" if name == "BF16" else None
    relu = einsum(subscripts, *operands, relu=True, dtype=kind)
    assert np.array_equal(relu, np.maximum(einsum(subscripts, *operands, dtype=kind), 0))
    if spread[1] == "b":
        alone = [operands[0], np.ascontiguousarray(operands[1])]
        assert not _plan(subscripts, alone, np.empty(shape, dtype), False, name, 1,
                         False).__qualname__.startswith("_spread_plan")
    for fewer in ({**extents, "j": 5}, {i: min(n, 12) for i, n in extents.items()}):
        few = [_broadcast(t, fewer, i, dtype) for t, i in zip(terms, spread)]
        small = np.empty([fewer[i] for i in output], dtype)
        assert not _plan(subscripts, few, small, False, name, 1,
                         False).__qualname__.startswith("_spread_plan")


@pytest.fixture
def fresh_plans(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every einsum plan and kernel made afresh in the test (their caches are keyed by
    layouts, not by the pinned host), and the GEMM plans the emitter chooses, in
    order."""
    from teir_lowering.codegen import gemm_emitter, gemm_plan
    from teir_lowering.frontends import einsum_frontend, einsum_semantics
    from teir_lowering.runtime import kernel as kernel_module

    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})
    monkeypatch.setattr(einsum_semantics, "_PLANS", {})
    monkeypatch.setattr(einsum_frontend, "_PLANS", {})
    plans: list[Any] = []

    def plan(*args: object, **options: object) -> gemm_plan.GemmPlan:
        plans.append(gemm_plan.plan_gemm(*args, **options))  # type: ignore[arg-type]
        return plans[-1]

    monkeypatch.setattr(gemm_emitter, "plan_gemm", plan)
    return plans


def _guarded(rows: int, columns: int, dtype: type, step: int,
             before: bool = False) -> np.ndarray:
    """`base[:, ::step]` of rows x columns random values whose last element ends a page
    followed by an inaccessible one (mprotect): a read past the view's last
    element faults (`before`: whose first element starts a page after an
    inaccessible one). The mapping lives as long as the view (its base)."""
    itemsize = np.dtype(dtype).itemsize
    width = (columns - 1) * step + 1
    nbytes = rows * width * itemsize
    page = mmap.PAGESIZE
    total = -(-nbytes // page) * page + page
    memory = mmap.mmap(-1, total)
    start = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    guard = 0 if before else total - page
    assert libc.mprotect(start + guard, page, 0) == 0, ctypes.get_errno()
    base = np.frombuffer(memory, dtype, count=rows * width,
                         offset=page if before else total - page - nbytes).reshape(rows, width)
    base[...] = RNG.uniform(-1, 1, base.shape).astype(dtype)
    return base[:, ::step]


@pytest.mark.parametrize("k, step, name, machine", pairwise(
    k=[16, 40, 53], step=[2, 3, 6, 7], name=["FP32", "FP64", "BF16", "FP16"],
    machine=["avx512", "avx2"]))
def test_a_stepped_k_is_read_as_contiguous_vectors(
        monkeypatch: pytest.MonkeyPatch, fresh_plans: list[Any], machine: str, name: str,
        step: int, k: int) -> None:
    """A GEMV on `a[:, ::step]` (the dot kernel, k strided), planned for 64- and for
    32-byte vectors: steps up to STEPPED_MAX read contiguous vectors regrouped by
    shuffles instead of gathers, never past the view's last element (a guard page
    follows it), bit-identical at 1 and 2 threads and within the type's rounding of
    numpy."""
    from teir_lowering.codegen import emit, gemm_emitter, gemm_plan

    used: list[int] = []

    def spy(*args: object, **options: object) -> object:
        used.append(args[4])  # type: ignore[arg-type]
        return emit.load_stepped(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gemm_emitter, "load_stepped", spy)
    a = _guarded(37, k, DTYPES[name], step)
    v = RNG.uniform(-1, 1, k).astype(DTYPES[name])
    with pinned(machine):
        _check("ij,j->i", [a, v], name)
    kernels = [plan.kernel for plan in fresh_plans]
    if k > 16 and "dot" in kernels:  # more than one whole step of the widest vectors
        assert bool(used) == (step <= gemm_plan.STEPPED_MAX), used
    assert step <= gemm_plan.STEPPED_MAX or not used


@pytest.mark.parametrize("columns, depth, name, machine", pairwise(
    columns=[2, 3, 6, 7, 12], depth=[16, 203, 1024], name=["FP32", "FP64", "BF16", "FP16"],
    machine=["avx512", "avx2"]))
def test_a_gemm_of_few_columns_copies_them_along_k(
        fresh_plans: list[Any], machine: str, name: str, depth: int, columns: int) -> None:
    """`ij,jk->ik` with k = 2 to 12 on C-contiguous arrays: B's k steps lie `columns`
    elements apart, and the dot kernel copies B once per tile, widened,
    k-contiguous (`pack = "copy"`), then reads every row block of A against the
    copy (before: the outer kernel's two-lane vectors along k, or B stepped per
    row block, 1.6-12x slower); never past B's last element (a guard page follows
    it); bit-identical at 1 and 2 threads and within the type's rounding of numpy.
    Which tiles take the dot kernel and copy is the cost model's choice
    (test_microkernel checks the copying kernel)."""
    dtype = DTYPES[name]
    a = RNG.uniform(-1, 1, (29, depth)).astype(dtype)
    b = _guarded(depth, columns, dtype, 1)
    with pinned(machine):
        _check("ij,jk->ik", [a, b], name)
    assert fresh_plans  # the GEMM microkernel, planned afresh for the pinned host


@pytest.mark.parametrize("machine", ["avx512", "avx2"])
@pytest.mark.parametrize("name", ["FP32", "FP64", "BF16", "FP16"])
def test_gemv_views_without_a_unit_k_stride(fresh_plans: list[Any], machine: str,
                                            name: str) -> None:
    """GEMVs whose k is contiguous in neither operand. A stepped along k times a
    vector broadcast along it (stride 0): the dot kernel, stepped loads and one
    broadcast element (before: vectors gathered down the rows). A column-major A
    (k steps 1024 elements apart) times a stepped vector: vectors along the rows,
    read in place however wide the arithmetic (a 16-bit A's steps are 2 KB apart,
    not the 4 KB its f32 accumulators would suggest), in blocks of more than four
    vectors for the one column (four leave the FMAs waiting on each other)."""
    from teir_lowering.codegen import gemm_plan

    dtype = DTYPES[name]
    stepped = RNG.uniform(-1, 1, (67, 2 * 151)).astype(dtype)[:, ::2]
    constant = np.broadcast_to(np.asarray(RNG.uniform(-1, 1), dtype), (151,))
    with pinned(machine):
        _check("ij,j->i", [stepped, constant], name)
    assert [plan.kernel for plan in fresh_plans] == ["dot"] * len(fresh_plans), fresh_plans
    fresh_plans.clear()
    column_major = RNG.uniform(-1, 1, (97, 1024)).astype(dtype).T
    vector = RNG.uniform(-1, 1, 3 * 97).astype(dtype)[::3]
    with pinned(machine):
        _check("ij,j->i", [column_major, vector], name)
    assert fresh_plans
    for plan in fresh_plans:
        assert (plan.kernel, plan.vector, plan.pack) == ("outer", "m", ""), plan
        assert plan.vectors > 4, plan
    # 16 registers: six vectors, six accumulators, a broadcast and three to spare
    assert max(gemm_plan.register_blocks(1024, 1, 8, 16, False)) == (6, 1)


@pytest.mark.parametrize("rows, name, machine", pairwise(
    rows=[8, 61, 64], name=["FP32", "FP64", "BF16", "FP16"], machine=["avx512", "avx2"]))
def test_rows_stepped_along_the_vectors_are_read_as_contiguous_vectors(
        monkeypatch: pytest.MonkeyPatch, fresh_plans: list[Any], machine: str, name: str,
        rows: int) -> None:
    """A GEMV on `a[:, ::step]` read with the vectors along its stepped index (`ji,j->i`):
    steps up to STEPPED_MAX load contiguous vectors regrouped by shuffles, forward
    within the rows, the vector that ends them backward from its last lane, and
    gathered when it also starts them; never a byte outside the view (a guard page
    right after its last element, or right before its first), bit-identical at 1
    and 2 threads and within the type's rounding of numpy."""
    from teir_lowering.codegen import emit, gemm_emitter

    directions: list[bool] = []

    def spy(*args: object, **options: object) -> object:
        directions.append(bool(options.get("back")))
        return emit.load_stepped(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gemm_emitter, "load_stepped", spy)
    for step in (2, 3, 6):
        for before in (False, True):
            a = _guarded(53, rows, DTYPES[name], step, before)
            v = RNG.uniform(-1, 1, 53).astype(DTYPES[name])
            with pinned(machine):
                _check("ji,j->i", [a, v], name)
    stepped = [p for p in fresh_plans if p.kernel == "outer" and p.vector == "m"]
    assert stepped or rows == 8, fresh_plans
    # one vector of rows is gathered (it starts and ends them: the planner may take
    # another kernel then); more read stepped, backward where a vector ends them
    # (an odd count ends with a scalar row)
    more = bool(stepped) and rows > stepped[0].lanes
    assert (False in directions, True in directions) == (more, more and rows % 2 == 0), (
        directions, stepped)


def test_a_gemm_tiled_two_rows_at_a_time_is_transposed_first() -> None:
    """M = (a, b) with a stepped: the tiles on the arrays are b = 2 rows; copies that
    fuse M into one axis give one GEMM (`_direct_gemm` wants MIN_LANES rows)."""
    a = RNG.uniform(-1, 1, (40, 2, 30)).astype(np.float32)[::2]
    b = RNG.uniform(-1, 1, (30, 24)).astype(np.float32)
    out = np.empty((20, 2, 24), np.float32)
    plan = _plan("abc,cd->abd", [a, b], out, False, None, 1, False)
    assert plan.__qualname__.startswith("_transposed_plan"), plan.__qualname__
    _check("abc,cd->abd", [a, b], "FP32")


@pytest.mark.parametrize("machine", ["avx512", "avx2"])
def test_broadcasts_constant_along_k_leave_registers_for_them(
        fresh_plans: list[Any], machine: str) -> None:
    """Both operands of `bij,bjk->bik` broadcast along j (stride 0): Y's broadcasts
    are the same at every k step, LLVM holds them in registers across the k loop,
    and the register block leaves one per column (`held_y`), where 2 x 14 spilled."""
    a = np.broadcast_to(RNG.uniform(-1, 1, (3, 29, 1)), (3, 29, 17))
    b = np.broadcast_to(RNG.uniform(-1, 1, (3, 1, 61)), (3, 17, 61))
    with pinned(machine):
        _check("bij,bjk->bik", [a, b], "FP64")
    outer = [p for p in fresh_plans if p.kernel == "outer" and p.lanes > 1]
    assert outer and all(p.held_y for p in outer), fresh_plans
    for p in outer:
        assert (p.vectors + 1) * p.columns + max(4, p.vectors + 1) <= p.registers, p


# -- generated: the plans for sums, dot products and broadcasts ---------------------------

REDUCTIONS = ["i,i->", "ij,ij->i", "ij,ij->j", "ij->", "ijk->", "bij,bij->b", "ijk,jk->ik",
              "ij,ij->", "abc,abc->c", "ji,jk->ik", "bij,bjk->bik", "ij,ij->ji", "ij,j->ji"]
"""Dot products, sums down columns and plain sums (`_gemv_record`'s extent-1 M and N,
`_element_wise_nest`, `_batch_outer_plan`), and GEMMs whose views may be broadcast
along an output index (`_spread_plan`)."""


@st.composite
def _random_view(draw: st.DrawFn, shape: list[int], dtype: type) -> np.ndarray:
    """A random array of `shape` as a view: stepped, permuted, broadcast, offset or
    reversed along one axis, or plain."""
    values = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(st.sampled_from(["plain", "step", "permuted", "broadcast", "offset",
                                 "reversed"]))
    axis = draw(st.integers(0, len(shape) - 1))

    def data(full: Sequence[int]) -> np.ndarray:
        return values.uniform(-1, 1, full).astype(dtype)

    along = [slice(None)] * len(shape)
    if kind == "step":
        along[axis] = slice(None, None, 2)
        return data([n * 2 if i == axis else n for i, n in enumerate(shape)])[tuple(along)]
    if kind == "permuted":
        order = draw(st.permutations(range(len(shape))))
        return data([shape[i] for i in order]).transpose(np.argsort(order))
    if kind == "broadcast":
        return np.broadcast_to(data([1 if i == axis else n for i, n in enumerate(shape)]),
                               shape)
    if kind == "offset":
        return data([n + 1 for n in shape])[tuple(slice(1, None) for _ in shape)]
    if kind == "reversed":
        along[axis] = slice(None, None, -1)
    return data(shape)[tuple(along)]


@settings(max_examples=examples(80, 16), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_sums_and_broadcasts_match_numpy(data: st.DataObject) -> None:
    """Random views (any type, ReLU or not) of the einsums that take the plans for
    sums, dot products and broadcast indices: within the type's rounding of numpy
    in float64, the same bits at 1 and 2 threads."""
    subscripts = data.draw(st.sampled_from(REDUCTIONS))
    name = data.draw(st.sampled_from(list(DTYPES)))
    inputs = subscripts.split("->")[0]
    extents = {i: data.draw(st.integers(1, 40)) for i in sorted(set(inputs) - {","})}
    operands = [data.draw(_random_view([extents[i] for i in term], DTYPES[name]))
                for term in inputs.split(",")]
    relu = data.draw(st.booleans())
    dtype = "BF16" if name == "BF16" else None
    one, two = (np.asarray(einsum(subscripts, *operands, relu=relu, threads=threads,
                                  dtype=dtype)) for threads in (1, 2))
    assert one.tobytes() == two.tobytes(), "1 and 2 threads differ"
    exact = np.einsum(subscripts, *[op.astype(np.float64) for op in operands])
    bound = _bound(subscripts, list(operands), name)
    got = one.astype(np.float64)
    assert (np.abs(got - (np.maximum(exact, 0) if relu else exact)) <= bound).all()


@pytest.mark.parametrize("subscripts, shapes, name", rotate([
    ("ij,jk->ik", [(61, 45), (45, 1)]),           # a matrix times a column
    ("ji,kj->ik", [(45, 61), (1, 45)]),           # a row times a transposed matrix
    ("ij,kj->ik", [(1, 45), (61, 45)]),
    ("bij,bjk->bik", [(3, 1, 45), (3, 45, 29)]),  # a batch of rows times matrices
    ("ijk,kj->ik", [(1, 7, 45), (45, 7)]),        # one row: the batched dot jk,kj->k
    ("abcd->dcba", [(5, 1, 7, 1)]),               # a permutation with unit axes
], ["FP32", "FP64", "BF16", "FP16"]))
def test_an_index_of_extent_one_is_dropped(subscripts: str, shapes: list, name: str) -> None:
    """An index of extent 1 everywhere is dropped, the arrays squeezed (views, out
    written in place): `ij,jk->ik` with k = 1 is the GEMV `ij,j->i` (through the
    record's extent-1 axis it left no GEMM-shaped loops: 1024 x 1024 FP32 844 ->
    89 us, FP16 2938 -> 59). Strided views with unit axes, a strided out, ReLU:
    numpy's result, bit-identical at 1 and 2 threads."""
    operands = [RNG.uniform(-1, 1, shape).astype(DTYPES[name]) for shape in shapes]
    out_shape = output_shape(subscripts, operands)
    out = np.empty(out_shape, operands[0].dtype)
    plan = _plan(subscripts, operands, out, False, name, 1, False)
    assert plan.__qualname__.startswith("_squeezed_plan"), plan.__qualname__
    _check(subscripts, operands, name)
    views = [np.repeat(op, 2, axis=-1)[..., ::2] for op in operands]  # unit axes, strided
    target = np.zeros(out_shape[::-1], operands[0].dtype).T
    _check(subscripts, views, name, out=target)
    if len(operands) == 2:
        relu = einsum(subscripts, *operands, relu=True,
                      dtype="BF16" if name == "BF16" else None)
        plain = einsum(subscripts, *operands, dtype="BF16" if name == "BF16" else None)
        assert np.array_equal(relu, np.maximum(plain, 0))


def test_extents_that_differ_are_still_refused() -> None:
    """An index of extent 1 in one operand and 5 in the other is numpy's broadcast,
    which the kernel-level einsum refuses by name (einsum_semantics expands it)."""
    from teir_lowering.frontends.einsum_frontend import einsum as kernel_einsum

    a, b = np.ones((4, 1), np.float32), np.ones((5, 3), np.float32)
    with pytest.raises(TeirError):
        kernel_einsum("ij,jk->ik", a, b)


@pytest.mark.parametrize("machine", ["avx512", "avx2"])
@pytest.mark.parametrize("rows, depth, name, split", [
    (4096, 4096, "FP32", False),  # 64 MiB streamed from memory: each call reads whole rows
    (2000, 600, "FP32", False),   # in the caches: under two K blocks, kept whole
    (300, 5000, "FP32", True),    # in the caches, deep: blocks of a quarter of half the L1
    (300, 5000, "FP64", True),
])
def test_a_gemv_reads_its_matrix_in_rows_as_long_as_the_l1_allows(
        machine: str, rows: int, depth: int, name: str, split: bool) -> None:
    """`ij,j->i`'s K blocks (`auto_schedule.k_target`) count the vector as
    `GEMV_PANEL_COLUMNS` columns of B, or as one where the matrix streams from
    memory, rather than as the register columns of a GEMM: blocks of 256 FP32
    (32 KiB L1) read a 4096 x 4096 matrix in stripes of 1 KiB a row, slower
    than numpy's matmul (README, Benchmarks), and cut 2000 x 600 into 256 +
    256 + 88."""
    from teir_dialect.context import teir_context
    from teir_dialect.host import host
    from teir_dialect.records import find_configs
    from teir_passes.auto_schedule import GEMV_PANEL_COLUMNS, dividing_block
    from teir_passes.pipeline import OptimizePass

    dtype = DTYPES[name]
    a, v = np.zeros((rows, depth), dtype), np.zeros(depth, dtype)
    out = np.empty(rows, dtype)
    with pinned(machine):
        record = _gemv_record("ij,j->i", [a, v], out, False, None)
        assert record is not None
        module = load_module(record)
        OptimizePass(threads=1).apply(teir_context(), module)
        # the aim, or a block from half of it up that divides K (5000 in 4 of 1250)
        block = dividing_block(depth, host().l1d // 2 // (a.itemsize * GEMV_PANEL_COLUMNS))
        assert depth % block == 0 or not split
    script = find_configs(module)[0].attributes["script"].data  # pyright: ignore
    k_splits = [step for step in json.loads(script)
                if step["op"] == "split" and step["axis"] == "j"]
    assert k_splits == ([{"op": "split", "axis": "j", "factor": block}] if split else []), \
        script
