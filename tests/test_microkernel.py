"""Register-blocked GEMM/BRGEMM microkernels against the reference interpreter.

Shapes cover every row segment (two vectors, one vector, narrower vectors,
scalar rows), column remainders against the block width, all 8 layouts
(`trans`) of GEMM and BRGEMM with leading dimensions above the extents, batch
strides, role-axis offsets, FP32 and FP64; every element outside A, B and C
(padding between columns, slack around the footprint) holds a NaN sentinel
that must neither leak into C nor be overwritten. Fused epilogues: a Zero and
a ReLU of the tile, as direct siblings (guarded or not) and sunk into the
first/last iteration of the K loop around the kernel, with negative results,
-0.0, NaN and -inf reaching the ReLU.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import Float16Type, MemRefType
from xdsl.ir import Block

from conftest import pairwise
from teir_dialect import einsum_config, teir_context
from teir_dialect.dialect import KernelAttr, PrimitiveOp
from teir_dialect.flat import flat_to_tree
from teir_dialect.gemm import KERNEL_ATTR
from teir_dialect.host import SCRATCH_BYTES, Host, pinned, pinned_host
from teir_dialect.interpreter import run_reference
from teir_dialect.records import load_module
from teir_dialect.vocabulary import OperationKind
from teir_lowering.codegen import gemm_emitter, gemm_plan
from teir_lowering.codegen.convert_teir_to_scf import TeirToScfPass
from teir_lowering.codegen.gemm_plan import GemmPlan, GemmShape, plan_gemm
from teir_lowering.lane import LaneCmpfOp
from teir_lowering.runtime import kernel as kernel_module
from teir_lowering.runtime.kernel import compile_kernel
from teir_passes.fuse_epilogues import FuseEpiloguesPass
from teir_passes.match_gemm import MatchGemmPass
from teir_passes.pipeline import OptimizePass


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


@pytest.mark.parametrize("shape, dtype", [
    (shape, dtype) if dtype == "FP32" or number % 3 == 0 else
    pytest.param(shape, dtype, marks=pytest.mark.slow)
    for number, shape in enumerate(SHAPES) for dtype in ("FP32", "FP64")
], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else v)
def test_gemm(shape: tuple[int, int, int], dtype: str) -> None:
    _check(gemm_record(*shape, dtype=dtype))


@pytest.mark.parametrize("shape", SHAPES[:5], ids=lambda s: "x".join(map(str, s)))
def test_gemm_with_transposed_b_and_offsets(shape: tuple[int, int, int]) -> None:
    _check(gemm_record(*shape, b_transposed=True, offsets=True))


@pytest.mark.parametrize("shape", SHAPES[:6], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
def test_brgemm(shape: tuple[int, int, int], dtype: str) -> None:
    _check(gemm_record(*shape, batch=3, dtype=dtype))


@pytest.mark.parametrize("optimize", [True, False])
def test_microkernel_is_used_and_vectorized(optimize: bool) -> None:
    """compile_kernel runs teir-match-gemm, whose `kernel` attribute teir-to-scf
    reads, also without teir-optimize."""
    kernel = compile_kernel(gemm_record(64, 24, 8), optimize=optimize, keep_ir=True)
    assert ("optimized" in kernel.stages) == optimize
    assert "vector.fma" in kernel.stages["scf"]
    assert "vector<" in kernel.stages["scf"]


def test_without_the_kernel_attribute_a_contraction_gets_loops() -> None:
    """teir-to-scf alone (no teir-match-gemm): the general loop nest, no microkernel."""
    for passes in ([TeirToScfPass()], [MatchGemmPass(), TeirToScfPass()]):
        module = load_module(gemm_record(64, 24, 8))
        for pipeline_pass in passes:
            pipeline_pass.apply(teir_context(), module)
        fmas = [op for op in module.walk() if isinstance(op, vector.FMAOp)]
        assert bool(fmas) == (len(passes) == 2)


# -- every layout ---------------------------------------------------------------------

LAYOUTS = ["".join(t) for t in itertools.product("NT", repeat=3)]
"""trans = "ABC": A "N" m unit-stride / "T" k; B "N" k / "T" n; C "N" m / "T" n."""
LAYOUT_PAIRS = [pytest.param("".join(case.values), id="".join(case.values), marks=case.marks)
                for case in pairwise(a="NT", b="NT", c="NT")]
"""LAYOUTS for the tests that compile several kernels a layout: the default tier
takes every pair of two operands' layouts (conftest.pairwise), the slow tier the rest."""

AWKWARD = [
    (37, 29, 17), (5, 33, 3), (1, 23, 9), (19, 1, 37), (33, 7, 1), (2, 3, 2), (17, 16, 15),
    (9, 36, 4), (31, 18, 5), (3, 35, 30), (24, 5, 11), (1, 1, 7), (36, 37, 6), (13, 2, 33),
    (7, 9, 1), (16, 31, 23),
]
"""(m, n, k) in 1..37: below, at and above the lane counts, never all multiples."""

WIDTH = {"FP32": 4, "FP64": 8, "FP16": 2, "BF16": 2}


def layout_record(trans: str, m: int, n: int, k: int, *, dtype: str = "FP32", batch: int = 0,
                  pads: tuple[int, int, int] = (1, 2, 3), offsets: bool = False,
                  zero: bool = False, relu: bool = False, relu_guard: list[str] | None = None,
                  zero_guard: list[str] | None = None, outer: int = 0,
                  incs: tuple[int, int, int] = (1, 1, 1)) -> dict:
    """C(m, n) [+]= sum_b A_b(m, k) B_b(k, n) in layout `trans`, ld = extent + pad.

    `outer` > 0 puts the invocations in a sequential loop over an extra K axis w
    (stride 0 on out) of that extent, which splits the K sum into `outer` parts.
    `incs`: the strides of A's, B's and C's unit axes (general strides: 0 is a
    broadcast, the leading dimension is then extent x inc + pad).
    """
    w = WIDTH[dtype]

    def operand(letter: str, normal: tuple[str, int], other: tuple[str, int], pad: int,
                inc: int):
        unit, lead = (normal, other) if letter == "N" else (other, normal)
        ld = unit[1] * inc + pad
        return {unit[0]: inc, lead[0]: ld}, ld * lead[1]

    a, a_size = operand(trans[0], ("m", m), ("k", k), pads[0], incs[0])
    b, b_size = operand(trans[1], ("k", k), ("n", n), pads[1], incs[1])
    c, _ = operand(trans[2], ("m", m), ("n", n), pads[2], incs[2])
    axes = [
        {"id": axis, "extent": extent,
         "strides": [a.get(axis, 0) * w, b.get(axis, 0) * w, c.get(axis, 0) * w],
         "offsets": [0, 0, 0]}
        for axis, extent in (("m", m), ("n", n), ("k", k))
    ]
    if offsets:
        axes[0]["offsets"] = [w, 0, 2 * w]
        axes[1]["offsets"] = [0, 3 * w, w]
    k_roles = ["k"]
    if batch:
        axes.append({"id": "b", "extent": batch,
                     "strides": [(a_size + 5) * w, (b_size + 2) * w, 0], "offsets": [0, 0, 0]})
        a_size, b_size = (a_size + 5) * batch, (b_size + 2) * batch
        k_roles = ["b", "k"]
    if outer:
        axes.append({"id": "w", "extent": outer,
                     "strides": [(a_size + 1) * w, (b_size + 3) * w, 0], "offsets": [0, 0, 0]})
    meta = {"data_type": dtype}
    primitives = [{"id": "mm", "operation": "Contraction",
                   "axes": {"M": ["m"], "N": ["n"], "K": k_roles}, "metadata": meta}]
    invocations = [{"id": "c", "primitive": "mm", "guard": None}]
    if zero:
        primitives.append({"id": "zero", "operation": "Zero", "axes": {"M": ["m"], "N": ["n"]},
                           "metadata": meta})
        invocations.insert(0, {"id": "z", "primitive": "zero", "guard": zero_guard})
    if relu:
        primitives.append({"id": "relu", "operation": "ReLU", "axes": {"M": ["m"], "N": ["n"]},
                           "metadata": meta})
        invocations.append({"id": "r", "primitive": "relu", "guard": relu_guard})
    ids = [i["id"] for i in invocations]
    iterations = []
    if outer:
        iterations = [{"id": "w", "axis": "w", "policy": "sequential", "children": ids,
                       "guard": None}]
        ids = ["w"]
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": axes,
        "primitives": primitives,
        "schedule": {"roots": ids, "iterations": iterations, "invocations": invocations},
    }


def element_indices(record: dict, tensor: int) -> np.ndarray:
    """The element index of every (role-axis index tuple) of `tensor`, as in §10.4."""
    w = WIDTH[record["primitives"][0]["metadata"]["data_type"]]
    index = np.zeros(1, dtype=np.int64)
    for axis in record["axes"]:
        stride, offset = axis["strides"][tensor] // w, axis["offsets"][tensor] // w
        index = (index[:, None] + offset + stride * np.arange(axis["extent"])[None, :]).ravel()
    return index


