"""Every data type through the compiled kernels, against the reference interpreter.

A compile costs seconds, so each kernel here packs many tiles into one
configuration (`Packed`): independent tiles on their own axes and their own
bytes of every tensor, invoked one after the other. Per data type:

- element-wise (2 tensors): Zero, Copy and ReLU tiles, contiguous (full vectors
  and every narrower remainder), transposing (the register transpose with edge
  blocks) and strided (scalar), on random bit patterns, so NaNs with every
  payload, infinities, subnormals and -0.0 pass through: the result must equal
  the interpreter's byte for byte, sentinels between the tiles included;
- contractions (3 tensors): GEMM in all 8 layouts (`trans`) with shapes that
  are not multiples of the vector lanes, a BRGEMM, fused Zero and ReLU, an
  accumulating tile, a scalar Contraction under a K loop of the schedule (the
  loop accumulates through the stored type: one rounding per invocation), and an
  outer product of special values (NaN, ±Inf, subnormals, products past the
  FP16 range, TF32 ties). The special and the scalar tiles must match the
  interpreter bit for bit, the others within teir-run's error bound.

FP16, BF16 and TF32 run by default; FP32, FP64 and every spec example recast to
each of the five data types are `slow` (pytest -m slow).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from conftest import BF16_PAIRS, FLAT_EXAMPLES, TREE_EXAMPLES
from teir_dialect.interpreter import (
    STORAGE_DTYPE,
    from_float64,
    round_tf32,
    run_reference,
)
from teir_dialect.vocabulary import DataType
from teir_lowering.runtime.kernel import Kernel, compile_kernel
from teir_tools import teir_run
from teir_tools.teir_run import error_bound

FAST_TYPES = ["FP16", "BF16", "TF32"]
SLOW_TYPES = ["FP32", "FP64"]
LAYOUTS = ["".join(t) for t in itertools.product("NT", repeat=3)]
SHAPES = [(19, 7, 5), (5, 13, 3), (17, 6, 9), (11, 10, 7), (9, 18, 4), (13, 5, 11),
          (3, 17, 12), (12, 9, 1)]
"""(m, n, k) per layout: full and partial register blocks, every narrower vector and
scalar rows (8 FP32 lanes with AVX2, 16 with AVX-512)."""


def all_types(fast: Sequence[str], slow: Sequence[str] = SLOW_TYPES) -> list[Any]:
    """`fast` data types, then `slow` ones marked slow."""
    return [*fast, *(pytest.param(t, marks=pytest.mark.slow) for t in slow)]


# -- packing tiles into one configuration ----------------------------------------------


@dataclass
class Tile:
    """One tile: its operations on the same role axes, its elements per tensor.

    `axes` maps an axis name to (extent, element stride per tensor); `roles` the
    roles to axis names; `loops` are schedule iterations around the invocations
    (names in `axes` too); `base` is filled in by `Packed`: the tile's first
    element on each tensor.
    """

    name: str
    operations: list[str]
    axes: dict[str, tuple[int, tuple[int, ...]]]
    roles: dict[str, list[str]]
    loops: list[str] = field(default_factory=list)
    base: tuple[int, ...] = ()

    def span(self, tensor: int) -> int:
        return 1 + sum((extent - 1) * strides[tensor] for extent, strides in self.axes.values())


class Packed:
    """Tiles side by side: each on its own elements, 5 sentinel elements apart."""

    GAP = 5

    def __init__(self, data_type: str, tensors: int, tiles: Sequence[Tile]):
        self.data_type = data_type
        self.tensors = tensors
        self.tiles = {tile.name: tile for tile in tiles}
        ends = [self.GAP] * tensors
        for tile in tiles:
            tile.base = tuple(ends)
            ends = [end + tile.span(t) + self.GAP for t, end in enumerate(ends)]
        self.sizes = ends

    def record(self) -> dict[str, Any]:
        w = DataType(self.data_type).width
        names = ["in0", "out"] if self.tensors == 2 else ["in0", "in1", "out"]
        meta = {"data_type": self.data_type}
        axes, primitives, iterations, invocations, roots = [], [], [], [], []
        for tile in self.tiles.values():
            first_role = tile.roles[next(r for r in ("M", "N", "K") if tile.roles.get(r))][0]
            for axis, (extent, strides) in tile.axes.items():
                at_base = axis == first_role
                axes.append({"id": f"{tile.name}_{axis}", "extent": extent,
                             "strides": [s * w for s in strides],
                             "offsets": [b * w if at_base else 0 for b in tile.base]})
            roles = {role: [f"{tile.name}_{a}" for a in ids] for role, ids in tile.roles.items()}
            children = []
            for number, operation in enumerate(tile.operations):
                prim = f"{tile.name}_{operation}_{number}"
                used = roles if operation == "Contraction" else {"M": roles["M"], "N": roles["N"]}
                primitives.append({"id": prim, "operation": operation, "axes": used,
                                   "metadata": meta})
                invocations.append({"id": f"i_{prim}", "primitive": prim, "guard": None})
                children.append(f"i_{prim}")
            for loop in reversed(tile.loops):
                iterations.append({"id": f"l_{tile.name}_{loop}", "axis": f"{tile.name}_{loop}",
                                   "policy": "sequential", "children": children, "guard": None})
                children = [f"l_{tile.name}_{loop}"]
            roots += children
        return {"tensors": names, "axes": axes, "primitives": primitives,
                "schedule": {"roots": roots, "iterations": iterations,
                             "invocations": invocations}}

    def elements(self, tile: str, tensor: int) -> np.ndarray:
        """The element indices of `tile` on `tensor`, in the loop order of its axes."""
        t = self.tiles[tile]
        index = np.full(1, t.base[tensor], dtype=np.int64)
        for extent, strides in t.axes.values():
            index = (index[:, None] + strides[tensor] * np.arange(extent)[None, :]).ravel()
        return index


def stored(values: np.ndarray | Sequence[float], data_type: str) -> np.ndarray:
    """float64 values in the interpreter's storage of `data_type` (BF16: uint16 bits)."""
    return from_float64(np.asarray(values, dtype=np.float64), data_type)


