"""The segmented dot and the periodic product (`#teir.kernel<segmented>`,
`#teir.kernel<periodic>`, teir_lowering.codegen.segmented): a batched GEMV whose
matrix is laid out [i][j][b] or [j][i][b], b its unit stride, in one pass over
the matrix. Differential against numpy in every data type, the IR they lower
to, and the records they refuse."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from teir_dialect import TeirError, einsum_config
from teir_dialect.builders import periodic_product, segmented_rows
from teir_dialect.host import host as machine
from teir_dialect.host import pinned
from teir_dialect.interpreter import run_reference
from teir_lowering import einsum
from teir_lowering.frontends.einsum_frontend import SEGMENT_MAX, _plan
from teir_lowering.runtime.kernel import compile_kernel

DTYPES = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32,
          "FP64": np.float64}
MANTISSA = {"FP16": 10, "BF16": 7, "FP32": 23, "FP64": 52}


def _matrix(rng: np.random.Generator, n: int, rows: int, depth: int,
            dtype: type, memory: str = "ijb") -> np.ndarray:
    """A (b, i, j) view of an [i][j][b] or a [j][i][b] array."""
    if memory == "jib":
        return rng.uniform(-1, 1, (depth, rows, n)).astype(dtype).transpose(2, 1, 0)
    return rng.uniform(-1, 1, (rows, depth, n)).astype(dtype).transpose(2, 0, 1)


def _vector(rng: np.random.Generator, n: int, depth: int, dtype: type,
            layout: str) -> np.ndarray:
    """A (b, j) vector laid out [j][b] (the kernel's own), [b][j] or broadcast along b."""
    if layout == "jb":
        return rng.uniform(-1, 1, (depth, n)).astype(dtype).T
    if layout == "bj":
        return rng.uniform(-1, 1, (n, depth)).astype(dtype)
    return np.broadcast_to(rng.uniform(-1, 1, (1, depth)).astype(dtype), (n, depth))


def _checked(subscripts: str, operands: list[np.ndarray], name: str, relu: bool,
             out: np.ndarray) -> None:
    """`einsum` into `out`'s layout at 1 and 2 threads: the same bits, and numpy's
    float64 result within one rounding to the type plus sums in another order."""
    dtype = "BF16" if name == "BF16" else None
    results = []
    for threads in (1, 2):
        target = np.zeros_like(out) if out.flags.c_contiguous else np.zeros(
            out.T.shape, out.dtype).T
        einsum(subscripts, *operands, out=target, relu=relu, threads=threads, dtype=dtype)
        results.append(target)
    assert results[0].tobytes() == results[1].tobytes(), "1 and 2 threads differ"
    exact = np.einsum(subscripts, *[op.astype(np.float64) for op in operands])
    if relu:
        exact = np.maximum(exact, 0)
    magnitude = np.einsum(subscripts, *[np.abs(op.astype(np.float64)) for op in operands])
    depth = operands[0].shape[-1] if subscripts.startswith("bij") else operands[1].shape[-1]
    sums = 2.0 ** -(52 if name == "FP64" else 23) * depth
    bound = magnitude * (2.0 ** -MANTISSA[name] + sums) + 1e-300
    error = np.abs(results[0].astype(np.float64) - exact)
    assert (error <= bound).all(), (error - bound).max()


@settings(max_examples=examples(60, 10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, SEGMENT_MAX), rows=st.integers(1, 40), depth=st.integers(1, 70),
       name=st.sampled_from(list(DTYPES)), layout=st.sampled_from(["jb", "bj", "broadcast"]),
       swapped=st.booleans(), out_order=st.sampled_from(["bi", "ib"]), relu=st.booleans(),
       memory=st.sampled_from(["ijb", "jib"]), seed=st.integers(0, 2**16))
def test_the_segmented_kernels_compute_numpys_gemv(
        n: int, rows: int, depth: int, name: str, layout: str, swapped: bool,
        out_order: str, relu: bool, memory: str, seed: int) -> None:
    """Any batch up to SEGMENT_MAX (periods of one to fifteen vectors, runs shorter
    than a vector, a part vector at the end), any depth and row count, every data
    type, the matrix [i][j][b] or [j][i][b], the vector in any layout, either
    operand order, either output layout, with ReLU: `einsum` takes the segmented
    dot or the periodic product (given two rows and two steps of j at least) and
    gets numpy's result."""
    rng = np.random.default_rng(seed)
    dtype = DTYPES[name]
    a = _matrix(rng, n, rows, depth, dtype, memory)
    x = _vector(rng, n, depth, dtype, layout)
    subscripts, operands = (("bj,bij->" + out_order, [x, a]) if swapped
                            else ("bij,bj->" + out_order, [a, x]))
    shape = (n, rows) if out_order == "bi" else (rows, n)
    out = np.zeros(shape, dtype)
    plan = _plan(subscripts, operands, out, relu, "BF16" if name == "BF16" else None,
                 1, False)
    if min(rows, depth) > 1:  # (an extent of 1 may take a plan for fewer indices)
        alone = layout == "jb" and (memory == "ijb" or out_order == "ib")
        assert plan.__qualname__.startswith(
            "_direct" if alone else "_segmented_plan"), plan.__qualname__
    _checked(subscripts, operands, name, relu, out)
    _checked(subscripts, operands, name, relu, np.zeros(shape[::-1], dtype).T)


@pytest.mark.parametrize("host", ["avx2", "avx512"])
@pytest.mark.parametrize("name", ["FP32", "FP64", "BF16"])
def test_a_segmented_record_lowers_to_one_pass_over_the_matrix(host: str, name: str) -> None:
    """`segmented_rows` of an einsum record: teir-match-gemm makes its Contraction a
    segmented dot, which lowers to vector multiply-adds along the (j, b) runs and
    shuffles of the lanes of each b (no scalar loop over j): b = 6 against 8 or 16
    lanes makes periods of three vectors, FP64 on AVX2's four lanes segments
    longer than a vector, added lane by lane. FP64's result is the
    reference interpreter's within the sums' reordering."""
    rng = np.random.default_rng(5)
    dtype = DTYPES[name]
    a, x = _matrix(rng, 6, 11, 29, dtype), _vector(rng, 6, 29, dtype, "jb")
    out = np.zeros((6, 11), dtype)
    record = segmented_rows(einsum_config("bij,bj->bi", a, x, out=out), "b", "j", "i")
    with pinned(host):
        kernel = compile_kernel(record, threads=1, keep_ir=True)
        kernel.call_planned((a, x, out), 1)
        lanes = machine().lanes(8 if name == "FP64" else 4)
    assert "#teir.kernel<segmented m = 1, n = 6, k = 29, lda = 0, ldc = 0, incc = 11>" \
        in str(kernel.stages["optimized"])
    scf = str(kernel.stages["scf"])
    # a b's lanes in one or two vectors: shuffled out; in more (FP64 on AVX2): lane
    # by lane
    assert "vector.fma" in scf and ("vector.shuffle" if lanes >= 6 else "vector.extract") in scf
    assert scf.count("iter_args") == 1, scf  # the runs' whole steps, accumulated
    exact = np.einsum("bij,bj->bi", a.astype(np.float64), x.astype(np.float64))
    scale = np.einsum("bij,bj->bi", np.abs(a.astype(np.float64)), np.abs(x.astype(np.float64)))
    assert (np.abs(out - exact) <= scale * 2.0 ** -MANTISSA[name] * 4).all()
    if name == "FP64":
        reference = np.zeros_like(out)
        run_reference(record, [a.transpose(1, 2, 0), x.T, reference])  # their memory
        assert np.allclose(out, reference, rtol=1e-13, atol=1e-13)


def test_segmented_rows_names_what_it_needs() -> None:
    """A record that is no batched GEMV over the named axes is refused by name."""
    a, x = np.zeros((3, 4, 5), np.float32), np.zeros((3, 5), np.float32)
    record = einsum_config("bij,bj->bi", a, x)
    with pytest.raises(TeirError, match="segmented_rows: needs a Zero and a Contraction "
                                        "over axes b, k and i"):
        segmented_rows(record, "b", "k", "i")


@pytest.mark.parametrize("host", ["avx2", "avx512"])
@pytest.mark.parametrize("name", ["FP64", "FP16"])
def test_a_periodic_record_sums_in_js_order(host: str, name: str) -> None:
    """`periodic_product` of an einsum record from a [j][i][b] matrix (b = 7: periods
    of seven vectors against 8 or 16 lanes, then a part block): teir-match-gemm
    makes its Contraction a periodic product, which holds blocks of out in
    registers across the loop over j and shuffles each j's seven vector elements
    into a period; each element is summed in j's order by fused multiply-adds:
    the reference interpreter's (separate multiply and add) within their
    rounding, FP16 within its one rounding of the f32 sum."""
    rng = np.random.default_rng(9)
    dtype = DTYPES[name]
    a, x = _matrix(rng, 7, 19, 23, dtype, "jib"), _vector(rng, 7, 23, dtype, "jb")
    out = np.zeros((19, 7), dtype)
    record = periodic_product(einsum_config("bij,bj->ib", a, x, out=out), "b", "j", "i")
    with pinned(host):
        kernel = compile_kernel(record, threads=1, keep_ir=True)
        kernel.call_planned((a, x, out), 1)
    assert "#teir.kernel<periodic m = 19, n = 7, k = 23, lda = 133, ldb = 7>" \
        in str(kernel.stages["optimized"])
    scf = str(kernel.stages["scf"])
    assert "vector.fma" in scf and "vector.shuffle" in scf
    reference = np.zeros_like(out)
    run_reference(record, [a.transpose(2, 1, 0), x.T, reference])  # their memory
    scale = np.einsum("bij,bj->ib", np.abs(a.astype(np.float64)), np.abs(x.astype(np.float64)))
    bound = scale * (2.0 ** -MANTISSA[name] + 23 * 2.0 ** -52)
    assert (np.abs(out.astype(np.float64) - reference.astype(np.float64)) <= bound).all()