def sentinel_arrays(record: dict, kernel, rng: np.random.Generator) -> list[np.ndarray]:
    """NaN everywhere (3 elements of slack), random values at A's, B's and C's elements."""
    arrays = []
    for tensor, spec in enumerate(kernel.tensors):
        array = np.full(spec.needed_bytes // spec.dtype.itemsize + 3, np.nan, spec.dtype)
        where = np.unique(element_indices(record, tensor))
        array[where] = rng.standard_normal(where.size)
        arrays.append(array)
    return arrays


def check_against_reference(record: dict, arrays: list[np.ndarray], optimize: bool = True):
    """Run the kernel and the reference on copies; compare every element of every
    array (sentinels included: NaN must stay NaN, so nothing outside C changes)."""
    kernel = compile_kernel(record, optimize=optimize)
    got = [a.copy() for a in arrays]
    kernel(*got, threads=1)
    want = [a.copy() for a in arrays]
    run_reference(record, want)
    tolerance = 1e-5 if got[-1].dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[-1], want[-1], rtol=tolerance, atol=tolerance)
    np.testing.assert_array_equal(np.isnan(got[-1]), np.isnan(want[-1]))
    for before, after in zip(arrays[:-1], got[:-1]):
        np.testing.assert_array_equal(before, after)
    return kernel, got[-1], want[-1]