def wide(values: np.ndarray, data_type: str) -> np.ndarray:
    """Stored values as float64."""
    if data_type == "BF16":
        return (values.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return values.astype(np.float64)


def absolute(values: np.ndarray, data_type: str) -> np.ndarray:
    """|stored values|, stored (BF16: the sign bit cleared)."""
    return values & 0x7FFF if data_type == "BF16" else np.abs(values)


def random_bits(rng: np.random.Generator, size: int, data_type: str) -> np.ndarray:
    """Random bit patterns of the format: every class of value, NaN payloads included."""
    dtype = STORAGE_DTYPE[data_type]
    raw = rng.integers(0, 256, size * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).copy()


def run_both(kernel: Kernel, record: dict, arrays: list[np.ndarray],
             kernel_arrays: list[np.ndarray] | None = None) -> tuple[list, list]:
    """The kernel's and the interpreter's results on copies of `arrays` (the kernel
    gets `kernel_arrays` when given: the same bytes in another dtype)."""
    got = [a.copy() for a in (kernel_arrays or arrays)]
    kernel(*got, threads=1)
    want = [a.copy() for a in arrays]
    run_reference(record, want)
    return got, want


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.view(np.uint8).tobytes() == b.view(np.uint8).tobytes()


# -- the formats, and the interpreter's numerics ---------------------------------------------


def test_16_bit_roundings_agree_with_numpy_and_ml_dtypes() -> None:
    """float32 values of every class (random bit patterns) to FP16 and BF16: nearest even,
    overflow to Inf, subnormals kept, NaN stays NaN."""
    values = random_bits(np.random.default_rng(0), 20000, "FP32").view(np.float32)
    for data_type, dtype in (("FP16", np.float16), ("BF16", ml_dtypes.bfloat16)):
        with np.errstate(over="ignore", invalid="ignore"):  # signaling NaNs, overflow
            ours = stored(values.astype(np.float64), data_type).view(dtype)
            theirs = values.astype(dtype)
        nan = np.isnan(theirs.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(ours.astype(np.float32)), nan)
        assert same_bytes(ours[~nan], theirs[~nan]), data_type


@pytest.mark.parametrize("value, bits", [
    (1 + 2.0**-11, 0x3F800000),  # a tie: to even, down
    (1 + 3 * 2.0**-11, 0x3F804000),  # a tie: to even, up
    (1 + 2.0**-11 + 2.0**-23, 0x3F802000),  # just above the tie
    (2 - 2.0**-23, 0x40000000),  # the carry reaches the exponent
    (-3.4028235e38, 0xFF800000),  # past TF32's largest finite value: -Inf
    (np.inf, 0x7F800000),
    (2.0**-140, 0x00000000),  # subnormals round alike (0x200 is below half of 0x2000)
    (-(2.0**-136 + 2.0**-149), 0x80002000),
])
def test_round_tf32_is_nearest_even_to_ten_mantissa_bits(value: float, bits: int) -> None:
    rounded = round_tf32(np.array([value], dtype=np.float32))
    assert hex(int(rounded.view(np.uint32)[0])) == hex(bits)


def test_round_tf32_keeps_nans_bit_for_bit() -> None:
    nans = np.array([0x7F800001, 0x7FFFFFFF, 0xFFC00000, 0xFF801FFF], dtype=np.uint32)
    assert same_bytes(round_tf32(nans.view(np.float32)), nans)


def interpret(data_type: str, tile: Tile, operands: Sequence[Sequence[float]]) -> np.ndarray:
    """The interpreter's out elements of a one-tile configuration whose in0 and in1 hold
    `operands` (out starts at 0), as float64."""
    packed = Packed(data_type, 3, [tile])
    arrays = [stored(np.zeros(size), data_type) for size in packed.sizes]
    for tensor, values in enumerate(operands):
        arrays[tensor][packed.elements(tile.name, tensor)] = stored(values, data_type)
    run_reference(packed.record(), arrays)
    return wide(arrays[2][np.unique(packed.elements(tile.name, 2))], data_type)


def test_the_interpreter_accumulates_16_bit_and_tf32_contractions_in_fp32() -> None:
    dot = Tile("dot", ["Contraction"], {"k": (3, (1, 1, 0))}, {"M": [], "N": [], "K": ["k"]})
    for data_type, expected in (("FP16", 0.0), ("BF16", 0.0), ("TF32", 0.0), ("FP64", 1.0)):
        products = [a * b for a, b in zip(*CANCEL)]  # 2^25, 1, -2^25
        assert interpret(data_type, dot, CANCEL) == expected, (data_type, products)


def test_the_interpreter_rounds_tf32_inputs() -> None:
    one = Tile("one", ["Contraction"], {"k": (1, (1, 1, 0))}, {"M": [], "N": [], "K": ["k"]})
    assert interpret("TF32", one, [[1 + 2.0**-11], [3.0]]) == 3.0  # 1 + 2^-11 ties to 1
    assert interpret("FP32", one, [[1 + 2.0**-11], [3.0]]) == 3 + 3 * 2.0**-11


def test_a_k_loop_outside_the_primitive_rounds_at_every_store() -> None:
    """out += a_k * b_k, one invocation per k: the FP16 sum is rounded after each."""
    outside = Tile("outside", ["Contraction"], {"j": (1, (1, 1, 1)), "k": (3, (1, 1, 0))},
                   {"M": ["j"], "N": [], "K": []}, loops=["k"])
    a, b = [2048.0, 1.0, 1.0], [1.0, 1.0, 1.0]  # 2048 + 1 is a tie in FP16 (spacing 2)
    assert interpret("FP16", outside, [a, b]) == 2048.0  # 2048, 2048, 2048
    dot = Tile("dot", ["Contraction"], {"k": (3, (1, 1, 0))}, {"M": [], "N": [], "K": ["k"]})
    assert interpret("FP16", dot, [a, b]) == 2050.0  # one rounding of 2050


# -- element-wise tiles -----------------------------------------------------------------


def elementwise_tiles() -> list[Tile]:
    """Contiguous, transposing and strided Zero/Copy/ReLU tiles (2 tensors)."""
    tiles = []
    for number, (operation, run) in enumerate(
        [("Copy", 37), ("ReLU", 37), ("Zero", 23), ("Copy", 70), ("ReLU", 9)]
    ):
        tiles.append(Tile(f"run{number}", [operation], {"x": (run, (1, 1)), "y": (1, (0, 0))},
                          {"M": ["x"], "N": ["y"]}))
    for number, (operation, rows, columns) in enumerate(
        [("Copy", 21, 19), ("ReLU", 19, 21), ("Copy", 16, 16), ("ReLU", 9, 33)]
    ):  # r unit-stride on out, c unit-stride on in0
        tiles.append(Tile(f"transpose{number}", [operation],
                          {"r": (rows, (columns, 1)), "c": (columns, (1, rows))},
                          {"M": ["r"], "N": ["c"]}))
    for operation in ("Copy", "ReLU"):  # neither axis contiguous: scalar code
        tiles.append(Tile(f"strided_{operation}", [operation],
                          {"x": (7, (3, 2)), "y": (4, (23, 15))}, {"M": ["x"], "N": ["y"]}))
    return tiles


@pytest.fixture(scope="module", params=all_types(["FP16", "BF16"], ["TF32", *SLOW_TYPES]))
def elementwise(request) -> tuple[Packed, Kernel]:
    packed = Packed(request.param, 2, elementwise_tiles())
    return packed, compile_kernel(packed.record(), optimize=False)


def test_elementwise_primitives_move_bits_exactly(elementwise) -> None:
    packed, kernel = elementwise
    rng = np.random.default_rng(3)
    arrays = [random_bits(rng, size, packed.data_type) for size in packed.sizes]
    got, want = run_both(kernel, packed.record(), arrays)
    assert same_bytes(got[0], arrays[0])
    assert same_bytes(got[1], want[1])
    # the ReLU tiles cleared negatives, the Copy tiles kept them
    for name, changed in (("run0", False), ("run1", True)):
        source, target = (got[t][packed.elements(name, t)] for t in (0, 1))
        assert same_bytes(source, target) != changed


# -- contractions ----------------------------------------------------------------------------


def gemm_tile(name: str, trans: str, m: int, n: int, k: int, *, batch: int = 0,
              operations: Sequence[str] = ("Contraction",)) -> Tile:
    """C(m, n) [+]= sum A(m, k) B(k, n) in the layout `trans` ("ABC", as teir-match-gemm
    names it), leading dimensions padded by 1, 2 and 3."""
    lda = (m if trans[0] == "N" else k) + 1
    ldb = (k if trans[1] == "N" else n) + 2
    ldc = (m if trans[2] == "N" else n) + 3
    a_m, a_k = (1, lda) if trans[0] == "N" else (lda, 1)
    b_k, b_n = (1, ldb) if trans[1] == "N" else (ldb, 1)
    c_m, c_n = (1, ldc) if trans[2] == "N" else (ldc, 1)
    axes = {"m": (m, (a_m, 0, c_m)), "n": (n, (0, b_n, c_n)), "k": (k, (a_k, b_k, 0))}
    roles = {"M": ["m"], "N": ["n"], "K": ["k"]}
    if batch:
        a_size = lda * (k if trans[0] == "N" else m)
        b_size = ldb * (n if trans[1] == "N" else k)
        axes["b"] = (batch, (a_size + 2, b_size + 1, 0))
        roles["K"] = ["b", "k"]
    return Tile(name, list(operations), axes, roles)


SPECIAL = {
    # a values x b values: every product once (an outer product, k = 1)
    "FP16": ([np.nan, np.inf, -np.inf, 2.0**-24, -(2.0**-14), 300.0, -0.0, 1.5],
             [0.0, 2.0**-5, -3.0, 256.0, 65504.0, -(2.0**-10), 1.0, np.inf]),
    "BF16": ([np.nan, np.inf, -np.inf, 1e-39, -(2.0**-126), 1e20, -0.0, 1.5],
             [0.0, 1e-3, -3.0, 1e20, 3e38, -(2.0**-10), 1.0, np.inf]),
    "TF32": ([np.nan, np.inf, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 3.4028235e38, 1e-45, -0.0,
              -(1 + 2.0**-11 + 2.0**-23)],
             [0.0, 1.0, -1.0, 1 + 2.0**-11, 2.0**-120, 2.0, -3.0, np.inf]),
}
SPECIAL["FP32"] = SPECIAL["FP64"] = SPECIAL["TF32"]


def contraction_tiles() -> list[Tile]:
    tiles = []
    for number, (trans, shape) in enumerate(zip(LAYOUTS, SHAPES)):
        operations = [["Contraction"], ["Zero", "Contraction"], ["Contraction", "ReLU"],
                      ["Zero", "Contraction", "ReLU"]][number % 4]
        tiles.append(gemm_tile(f"gemm_{trans}", trans, *shape, operations=operations))
    tiles.append(gemm_tile("brgemm", "NNN", 21, 10, 5, batch=3, operations=["Zero", "Contraction"]))
    tiles.append(gemm_tile("special", "NNN", 8, 8, 1,
                           operations=["Zero", "Contraction", "ReLU"]))
    tiles.append(gemm_tile("cancel", "NNN", 1, 1, 3, operations=["Zero", "Contraction"]))
    # A scalar Contraction under a K loop of the schedule: out += a[k] * b[k], stored
    # (and rounded) once per k.
    tiles.append(Tile("outside", ["Contraction"], {"j": (6, (1, 1, 1)), "k": (9, (6, 6, 0))},
                      {"M": ["j"], "N": [], "K": []}, loops=["k"]))
    return tiles


@pytest.fixture(scope="module", params=all_types(FAST_TYPES))
def contractions(request) -> tuple[Packed, Kernel]:
    packed = Packed(request.param, 3, contraction_tiles())
    return packed, compile_kernel(packed.record(), optimize=False)


def contraction_inputs(packed: Packed, seed: int = 5) -> list[np.ndarray]:
    """Standard normal values in the format; the special tile's operands set."""
    rng = np.random.default_rng(seed)
    arrays = [stored(rng.standard_normal(size), packed.data_type) for size in packed.sizes]
    for name, operands in (("special", SPECIAL[packed.data_type]), ("cancel", CANCEL)):
        for tensor, values in enumerate(operands):
            arrays[tensor][np.unique(packed.elements(name, tensor))] = stored(
                values, packed.data_type)
    return arrays


CANCEL = ([2.0**15, 1.0, -(2.0**15)], [2.0**10, 1.0, 2.0**10])
"""2^25 + 1 - 2^25: 0 when accumulated in FP32 (2^25 + 1 rounds to 2^25), 1 in FP64."""


EXACT_PRODUCTS = ("FP16", "BF16", "TF32", "FP64")
"""Data types whose products the accumulator holds exactly (FP64: it rounds like the
interpreter), so that one product added to C rounds the same in both."""


def test_contractions_match_the_interpreter(contractions) -> None:
    packed, kernel = contractions
    data_type = packed.data_type
    record = packed.record()
    arrays = contraction_inputs(packed)
    got, want = run_both(kernel, record, arrays)
    for before, after in zip(arrays[:2], got[:2]):
        assert same_bytes(before, after)  # inputs are not written
    magnitudes = [absolute(x, data_type) for x in arrays]  # |c| + sum |a b| per element
    run_reference(record, magnitudes)
    magnitude = wide(magnitudes[2], data_type)
    result, expected = wide(got[2], data_type), wide(want[2], data_type)
    for name, tile in packed.tiles.items():
        out = np.unique(packed.elements(name, 2))
        if name == "special" or (name in ("outside", "cancel") and data_type in EXACT_PRODUCTS):
            assert same_bytes(got[2][out], want[2][out]), name  # the same roundings
            continue
        stores = int(np.prod([tile.axes[a][0] for a in tile.loops]))
        terms = stores * int(np.prod([tile.axes[a][0] for a in tile.roles["K"]]))
        bound = 2 * error_bound(DataType(data_type), stores, terms, magnitude[out])
        close = np.abs(result[out] - expected[out]) <= bound
        assert close.all(), (name, np.flatnonzero(~close)[:5])
    written = np.concatenate([packed.elements(name, 2) for name in packed.tiles])
    untouched = np.setdiff1d(np.arange(got[2].size), written)
    assert same_bytes(got[2][untouched], arrays[2][untouched])


def test_special_values_through_a_contraction(contractions) -> None:
    """NaN and infinities propagate, products past the range become ±Inf, subnormals
    stay, TF32 inputs round to nearest even: each product rounded once, exactly; the
    fused ReLU sees the rounded value (a tiny negative product rounds to -0.0, which
    it keeps: the interpreter's bytes are compared in the test above)."""
    packed, kernel = contractions
    data_type = packed.data_type
    got, _ = run_both(kernel, packed.record(), contraction_inputs(packed))
    a, b = (wide(stored(values, data_type), data_type) for values in SPECIAL[data_type])
    if data_type == "TF32":
        a, b = (round_tf32(v.astype(np.float32)).astype(np.float64) for v in (a, b))
    accumulator = np.float64 if data_type == "FP64" else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        products = np.outer(a, b).reshape(-1).astype(accumulator)  # one rounding
    expected = wide(stored(products, data_type), data_type)
    expected = np.where(expected < 0, 0.0, expected)
    result = wide(got[2][packed.elements("special", 2)], data_type)
    np.testing.assert_array_equal(result, expected)  # NaN where NaN
    cancel = wide(got[2][np.unique(packed.elements("cancel", 2))], data_type)
    assert cancel.tolist() == [1.0 if data_type == "FP64" else 0.0]  # FP32 sums (FP64's)
    if data_type == "FP16":
        assert np.isinf(result).sum() >= 4  # past 65504
        tiny = np.abs(result[np.isfinite(result)])
        assert ((0 < tiny) & (tiny < 2.0**-14)).any()  # subnormal, not flushed


# -- numpy interface, generated code ---------------------------------------------------------


@pytest.mark.parametrize("contractions", ["BF16"], indirect=True)
def test_bf16_kernels_take_bfloat16_and_uint16_arrays_alike(contractions) -> None:
    packed, kernel = contractions
    bits = contraction_inputs(packed)
    as_bfloat16 = [x.view(ml_dtypes.bfloat16) for x in bits]
    via_bits, _ = run_both(kernel, packed.record(), bits)
    via_bfloat16, _ = run_both(kernel, packed.record(), bits, as_bfloat16)
    assert same_bytes(via_bits[2], via_bfloat16[2])
    with pytest.raises(TypeError, match=r"in0 must hold bfloat16 or uint16 elements, got float32"):
        kernel(bits[0].astype(np.float32), *bits[1:])


@pytest.mark.parametrize("contractions, wrong, message", [
    ("FP16", np.float32, r"must hold float16 elements, got float32"),
    ("TF32", np.float16, r"must hold float32 elements, got float16"),
], indirect=["contractions"])
def test_a_wrong_dtype_is_named(contractions, wrong: type, message: str) -> None:
    packed, kernel = contractions
    arrays = contraction_inputs(packed)
    with pytest.raises(TypeError, match=message):
        kernel(*arrays[:2], arrays[2].astype(wrong))


def test_conversions_are_vector_instructions_in_the_inner_loops(contractions) -> None:
    """FP16 widens with vcvtph2ps and narrows with vcvtps2ph (F16C); no data type calls a
    library conversion; the kernels' FMAs are FP32 vector FMAs."""
    packed, kernel = contractions
    assembly = kernel._engine.assembly()  # pyright: ignore[reportPrivateUsage]
    calls = {line.split()[-1] for line in assembly.splitlines() if "\tcall" in line}
    assert not {call for call in calls if "hf2" in call or "bf2" in call}  # __truncsfhf2 ...
    if packed.data_type == "FP16" and "f16c" in kernel_features():
        assert "vcvtph2ps" in assembly and "vcvtps2ph" in assembly
    if packed.data_type in ("FP16", "BF16", "TF32") and "fma" in kernel_features():
        assert "vfmadd231ps" in assembly and "vfmadd231pd" not in assembly


# -- paired BF16 products (vdpbf16ps, an opt-in) --------------------------------------------


def with_paired_products(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with every Contraction opting into `bf16_products = pairs`."""
    record = copy.deepcopy(record)
    for prim in record["primitives"]:
        if prim["operation"] == "Contraction":
            prim["metadata"] = {**prim["metadata"], "bf16_products": "pairs"}
    return record


def pairs_tiles() -> list[Tile]:
    """The contraction tiles but the special values (vdpbf16ps reads bf16 subnormals as
    zero) and the cancellation (it sums a pair before adding it), with full 16-lane
    vectors and odd K, Y not contiguous along k (its pairs gathered), and batches."""
    tiles = [t for t in contraction_tiles() if t.name not in ("special", "cancel")]
    return [*tiles, gemm_tile("wide", "NNN", 40, 20, 33, operations=["Zero", "Contraction"]),
            gemm_tile("gathered", "NTN", 37, 9, 21),
            gemm_tile("batches", "NNN", 48, 14, 8, batch=5, operations=["Contraction", "ReLU"]),
            # X contiguous along k: packed as pairs by transposes, whole squares of 2L
            # k steps and single steps after them, per batch
            gemm_tile("packed", "TNN", 37, 11, 75, operations=["Zero", "Contraction"]),
            gemm_tile("packed_batches", "TNN", 20, 6, 40, batch=3)]


@BF16_PAIRS
def test_paired_bf16_products_stay_within_the_error_bound() -> None:
    packed = Packed("BF16", 3, pairs_tiles())
    record = with_paired_products(packed.record())
    kernel = compile_kernel(record, optimize=False, keep_ir=True)
    assert "teir_lane.dot_bf16_pairs" in kernel.stages["scf"]
    assert "vector<32xbf16> to vector<16xf32>" in kernel.stages["scf"] or (
        "vector<16xbf16> to vector<8xf32>" in kernel.stages["scf"])  # pairs packed
    assert "vdpbf16ps" in kernel._engine.assembly()  # pyright: ignore[reportPrivateUsage]
    rng = np.random.default_rng(11)
    arrays = [stored(rng.standard_normal(size), "BF16") for size in packed.sizes]
    got, want = run_both(kernel, record, arrays)
    magnitudes = [absolute(x, "BF16") for x in arrays]
    run_reference(record, magnitudes)
    magnitude = wide(magnitudes[2], "BF16")
    result, expected = wide(got[2], "BF16"), wide(want[2], "BF16")
    for name, tile in packed.tiles.items():
        out = np.unique(packed.elements(name, 2))
        stores = int(np.prod([tile.axes[a][0] for a in tile.loops]))
        terms = stores * int(np.prod([tile.axes[a][0] for a in tile.roles["K"]]))
        bound = 2 * error_bound(DataType.BF16, stores, terms, magnitude[out])
        close = np.abs(result[out] - expected[out]) <= bound
        assert close.all(), (name, np.flatnonzero(~close)[:5])


def test_paired_bf16_products_are_refused_where_they_cannot_run() -> None:
    """The key on a host without AVX512-BF16 is an error naming the primitive; on
    another data type or operation, or with another value, the verifier's."""
    from teir_dialect.host import pinned
    from teir_dialect.records import TeirError, load_module

    packed = Packed("BF16", 3, [gemm_tile("g", "NNN", 16, 4, 6)])
    record = with_paired_products(packed.record())
    with pinned("avx2"), pytest.raises(TeirError, match="primitive 'g_Contraction_0' has "
                                       "metadata bf16_products = pairs, which needs AVX512-BF16"):
        compile_kernel(record, optimize=False)
    fp16 = with_paired_products(Packed("FP16", 3, [gemm_tile("g", "NNN", 16, 4, 6)]).record())
    with pytest.raises(TeirError, match="primitive rule: primitive 'g_Contraction_0' "
                                        r"\(Contraction, FP16\) has metadata bf16_products"):
        load_module(fp16)
    record["primitives"][0]["metadata"]["bf16_products"] = "fused"
    with pytest.raises(TeirError, match="it is one of sequential, pairs"):
        load_module(record)


def kernel_features() -> frozenset[str]:
    from teir_dialect.host import host

    return host().features


# -- spec examples in every data type ---------------------------------------------------------


def recast(record: dict[str, Any], data_type: str) -> dict[str, Any]:
    """The record with every primitive in `data_type`: byte strides and offsets scaled
    from FP32 elements (flat records count elements already)."""
    result = copy.deepcopy(record)
    if "dim_types" in result:
        result["data_type"] = data_type
        return result
    width = DataType(data_type).width
    for axis in result["axes"]:
        axis["strides"] = [s // 4 * width for s in axis["strides"]]
        axis["offsets"] = [o // 4 * width for o in axis["offsets"]]
    for primitive in result["primitives"]:
        assert primitive["metadata"]["data_type"] == "FP32"
        primitive["metadata"]["data_type"] = data_type
    return result


def check_example(path: Path, data_type: str, tmp_path: Path) -> None:
    """`teir-run --check` of the example recast to `data_type`: the kernel against the
    interpreter and (where there is one) numpy in float64, within teir-run's bounds
    (exactly for copies)."""
    recast_path = tmp_path / f"{path.stem}_{data_type}.json"
    recast_path.write_text(json.dumps(recast(json.loads(path.read_text()), data_type)))
    assert teir_run.main([str(recast_path), "--check", "--reference", "always"]) == 0


EXAMPLES = TREE_EXAMPLES + FLAT_EXAMPLES


@pytest.mark.parametrize("name, data_type", [("10_7_7_parallel_brgemm", "FP16"),
                                             ("10_7_7_parallel_brgemm", "BF16"),
                                             ("10_7_2_tiled_permutation", "BF16")])
def test_spec_examples_in_16_bit_formats(name: str, data_type: str, tmp_path: Path) -> None:
    check_example(next(p for p in TREE_EXAMPLES if p.stem == name), data_type, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("data_type", [t.value for t in DataType])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_every_spec_example_in_every_data_type(path: Path, data_type: str,
                                               tmp_path: Path) -> None:
    check_example(path, data_type, tmp_path)
