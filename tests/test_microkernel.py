"""Register-blocked GEMM/BRGEMM microkernels against the reference interpreter.

Shapes cover every row segment (two vectors, one vector, scalar rows), column
remainders against the block width, both orientations of B, BRGEMM batch
strides, role-axis offsets, FP32 and FP64.
"""

from __future__ import annotations

import numpy as np
import pytest

from teir_dialect.interpreter import run_reference
from teir_lowering.kernel import compile_kernel


def gemm_record(m: int, n: int, k: int, *, batch: int = 0, b_transposed: bool = False,
                dtype: str = "FP32", pad: int = 3, offsets: bool = False) -> dict:
    """C(m, n) [+]= sum_b A_b(m, k) B_b(k, n), column-major, leading dims padded."""
    w = 4 if dtype == "FP32" else 8
    lda, ldc = m + pad, m + pad + 1
    ldb = (n if b_transposed else k) + pad
    a_size, b_size = lda * k, ldb * (k if b_transposed else n)
    axes = [
        {"id": "m", "extent": m, "strides": [w, 0, w], "offsets": [0, 0, 0]},
        {"id": "n", "extent": n, "strides": [0, (1 if b_transposed else ldb) * w, ldc * w],
         "offsets": [0, 0, 0]},
        {"id": "k", "extent": k, "strides": [lda * w, (ldb if b_transposed else 1) * w, 0],
         "offsets": [0, 0, 0]},
    ]
    if offsets:
        axes[0]["offsets"] = [w, 0, 2 * w]
        axes[2]["offsets"] = [0, 3 * w, 0]
    k_roles = ["k"]
    if batch:
        axes.append({"id": "b", "extent": batch, "strides": [(a_size + 5) * w, (b_size + 2) * w, 0],
                     "offsets": [0, 0, 0]})
        k_roles = ["b", "k"]
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": axes,
        "primitives": [{"id": "mm", "operation": "Contraction",
                        "axes": {"M": ["m"], "N": ["n"], "K": k_roles},
                        "metadata": {"data_type": dtype}}],
        "schedule": {"roots": ["c"], "iterations": [],
                     "invocations": [{"id": "c", "primitive": "mm", "guard": None}]},
    }


SHAPES = [
    (16, 8, 8), (32, 12, 5), (64, 64, 16), (17, 3, 4), (47, 25, 7), (80, 13, 9), (5, 7, 3),
    (33, 1, 1), (96, 30, 2), (8, 8, 8), (12, 9, 5), (4, 4, 4),
]


def _check(record: dict) -> None:
    kernel = compile_kernel(record)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(t.needed_bytes // t.dtype.itemsize + 5).astype(t.dtype)
              for t in kernel.tensors]
    got = [a.copy() for a in inputs]
    kernel(*got)
    want = [a.copy() for a in inputs]
    run_reference(record, want)
    tolerance = 1e-5 if got[-1].dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[-1], want[-1], rtol=tolerance, atol=tolerance)
    np.testing.assert_array_equal(got[0], inputs[0])
    np.testing.assert_array_equal(got[1], inputs[1])


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
def test_gemm(shape: tuple[int, int, int], dtype: str) -> None:
    _check(gemm_record(*shape, dtype=dtype))


@pytest.mark.parametrize("shape", SHAPES[:5], ids=lambda s: "x".join(map(str, s)))
def test_gemm_with_transposed_b_and_offsets(shape: tuple[int, int, int]) -> None:
    _check(gemm_record(*shape, b_transposed=True, offsets=True))


@pytest.mark.parametrize("shape", SHAPES[:6], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
def test_brgemm(shape: tuple[int, int, int], dtype: str) -> None:
    _check(gemm_record(*shape, batch=3, dtype=dtype))


def test_microkernel_is_used_and_vectorized() -> None:
    kernel = compile_kernel(gemm_record(64, 24, 8))
    assert "vector.fma" in kernel.stages["scf"]
    assert "vector<" in kernel.stages["scf"]