def layout_cases() -> list[Any]:
    """Every layout x GEMM/BRGEMM x FP32/FP64, each with two shapes of AWKWARD; the
    default tier runs one shape of each layout and kind in one of the types."""
    cases: list[Any] = []
    for number, (trans, kind, dtype) in enumerate(
        itertools.product(LAYOUTS, ("gemm", "brgemm"), ("FP32", "FP64"))
    ):
        # The default tier: every layout and kind, FP32 and FP64 taking turns.
        first = (trans, kind, dtype, AWKWARD[number % 16], number)
        cases.append(first if (number // 2) % 2 == number % 2 else
                     pytest.param(*first, marks=pytest.mark.slow))
        cases.append(pytest.param(trans, kind, dtype, AWKWARD[(5 * number + 3) % 16], number,
                                  marks=pytest.mark.slow))
    return cases


@pytest.mark.parametrize(
    "trans, kind, dtype, shape, number", layout_cases(),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_every_layout_matches_reference(trans: str, kind: str, dtype: str,
                                        shape: tuple[int, int, int], number: int) -> None:
    m, n, k = shape
    pads = (number % 4, (number // 2) % 3 + 1, (number // 4) % 4)
    record = layout_record(trans, m, n, k, dtype=dtype, batch=2 + number % 3 if kind == "brgemm" else 0,
                           pads=pads, offsets=number % 3 == 1, zero=number % 4 == 2)
    kernel = compile_kernel(record, keep_ir=True)
    arrays = sentinel_arrays(record, kernel, np.random.default_rng(number))
    kernel, _, _ = check_against_reference(record, arrays)
    plans = planned(record)
    assert ("vector.fma" in kernel.stages["scf"]) == any(plan.lanes > 1 for plan in plans)
    assert "math.fma" in kernel.stages["scf"] or all(plan.lanes > 1 for plan in plans)


GENERAL_STRIDES = [(2, 1, 1), (1, 0, 1), (1, 1, 3), (3, 2, 1), (0, 3, 2), (2, 2, 2)]
"""(inca, incb, incc): stepped views (2, 3), broadcasts (0) of A, B and C."""


def general_stride_cases() -> list[Any]:
    """Every layout with each increment pattern, GEMM and BRGEMM, FP32 and FP64; the
    default tier runs one per layout (patterns, kinds and types taking turns)."""
    cases: list[Any] = []
    for number, (trans, incs) in enumerate(itertools.product(LAYOUTS, GENERAL_STRIDES)):
        kind = ("gemm", "brgemm")[number % 2]
        dtype = ("FP32", "FP64")[(number // 2) % 2]
        case = (trans, incs, kind, dtype, AWKWARD[(3 * number + 1) % 16], number)
        default = number % len(GENERAL_STRIDES) == (number // len(GENERAL_STRIDES)) % len(
            GENERAL_STRIDES)
        cases.append(case if default else pytest.param(*case, marks=pytest.mark.slow))
    return cases


@pytest.mark.parametrize(
    "trans, incs, kind, dtype, shape, number", general_stride_cases(),
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_general_strides_match_reference(trans: str, incs: tuple[int, int, int], kind: str,
                                         dtype: str, shape: tuple[int, int, int],
                                         number: int) -> None:
    """Operands without a unit-stride role axis are a microkernel (their increments in
    #teir.kernel), packed or read from the tensor's layout, with remainders, fused
    epilogues and offsets; every byte outside C stays untouched."""
    m, n, k = shape
    record = layout_record(trans, m, n, k, dtype=dtype, incs=incs,
                           batch=2 + number % 3 if kind == "brgemm" else 0,
                           pads=(number % 3 + 1, number % 2 + 1, 2), offsets=number % 3 == 1,
                           zero=number % 4 == 2, relu=number % 5 == 3)
    module = load_module(record)
    MatchGemmPass().apply(teir_context(), module)
    (kernel_attr,) = [op.attributes[KERNEL_ATTR] for op in module.walk()
                      if isinstance(op, PrimitiveOp) and KERNEL_ATTR in op.attributes]
    assert isinstance(kernel_attr, KernelAttr) and kernel_attr.kind_name == kind
    if 1 not in shape:  # an extent-1 axis is never stepped: the rule reads stride 0
        assert [kernel_attr.get(name) for name in ("inca", "incb", "incc")] == list(incs)
        assert kernel_attr.trans.data == trans
    kernel = compile_kernel(record, keep_ir=True)
    arrays = sentinel_arrays(record, kernel, np.random.default_rng(number))
    check_against_reference(record, arrays)
    assert "fma" in kernel.stages["scf"]  # a microkernel, not the scalar loop nest


def planned(record: dict, optimize: bool = True) -> list[GemmPlan]:
    """The plans of the microkernels of `record` after teir-optimize (which may
    split the tile) or after teir-match-gemm alone."""
    module = load_module(record)
    (OptimizePass() if optimize else MatchGemmPass()).apply(teir_context(), module)
    return [plan_gemm(shape, op.element_width) for op in module.walk()
            if isinstance(op, PrimitiveOp) and isinstance(kernel := op.attributes.get(KERNEL_ATTR),
                                                          KernelAttr)
            and (shape := GemmShape.of(kernel)) is not None]


@pytest.mark.parametrize("trans", LAYOUTS)
def test_every_layout_gets_vector_code(trans: str) -> None:
    """Moderate sizes: each layout runs vector FMAs with vectors along C's unit
    dimension, and no scalar multiply-add loops are left. Where the operand that
    carries that dimension is contiguous along k instead ("TN?" along m, "?NT"
    along n), it is packed by register transposes (vector.shuffle) into a stack
    buffer (memref.alloca); else it is read in place."""
    k = 80 if trans.startswith("TN") else 18
    record = layout_record(trans, 21, 19, k, dtype="FP32", zero=True)
    kernel = compile_kernel(record, optimize=False, keep_ir=True)
    scf = kernel.stages["scf"]
    assert "vector.fma" in scf
    assert "arith.mulf" not in scf
    (plan,) = planned(record, optimize=False)
    assert plan.vector == ("m" if trans[2] == "N" else "n")
    x_along_k = trans[0] == "T" if plan.vector == "m" else trans[1] == "N"
    assert plan.pack == ("transpose" if x_along_k else "")
    assert ("vector.shuffle" in scf) == x_along_k
    assert ("memref.alloca" in scf) == x_along_k
    if not x_along_k:
        assert "vector.insert " not in scf  # no gathered lanes (a k remainder would be)
    check_against_reference(record, sentinel_arrays(record, kernel, np.random.default_rng(1)),
                            optimize=False)


def test_plans_by_layout() -> None:
    """The planner's choices for a square tile: vectors along C's unit dimension; the
    operand carrying it (a 64 KiB block, larger than half the L1d) read in place
    where it is contiguous along that dimension (its K steps at one stride, which
    the hardware prefetches), packed by transposes where it is contiguous along k."""
    expected = {"NNN": ("m", ""), "NTN": ("m", ""), "TNN": ("m", "transpose"),
                "TTN": ("m", "transpose"), "TTT": ("n", ""), "NTT": ("n", ""),
                "NNT": ("n", "transpose"), "TNT": ("n", "transpose")}
    for trans, (along, pack) in expected.items():
        plan = plan_gemm(GemmShape(128, 128, 128, 128, 128, 128, 1, 0, 0, trans), 4, machine=AVX2)
        assert (plan.kernel, plan.vector, plan.pack) == ("outer", along, pack), trans
        assert plan.lanes > 1


@pytest.mark.parametrize("width", [4, 8])
def test_scattered_batches_are_packed(width: int) -> None:
    """The spec's BRGEMM at p32 q64 r32 s64 t8 u64: A's 8 batches (64 x 64 each,
    contiguous) lie 32 x 64 x 64 elements apart, so A is packed (a copy) in FP32 and
    FP64; the same tile with the batches back to back is read in place in FP32 (in
    FP64 its one K-block spans more pages than the L1 DTLB holds: packed too)."""
    scattered = GemmShape(64, 64, 64, 64, 512, 2048, 8, 32 * 64 * 64, 64, "NNN")
    assert plan_gemm(scattered, width, True, machine=AVX2).pack == "copy"
    packed_batches = GemmShape(64, 64, 64, 64, 512, 2048, 8, 64 * 64, 64, "NNN")
    plan = plan_gemm(packed_batches, width, True, machine=AVX2)
    x_panel = gemm_plan.scattered(plan.vectors * plan.lanes, 64, 64 * 64, 8, 64, width)
    assert plan.pack == ("" if x_panel == 0 else "copy")
    if width == 4:
        assert plan.pack == ""


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_f16_x_reused_across_column_blocks_is_packed_widened(machine: str) -> None:
    """An f16 X read in place takes a conversion per vector load on the FMA pipes, at
    every column block; packed (into an f32 buffer) once. 128^3 NNN: FP32 reads X in
    place, f16 packs it; a GEMV-like tile (one column block) still reads it in place."""
    host_ = pinned_host(machine)
    shape = GemmShape(128, 128, 128, 128, 128, 128, 1, 0, 0, "NNN")
    assert plan_gemm(shape, 4, machine=host_).pack == ""
    f16 = plan_gemm(shape, 4, narrow_c=True, converts=True, stored=2, machine=host_)
    assert f16.pack == "copy"
    gemv = GemmShape(128, 1, 128, 128, 128, 128, 1, 0, 0, "NNN")
    assert plan_gemm(gemv, 4, narrow_c=True, converts=True, stored=2, machine=host_).pack == ""


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
@pytest.mark.parametrize("width", [4, 8])
def test_x_whose_k_steps_are_more_streams_than_prefetchers_follow_is_packed(
        machine: str, width: int) -> None:
    """TCCG 9 (`ea,ebcd->abcd`): X (vectors along n) has its k steps 219 KB apart, each a
    stream of its own; 43 of them outrun the prefetchers, so X is packed (read in
    order), while 16 stay in place (within `PREFETCH_STREAMS`, fewer pages than the
    TLB's)."""
    host_ = pinned_host(machine)
    for k, pack in ((43, "copy"), (16, "")):
        shape = GemmShape(43, 3664, k, k, 54872, 54872, 1, 0, 0, "NTT")
        assert plan_gemm(shape, width, True, machine=host_).pack == pack, k


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_x_whose_k_steps_crowd_into_a_few_l1_sets_is_packed(machine: str) -> None:
    """`ij,jk->ik` 512^3 FP32 (a 64-column block a thread): X = B, vectors along n,
    its k steps a row of 512 floats, 2 KiB, apart: every step's lines fall into the
    same 4 L1d sets, which the stream sweeps (the Y panel of A's rows, 2 KiB apart
    too, shares them), so X is packed; rows of 441 floats spread over every set
    and stay in place, as do K steps within CROWDED_SPAN. 1 KiB apart, a panel of
    two 64-byte vectors (AVX-512) lies in 8 sets and stays, one of two 32-byte
    vectors (AVX2) in 4 and is packed. The packed kernel computes the same
    product."""
    host_ = pinned_host(machine)

    def pack(k: int, row: int, width: int = 4) -> str:
        shape = GemmShape(512, 64, k, k, row, row, 1, 0, 0, "TTT")
        return plan_gemm(shape, width, True, machine=host_).pack

    assert pack(512, 512) == "copy"
    assert pack(256, 256, width=8) == "copy"  # FP64: 256 doubles, 2 KiB too
    assert pack(512, 441) == pack(8, 512) == ""
    assert pack(512, 256) == ("copy" if machine == "avx2" else "")
    assert gemm_plan.crowded(32, 2048, 512, 4) and not gemm_plan.crowded(32, 1024, 512, 4)
    assert not gemm_plan.crowded(32, 2048, 8, 4)  # 16 KiB of K steps: CROWDED_SPAN

    rng = np.random.default_rng(5)
    a = rng.standard_normal((96, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    with pinned(machine):
        kernel = compile_kernel(einsum_config("ij,jk->ik", a, b), threads=1)
    out = np.zeros((96, 512), np.float32)
    kernel(a, b, out, threads=1)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_x_read_by_several_panels_is_packed_where_vectors_straddle_lines() -> None:
    """On Intel's cores with 64-byte vectors (`Host.splits_line_loads`) a vector of
    X read in place from numpy's large arrays (16 bytes past a line) loads two
    lines: an X block beyond half the L1d that several column panels read is
    packed (aligned) once. The same tile reads X in place on the other
    descriptions, and so does an X the L1d holds; the packed kernel computes the
    same product."""
    intel = pinned_host("avx512-intel")
    assert intel.splits_line_loads
    assert not pinned_host("avx512").splits_line_loads  # AMD's Zen
    assert not pinned_host("avx2").splits_line_loads  # 32-byte vectors

    def pack(m: int, n: int, k: int, machine: Host) -> str:
        shape = GemmShape(m, n, k, k, n, n, 1, 0, 0, "TTT")
        return plan_gemm(shape, 4, True, machine=machine).pack

    assert pack(256, 32, 256, intel) == pack(300, 50, 400, intel) == "copy"
    assert pack(256, 32, 256, pinned_host("avx512")) == ""
    assert pack(32, 32, 32, intel) == pack(64, 64, 64, intel) == ""  # X within the L1d

    rng = np.random.default_rng(6)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    b = rng.standard_normal((400, 500)).astype(np.float32)
    with pinned("avx512-intel"):
        kernel = compile_kernel(einsum_config("ij,jk->ik", a, b), threads=2)
    out = np.zeros((300, 500), np.float32)
    kernel(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_scalar_code_only_without_a_vector_dimension() -> None:
    """m = n = 1, a dot product of 3 (under MIN_LANES) with A's k steps 7 elements
    apart and C strided: scalar code. (Of 4000, the dot kernel gathers A's
    vectors in place: one row, so a copy would be read once.)"""
    plan = plan_gemm(GemmShape(1, 1, 3, 7, 3, 2, 1, 0, 0, "NNN"), 4)
    assert plan.lanes == 1
    long = plan_gemm(GemmShape(1, 1, 4000, 7, 4000, 2, 1, 0, 0, "NNN"), 4)
    assert (long.kernel, long.pack) == ("dot", ""), long
    record = layout_record("NNN", 1, 1, 3, pads=(6, 0, 1), zero=True, relu=True)
    kernel = compile_kernel(record, keep_ir=True)
    assert "vector.fma" not in kernel.stages["scf"]
    check_against_reference(record, sentinel_arrays(record, kernel, np.random.default_rng(2)))


@pytest.mark.parametrize("trans, m, n, batch, dtype", [
    ("TTT", 64, 7, 0, "FP32"),   # B's k steps 9 elements apart (n + pad): gathered
    ("TTT", 64, 7, 2, "FP64"),   # the same in two batches
    ("TTN", 64, 5, 2, "FP32"),   # 7 apart
    ("TTT", 96, 4, 3, "FP64"),   # 6 apart (stepped in place), three batches
    ("NNN", 12, 64, 0, "FP32"),  # A's k steps 13 apart, B contiguous along k
])
def test_the_dot_kernel_copies_the_operand_not_contiguous_along_k(
        trans: str, m: int, n: int, batch: int, dtype: str) -> None:
    """A dot-kernel tile whose other operand is read along k at a stride (stepped
    or gathered) copies it once, widened, k-contiguous (`pack = "copy"`) when it
    serves enough row blocks (the plan of the pinned AVX-512 description): the
    reference interpreter's result (within the sums' order), sentinels outside
    every operand unchanged."""
    k = 700
    record = layout_record(trans, m, n, k, dtype=dtype, batch=batch, zero=True)
    shape = GemmShape.of(next(
        p.matched_kernel() for p in load_module(record).walk()
        if isinstance(p, PrimitiveOp) and p.kind is OperationKind.CONTRACTION))
    assert shape is not None
    with pinned("avx512"):
        plan = plan_gemm(shape, 8 if dtype == "FP64" else 4)
        assert (plan.kernel, plan.pack) == ("dot", "copy"), plan
        kernel = compile_kernel(record, optimize=False)  # the tile as written
        arrays = sentinel_arrays(record, kernel, np.random.default_rng(4))
        check_against_reference(record, arrays, optimize=False)


def test_broadcast_columns_one_l1_set_apart_are_not_read_in_place() -> None:
    """`ij,jk->ik` with A's rows 4 KiB long (1024 floats): the outer kernel with
    vectors along n broadcast 27 of A's rows per k step, every line in one L1d set
    (8 ways): every broadcast missed (256 x 1024 x 16 FP32 292 us, 93 once
    planned around it; 1000 floats long, 76 us in place). The plan now counts
    those misses (`set_conflicts`) and takes the dot kernel, or register blocks
    of no more columns than a set holds; rows 1000 floats long keep the widest
    block. X gathered in place from rows one set apart counts the same misses."""
    assert gemm_plan.set_conflicts(27, 1024, 4)
    assert not gemm_plan.set_conflicts(8, 1024, 4)       # a set's ways
    assert not gemm_plan.set_conflicts(27, 1000, 4)      # starts spread over the sets
    assert gemm_plan.set_conflicts(27, 2048, 2)          # 16-bit rows 4 KiB long
    for machine in ("avx512", "avx2"):
        with pinned(machine):
            for n in (8, 16):
                aliased = plan_gemm(GemmShape(256, n, 1024, 1024, n, n, 1, 0, 0, "TTT"), 4)
                assert aliased.kernel == "dot" or (
                    aliased.vector == "n" and aliased.columns <= gemm_plan.L1_WAYS), aliased
            spread = plan_gemm(GemmShape(256, 16, 1000, 1000, 16, 16, 1, 0, 0, "TTT"), 4)
            assert spread.kernel == "outer" and spread.vector == "n", spread
    # the same for X gathered in place: A's columns as vectors along m, 16 rows 8 KiB
    # apart (512 x 2048 x 16 FP32 in tiles of 64 rows: 919 -> 425 us)
    with pinned("avx512"):
        gathered = plan_gemm(GemmShape(64, 16, 256, 2048, 16, 16, 1, 0, 0, "TTT"), 4)
    assert not (gathered.kernel == "outer" and gathered.vector == "m"
                and not gathered.pack), gathered


# -- fused ReLU ---------------------------------------------------------------------------


def elements_with(record: dict, tensor: int, **fixed: int) -> np.ndarray:
    """Element indices of `tensor` with the given axes fixed (e.g. m=1, k=0)."""
    w = WIDTH[record["primitives"][0]["metadata"]["data_type"]]
    axes = [dict(a, extent=1) if a["id"] in fixed else a for a in record["axes"]]
    shift = sum(a["strides"][tensor] // w * fixed[a["id"]] for a in axes if a["id"] in fixed)
    return element_indices(dict(record, axes=axes), tensor) + shift


def special_values(record: dict, arrays: list[np.ndarray], zero: bool) -> None:
    """B > 0 and A row 0 = -0.0, so C row 0 is C0 + (-0.0 products): -0.0 where C0
    is -0.0; A(1, 0) = NaN in the first batch, so C row 1 is NaN; C0 row 2 = -inf;
    A row 3 > 0 (a positive C row 3 unless C0 is very negative)."""
    m = record["axes"][0]["extent"]
    in0, in1, out = arrays
    b_elements = np.unique(element_indices(record, 1))
    in1[b_elements] = np.abs(in1[b_elements]) + 0.25
    in0[elements_with(record, 0, m=0)] = -0.0
    first = {axis["id"]: 0 for axis in record["axes"] if axis["id"] in ("k", "b", "w")}
    if m > 1:
        in0[elements_with(record, 0, m=1, **first)] = np.nan
    if m > 3:  # row 3 positive (so the other rows decide nothing about positives)
        in0[elements_with(record, 0, m=3)] = np.abs(in0[elements_with(record, 0, m=3)]) + 1.0
    if not zero:
        out[elements_with(record, 2, m=0)] = -0.0
        if m > 2:
            out[elements_with(record, 2, m=2)] = -np.inf


def check_relu(record: dict, trans: str, zero: bool, seed: int, optimize: bool = True) -> None:
    kernel = compile_kernel(record, optimize=optimize)
    arrays = sentinel_arrays(record, kernel, np.random.default_rng(seed))
    special_values(record, arrays, zero)
    _, got, want = check_against_reference(record, arrays, optimize)
    c = np.unique(element_indices(record, 2))
    assert (want[c] == 0).any() and (want[c] > 0).any()
    zeros = want[c] == 0
    np.testing.assert_array_equal(np.signbit(got[c][zeros]), np.signbit(want[c][zeros]))
    if not zero:  # -0.0 passes the ReLU unchanged
        assert np.signbit(want[c][zeros]).any()
    assert np.isnan(want[c]).any() == (record["axes"][0]["extent"] > 1)
    assert relu_operand_producers(record, optimize), "the ReLU was not fused"


def relu_operand_producers(record: dict, optimize: bool = True) -> list[str]:
    """The ops whose results the ReLU compares with 0, in teir-to-scf's output; empty
    when some comparison reads a value just loaded (a separate ReLU pass over C)."""
    module = load_module(record)
    for decision in [OptimizePass()] if optimize else [MatchGemmPass(), FuseEpiloguesPass()]:
        decision.apply(teir_context(), module)
    TeirToScfPass().apply(teir_context(), module)
    producers = [op.lhs.owner for op in module.walk()
                 if isinstance(op, (arith.CmpfOp, LaneCmpfOp))
                 and op.predicate.value.data == arith.CMPF_COMPARISON_OPERATIONS.index("olt")]
    if any(isinstance(p, (memref.LoadOp, vector.LoadOp)) for p in producers):
        return []
    return [p.name for p in producers]  # pyright: ignore


@pytest.mark.parametrize("number, trans", list(enumerate(LAYOUTS)))
def test_fused_relu_matches_reference(number: int, trans: str) -> None:
    m, n, k = [(37, 29, 17), (5, 33, 3), (19, 6, 37), (33, 7, 1), (17, 16, 15), (9, 36, 4),
               (31, 18, 5), (6, 35, 30)][number]
    dtype = ("FP32", "FP64")[number % 2]
    zero = number % 3 == 0
    record = layout_record(trans, m, n, k, dtype=dtype, batch=number % 2 * 3, zero=zero,
                           relu=True, pads=(1, 0, 2), offsets=number % 4 == 1)
    check_relu(record, trans, zero, number)


@pytest.mark.parametrize("optimize", [False, True], ids=["siblings", "optimized"])
@pytest.mark.parametrize("trans", ["NNN", "TNT", "NNT"])
def test_relu_guarded_by_last_of_the_k_loop(trans: str, optimize: bool) -> None:
    """A K loop w around Zero [first(w)], GEMM, ReLU [last(w)] (the flat form's
    schedule): fused as guarded siblings (optimize=False), and, after
    teir-canonicalize-guards hoists the Zero before and the ReLU after the loop,
    sunk back into the loop's first/last iteration (optimize=True)."""
    record = layout_record(trans, 20, 17, 9, batch=2, outer=3, zero=True, relu=True,
                           zero_guard=["first(w)"], relu_guard=["last(w)"])
    check_relu(record, trans, True, 7, optimize)
    scf = compile_kernel(record, optimize=optimize, keep_ir=True).stages["scf"]
    # no separately guarded Zero or ReLU: the only branches are the memos' (a packed
    # X kept across the calls, `OuterTile.memo_x`), on an i64 slot's comparison
    conditions = re.findall(r"scf\.if (%\w+)", scf)
    for condition in conditions:
        (definition,) = re.findall(rf"{condition} = (.*)", scf)
        assert re.match(r"arith\.cmpi ne, .* : i64", definition), definition


def test_relu_guarded_by_first_of_the_k_loop() -> None:
    """Any guard fuses under the guard: a ReLU after the first partial sum only."""
    record = layout_record("NTN", 18, 11, 5, outer=2, relu=True, relu_guard=["first(w)"])
    check_relu(record, "NTN", False, 8)


def test_relu_of_another_tile_is_not_fused() -> None:
    """A ReLU over the tile's M axis only (N not a role) is a different tile."""
    record = layout_record("NNN", 16, 3, 4, relu=True)
    record["primitives"][-1]["axes"] = {"M": ["m"], "N": []}
    kernel = compile_kernel(record)
    arrays = sentinel_arrays(record, kernel, np.random.default_rng(3))
    check_against_reference(record, arrays)
    assert not relu_operand_producers(record)


def test_relu_after_a_guarded_contraction_is_not_fused() -> None:
    record = layout_record("NNN", 16, 3, 4, outer=2, relu=True)
    record["schedule"]["invocations"][0]["guard"] = ["last(w)"]
    check_against_reference(record, sentinel_arrays(record, compile_kernel(record),
                                                    np.random.default_rng(4)))
    assert not relu_operand_producers(record, optimize=False)


def test_zero_is_not_fused_when_a_k_axis_shifts_out() -> None:
    """A K axis with an offset on out moves the Contraction's C off the Zero's tile."""
    record = layout_record("NNN", 16, 3, 4, zero=True, relu=True)
    record["axes"][2]["offsets"] = [0, 0, 4]
    kernel = compile_kernel(record)
    check_against_reference(record, sentinel_arrays(record, kernel, np.random.default_rng(5)))
    assert not relu_operand_producers(record)


def test_flat_form_zero_brgemm_relu_with_a_k_loop() -> None:
    """The flat form's prim_first Zero / BRGEMM / prim_last ReLU under a scheduled
    K axis w: the import guards them with first(w) / last(w), teir-optimize hoists
    them out of the w loop, and both are sunk back into the kernel."""
    p, w, t, s, q, u = 3, 3, 2, 20, 9, 7
    flat = {
        "dim_ids": ["p", "w", "t", "s", "q", "u"],
        "dim_types": ["N", "K", "K", "M", "N", "K"],
        "exec_types": ["seq", "seq", "prim", "prim", "prim", "prim"],
        "dim_sizes": [p, w, t, s, q, u],
        "strides": [[0, s * u * t, s * u, 1, 0, s],
                    [u * q * t * w, u * q * t, u * q, 0, u, 1],
                    [s * q, 0, 0, 1, s, 0]],
        "data_type": "FP32", "prim_first": "Zero", "prim_main": "BRGEMM", "prim_last": "ReLU",
    }
    record = flat_to_tree(flat)
    kernel = compile_kernel(record, keep_ir=True)
    _, _, want = check_against_reference(
        record, sentinel_arrays(record, kernel, np.random.default_rng(9)))
    assert (want == 0).any() and (want > 0).any()
    assert relu_operand_producers(record)
    assert "scf.if" not in kernel.stages["scf"]
    assert "%out[" not in kernel.stages["scf"].split("scf.for %w")[0]  # no Zero pass before w


# -- packing, K-blocks, M-blocks and register blocks, forced -----------------------------

AVX2 = Host("AMD EPYC (test)", 32, 16, frozenset({"avx2", "fma"}), 32 << 10, 512 << 10,
            32 << 20, 2)
AVX512 = Host("AMD Zen 5 (test)", 64, 32, frozenset({"avx512f", "fma"}), 48 << 10, 1 << 20,
              32 << 20, 16)


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch):
    """`forced(change)`: kernels compiled from then on take `change(shape, plan)`
    instead of the planner's plan (fresh kernels, with the disk cache off and the
    in-memory one restored after; `keep_ir` only where a test reads the IR)."""
    original = gemm_plan.plan_gemm
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    saved = dict(kernel_module._CACHE)
    kernel_module._CACHE.clear()

    def force(change) -> None:
        kernel_module._CACHE.clear()
        monkeypatch.setattr(gemm_emitter, "plan_gemm", lambda shape, *args, **options:
                            change(shape, original(shape, *args, **options)))

    yield force
    kernel_module._CACHE.clear()
    kernel_module._CACHE.update(saved)


FORCED = [
    # trans, dtype, (m, n, k), batch, the plan's changes, record options
    ("NNN", "FP32", (37, 29, 17), 3, {"pack": "copy", "k_block": (1, 17)},
     {"zero": True, "relu": True}),
    ("NNN", "FP64", (19, 13, 23), 2, {"pack": "", "k_block": (1, 10)}, {}),
    # the copy prefetching its runs two K steps ahead (past X's end at the last ones)
    ("NTN", "FP64", (19, 13, 23), 2, {"pack": "copy", "prefetch": 2}, {}),
    ("TNN", "FP32", (33, 7, 21), 2, {"pack": "transpose", "k_block": (1, 9)}, {"zero": True}),
    ("TTN", "FP64", (21, 19, 18), 0, {"pack": "transpose", "vectors": 3, "columns": 3},
     {"relu": True}),
    ("NTT", "FP32", (24, 40, 11), 2, {"pack": "gather", "vectors": 3, "columns": 4}, {}),
    ("NNT", "FP32", (21, 19, 18), 0, {"vector": "m", "pack": "copy", "vectors": 1,
                                      "columns": 8}, {"zero": True}),
    ("TNT", "FP64", (13, 9, 30), 3, {"vector": "m", "pack": "gather", "k_block": (3, 30)},
     {"zero": True, "relu": True}),
    ("NTN", "FP32", (45, 10, 20), 2, {"pack": "copy", "k_block": (2, 20),
                                       "scratch_bytes": 4 * 16 * 20 * 2 * 4}, {}),
    ("TNN", "FP32", (7, 6, 37), 2, {"kernel": "dot", "vector": "k", "vectors": 3,
                                    "columns": 4, "pack": ""}, {"zero": True}),
    ("NNN", "FP32", (5, 3, 6), 2, {"lanes": 1, "vectors": 1, "columns": 2, "pack": ""},
     {"relu": True}),
    # general strides: Y packed per column panel, alone and with X packed, K-blocks
    ("NNN", "FP32", (37, 29, 17), 2, {"pack": "", "pack_y": True},
     {"incs": (1, 3, 1), "zero": True, "relu": True}),
    ("TTN", "FP64", (21, 19, 18), 3, {"pack": "gather", "pack_y": True, "k_block": (1, 7)},
     {"incs": (2, 2, 1)}),
    ("NTT", "FP32", (24, 40, 11), 0, {"pack_y": True, "vectors": 1, "columns": 8},
     {"incs": (0, 2, 2), "zero": True}),
    # the dot kernel gathering A along k, and B broadcast along k (stride 0)
    ("TNN", "FP32", (7, 6, 37), 2, {"kernel": "dot", "vector": "k", "vectors": 3,
                                    "columns": 4, "pack": ""}, {"incs": (3, 1, 1)}),
    ("TNT", "FP64", (9, 5, 21), 0, {"kernel": "dot", "vector": "k", "vectors": 4,
                                    "columns": 2, "pack": ""}, {"incs": (1, 0, 1)}),
]
"""Each packing ("copy", prefetched or not, "gather", "transpose", none), K-blocks (batch groups; k
chunks with a shorter last one), M-blocks of a small scratch buffer (64 rows of
it), blocks of 1 to 3 vectors, C transposed in registers ("NNT" along m),
the dot and the scalar kernel; FP32 and FP64, with and without fused epilogues."""


@pytest.mark.parametrize("case", FORCED, ids=lambda c: f"{c[0]}-{c[1]}-{'x'.join(map(str, c[2]))}")
def test_forced_plans_match_reference(case, forced) -> None:
    trans, dtype, (m, n, k), batch, changes, options = case
    if "vector" not in changes:
        changes = {**changes, "vector": "m" if trans[2] == "N" else "n"}
    lanes = {"FP32": 8, "FP64": 4}[dtype] if changes.get("kernel") != "dot" else None
    forced(lambda shape, plan: dataclasses.replace(
        plan, **{"lanes": min(lanes or plan.lanes, plan.lanes), **changes}))
    record = layout_record(trans, m, n, k, dtype=dtype, batch=batch, pads=(2, 1, 3), **options)
    kernel = compile_kernel(record, optimize=False, keep_ir=True)
    arrays = sentinel_arrays(record, kernel, np.random.default_rng(m * n + k))
    check_against_reference(record, arrays, optimize=False)
    scf = kernel.stages["scf"]
    assert ("memref.alloca" in scf) == bool(changes.get("pack") or changes.get("pack_y"))
    assert ("vector.fma" in scf) == (changes.get("lanes", 2) > 1)
    assert ("teir_lane.prefetch" in scf) == bool(changes.get("prefetch"))


def test_alloca_is_hoisted_out_of_the_loops(forced) -> None:
    """A packed kernel inside a loop: one stack slot in the function's entry block."""
    forced(lambda shape, plan: dataclasses.replace(plan, pack="copy"))
    record = layout_record("NNN", 24, 12, 9, outer=3, zero=True)
    kernel = compile_kernel(record, optimize=False, keep_ir=True)
    llvm_ir = kernel.stages["llvm"]
    body = llvm_ir.split("entry:\n", 1)[1]
    entry = body.split("\n\n", 1)[0].split(":\n", 1)[0]  # up to the next block
    # the packed X's buffer and its memo's slot (`OuterTile.memo_x`), both at entry
    assert llvm_ir.count(" alloca float") == 1 and llvm_ir.count(" alloca ") == 2
    assert entry.count(" alloca ") == 2
    check_against_reference(record, sentinel_arrays(record, kernel, np.random.default_rng(6)),
                            optimize=False)


@pytest.mark.parametrize("machine", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_register_blocks_fit_the_registers(machine: Host) -> None:
    """Every main block keeps its accumulators, loaded vectors and a broadcast in the
    host's vector registers with room to spare; the spec's BRGEMM gets two-vector
    blocks (2 x 6 with 16 registers), FP64 its own K-blocks."""
    spec = GemmShape(64, 64, 64, 64, 512, 2048, 8, 131072, 64, "NNN")
    for width in (4, 8):
        for trans in LAYOUTS:
            plan = plan_gemm(dataclasses.replace(spec, trans=trans), width, True,
                             machine=machine)
            accumulators = plan.vectors * plan.columns
            assert accumulators + plan.vectors + 1 <= machine.vector_registers
            assert accumulators <= machine.vector_registers - 4
        plan = plan_gemm(spec, width, True, machine=machine)
        # A packed on the AVX2 host; read in place in FP32 on the AVX-512 one, as
        # measured (gemm_plan.FIRST_READ); FP64's panel spans more pages than
        # the TLB holds, which packing avoids
        packed = "copy" if machine is AVX2 or width == 8 else ""
        assert (plan.vector, plan.vectors, plan.pack) == ("m", 2, packed)
        panel = plan.columns * width * (plan.k_block[0] * plan.k_block[1] or 512)
        assert panel <= machine.l1d * 3 // 4
        # K-blocks exactly when the panel of all of K would not fit
        assert (plan.k_block != (0, 0)) == (plan.columns * width * 512 > machine.l1d * 3 // 4)
    if machine is AVX2:
        assert plan_gemm(spec, 4, True, machine=machine).columns == 6
        assert plan_gemm(spec, 8, True, machine=machine).k_block == (0, 0)  # 6 x 512 f64: 24 KiB of 32


def test_packing_follows_strides_and_reuse() -> None:
    """X read in place when its block fits L1; packed (copy) when it spans pages
    (lda = 1024 floats: every k step in its own page and L1 set) or is large; no
    packing without reuse (one column panel)."""
    small = GemmShape(16, 16, 16, 16, 16, 16, 1, 0, 0, "NNN")
    assert plan_gemm(small, 4, True, machine=AVX2).pack == ""
    strided = GemmShape(128, 128, 128, 1024, 128, 128, 1, 0, 0, "NNN")
    assert plan_gemm(strided, 4, True, machine=AVX2).pack == "copy"
    assert gemm_plan.scattered(16, 1024, 0, 1, 128, 4) > gemm_plan.scattered(16, 128, 0, 1, 128, 4)
    single_panel = GemmShape(64, 4, 16, 1024, 16, 64, 1, 0, 0, "NNN")
    assert plan_gemm(single_panel, 4, True, machine=AVX2).pack == ""


# -- the planner: data in, plan out ------------------------------------------------------

SPEC_BRGEMM = GemmShape(64, 64, 64, 64, 512, 2048, 8, 131072, 64, "NNN")


def test_the_planner_decides_for_the_host_it_is_given() -> None:
    """plan_gemm reads the host in one place: the Host passed in, else the pinned or
    native one; the plan carries what the emitter needs of it (the registers that
    size the edge blocks, the scratch buffer's size)."""
    on_avx2 = plan_gemm(SPEC_BRGEMM, 4, True, machine=AVX2)
    on_avx512 = plan_gemm(SPEC_BRGEMM, 4, True, machine=AVX512)
    assert (on_avx2.columns, on_avx2.registers) == (6, 16)
    assert on_avx512.columns > 6 and on_avx512.registers == 32
    with pinned(AVX512):
        assert plan_gemm(SPEC_BRGEMM, 4, True) == on_avx512
    with pinned("avx2-small"):  # 256 KiB of L2: half of it for the packed block
        assert plan_gemm(SPEC_BRGEMM, 4, True).scratch_bytes == 128 << 10
    assert on_avx2.scratch_bytes == SCRATCH_BYTES


def test_general_strides_pack_y_and_keep_the_dot_kernel() -> None:
    """Y with general strides is packed per panel when its panel's lines overflow the
    L1d and the row blocks reuse it; read in place when one row block reads it. A
    GEMV whose vector is broadcast (stride 0 along k) keeps the dot kernel."""
    scattered_y = GemmShape(256, 256, 256, 256, 3 * 256 * 16, 256, 1, 0, 0, "NNN",
                            incb=16)
    assert plan_gemm(scattered_y, 4, machine=AVX2).pack_y
    one_row_block = GemmShape(8, 256, 256, 8, 3 * 256 * 16, 8, 1, 0, 0, "NNN", incb=16)
    assert not plan_gemm(one_row_block, 4, machine=AVX2).pack_y
    table = GemmShape(256, 256, 256, 256, 256, 256, 1, 0, 0, "NNN")
    assert not plan_gemm(table, 4, machine=AVX2).pack_y
    broadcast = GemmShape(512, 1, 512, 512, 1, 512, 1, 0, 0, "TNN", incb=0)
    assert plan_gemm(broadcast, 8, machine=AVX2).kernel == "dot"


def test_m_blocks_fill_the_scratch_buffer() -> None:
    """A packed X is consumed in M-blocks of whole row blocks that fit the buffer."""
    plan = dataclasses.replace(plan_gemm(SPEC_BRGEMM, 4, True, machine=AVX2),
                               pack="copy", vectors=2, lanes=8, scratch_bytes=100 * 4 * 64)
    assert plan.m_block(1000, 4, 64) == 96  # 100 rows fit: 6 blocks of 16
    assert plan.m_block(40, 4, 64) == 40
    assert plan.m_block(1000, 4, 1000) == 16  # one row block at least
    assert dataclasses.replace(plan, pack="").m_block(1000, 4, 64) == 1000


def test_a_narrow_c_gets_one_k_block() -> None:
    """C in f16/bf16 is rounded once, at its one store: where the f32 tile's plan
    has K-blocks, the plan for a narrow C is the same but for one K-block, and the
    emitter refuses a K-blocked plan for such a C."""
    shape = GemmShape(64, 64, 2048, 64, 2048, 64, 1, 0, 0, "NNN")
    wide = plan_gemm(shape, 4, machine=AVX2)
    narrow = plan_gemm(shape, 4, narrow_c=True, machine=AVX2)
    assert wide.k_block != (0, 0)
    assert narrow == dataclasses.replace(wide, k_block=(0, 0))
    block = Block(arg_types=[MemRefType(Float16Type(), [-1])] * 3)
    with pytest.raises(ValueError, match="K-blocks"):
        gemm_emitter.GemmEmitter(shape, Float16Type(), 4, *block.args, plan=wide)


@pytest.mark.parametrize("trans", LAYOUT_PAIRS)
def test_bf16_y_is_widened_first_where_shuffles_take_fma_ports(trans: str, forced) -> None:
    """A bf16 tile's Y is widened to f32 before the FMAs on a host whose shuffles take
    FMA ports (`Host.shuffles_on_fma_ports`: the Intel-like description), and
    widened element by element as it is broadcast elsewhere (the Zen-like one):
    the same products in the same order, so the same bytes, remainders along both
    free dimensions, every layout pair, nothing outside C written."""
    record = layout_record(trans, 37, 29, 19, dtype="BF16", batch=3, pads=(2, 1, 3))
    results = []
    for name, widened in (("avx512-intel", True), ("avx512", False)):
        plans: list[GemmPlan] = []

        def change(shape, plan, plans=plans):
            plans.append(plan)
            return plan

        forced(change)
        with pinned(name):
            kernel = compile_kernel(record, optimize=False)
        outer = [p for p in plans if p.kernel == "outer" and p.lanes > 1]
        assert outer and all((p.widen_y or p.widen_panels) == widened for p in outer), plans
        arrays = sentinel_arrays(record, kernel, np.random.default_rng(5))
        kernel(*arrays, threads=1)
        results.append(arrays)
    for first, other in zip(*results):
        np.testing.assert_array_equal(first.view(np.uint16), other.view(np.uint16))


@pytest.mark.parametrize("trans", LAYOUT_PAIRS)
def test_f16_y_widened_once_gives_the_same_bytes(trans: str, forced) -> None:
    """An f16 tile's Y is widened to f32 once, whole (`GemmPlan.widen_y`), instead of
    a broadcast and a conversion per column, row block and K step: the same
    products in the same order, so the same bytes as the kernel that converts every
    broadcast; GEMM and BRGEMM, remainders along both free dimensions, Y contiguous
    along k or along its free dimension (the layouts), nothing outside C written."""
    m, n, k = 37, 29, 19
    for batch in ((0, 3) if LAYOUTS.index(trans) % 4 == 0 else (3 * (LAYOUTS.index(trans) % 2),)):
        record = layout_record(trans, m, n, k, dtype="FP16", batch=batch, pads=(2, 1, 3),
                               zero=batch == 0)
        results = []
        for widen in (True, False):
            plans: list[GemmPlan] = []

            def change(shape, plan, widen=widen, plans=plans):
                plans.append(chosen := dataclasses.replace(plan, widen_y=widen and plan.widen_y))
                return chosen

            forced(change)
            kernel = compile_kernel(record, optimize=False)
            if widen:
                assert plans and all(p.widen_y for p in plans if p.kernel == "outer"
                                     and p.lanes > 1), plans
            arrays = sentinel_arrays(record, kernel, np.random.default_rng(batch))
            kernel(*arrays, threads=1)
            results.append(arrays)
        for widened, converted in zip(*results):
            np.testing.assert_array_equal(widened.view(np.uint16), converted.view(np.uint16))


@pytest.mark.parametrize("trans", LAYOUT_PAIRS)
def test_f16_y_widened_per_panel_gives_the_same_bytes(trans: str, forced) -> None:
    """An f16 Y widened per column panel (`GemmPlan.widen_panels`: Y too large to
    widen whole, contiguous along k) gives the bytes of the kernel that converts
    every broadcast: GEMM and BRGEMM, several panels and a remainder of columns,
    remainders of rows; nothing outside C written. Layouts whose Y is not
    contiguous along k keep the broadcasts (the plan says so)."""
    m, n, k = 37, 45, 19
    for batch in (0, 3):
        record = layout_record(trans, m, n, k, dtype="FP16", batch=batch, pads=(2, 1, 3),
                               zero=batch == 0)
        results, modes = [], []
        for panels in (True, False):
            plans: list[GemmPlan] = []

            def change(shape, plan, panels=panels, plans=plans):
                plain = dataclasses.replace(plan, widen_y=False, widen_panels=False)
                chosen = dataclasses.replace(plain, widen_panels=panels and (
                    gemm_plan.widen_panels_pay(plain, shape, 4)))
                plans.append(chosen)
                return chosen

            forced(change)
            kernel = compile_kernel(record, optimize=False)
            modes.append([p.widen_panels for p in plans])
            arrays = sentinel_arrays(record, kernel, np.random.default_rng(batch))
            kernel(*arrays, threads=1)
            results.append(arrays)
            if not any(modes[0]):
                break  # no panel widened: the other kernel would be this one
        y_along_k = {"m": trans[1] == "N", "n": trans[0] == "T"}
        assert modes[0] == [p.kernel == "outer" and p.lanes > 1 and y_along_k[p.vector]
                            for p in plans], (modes, plans)
        for widened, converted in zip(results[0], results[-1]):
            np.testing.assert_array_equal(widened.view(np.uint16), converted.view(np.uint16))


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_a_long_k_f16_y_is_widened_per_panel_of_the_columns_its_blocks_take(
        machine: str) -> None:
    """`ij,jk->ik` 64 x 2000 x 64 in FP16 (one K-block: C is rounded once): the
    widened panel is the columns the tile's register blocks take (8 or 16 x 2000
    K steps, within half the scratch), not the widest block any tile could take
    (27 on AVX-512: 216 KB, too large, so every broadcast was converted: 1.37x
    slower on the AMD EPYC Zen 4 host). The buffer is sized the same way."""
    shape = GemmShape(m=64, n=64, k=2000, lda=2000, ldb=64, ldc=64, batch=1, batch_a=0,
                      batch_b=0, trans="TTT")
    with pinned(machine) as host:
        plan = plan_gemm(shape, 4, True, narrow_c=True, converts=True, stored=2)
        o = gemm_plan.Oriented.of(shape, plan.vector)
        columns = plan.panel_columns(o.nv, o.nu, plan.transposes_c(o.c_v, o.c_u), 4, 2000)
    assert plan.widen_panels, plan
    assert columns == max(nr for seg in plan.layout(o.nv, o.nu, False)
                          for _, _, nr in seg.columns)
    assert columns < gemm_plan.widest_columns(1, host.vector_registers)


def spec_brgemm(p: int, q: int, r: int, s: int, t: int, u: int, dtype: str,
                outer: str) -> dict:
    """trus,pqtu->pqrs in flat form (the spec's large BRGEMM): one tile per (p, r),
    whose Y (pqtu) depends on p alone; p and r run `outer` (parallel or seq)."""
    return {
        "dim_ids": ["p", "r", "t", "s", "q", "u"],
        "dim_types": ["N", "M", "K", "M", "N", "K"],
        "exec_types": [outer, outer, "prim", "prim", "prim", "prim"],
        "dim_sizes": [p, r, t, s, q, u],
        "strides": [[0, u * s, r * u * s, 1, 0, s], [q * t * u, 0, u, 0, t * u, 1],
                    [q * r * s, s, 0, 1, r * s, 0]],
        "data_type": dtype, "prim_first": "Zero", "prim_main": "BRGEMM", "prim_last": "None",
    }


@pytest.mark.parametrize("outer", ["parallel", "seq"])
def test_f16_y_widened_once_per_scope_kept_while_it_repeats(outer: str, forced) -> None:
    """A widened Y is kept while the next tiles of the scope (the kernel, or a chunk
    of the parallel loop) read the same Y (one p, every r: `emit.memoized`) and
    widened again when they move on (the next p): the same bytes as converting
    every broadcast, at 1 and 2 threads; and per call, so that a call after the
    input changed in place (the same address) reads the new values."""
    p, q, r, s, t, u = 3, 5, 4, 37, 2, 9
    record = spec_brgemm(p, q, r, s, t, u, "FP16", outer)
    rng = np.random.default_rng(7)
    a = rng.standard_normal(t * r * u * s).astype(np.float16)
    b, changed = (rng.standard_normal(p * q * t * u).astype(np.float16) for _ in range(2))
    results = {}
    for widen in (True, False):
        plans: list[GemmPlan] = []
        forced(lambda shape, plan, widen=widen, plans=plans: plans.append(plan) or
               dataclasses.replace(plan, widen_y=widen and plan.widen_y))
        kernel = compile_kernel(record)
        assert plans and all(plan.widen_y for plan in plans), plans
        y = b.copy()
        for threads in (1, 2):
            c = np.full(p * q * r * s, np.nan, np.float16)
            kernel(a, y, c, threads=threads)
            results[widen, threads] = c
        y[...] = changed
        c = np.full(p * q * r * s, np.nan, np.float16)
        kernel(a, y, c, threads=1)
        results[widen, "changed"] = c
    for key in (1, 2, "changed"):
        np.testing.assert_array_equal(results[True, key].view(np.uint16),
                                      results[False, key].view(np.uint16))
    want = np.einsum("trus,pqtu->pqrs", a.astype(np.float64).reshape(t, r, u, s),
                     changed.astype(np.float64).reshape(p, q, t, u)).ravel()
    np.testing.assert_allclose(results[True, "changed"], want, rtol=2e-2, atol=2e-2)


def test_x_scattered_over_many_pages_is_packed_even_for_one_column_panel() -> None:
    """`dca,bd->cab`'s tile: m = 640 rows of A with k steps 158 KB apart (each K step
    a page, 201 of them: more streams than the prefetchers follow), 13 columns (one
    panel). Read in place its first read waits for memory at every line; packed,
    the copy streams it (faster on the AVX-512 host: README, Benchmarks). Over
    fewer pages (48 k steps 2.5 KB apart: 30) it stays in place (one panel reads
    X once)."""
    scattered = GemmShape(640, 13, 201, 39597, 201, 13, 1, 0, 0, "NNT")
    near = dataclasses.replace(scattered, k=48, lda=640, ldb=48)
    for machine in (AVX2, AVX512):
        assert plan_gemm(scattered, 4, True, machine=machine).pack == "copy"
        assert plan_gemm(near, 4, True, machine=machine).pack == ""

def test_the_copy_of_an_x_from_memory_in_short_runs_pages_apart_prefetches_ahead() -> None:
    """Each K step of `dca,bd->bca`'s X (64 MB, steps 310 KiB apart, runs of a few
    hundred elements) is a stream of its own from memory: the copy into the packed
    X prefetches the run `PREFETCH_STEPS` steps ahead (`prefetch_pays`). Not when
    the steps are near (a BRGEMM packed for its scattered batches, rows 131
    elements apart), when the caches hold X (`cad,dcb->ab`'s 4 MB tile, unless its
    inputs come from memory), when the runs are long enough for the hardware
    prefetchers (8192 elements), nor for an X read in place."""
    far = GemmShape(320, 13, 201, 39597, 201, 39597, 1, 0, 0, "NNN")
    near = GemmShape(32, 13, 128, 131, 131, 32, 8, 2097152, 851968, "NNN")
    cached = GemmShape(48, 98, 101, 101, 9898, 98, 1, 0, 0, "TTT")
    long_runs = GemmShape(38, 8192, 8, 38, 8192, 8192, 1, 0, 0, "NTT")
    in_place = GemmShape(32, 256, 128, 1024, 1020, 4096, 1, 0, 0, "TTT")
    steps = gemm_plan.PREFETCH_STEPS
    assert steps > 0

    def planned(shape: GemmShape, machine: Host, width: int = 4,
                **options: bool) -> tuple[str, int]:
        plan = plan_gemm(shape, width, machine=machine, **options)
        return plan.pack, plan.prefetch

    for machine in (AVX2, AVX512):
        assert (planned(far, machine, 8) == planned(far, machine, 8, from_memory=True)
                == ("copy", steps))
        assert planned(near, machine) == ("copy", 0)
        assert planned(cached, machine) == ("copy", 0)
        assert planned(cached, machine, from_memory=True) == ("copy", steps)
        assert planned(long_runs, machine, from_memory=True) == ("copy", 0)
        assert planned(in_place, machine) == ("", 0)


def test_a_gemv_whose_x_the_caches_hold_is_read_in_place() -> None:
    """A GEMV (one column panel) reads X once. Over k steps a page or more apart it
    is packed only when X spans more than half the last-level cache (its lines then
    come from memory, and packing streams them); a 16-bit 4096 x 256 X, k steps
    8 KB apart (2 MB), is read in place: packed, its copy walked the same pages and
    took twice as long (README). The same X spread over 32 MB keeps the packing."""
    cached = GemmShape(4096, 1, 256, 4096, 256, 4096, 1, 0, 0, "NNN")
    spread = dataclasses.replace(cached, lda=65536)
    for machine in (AVX2, AVX512):
        plan = plan_gemm(cached, 4, narrow_c=True, converts=True, stored=2, machine=machine)
        assert (plan.kernel, plan.vector, plan.pack) == ("outer", "m", ""), plan
        assert plan_gemm(spread, 4, narrow_c=True, converts=True, stored=2,
                         machine=machine).pack == "copy"



@pytest.mark.parametrize("width", [2, 4, 8])
def test_a_gemv_reading_one_constant_stride_stream_is_not_packed(width: int) -> None:
    """`ij,j->i` on a transposed 457 x 712 matrix (one column panel, K steps 457
    elements apart, far more pages than the L1 DTLB holds, but in order at one
    stride): read in place in every type, narrow C (16-bit) included; packing it
    first had made the BF16 GEMV slower than its contiguous twin by more than 2x. The same K steps a page or more
    apart are still scattered."""
    gemv = GemmShape(457, 1, 712, 457, 0, 457, 1, 0, 0, "NNN", inca=1, incb=0, incc=1)
    for machine in (AVX2, AVX512):
        plan = plan_gemm(gemv, max(width, 4), True, narrow_c=width == 2,
                         converts=width == 2, machine=machine)
        assert plan.pack == ""
    assert gemm_plan.scattered(16, 457, 0, 1, 712, 4) == 0
    assert gemm_plan.scattered(16, 1024, 0, 1, 712, 4) > 0
    batches_apart = gemm_plan.scattered(16, 64, 32 * 64 * 64, 32, 64, 4)  # 128 pages
    assert batches_apart > 0


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_x_read_by_several_panels_from_memory_is_packed(machine: str) -> None:
    """TCCG 13's GEMM calls (101 x 99 x 128 FP64 of A 101 x 9999 and B 9999 x 99, X =
    B along n): inputs the caches keep (`from_memory` False) read X in place; inputs
    from memory at every call (teir-mark-streamed-out's `streamed_in`) pack it, whose
    pass reads ahead where the k loop would wait at each line (5.8 -> 4.5 ms on
    Zen 4). A GEMV's X (one column panel) is read once: never packed for it."""
    shape = GemmShape(m=101, n=99, k=128, lda=9999, ldb=99, ldc=99, batch=1, batch_a=0,
                      batch_b=0, trans="TTT")
    with pinned(machine):
        assert gemm_plan.plan_gemm(shape, 8).pack == ""
        assert gemm_plan.plan_gemm(shape, 8, from_memory=True).pack == "copy"
        gemv = dataclasses.replace(shape, m=1)
        assert gemm_plan.plan_gemm(gemv, 8, from_memory=True).pack == ""


def test_a_tile_of_x_from_memory_is_not_cached_whatever_its_span() -> None:
    """`ij,jk->ik` 8 x 1024 x 4096 FP32's tiles: 8 rows, 2048 columns of B, K-blocks
    of 256 rows 16 KiB apart (a 4 MB span the L3 would hold). With B from memory at
    every call (`from_memory`) each tile's B is read from memory too, whatever its
    span: packed, its copy prefetching the rows (2.1x faster on Zen 4, README,
    Benchmarks); on the AVX-512 host's L3 it is read in place otherwise."""
    shape = GemmShape(8, 2048, 256, 1024, 4096, 4096, 1, 0, 0, "TTT")
    for machine in (AVX2, AVX512):
        plan = plan_gemm(shape, 4, machine=machine, from_memory=True)
        assert (plan.pack, plan.prefetch) == ("copy", gemm_plan.PREFETCH_STEPS)
    assert plan_gemm(shape, 4, machine=AVX512).pack == ""


@pytest.mark.parametrize("subscripts, same_x", [("abc,cd->abd", True), ("abc,acd->abd", False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_x_packed_whole_is_packed_again_only_when_it_moves(subscripts: str, same_x: bool,
                                                          dtype: type) -> None:
    """One GEMM per a, B transposed (packed by transposes as X): where every call reads
    the same B (`abc,cd->abd`) it is packed once per scope (`OuterTile.memo_x`: the
    packing sits under the memo's branch; before, 155 packs of B made the call 2.2x
    its contiguous twin's time, FP16, AMD EPYC Zen 4); where B moves with a
    (`abc,acd->abd`) each call packs its own. Both give numpy's result at 1 and 2
    threads, and the same as with the memo off."""
    from teir_lowering import einsum as einsum_call

    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (13, 9, 66)).astype(dtype)[2:, 2:, 3:]  # 11 x 7 x 63, offset
    b_shape = (63, 45) if same_x else (11, 63, 45)
    b = np.swapaxes(rng.uniform(-1, 1, b_shape[:-2] + b_shape[:-3:-1]).astype(dtype), -1, -2)
    want = np.einsum(subscripts, a.astype(np.float64), b.astype(np.float64))
    results = []
    for threads in (1, 2):
        got = einsum_call(subscripts, a, b, threads=threads)
        np.testing.assert_allclose(got.astype(np.float64), want,
                                   rtol=0, atol=64 * 63 * float(np.finfo(dtype).eps))
        results.append(got)
    np.testing.assert_array_equal(results[0], results[1])
    plans: list[GemmPlan] = []
    memos: list[int] = []
    original, memoized = gemm_emitter.plan_gemm, gemm_emitter.memoized

    def spy(*args: Any, **kwargs: Any) -> GemmPlan:
        plans.append(plan := original(*args, **kwargs))
        return plan

    def counted(*args: Any) -> None:
        memos.append(1)
        memoized(*args)

    def unmemoized(builder: Any, _prologue: Any, _key: Any, body: Any) -> None:
        body(builder)

    def compiled(memo: bool) -> Any:
        """The kernel planned for an AVX-512 host (whose plan packs B; an AVX2 one
        reads it in place), with the memos or without."""
        with pytest.MonkeyPatch.context() as patch, pinned("avx512"):
            patch.setattr(gemm_emitter, "plan_gemm", spy)
            patch.setattr(gemm_emitter, "memoized", counted if memo else unmemoized)
            patch.setenv("TEIR_KERNEL_CACHE", "0")
            saved = dict(kernel_module._CACHE)
            kernel_module._CACHE.clear()
            try:
                return compile_kernel(einsum_config(subscripts, a, b), keep_ir=True)
            finally:
                kernel_module._CACHE.clear()
                kernel_module._CACHE.update(saved)

    unmemo = compiled(False)
    plans.clear()
    kernel = compiled(True)
    outer = [p for p in plans if p.kernel == "outer"]
    assert outer and all(p.pack == "transpose" for p in outer)
    # the packing under a memo (and, in FP16, Y's widening under its own)
    assert len(memos) == len(outer) * (1 + (dtype == np.float16 and outer[0].widen_y))
    for threads in (1, 2):
        out, out_unmemo = np.empty_like(results[0]), np.empty_like(results[0])
        kernel.call_planned((a, b, out), threads)  # the views as einsum passes them
        unmemo.call_planned((a, b, out_unmemo), threads)
        np.testing.assert_allclose(out.astype(np.float64), want,
                                   rtol=0, atol=64 * 63 * float(np.finfo(dtype).eps))
        np.testing.assert_array_equal(out, out_unmemo)


@pytest.mark.parametrize("dtype", ["float16", "BF16"])
def test_the_widening_loops_stay_rolled(dtype: str) -> None:
    """The loops that widen a 16-bit Y into its f32 buffer (per K block or panel, with
    a scalar tail: 237 rows of k, 302 columns) are marked `UNROLLED` (`for_loop`'s
    `rolled`): LLVM unrolled and vectorized them into most of the kernel's code and
    compile time. Other loops (the microkernel's) are left to LLVM; numpy's
    result."""
    import ml_dtypes
    from xdsl.dialects import scf

    from teir_lowering.lane import UNROLLED
    from teir_lowering.runtime.kernel import lower_to_scf

    numpy_type = ml_dtypes.bfloat16 if dtype == "BF16" else np.float16
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-1, 1, shape).astype(numpy_type) for shape in ((365, 237), (237, 302)))
    record = einsum_config("ij,jk->ik", a, b, dtype="BF16" if dtype == "BF16" else None)
    with pinned("avx512-intel"):
        module = load_module(record)
        ctx = teir_context()
        OptimizePass().apply(ctx, module)
        lower_to_scf(module, ctx)
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
        widening = [loop for loop in loops if {arith.ExtFOp, arith.ShLIOp} & {
            type(op) for op in loop.body.walk()} and memref.LoadOp in {
            type(op) for op in loop.body.walk()} and not {vector.FMAOp, arith.MulfOp} & {
            type(op) for op in loop.body.walk()}]
        assert widening and all(UNROLLED in loop.attributes for loop in widening)
        assert any(UNROLLED not in loop.attributes for loop in loops)
        kernel = compile_kernel(record)
    out = np.zeros((365, 302), numpy_type)
    kernel(a, b, out)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=0.02, atol=0.05)
