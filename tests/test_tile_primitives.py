"""Vector code for Zero/Copy/ReLU tiles (teir_lowering.codegen.tile_primitives) against the reference.

Every case runs the compiled kernel (1 and 2 threads) and the reference
interpreter on the same buffers, whose bytes outside the footprint hold a
sentinel, and compares all bytes: values, -0.0 and NaN payloads included, and
nothing written outside the footprint. Each case also checks that the vector
path was taken, so that a silent fallback to scalar loops fails the test.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.builder import Builder
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import VectorType, f32
from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from strategies import random_arrays
from teir_dialect.host import host, pinned, pinned_host
from teir_dialect.interpreter import run_reference
from teir_dialect.vocabulary import OperationKind
from teir_lowering import einsum
from teir_lowering.codegen import tile_primitives
from teir_lowering.codegen.emit import select_lanes, transpose_network
from teir_lowering.frontends import einsum_frontend
from teir_lowering.runtime import kernel as kernel_module
from teir_lowering.runtime.kernel import compile_kernel
from teir_passes import mark_streamed_out

WIDTH = {"FP32": 4, "FP64": 8, "FP16": 2}
SENTINEL = 7.0


def _record(tensors: list[str], axes: list[dict], kind: str, roles: dict[str, list[str]],
            iterated: list[tuple[str, str]], dtype: str) -> dict[str, Any]:
    """One primitive invoked under a chain of iteration nodes ((axis, policy), outermost first)."""
    iterations = []
    for index, (axis, policy) in enumerate(iterated):
        child = f"i{index + 1}" if index + 1 < len(iterated) else "call"
        iterations.append({"id": f"i{index}", "axis": axis, "policy": policy,
                           "children": [child], "guard": None})
    return {
        "tensors": tensors,
        "axes": axes,
        "primitives": [{"id": "p", "operation": kind, "axes": roles,
                        "metadata": {"data_type": dtype}}],
        "schedule": {"roots": ["i0" if iterated else "call"], "iterations": iterations,
                     "invocations": [{"id": "call", "primitive": "p", "guard": None}]},
    }


def _axis(name: str, extent: int, strides: list[int], offsets: list[int] | None = None) -> dict:
    return {"id": name, "extent": extent, "strides": strides,
            "offsets": offsets or [0] * len(strides)}


def transpose_record(rows: int, columns: int, dtype: str = "FP32", *, kind: str = "Copy",
                     pad: int = 3, offsets: bool = False, outer: int = 1,
                     outer_role: int = 1, out_row: int | None = None) -> dict[str, Any]:
    """out(r, c) = f(in0(r, c)): in0 row-major along c, out along r (a transposing tile).

    `outer` iterations of a parallel node t and `outer_role` indices of an extra role
    axis b (both stepping whole tiles), role-axis offsets, padded leading dimensions;
    `out_row`: the out stride of c in elements (default rows + pad).
    """
    w = WIDTH[dtype]
    ld_in = columns + pad
    ld_out = out_row if out_row is not None else rows + pad
    tile_in, tile_out = ld_in * rows, ld_out * columns
    axes = [
        _axis("r", rows, [ld_in * w, w], [w, 2 * w] if offsets else None),
        _axis("c", columns, [w, ld_out * w], [0, w] if offsets else None),
        _axis("b", outer_role, [tile_in * w, tile_out * w]),
        _axis("t", outer, [outer_role * tile_in * w + 8 * w, outer_role * tile_out * w],
              [3 * w, 5 * w] if offsets else None),
    ]
    return _record(["in0", "out"], axes, kind, {"M": ["c", "b"], "N": ["r"]},
                   [("t", "parallel")], dtype)


def contiguous_record(kind: str, run: int, rows: int = 3, dtype: str = "FP32", *,
                      tensors: int = 2, pad: int = 2, split: bool = False) -> dict[str, Any]:
    """Rows of `run` contiguous elements on out (and the source), padded apart; with
    `split`, the run is two role axes that merge (i fast, j over blocks of i)."""
    w = WIDTH[dtype]
    count = tensors
    ld = run + pad
    unit = [w] * count
    if split and run % 2 == 0:
        inner = [_axis("i", 2, unit), _axis("j", run // 2, [2 * w] * count)]
        role = ["j", "i"]
    else:
        inner = [_axis("i", run, unit)]
        role = ["i"]
    axes = [*inner, _axis("k", rows, [ld * w] * count, [w] * count)]
    names = ["in0", "out"] if tensors == 2 else ["in0", "in1", "out"]
    return _record(names, axes, kind, {"M": role, "N": []}, [("k", "sequential")], dtype)


def _like(array: np.ndarray) -> np.ndarray:
    """A copy of `array` at the same address modulo 64 (the kernels' stores depend on it)."""
    backing = np.empty(array.size + 64 // array.itemsize, array.dtype)
    start = ((array.ctypes.data - backing.ctypes.data) % 64) // array.itemsize
    copy = backing[start:start + array.size]
    copy[:] = array
    assert (copy.ctypes.data - array.ctypes.data) % 64 == 0
    return copy


def _bits(array: np.ndarray) -> np.ndarray:
    return array.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[array.itemsize])


def _check(record: dict[str, Any], expect: str, special: bool = False,
           arrays: list[np.ndarray] | None = None) -> Any:
    """Compiled kernel == reference on every byte, for 1 and 2 threads; `expect` must
    appear in the scf stage. Returns the kernel."""
    kernel = compile_kernel(record, keep_ir=True)
    assert expect in kernel.stages["scf"], f"{expect} not emitted:\n{kernel.stages['scf']}"
    if arrays is None:
        arrays = random_arrays(record, np.random.default_rng(0), fill=SENTINEL)
        if special:
            for array in arrays:
                values = np.array([-0.0, np.nan, -np.nan, -1.5, 2.5, -np.inf, np.inf, 0.0],
                                  array.dtype)
                spots = np.random.default_rng(1).choice(array.size, min(array.size, 64), False)
                array[spots] = np.resize(values, spots.size)
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    for threads in (1, 2):
        got = [_like(a) for a in arrays]
        kernel(*got, threads=threads)
        for name, g, e in zip(record["tensors"], got, expected):
            np.testing.assert_array_equal(_bits(g), _bits(e), err_msg=f"{name}, {threads} threads")
    return kernel


# -- the shuffle network ------------------------------------------------------------


@pytest.mark.parametrize("lanes, width", [(16, 4), (8, 4), (4, 4), (2, 4), (8, 8), (4, 8), (2, 8)])
def test_transpose_network_transposes(lanes: int, width: int) -> None:
    stages, order = transpose_network(lanes, width)
    assert len(stages) == lanes.bit_length() - 1
    rows = [np.arange(lanes) + lanes * r for r in range(lanes)]
    for stage in stages:
        for i in range(lanes):
            if not i & stage.distance:
                j = i + stage.distance
                both = np.concatenate([rows[i], rows[j]])
                rows[i], rows[j] = both[list(stage.lo)], both[list(stage.hi)]
    matrix = np.arange(lanes * lanes).reshape(lanes, lanes)
    for column in range(lanes):
        np.testing.assert_array_equal(rows[order[column]], matrix[:, column])


def _selected(vectors: int, lanes: int, outputs: list[list[tuple[int, int]]]
              ) -> tuple[list[list[tuple[int, int]]], int]:
    """`select_lanes` on `vectors` block arguments, its shuffles followed lane by lane
    on labels (vector, lane): each output's labels, and the number of shuffles."""
    typ = VectorType(f32, [lanes])
    block = Block(arg_types=[typ] * vectors)
    values = select_lanes(Builder(InsertPoint.at_end(block)), list(block.args), outputs)
    labels: dict[SSAValue, list[tuple[int, int]]] = {
        arg: [(v, lane) for lane in range(lanes)] for v, arg in enumerate(block.args)}
    shuffles = 0
    for op in block.ops:
        assert isinstance(op, vector.ShuffleOp)
        both = labels[op.v1] + labels[op.v2]
        labels[op.result] = [both[m] for m in op.mask.get_values()]
        shuffles += 1
    return [labels[value] for value in values], shuffles


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_select_lanes_picks_any_lanes(data: st.DataObject) -> None:
    lanes = data.draw(st.sampled_from([4, 8, 16]))
    vectors = data.draw(st.integers(1, 7))
    pick = st.tuples(st.integers(0, vectors - 1), st.integers(0, lanes - 1))
    outputs = data.draw(st.lists(st.lists(pick, min_size=lanes, max_size=lanes),
                                 min_size=1, max_size=7))
    got, _ = _selected(vectors, lanes, outputs)
    assert got == outputs


@pytest.mark.parametrize("k, lanes, most", [(2, 16, 2), (3, 16, 6), (5, 32, 16), (6, 16, 20)])
def test_select_lanes_shares_shuffles_in_a_narrow_transpose(k: int, lanes: int,
                                                            most: int) -> None:
    """k outputs regrouping k vectors (a deinterleave): fewer than k (k - 1) shuffles."""
    outputs = [[divmod(c + k * lane, lanes) for lane in range(lanes)] for c in range(k)]
    got, shuffles = _selected(k, lanes, outputs)
    assert got == outputs
    assert shuffles <= most


# -- transposing copies -------------------------------------------------------------

SHAPES = [(4, 4), (5, 7), (8, 8), (9, 40), (12, 13), (16, 16), (17, 33), (23, 6),
          (31, 9), (32, 32), (33, 17), (40, 40), (36, 20), (7, 24),
          # a last whole block overlapping the one before on one side, on both
          (17, 24), (24, 17), (26, 90), (27, 27)]


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("rows, columns", SHAPES)
def test_transposing_copy(rows: int, columns: int, dtype: str) -> None:
    _check(transpose_record(rows, columns, dtype, outer=2), "vector.shuffle")


@pytest.mark.parametrize("dtype", ["FP32", "FP64", "FP16"])
@pytest.mark.parametrize("rows, columns", [(1, 5), (3, 40), (40, 2), (2, 2), (1, 1)])
def test_thin_transposes_stay_scalar_and_correct(rows: int, columns: int, dtype: str) -> None:
    """Bit for bit (signed zeros, NaNs); an FP16 copy moves its elements as i16
    (`teir-f16-moves-as-i16`: a scalar half would be loaded into a vector register
    word by word, each load waiting for the one before)."""
    kernel = _check(transpose_record(rows, columns, dtype), "memref.store", special=True)
    if dtype == "FP16":
        assert "half" not in kernel.stages["llvm"] and "load i16" in kernel.stages["llvm"]


@pytest.mark.parametrize("rows, columns", [(37, 7), (7, 37), (5, 40), (40, 4), (6, 6), (181, 7)])
def test_16_bit_sides_of_4_to_7_take_8_byte_blocks(rows: int, columns: int) -> None:
    """Under a 16-byte vector's 8 lanes, not packed back to back (no narrow form): 4 x 4
    blocks of 8-byte vectors, the edges as blocks overlapping the last, not scalar
    loops (`abc->cba` 181 x 111 x 7 FP16 ran 3x faster)."""
    kernel = _check(transpose_record(rows, columns, "FP16", outer=2), "vector<4xf16>",
                    special=True)
    assert "vector.shuffle" in kernel.stages["scf"]


@pytest.mark.parametrize("out_bytes, crowded", [(1024, True), (2048, True), (4096, True),
                                                (1536, False), (1040, False), (512, False)])
def test_blocks_walk_down_rows_of_out_that_crowd_the_l1_sets(out_bytes: int,
                                                              crowded: bool) -> None:
    for width in (4, 8):
        emitter = tile_primitives.TileEmitter(OperationKind.COPY, f32, width, None, None)
        columns = tile_primitives.TileAxis(37, 1, out_bytes // width)
        assert emitter.crowded(columns) is crowded
        for rows, short in ((64, True), (1024 // width, False)):
            row_axis = tile_primitives.TileAxis(rows, 40, 1)
            assert emitter.crowded_beyond_l1(row_axis, columns) is (crowded and short)


def test_blocks_walk_down_the_rows_of_out_where_the_host_says_so() -> None:
    """A 99 x 37 transpose whose stores crowd no L1 set, its rows of out (99 elements
    and a pad) farther apart than in0's (37 and a pad), walks its blocks along
    in0's rows on a Zen-like description (the outer block loop over the 99 that are
    unit-stride on out, 96 in whole blocks) and down the rows of out on an
    Intel-like one (`Host.stores_walk_down`: the outer loop over the 37, 32 in
    whole blocks); both give the reference's bytes."""
    record = transpose_record(99, 37)
    outer_bounds = {}
    for name in ("avx512", "avx512-intel"):
        with pinned(name):
            kernel = _check(record, "vector.")  # the reference's bytes, 1 and 2 threads
        scf = kernel.stages["scf"]
        constants = dict(re.findall(r"(%\w+) = arith.constant (\d+) : index", scf))
        loops = [(constants.get(hi), constants.get(step)) for hi, step in
                 re.findall(r"scf.for %\w+ = %\w+ to (%\w+) step (%\w+)", scf)]
        outer_bounds[name] = next(hi for hi, step in loops if step == "16")
    assert outer_bounds == {"avx512": "96", "avx512-intel": "32"}


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("rows, columns, out_row, streamed", [
    (36, 37, 256, False),  # short rows of out, but not whole lines: ordinary stores
    (27, 20, 512, False),
    (64, 33, 1024, True),  # short rows of out in whole lines: streamed below the L3
    (300, 20, 512, False),  # long rows of out: walked down, ordinary stores
])
def test_transposes_whose_rows_of_out_crowd_the_l1_sets(rows: int, columns: int, out_row: int,
                                                       streamed: bool, dtype: str) -> None:
    record = transpose_record(rows, columns, dtype, out_row=out_row, outer=2)
    kernel = _check(record, "vector.shuffle")
    assert ("nontemporal = true" in kernel.stages["scf"]) is streamed


@pytest.mark.parametrize("dtype", ["FP16", "FP32", "FP64"])
@pytest.mark.parametrize("large", [True, False])
def test_a_large_transpose_prefetches_its_rows_of_in0_ahead(
        monkeypatch: pytest.MonkeyPatch, dtype: str, large: bool) -> None:
    """The tiles of a large out (teir-mark-streamed-out) prefetch every row of in0 they
    load into the L2 (locality 2), `PREFETCH_AHEAD` bytes ahead and in the next
    tile (the loop around steps in0 by a whole tile), displacements of the
    load's own address; a 16-bit kernel still only moves its values, so it
    stays typed as i16 (typed as half, the shifted FP16 transpose ran at 0.7x
    the speed). A small out prefetches nothing. The reference's bits at 1 and
    2 threads either way."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0 if large else 1 << 40)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    record = transpose_record(70, 96, dtype, out_row=70 + 3, outer=2)
    kernel = _check(record, "vector.shuffle")
    ahead = tile_primitives.PREFETCH_AHEAD // WIDTH[dtype]
    next_tile = 70 * (96 + 3) + 8  # t steps in0 by the tile (and 8 elements)
    prefetches = re.findall(r"teir_lane.prefetch %\S+\[%\S+\] ahead (\d+)( locality \d+)?",
                            kernel.stages["scf"])
    assert set(prefetches) == ({(str(ahead), " locality 2"), (str(next_tile), " locality 2")}
                               if large else set())
    llvm_ir = kernel.stages["llvm"]
    for displacement in (tile_primitives.PREFETCH_AHEAD, next_tile * WIDTH[dtype]):
        assert (re.search(f"i64 {displacement}\n  call void @\"llvm.prefetch.p0\"\\(ptr %v\\d+, "
                          "i32 0, i32 2, i32 1\\)", llvm_ir) is not None) is large
    assert " half" not in llvm_ir and "bfloat" not in llvm_ir


@pytest.mark.parametrize("next_tile, along, expected", [
    (0, True, [(64, 2)]),                 # no loop around: the row's only
    (6938, True, [(64, 2), (6938, 2)]),   # the row's and the next tile's, into the L2
    (64, True, [(64, 2)]),                # the next tile continues the rows: one line
    (6938, False, [(6938, 2)]),           # a shifted tile: the next tile's only
    (0, False, [(64, 3)]),                # ... or the row's into the L1
])
def test_the_prefetches_of_a_row_of_in0(next_tile: int, along: bool,
                                        expected: list[tuple[int, int]]) -> None:
    """(elements ahead, locality) of the prefetches of each row of in0 an FP32
    transpose of a large out loads (`TileEmitter.prefetches`); none for a small
    out."""
    emitter = tile_primitives.TileEmitter(OperationKind.COPY, f32, 4, None, None)  # type: ignore[arg-type]
    emitter.next_tile = next_tile
    assert emitter.prefetches(along) == []
    emitter.large_output = True
    assert emitter.prefetches(along) == expected


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("rows, columns", [(16, 16), (21, 11), (6, 35)])
def test_transpose_with_offsets_and_outer_axes(rows: int, columns: int, dtype: str) -> None:
    record = transpose_record(rows, columns, dtype, offsets=True, outer=3, outer_role=2, pad=1)
    _check(record, "vector.shuffle")


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("rows, columns", [(8, 8), (19, 26)])
def test_transposing_relu_keeps_zero_signs_and_nans(rows: int, columns: int, dtype: str) -> None:
    _check(transpose_record(rows, columns, dtype, kind="ReLU", outer=2), "vector.shuffle",
           special=True)


def permutation_record(a: int, b: int, c: int, d: int, dtype: str) -> dict[str, Any]:
    """abcd->dcba tiled as §10.7.2 (and benchmarks/run.py): b, c iterated, Copy over
    d (M, unit stride on in0) and a (N, unit stride on out)."""
    w = WIDTH[dtype]
    axes = [_axis("b", b, [c * d * w, a * w]), _axis("c", c, [d * w, b * a * w]),
            _axis("d", d, [w, c * b * a * w]), _axis("a", a, [b * c * d * w, w])]
    return _record(["in0", "out"], axes, "Copy", {"M": ["d"], "N": ["a"]},
                   [("b", "sequential"), ("c", "parallel")], dtype)


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("extents", [(20, 3, 4, 37), (16, 2, 3, 16), (9, 2, 2, 64)])
def test_tiled_permutation(extents: tuple[int, int, int, int], dtype: str) -> None:
    _check(permutation_record(*extents, dtype), "vector.shuffle")


# -- non-temporal stores ----------------------------------------------------------------


@pytest.fixture(params=[64, 32], ids=["64-byte", "32-byte"])
def vector_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Tiles emitted for 64-byte vectors and for 32-byte ones whatever the host has
    (fresh kernels, cache restored after): LLVM splits vectors wider than the
    host's, and narrower ones run anywhere, so both forms are checked everywhere."""
    machine = host()
    if machine.vector_bytes != request.param:
        emitted = dataclasses.replace(machine, vector_bytes=request.param,
                                      vector_registers=32 if request.param == 64 else 16)
        monkeypatch.setattr(tile_primitives, "host", lambda: emitted)
    # The patched code generator is not in the disk cache's key: neither load nor store.
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    saved = dict(kernel_module._CACHE)
    kernel_module._CACHE.clear()
    yield request.param
    kernel_module._CACHE.clear()
    kernel_module._CACHE.update(saved)


@pytest.fixture
def streaming(vector_bytes: int, monkeypatch: pytest.MonkeyPatch):
    """Non-temporal stores for every output size, for both vector widths
    (`vector_bytes`): with 64-byte vectors a line per vector (one transpose per
    block), with 32-byte ones two transposes per block whose vectors for a line
    are stored back to back."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0)


def _shifted(record: dict[str, Any], shift_bytes: int) -> list[np.ndarray]:
    """Random buffers whose out starts `shift_bytes` past a 64-byte boundary, as views
    into a larger buffer (its sentinels outside the view are checked too)."""
    arrays = random_arrays(record, np.random.default_rng(3), fill=SENTINEL)
    out = arrays[-1]
    w = out.itemsize
    backing = np.full(out.size + 64, SENTINEL, out.dtype)
    start = ((-backing.ctypes.data) % 64 + shift_bytes) // w
    view = backing[start:start + out.size]
    view[:] = out
    arrays[-1] = view
    return arrays


STREAMING_SHAPES = [
    ("FP32", 64, 16, 80),    # 256-byte rows of out: three or four whole lines each
    ("FP32", 80, 37, 96),    # and columns after the last block
    ("FP32", 48, 20, 1024),  # rows of out 4 KiB apart
    ("FP64", 32, 8, 40),
    ("FP64", 24, 13, 512),
]


def streaming_cases() -> list[Any]:
    """Every shape at every out alignment; the default tier takes each shape at one
    alignment (a different one per shape; the rows 4 KiB apart also at 4 bytes),
    the slow tier the rest."""
    cases = []
    for number, shape in enumerate(STREAMING_SHAPES):
        shifts = [s for s in (0, 16, 32, 48, 4, 24) if s % WIDTH[shape[0]] == 0]
        default = {shifts[number % len(shifts)]} | ({4} if shape[3] == 1024 else set())
        cases += [(*shape, shift) if shift in default else
                  pytest.param(*shape, shift, marks=pytest.mark.slow) for shift in shifts]
    return cases


@pytest.mark.parametrize("dtype, rows, columns, out_row, shift", streaming_cases())
def test_streaming_transpose(streaming: None, dtype: str, rows: int, columns: int,
                             out_row: int, shift: int) -> None:
    w = WIDTH[dtype]
    record = transpose_record(rows, columns, dtype, out_row=out_row, outer=2)
    arrays = _shifted(record, shift)
    backing = arrays[-1].base
    before = backing.copy()
    inside = np.zeros(backing.size, bool)
    start = (arrays[-1].ctypes.data - backing.ctypes.data) // w
    inside[start:start + arrays[-1].size] = True
    kernel = _check(record, "nontemporal = true", arrays=arrays)
    assert "!nontemporal" in kernel._engine.llvm_ir
    assert "@llvm.x86.sse.sfence()" in kernel._engine.llvm_ir  # fenced before returning
    # each streaming store aligned to its whole vector, as the emitter places it (aligned
    # to an element, LLVM split it into 8-byte stores: no vmovntps)
    streamed = re.findall(r"store <(\d+) x \w+> [^,]+, ptr [^,]+, align (\d+), !nontemporal",
                          kernel._engine.llvm_ir)
    assert streamed and all(int(lanes) * w == int(align) for lanes, align in streamed)
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    kernel(*arrays)
    np.testing.assert_array_equal(_bits(arrays[-1]), _bits(expected[-1]))
    np.testing.assert_array_equal(_bits(backing[~inside]), _bits(before[~inside]))


def _placed(array: np.ndarray, shift_bytes: int) -> np.ndarray:
    """A copy of `array` starting `shift_bytes` past a 64-byte boundary."""
    w = array.itemsize
    backing = np.full(array.size + 128 // w, SENTINEL, array.dtype)
    start = ((-backing.ctypes.data) % 64 + shift_bytes) // w
    view = backing[start:start + array.size]
    view[:] = array
    return view


PLACEMENT_SHAPES = [
    # dtype, rows, columns, pad of in0's rows (whole lines apart), out_row
    ("FP32", 64, 48, 0, 80),
    ("FP32", 32, 40, 8, 1024),
    ("FP64", 32, 20, 4, 40),
    ("FP16", 64, 72, 24, 2048),
    ("FP32", 32, 144, 16, 1024),
    ("FP64", 16, 520, 8, 512),
    # more rows than COLUMNS_OUTER_ROWS: a row of lines at a time along the columns
    ("FP32", 96, 40, 0, 128),
    # one line of out per row of the tile: every row in the edge block
    ("FP16", 32, 40, 0, 2048),
    ("FP32", 16, 24, 8, 1024),
    ("FP64", 8, 20, 0, 512),
]


@pytest.mark.parametrize("dtype, rows, columns, pad, out_row", PLACEMENT_SHAPES)
def test_streamed_tiles_at_every_placement(streaming: None, dtype: str, rows: int,
                                           columns: int, pad: int, out_row: int) -> None:
    """A streamed tile at every start of in0 and out, out on a line (the edge block
    then takes a whole line) or 16 to 48 bytes past one, or off 16 bytes (ordinary
    stores): the reference's bits and nothing written outside out."""
    record = transpose_record(rows, columns, dtype, pad=pad, out_row=out_row)
    kernel = compile_kernel(record, keep_ir=True)
    assert "!nontemporal" in kernel._engine.llvm_ir
    _check_placements(record, kernel, dtype)


PLACEMENTS = [(16, 0), (48, 0), (32, 0), (0, 0), (4, 0), (16, 16), (48, 32)]
"""(in0, out) byte offsets from a line `_check_placements` takes by default."""


def _check_placements(record: dict[str, Any], kernel: Any, dtype: str,
                      shifts: list[tuple[int, int]] = PLACEMENTS, special: bool = False,
                      seed: int = 5) -> None:
    """`kernel` on copies of random arrays placed at several offsets from a line (in0's,
    out's: `shifts`), at 1 and 2 threads: the reference's bits in out and nothing
    written outside it. `special`: in0 holds NaNs and negative zeros (ReLU)."""
    given = random_arrays(record, np.random.default_rng(seed), fill=SENTINEL)
    if special:
        given[0][::7] = np.nan
        given[0][1::5] = -0.0
    expected = [a.copy() for a in given]
    run_reference(record, expected)
    for in_shift, out_shift in shifts:
        if in_shift % WIDTH[dtype] or out_shift % WIDTH[dtype]:
            continue  # each tensor starts on an element
        for threads in (1, 2):
            arrays = [_placed(given[0], in_shift), _placed(given[1], out_shift)]
            backing = arrays[-1].base
            before = backing.copy()
            inside = np.zeros(backing.size, bool)
            start = (arrays[-1].ctypes.data - backing.ctypes.data) // arrays[-1].itemsize
            inside[start:start + arrays[-1].size] = True
            kernel(*arrays, threads=threads)
            where = f"in0 +{in_shift} B, out +{out_shift} B, {threads} threads"
            np.testing.assert_array_equal(_bits(arrays[-1]), _bits(expected[-1]), err_msg=where)
            np.testing.assert_array_equal(_bits(backing[~inside]), _bits(before[~inside]),
                                          err_msg=where)


def run_record(rows: int, columns: int, runs: tuple[int, int], dtype: str, kind: str,
               order: str) -> dict[str, Any]:
    """A transposing tile (rows r, columns c) under loops k0 and k1 that continue its
    rows of out (as the loops of a cut row and of the axes after it on out do), and t
    that does not: in0 [t][k0][k1][r][c], out [t][c][k1][k0][r] (so that the next
    tile's rows on in0 are not the next rows), rows padded apart;
    the loops nested as `order` says, the outermost parallel."""
    w = WIDTH[dtype]
    k0, k1 = runs
    # each run ends before the next row of out; rows of out of under 4 lines stream
    # when they are 4 KiB apart (`TileEmitter.streams`)
    ld_in, ld_out = columns + 5, k1 * k0 * rows + 128 // w
    if rows * w < 256:
        ld_out = 4096 // w
    assert ld_out > k1 * k0 * rows
    axes = [
        _axis("r", rows, [ld_in * w, w]),
        _axis("c", columns, [w, ld_out * w]),
        _axis("k0", k0, [k1 * rows * ld_in * w, rows * w]),
        _axis("k1", k1, [rows * ld_in * w, k0 * rows * w]),
        _axis("t", 2, [k1 * k0 * rows * ld_in * w, columns * ld_out * w]),
    ]
    loops = [(axis, "parallel" if i == 0 else "sequential")
             for i, axis in enumerate(order.split())]
    return _record(["in0", "out"], axes, kind, {"M": ["c"], "N": ["r"]}, loops, dtype)


@pytest.mark.parametrize("rows, columns, runs, dtype, kind, order", [
    (64, 40, (2, 3), "FP32", "Copy", "k0 k1 t"),   # the cut loop outermost (64^4's)
    (32, 20, (3, 2), "FP32", "ReLU", "k1 t k0"),
    (16, 19, (2, 2), "FP64", "Copy", "t k0 k1"),
    (64, 70, (2, 2), "FP16", "Copy", "k1 k0 t"),
    (40, 21, (3, 2), "FP32", "Copy", "k1 k0 t"),    # rows of out not whole lines
    (72, 18, (2, 3), "FP32", "ReLU", "t k0 k1"),
    (11, 9, (4, 2), "FP64", "Copy", "k0 k1 t"),
])
def test_streamed_tiles_write_the_lines_across_their_run_whole(
        streaming: None, rows: int, columns: int, runs: tuple[int, int], dtype: str,
        kind: str, order: str) -> None:
    """Where loops continue a streamed tile's rows of out and out's rows start off a
    line, each tile writes its last line with the next tile's first rows in it (the
    first tile of a run also its own first rows, the last only its own): the
    reference's bits at every placement, 1 and 2 threads, nothing outside out."""
    record = run_record(rows, columns, runs, dtype, kind, order)
    kernel = compile_kernel(record, keep_ir=True)
    # every whole-line store (a whole vector, aligned to it) streamed: LLVM keeps the flag
    w = WIDTH[dtype]
    aligned = re.findall(r"store <(\d+) x \w+> [^,]+, ptr [^,]+, align (\d+)(, !nontemporal)?",
                         kernel._engine.llvm_ir)
    whole = [flag for lanes, align, flag in aligned if int(lanes) * w == int(align) >= 32]
    assert whole and all(whole)
    _check_placements(record, kernel, dtype, [(0, 16), (16, 48), (0, 32), (0, 0), (16, 4)],
                      special=kind == "ReLU", seed=7)


@pytest.mark.parametrize("dtype, rows, columns, kind, pad", [
    ("FP32", 54, 54, "Copy", 3),     # rows of out 216 bytes, back to back
    ("FP32", 54, 54, "Copy", 0),     # in0's block too: prefetched in order
    ("FP32", 20, 70, "ReLU", 3),     # columns past the last whole chunk
    ("FP64", 27, 24, "Copy", 3),
    ("FP16", 45, 100, "Copy", 0),
    ("FP32", 250, 40, "Copy", 3),    # a chunk of one block of columns
])
def test_tiles_whose_out_is_one_block_stream_it_through_a_buffer(
        streaming: None, dtype: str, rows: int, columns: int, kind: str, pad: int) -> None:
    """A transposing tile of a large out whose rows of out lie back to back, not whole
    lines (`TileEmitter.stream_block`): through an L1 buffer laid out as out, whole
    lines streamed (every one keeps LLVM's flag), the partial ones at either end
    of a chunk stored plainly, each store prefetching a line of the next tile's
    in0 into the L2 (the loop around steps in0 by a tile and 8 elements); the
    reference's bits at every placement of in0 and out, 1 and 2 threads,
    nothing written outside out."""
    taken: list[int] = []
    original = tile_primitives.TileEmitter.stream_block

    def spy(self: Any, *args: Any) -> None:
        taken.append(1)
        original(self, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tile_primitives.TileEmitter, "stream_block", spy)
        record = transpose_record(rows, columns, dtype, kind=kind, out_row=rows, outer=3,
                                  pad=pad)
        kernel = compile_kernel(record, keep_ir=True)
    assert taken
    next_tile = rows * (columns + pad) + 8
    assert f"ahead {next_tile} locality 2" in kernel.stages["scf"]
    # the streaming stores keep their flag through LLVM (unrolling may copy them)
    marked = kernel.stages["llvm"].count("nontemporal")
    assert marked and kernel._engine.llvm_ir.count("!nontemporal") >= marked
    _check_placements(record, kernel, dtype, [(0, 0), (16, 48), (0, 20), (4, 36)],
                      special=kind == "ReLU", seed=9)


@pytest.mark.parametrize("dtype, rows, columns, kind", [
    ("FP32", 258, 37, "Copy"),    # rows of out 1,044 bytes: 16.3 lines, columns left over
    ("FP64", 130, 21, "ReLU"),
    ("FP16", 515, 40, "Copy"),
    ("FP32", 72, 23, "Copy"),     # 4.5 lines (HPTT 25's rows), the fewest lines shifted
])
def test_rows_of_out_that_are_not_whole_lines_stream_them_shifted(
        streaming: None, vector_bytes: int, monkeypatch: pytest.MonkeyPatch, dtype: str,
        rows: int, columns: int, kind: str) -> None:
    """A transposing tile of a large out whose rows of out are not whole lines and lie
    apart (`TileEmitter.shifted_tile`): each column's lines shifted by its own offset
    and streamed, the rows before the first line and after the last stored
    plainly, in panels of columns (here one block of lanes each); the reference's
    bits at every placement of in0 and out (out off 16 bytes: ordinary stores), 1
    and 2 threads, nothing written outside out. Every streaming store keeps LLVM's
    flag, except where the tile's columns hold one block of lanes (FP16 and the
    72-row FP32 case with 64-byte vectors): LLVM's LICM finds the loop of such
    stores invariant in one of its unswitched copies and promotes them, without
    the flag (README, Fast kernels). The host's vendor is AMD's, which shifts rows
    from `SHIFTED_MIN_LINES` on (`Host.shifted_min_lines`)."""
    machine = dataclasses.replace(tile_primitives.host(), vendor="AuthenticAMD")
    monkeypatch.setattr(tile_primitives, "host", lambda: machine)
    taken: list[int] = []
    original = tile_primitives.TileEmitter.shifted_tile

    def spy(self: Any, *args: Any) -> None:
        taken.append(1)
        original(self, *args)

    monkeypatch.setattr(tile_primitives, "SHIFTED_PANEL_L2_PART", 1 << 30)  # a block a panel
    monkeypatch.setattr(tile_primitives.TileEmitter, "shifted_tile", spy)
    record = transpose_record(rows, columns, dtype, kind=kind, out_row=rows + 3, outer=2)
    kernel = compile_kernel(record, keep_ir=True)
    assert taken
    marked = kernel.stages["llvm"].count("nontemporal")
    assert marked
    if columns // (vector_bytes // WIDTH[dtype]) > 1:
        assert kernel._engine.llvm_ir.count("!nontemporal") >= marked
    _check_placements(record, kernel, dtype, [(0, 0), (16, 48), (0, 32), (4, 16), (0, 20)],
                      special=kind == "ReLU", seed=11)


CROWDED_WALK_SHAPES = [
    # dtype, rows (no stream: not whole lines), columns, pad of in0's rows, out_row
    # (rows of out 4 KiB apart: crowded)
    ("FP32", 40, 48, 16, 1024),
    ("FP64", 20, 24, 8, 512),
    ("FP16", 80, 64, 32, 2048),
]


@pytest.mark.parametrize("dtype, rows, columns, pad, out_row", CROWDED_WALK_SHAPES)
def test_crowded_columns_walk_the_lines_of_in0(streaming: None, dtype: str, rows: int,
                                               columns: int, pad: int, out_row: int) -> None:
    """A crowded tile (blocks down the rows of out) that does not stream (its rows are
    not whole lines, whatever the output size) and whose in0 rows start 16-byte
    aligned takes its columns in pieces along in0's lines, down to 16-byte pieces
    that only the walk emits here (both vector widths); other starts take the
    whole blocks."""
    record = transpose_record(rows, columns, dtype, pad=pad, out_row=out_row)
    kernel = compile_kernel(record, keep_ir=True)
    assert "nontemporal" not in kernel.stages["scf"]
    narrow = {"FP32": "f32", "FP64": "f64", "FP16": "f16"}[dtype]
    assert f"vector<{16 // WIDTH[dtype]}x{narrow}>" in kernel.stages["scf"]
    _check_placements(record, kernel, dtype)


STAGED_SHAPES = [
    # dtype, rows (rows of out: past the last whole run), columns (past the last
    # whole block), in0's row length, out_row: rows of out 4 KiB apart (one L1 set),
    # or 2 KiB apart on both tensors (two sets, the loads crowded as well)
    ("FP32", 150, 37, 40, 1024),
    ("FP32", 300, 64, 512, 512),
    ("FP64", 75, 19, 20, 512),
    ("FP16", 290, 70, 75, 2048),
]


@pytest.mark.parametrize("dtype, rows, columns, in_row, out_row", STAGED_SHAPES)
def test_transposes_whose_stores_crowd_an_l1_set_go_through_a_buffer(
        vector_bytes: int, monkeypatch: pytest.MonkeyPatch, dtype: str, rows: int,
        columns: int, in_row: int, out_row: int) -> None:
    """Staged (`TileEmitter.staged`): the reference's bits at 1 and 2 threads, the
    rows and columns past the last whole stage included, at several alignments of
    both tensors, and nothing written outside out."""
    taken: list[int] = []
    staged = tile_primitives.TileEmitter.staged

    def spy(self: Any, *args: Any) -> None:
        taken.append(1)
        staged(self, *args)

    monkeypatch.setattr(tile_primitives.TileEmitter, "staged", spy)
    record = transpose_record(rows, columns, dtype, pad=in_row - columns, out_row=out_row,
                              outer=2)
    kernel = _check(record, "memref.alloca")
    assert taken
    _check_placements(record, kernel, dtype)


def test_staged_relu_keeps_zero_signs_and_nans() -> None:
    record = transpose_record(140, 20, "FP32", kind="ReLU", out_row=1024, outer=2)
    _check(record, "memref.alloca", special=True)


def buffered_record(rows: int, columns: int, run: int, dtype: str, kind: str = "Copy",
                    *, in_bytes: int = 4096, out_bytes: int = 4096) -> dict[str, Any]:
    """A transposing tile widened by an axis k that continues its rows of out (as
    `teir-widen-tile` makes them): in0 [r][k][c], out [c][k][r], the rows of in0 (r)
    and of out (c) `in_bytes` / `out_bytes` apart, under a parallel node t."""
    w = WIDTH[dtype]
    ld = columns + 3  # in0's rows of k padded apart
    assert run * ld * w <= in_bytes and run * rows * w <= out_bytes
    axes = [
        _axis("r", rows, [in_bytes, w]),
        _axis("c", columns, [w, out_bytes]),
        _axis("k", run, [ld * w, rows * w]),
        _axis("t", 2, [rows * in_bytes, columns * out_bytes]),
    ]
    return _record(["in0", "out"], axes, kind, {"M": ["c"], "N": ["k", "r"]},
                   [("t", "parallel")], dtype)


@pytest.mark.parametrize("rows, columns, run, dtype, kind", [
    (33, 33, 4, "FP32", "Copy"),    # 132-byte rows of out, four tiles a chunk
    (33, 20, 5, "FP32", "ReLU"),    # chunks of 3 and 2 tiles when 4 fit
    (31, 17, 3, "FP64", "Copy"),
    (48, 40, 8, "FP16", "Copy"),
    (9, 7, 6, "FP32", "Copy"),      # a side under a vector: narrower blocks, scalars
])
def test_crowded_tiles_widened_by_a_run_go_through_buffers(
        vector_bytes: int, rows: int, columns: int, run: int, dtype: str, kind: str) -> None:
    """A tile whose rows of out crowd one L1 set (those of in0 too) and whose rows are
    short, with an axis continuing its rows of out (`TileEmitter.buffered`): through two
    buffers in the L1, every byte the reference's at 1 and 2 threads."""
    record = buffered_record(rows, columns, run, dtype, kind, out_bytes=8192)
    kernel = _check(record, "memref.alloca", special=kind == "ReLU")
    assert kernel.stages["scf"].count("memref.alloca") == 2


@pytest.mark.parametrize("in_bytes, out_bytes, rows, columns, buffered", [
    (4096, 4096, 33, 20, True),
    (2048, 4096, 33, 20, True),     # two sets and one
    (4096, 1024, 33, 20, False),    # four sets: the walk down out's rows
    (4160, 4096, 33, 20, True),     # the rows of in0 spread over the sets
    (4096, 4160, 33, 20, False),    # the rows of out
    (4096, 4096, 32, 20, False),    # rows of out of whole lines: streamed
    (4096, 4096, 65, 20, False),    # rows of out of 260 bytes
    (4096, 4096, 33, 65, True),     # rows of in0 of 260 bytes, rows of out in one set
    (4096, 2048, 33, 65, True),     # and in two, out in the cache
])
def test_which_widened_tiles_are_buffered(in_bytes: int, out_bytes: int, rows: int,
                                          columns: int, buffered: bool) -> None:
    record = buffered_record(rows, columns, 2, "FP32", in_bytes=in_bytes,
                             out_bytes=out_bytes)
    kernel = _check(record, "vector.shuffle")
    assert (kernel.stages["scf"].count("memref.alloca") == 2) == buffered


def test_large_outputs_buffer_two_set_tiles_only_with_short_rows_of_in0(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With out counted as large (`STREAMED_MIN_BYTES` 0), rows of out in two sets
    and rows of in0 of 260 bytes keep the walk; rows of in0 of 80 bytes buffer."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})  # kernels made without the patch
    for columns, buffered in ((65, False), (20, True)):
        record = buffered_record(33, columns, 2, "FP32", out_bytes=2048)
        kernel = _check(record, "vector.shuffle")
        assert (kernel.stages["scf"].count("memref.alloca") == 2) == buffered


def test_widened_bf16_tiles_move_bits() -> None:
    """BF16 tiles are moves: the buffered path keeps every bit (NaN payloads too)."""
    record = buffered_record(33, 24, 4, "FP32", in_bytes=8192, out_bytes=16384)
    record["primitives"][0]["metadata"]["data_type"] = "BF16"  # strides halved below
    for axis in record["axes"]:
        axis["strides"] = [s // 2 for s in axis["strides"]]
    kernel = compile_kernel(record, keep_ir=True)
    assert kernel.stages["scf"].count("memref.alloca") == 2
    arrays = random_arrays(record, np.random.default_rng(2), fill=SENTINEL)
    arrays[0].view(np.uint16)[::7] = 0x7FC1  # a quiet NaN with a payload
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    kernel(*arrays, threads=2)
    np.testing.assert_array_equal(arrays[1].view(np.uint16), expected[1].view(np.uint16))


@pytest.mark.parametrize("subscripts, shape, dtype", [
    ("abcd->dcba", (33, 16, 32, 33), np.float32),   # b in blocks of 4
    ("abcd->dcba", (33, 12, 256, 33), np.float16),  # blocks of 8 and a remainder of 4
    ("abcd->dcba", (31, 8, 64, 31), np.float64),
    ("abcd->dbac", (16, 64, 24, 48), ml_dtypes.bfloat16),  # the rows of in0 spread
    ("abcd->dacb", (48, 4, 8, 65), np.float64),  # rows of out of 32 bytes, in0's of 520
])
def test_einsum_permutations_of_crowded_tiles_are_widened(
        subscripts: str, shape: tuple[int, ...], dtype: type) -> None:
    """Permutations whose tiles' rows of out lie a multiple of 2 KiB apart and whose
    rows are short: the schedule widens the tiles by b (teir-widen-tile), and
    `einsum` gives numpy's transpose at 1 and 2 threads."""
    x = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    order = [subscripts.index(c) for c in subscripts.split("->")[1]]
    out = np.empty([shape[i] for i in order], dtype)
    record = einsum_frontend._config(subscripts, x, out=out, dtype=None, relu=False)
    assert "widen-tile" in compile_kernel(record, keep_ir=True).stages["optimized"]
    for threads in (1, 2):
        np.testing.assert_array_equal(einsum(subscripts, x, threads=threads),
                                      x.transpose(order))


@pytest.mark.parametrize("subscripts, shape, dtype, tiled", [
    ("abc->bac", (64, 128, 16), np.float32, ["b", "a"]),
    ("abcd->bcad", (64, 32, 8, 16), np.float16, ["bc", "a"]),
    ("abcd->cabd", (32, 32, 64, 8), np.float64, ["c", "ab"]),
    ("abcd->cabd", (30, 32, 64, 8), ml_dtypes.bfloat16, None),  # in0 rows in four sets
])
def test_short_runs_whose_loop_crowds_a_set_are_blocked(
        subscripts: str, shape: tuple[int, ...], dtype: type, tiled: list[str] | None) -> None:
    """Copies of short contiguous runs whose innermost loop steps in0 by a stride that
    crowds one L1 set: that loop and the one above are tiled (`block_short_runs`);
    `einsum` gives numpy's transpose at 1 and 2 threads."""
    x = np.random.default_rng(6).standard_normal(shape).astype(dtype)
    order = [subscripts.index(c) for c in subscripts.split("->")[1]]
    out = np.empty([shape[i] for i in order], dtype)
    record = einsum_frontend._config(subscripts, x, out=out, dtype=None, relu=False)
    optimized = compile_kernel(record, keep_ir=True).stages["optimized"]
    step = re.search(r"tile\\22, \\22axes\\22: \[([^]]*)\]", optimized)
    assert (step and step.group(1).replace("\\22", "").split(", ")) == tiled, optimized
    for threads in (1, 2):
        np.testing.assert_array_equal(einsum(subscripts, x, threads=threads),
                                      x.transpose(order))


@pytest.mark.parametrize("out_bytes, in_bytes, rows, staged", [
    (4096, 160, 128, True),     # stores in one set: staged whatever the loads
    (8192, 4096, 512, True),
    (2048, 2048, 128, True),    # two sets, the loads crowded too
    (2048, 256, 512, False),    # two sets, the loads spread: the walk down out's rows
    (1024, 1024, 512, False),   # four sets
    (4096, 160, 120, False),    # rows of out shorter than a run
    (4160, 160, 512, False),    # not crowded
    (8188, 192, 512, True),     # a line short of 8 KiB: 15 of 16 rows in one set
])
def test_which_transposes_are_staged(out_bytes: int, in_bytes: int, rows: int,
                                     staged: bool) -> None:
    emitter = tile_primitives.TileEmitter(OperationKind.COPY, f32, 4, None, None)
    columns = tile_primitives.TileAxis(64, 1, out_bytes // 4)
    assert emitter.stages(tile_primitives.TileAxis(rows, in_bytes // 4, 1), columns) is staged


def test_no_streaming_for_small_outputs() -> None:
    kernel = compile_kernel(transpose_record(64, 16, "FP32", out_row=80), keep_ir=True)
    assert "vector.shuffle" in kernel.stages["scf"]
    assert "nontemporal" not in kernel.stages["scf"]


@pytest.mark.parametrize("name, outputs, streamed", [
    ("avx512", 2, True), ("avx512", 3, False), ("avx512-intel", 2, True),
    ("avx512-intel", 3, False)])
def test_outputs_of_half_the_last_level_cache_stream(
        monkeypatch: pytest.MonkeyPatch, name: str, outputs: int, streamed: bool) -> None:
    """`Host.streamed_bytes`: an out of half the last-level cache (the L2 where the L3
    serves like memory, `Host.l3_serves_like_memory`) or more gets
    `schedule_transposes`' row cut from the auto-scheduler (rows of out 4 KiB apart)
    and is streamed by the tile (rows of out 3840 bytes apart, too few alike in the
    L1 sets to stream anyway); a smaller one neither (a cache of 2 and of 3 times
    the out)."""
    from teir_dialect import teir_context
    from teir_dialect.records import find_configs, load_module
    from teir_passes.auto_schedule import auto_schedule

    def machine_for(extents: tuple[int, int, int, int]) -> Any:
        out_bytes = 4 * extents[0] * extents[1] * extents[2] * extents[3]
        described = pinned_host(name)
        level = "l2" if described.l3_serves_like_memory else "l3"
        machine = dataclasses.replace(described, **{level: outputs * out_bytes})
        assert (machine.streamed_bytes <= out_bytes) == streamed
        return machine

    aliased = (64, 4, 4, 64)
    (config,) = find_configs(load_module(permutation_record(*aliased, "FP32")))
    steps = auto_schedule(config, teir_context(), 1, machine=machine_for(aliased))
    assert any(step["op"] == "split" for step in steps) == streamed, steps
    spread = (64, 3, 5, 64)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})
    with pinned(machine_for(spread)):
        kernel = _check(permutation_record(*spread, "FP32"), "vector.shuffle")
    assert ("nontemporal = true" in kernel.stages["scf"]) == streamed


@pytest.mark.parametrize("name, rows, out_row, plain", [
    ("avx512-intel", 40, 50, True), ("avx512", 40, 50, True),  # 2.5 lines, 200 bytes apart
    ("avx512-intel", 72, 75, True), ("avx512", 72, 75, False),  # 4.5 lines: shifted on Zen
])
def test_plainly_stored_rows_of_a_large_out_are_prefetched_where_the_l3_serves_like_memory(
        monkeypatch: pytest.MonkeyPatch, name: str, rows: int, out_row: int,
        plain: bool) -> None:
    """A large out whose rows are not whole lines apart: on the Intel description rows
    under 16 lines are stored plainly (`Host.shifted_min_lines`), each store's row
    of out prefetched ahead into the L2 as in0's rows are (`TileEmitter.block`);
    on the Zen-like one rows from 4 lines on are shifted and streamed, shorter
    ones stored plainly with in0's rows prefetched only. The reference's bits
    and nothing outside out either way."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})
    with pinned(name) as machine:
        kernel = _check(transpose_record(rows, 21, "FP32", out_row=out_row), "vector.shuffle")
    scf = kernel.stages["scf"]
    assert "teir_lane.prefetch %in0" in scf
    assert ("teir_lane.prefetch %out" in scf) is (plain and machine.l3_serves_like_memory)
    assert ("nontemporal = true" not in scf) is plain


@pytest.mark.parametrize("rows, out_row", [(70, 96), (64, 84), (32, 40)])
def test_no_streaming_for_other_layouts(streaming: None, rows: int, out_row: int) -> None:
    """Rows not a multiple of the lanes, rows of out not a multiple of a line apart,
    or too few lines per row (and not 4 KiB apart): ordinary stores."""
    kernel = _check(transpose_record(rows, 16, "FP32", out_row=out_row), "vector.shuffle")
    assert "nontemporal" not in kernel.stages["scf"]


# -- narrow transposes -----------------------------------------------------------------

NARROW_CASES = [("FP32", k, long) for k in (2, 3, 5, 6) for long in (5, 37)] + [
    ("FP64", 2, 37), ("FP64", 3, 37), ("FP64", 5, 21),
    ("FP16", 3, 37), ("FP16", 5, 100), ("FP16", 6, 70),
    # past NARROW_MAX but under a 16-byte vector: no L x L block fits the side
    ("FP16", 7, 45), ("FP32", 7, 37),
]
"""(type, k elements on the packed narrow side, elements on the long side): long
sides with whole vectors of 16 or 8 lanes, halves and scalars left over."""


def _narrow_record(direction: str, k: int, long: int, dtype: str, kind: str = "Copy"
                   ) -> dict[str, Any]:
    """A tile whose rows of k elements lie back to back on in0 (deinterleave: an
    image's pixels to planes) or on out (interleave), two of them in a parallel loop."""
    if direction == "deinterleave":
        return transpose_record(long, k, dtype, kind=kind, pad=0, outer=2)
    return transpose_record(k, long, dtype, kind=kind, pad=3, out_row=k, outer=2)


@pytest.mark.parametrize("direction", ["deinterleave", "interleave"])
@pytest.mark.parametrize("dtype, k, long", NARROW_CASES)
def test_narrow_transposes(vector_bytes: int, monkeypatch: pytest.MonkeyPatch,
                           direction: str, dtype: str, k: int, long: int) -> None:
    """Bit-exact, nothing written outside out, and the narrow form taken wherever k is
    under a vector's lanes (else the L x L blocks)."""
    taken: list[str] = []
    form = getattr(tile_primitives.TileEmitter, direction)

    def spy(self: Any, *args: Any) -> None:
        taken.append(direction)
        form(self, *args)

    monkeypatch.setattr(tile_primitives.TileEmitter, direction, spy)
    _check(_narrow_record(direction, k, long, dtype), "vector.shuffle")
    lanes = vector_bytes // WIDTH[dtype]
    narrow = k <= tile_primitives.NARROW_MAX or k < 16 // WIDTH[dtype]
    assert bool(taken) == (narrow and k < lanes), (taken, lanes)


@pytest.mark.parametrize("direction", ["deinterleave", "interleave"])
def test_narrow_relu_keeps_zero_signs_and_nans(direction: str) -> None:
    _check(_narrow_record(direction, 3, 40, "FP32", kind="ReLU"), "vector.shuffle",
           special=True)


@pytest.mark.parametrize("pad", [1, 2])
def test_narrow_rows_apart_stay_scalar(pad: int) -> None:
    """Rows of 3 elements with a gap between them on in0: no run to load whole."""
    kernel = _check(transpose_record(40, 3, "FP32", pad=pad), "memref.store")
    assert "vector.shuffle" not in kernel.stages["scf"]


# -- contiguous tiles ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("kind", ["Zero", "Copy", "ReLU"])
@pytest.mark.parametrize("run", [4, 5, 7, 8, 15, 16, 17, 31, 33, 40, 64, 100])
def test_contiguous_tiles(kind: str, run: int, dtype: str) -> None:
    _check(contiguous_record(kind, run, dtype=dtype), "vector.store", special=kind == "ReLU")


@pytest.mark.parametrize("dtype", ["FP16", "FP32", "FP64"])
@pytest.mark.parametrize("kind, tensors", [("Copy", 2), ("ReLU", 2), ("Zero", 2), ("ReLU", 3)])
@pytest.mark.parametrize("large", [True, False])
def test_contiguous_runs_of_a_large_out_prefetch_the_run_tiles_ahead(
        monkeypatch: pytest.MonkeyPatch, kind: str, tensors: int, dtype: str,
        large: bool) -> None:
    """Each contiguous run of in0 that a tile of a large out copies is prefetched into
    the L2 `RUNS_AHEAD` tiles on (the loop around steps in0 by a padded run), a
    prefetch per line of the run; none for a small out, nor for Zero (no in0)
    or an in-place ReLU (out is its source). The reference's bits either way."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0 if large else 1 << 40)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    run = 100
    record = contiguous_record(kind, run, rows=20, dtype=dtype, tensors=tensors)
    kernel = _check(record, "vector.store", special=kind == "ReLU")
    found = re.findall(r"teir_lane.prefetch %in0\[%\S+\] ahead (\d+) locality 2",
                       kernel.stages["scf"])
    lines = (run * WIDTH[dtype] + 62) // 64 + 1  # that the run touches at worst (63 bytes in)
    fetched = large and kind != "Zero" and tensors == 2
    ahead = tile_primitives.RUNS_AHEAD * (run + 2)  # the loop k steps in0 by run + pad
    assert found == ([str(ahead)] * lines if fetched else [])


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("run", [6, 18, 34])
def test_contiguous_runs_merge_axes(run: int, dtype: str) -> None:
    kernel = _check(contiguous_record("Copy", run, dtype=dtype, split=True), "vector.store")
    assert "vector.load" in kernel.stages["scf"]


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("run", [4, 19, 48])
def test_in_place_relu(run: int, dtype: str) -> None:
    _check(contiguous_record("ReLU", run, dtype=dtype, tensors=3), "vector.load", special=True)


@pytest.mark.parametrize("run", [1, 2, 3])
def test_short_runs_stay_scalar(run: int) -> None:
    kernel = _check(contiguous_record("Copy", run), "memref.store")
    assert "vector." not in kernel.stages["scf"]


def test_aliased_out_stays_scalar() -> None:
    """A role axis with stride 0 on out: the last write wins, as in the scalar loops."""
    record = contiguous_record("Copy", 8)
    record["axes"].append(_axis("z", 3, [40, 0]))
    record["primitives"][0]["axes"]["N"] = ["z"]
    kernel = _check(record, "memref.store")
    assert "vector." not in kernel.stages["scf"]


# -- loops around streamed transposes (teir-auto-schedule) ----------------------------------


SCHEDULED_PERMUTATIONS = [
    # subscripts, in0's shape, dtype ("BF16": uint16 bits), in0 a view, out streamed
    # (None: not checked), rows cut into blocks (rows of in0 and out 4 KiB apart)
    ("abcd->dcba", (64, 4, 4, 64), "float32", False, True, True),
    ("abcd->dcba", (96, 8, 4, 64), "float32", False, True, True),
    ("abcd->dcba", (32, 4, 4, 32), "float64", False, True, True),
    ("abcd->dcba", (64, 3, 5, 37), "float32", False, True, False),
    ("abcd->dcba", (32, 9, 7, 24), "float64", True, True, False),
    ("abcd->dcba", (128, 4, 3, 18), "float16", False, None, False),
    ("abcd->dcba", (128, 5, 2, 41), "BF16", True, None, False),
    ("abcde->ebdca", (18, 3, 2, 5, 21), "float32", True, False, False),
    # rows of out (133 elements) back to back: out one block, streamed through a buffer
    ("abc->cab", (19, 7, 35), "float32", False, True, False),
]


@pytest.mark.parametrize("subscripts, shape, dtype, view, streams, cut",
                         SCHEDULED_PERMUTATIONS)
def test_loops_around_streamed_transposes(streaming: None, subscripts: str,
                                          shape: tuple[int, ...], dtype: str,
                                          view: bool, streams: bool | None,
                                          cut: bool) -> None:
    """Permutations whose out exceeds the host's last-level cache (an L3 of 1 KiB
    here): teir-auto-schedule cuts the tile's rows into blocks of two lines when
    they lie a multiple of 4 KiB apart and puts the loops around the transposing
    tile in in0's order (largest in0 stride outermost), the tile streams out, and
    the kernel's result equals numpy's bit for bit on 1 and 2 threads, at two out
    alignments, with remainders of every width, from views, in every element
    width. A tile whose rows of out are stored plainly (`streams` False) takes
    out's order instead, the loop that continues in0's rows innermost."""
    from teir_dialect import teir_context
    from teir_dialect.builders import einsum_config
    from teir_dialect.records import find_configs, load_module
    from teir_passes.auto_schedule import auto_schedule

    rng = np.random.default_rng(5)
    stored = np.uint16 if dtype == "BF16" else np.dtype(dtype)
    padded = tuple(n + 2 for n in shape) if view else shape
    full = rng.integers(0, 1 << 15, padded).astype(stored) if dtype == "BF16" else (
        rng.standard_normal(padded).astype(stored))
    x = full[tuple(slice(1, 1 + n) for n in shape)] if view else full
    inputs, result = subscripts.split("->")
    axes = tuple(inputs.index(letter) for letter in result)
    small = dataclasses.replace(host(), l3=1024)
    compiled: dict[str, Any] = {}  # by the scheduled module's text: one compile when alike
    for threads in (1, 2):
        out = np.full(x.transpose(axes).shape, SENTINEL, stored)
        record = einsum_config(subscripts, x, out=out,
                               dtype="BF16" if dtype == "BF16" else None)
        module = load_module(record)
        (config,) = find_configs(module)
        steps = auto_schedule(config, teir_context(), threads, machine=small)
        after = [s["op"] for s in steps[[s["op"] for s in steps].index("lift-elementwise"):]]
        assert ("split" in after) == cut, steps
        loops = [op for op in config.schedule.walk_nodes() if hasattr(op, "axis_id")]
        in0 = [config.axis(node.axis_id).stride_on("in0") for node in loops]
        if streams is False:
            (prim,) = config.primitives
            width = prim.element_width
            (column,) = [a for a in prim.all_role_axes if a.stride_on("in0") == width]
            run = column.size * width  # a row of in0: the loop that continues it goes last
            assert run not in in0[:-1], steps
            on_out = [config.axis(node.axis_id).stride_on("out") for node in loops
                      if config.axis(node.axis_id).stride_on("in0") != run]
            assert on_out == sorted(on_out, reverse=True), steps  # out's order, outermost first
        else:
            assert in0 == sorted(in0, reverse=True), steps  # in0's order, outermost first
            assert "reorder" in after or len(loops) < 2
        text = str(module)
        kernel = compiled.get(text) or compile_kernel(module, optimize=False, keep_ir=True)
        compiled[text] = kernel
        if streams is not None:
            assert ("nontemporal = true" in kernel.stages["scf"]) == streams
        memory = x.reshape(-1) if x.flags.c_contiguous else np.lib.stride_tricks.as_strided(
            x, shape=(sum((n - 1) * s for n, s in zip(x.shape, x.strides)) // x.itemsize + 1,),
            strides=(x.itemsize,))
        for shift in (0, 16):
            target = _shifted_like(out, shift)
            kernel(memory, target.reshape(-1), threads=threads)
            np.testing.assert_array_equal(target, np.ascontiguousarray(x.transpose(axes)),
                                          err_msg=f"{threads} threads, out +{shift} bytes")


def test_row_cut_joins_a_parallel_nest_as_written(streaming: None) -> None:
    """§10.7.2's nest written parallel (b, c) around a tile whose rows lie 4 KiB
    apart: the loop of the row cut joins the parallel nest, outermost, and the
    kernel equals the reference on every byte on 1 and 2 threads."""
    from teir_dialect import teir_context
    from teir_dialect.records import find_configs, load_module
    from teir_passes.auto_schedule import auto_schedule
    from teir_passes.script import apply_schedule

    record = permutation_record(64, 4, 4, 64, "FP32")
    for iteration in record["schedule"]["iterations"]:
        iteration["policy"] = "parallel"
    module = load_module(record)
    (config,) = find_configs(module)
    steps = auto_schedule(config, teir_context(), 2, machine=dataclasses.replace(host(), l3=1024))
    assert steps[:3] == [{"op": "split", "axis": "a", "factor": 32},
                         {"op": "parallelize", "axis": "a"},
                         {"op": "reorder", "order": ["a", "b", "c"]}]
    # so little work does not pay for a fork/join: the nest then runs sequentially;
    # the kernel below keeps it parallel
    assert all(step["op"] == "sequentialize" for step in steps[3:])
    module = load_module(record)
    apply_schedule(module, steps[:3])
    arrays = random_arrays(record, np.random.default_rng(2), fill=SENTINEL)
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    kernel = compile_kernel(module, optimize=False, keep_ir=True)
    assert kernel.parallel and "nontemporal = true" in kernel.stages["scf"]
    for threads in (1, 2):
        got = [_like(a) for a in arrays]
        kernel(*got, threads=threads)
        np.testing.assert_array_equal(_bits(got[-1]), _bits(expected[-1]))


def _shifted_like(array: np.ndarray, shift_bytes: int) -> np.ndarray:
    """A C-contiguous copy of `array` starting `shift_bytes` past a 64-byte boundary."""
    w = array.itemsize
    backing = np.empty(array.size + 64 // w + shift_bytes // w, array.dtype)
    start = (((-backing.ctypes.data) % 64) + shift_bytes) // w
    view = backing[start:start + array.size].reshape(array.shape)
    view[...] = array
    return view


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("subscripts, shape", [
    ("ab->ba", (256, 256)),      # vector transposes
    ("abc->acb", (16384, 2, 2)),  # 2 x 2 tiles: scalar code
    ("ab->ab", (512, 128)),      # contiguous vectors
])
def test_16_bit_relu_decides_on_the_bits(dtype: str, subscripts: str,
                                         shape: tuple[int, ...]) -> None:
    """ReLU of f16/bf16 by integer ops on the bits (`emit._relu_bits`), checked on every
    one of the 65,536 bit patterns: +0 exactly where the value is below zero
    (-0.0 and NaNs of either sign pass unchanged), in scalar and vector code. The
    FP16 kernels then only move 16-bit values (no `half` reaches LLVM)."""
    from teir_dialect import einsum_config
    from teir_lowering import einsum

    numpy_type = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)
    bits = np.arange(1 << 16, dtype=np.uint16).reshape(shape)
    values = bits.view(numpy_type)
    got = einsum(subscripts, values, relu=True, threads=1)
    negative = values.astype(np.float32) < 0
    expected = np.where(negative, np.uint16(0), bits)
    order = [subscripts.split("->")[0].index(i) for i in subscripts.split("->")[1]]
    np.testing.assert_array_equal(got.view(np.uint16), expected.transpose(order))
    if dtype == "float16":
        record = einsum_config(subscripts, values, out=got, relu=True)
        assert "half" not in compile_kernel(record, keep_ir=True).stages["llvm"]


@pytest.mark.parametrize("record, marked", [
    (transpose_record(37, 35, "FP64"), True),
    (transpose_record(140, 20, "FP32", kind="ReLU", out_row=1024, outer=2), True),  # staged
    (transpose_record(40, 3, "FP32"), False),  # scalar loops only
    (contiguous_record("Copy", 347), False),  # a run's loop of single vectors
])
def test_the_emitters_vector_loops_are_kept_from_llvms_unroller(record: dict[str, Any],
                                                                 marked: bool) -> None:
    """The tile emitter's loops over its own unrolled vector code (transposes) carry
    `UNROLLED`, and the translation gives each its `llvm.loop.unroll.disable`
    node; scalar loops (but a vector tile's scalar edges, next test), the
    schedule's and a contiguous run's loop of single vectors are left to LLVM,
    whose unrolling speeds them."""
    from xdsl.dialects import scf

    from teir_dialect import teir_context
    from teir_dialect.records import load_module
    from teir_lowering.lane import UNROLLED
    from teir_lowering.runtime.kernel import lower_to_scf, translate

    module = load_module(record)
    ctx = teir_context()
    lower_to_scf(module, ctx)
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    unrolled = [loop for loop in loops if UNROLLED in loop.attributes]
    assert bool(unrolled) is marked
    for loop in loops:
        vectors = any(isinstance(op, (vector.LoadOp, vector.StoreOp)) for op in loop.body.walk())
        assert vectors or loop not in unrolled
    text, _ = translate(module, ctx)
    assert text.count("!llvm.loop !") == len(unrolled)
    assert ('!1 = !{!"llvm.loop.unroll.disable"}' in text) is marked
    _check(record, "scf.for")


def test_the_scalar_edges_of_a_vector_tile_stay_rolled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows a streamed run's tiles leave to their neighbours' lines (`carried`) are
    scalar loops over part of the tile: marked `UNROLLED` (`for_loop`'s `rolled`),
    as LLVM's unrolling and vectorizing of them was most of the kernel's compile
    time; the kernel still gives the reference's bits."""
    from xdsl.dialects import scf

    from teir_dialect import teir_context
    from teir_dialect.records import load_module
    from teir_lowering.lane import UNROLLED
    from teir_lowering.runtime.kernel import lower_to_scf

    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 0)
    record = run_record(40, 21, (3, 2), "FP32", "Copy", "k1 k0 t")
    with pinned("avx512"):
        module = load_module(record)
        lower_to_scf(module, teir_context())
        scalar = [loop for loop in module.walk() if isinstance(loop, scf.ForOp)
                  and not any(isinstance(op, (vector.LoadOp, vector.StoreOp))
                              for op in loop.body.walk())
                  and any(isinstance(op, memref.LoadOp) for op in loop.body.walk())]
        assert scalar and all(UNROLLED in loop.attributes for loop in scalar)
        _check(record, "scf.for")


def test_only_loops_over_vector_code_are_marked_unrolled() -> None:
    """`for_loop(..., unrolled=True)` marks a loop whose body loads or stores vectors
    (here one level down), not one of scalar code, nor any loop by default;
    `rolled=True` marks one whatever its body."""
    from xdsl.dialects import scf
    from xdsl.dialects.builtin import MemRefType

    from teir_lowering.codegen.emit import for_loop, load, store
    from teir_lowering.lane import UNROLLED

    block = Block(arg_types=[MemRefType(f32, [64])])
    builder = Builder(InsertPoint.at_end(block))
    memory = block.args[0]

    def vectors(b: Builder, i: SSAValue, _: list[SSAValue]) -> None:
        for_loop(b, 0, 2, 1, lambda bb, j, _: store(bb, load(bb, memory, i, 4), memory, j))

    def scalars(b: Builder, i: SSAValue, _: list[SSAValue]) -> None:
        b.insert(memref.StoreOp.get(b.insert(memref.LoadOp.get(memory, [i])).res, memory, [i]))

    for body, unrolled in ((vectors, True), (scalars, True), (vectors, False)):
        for_loop(builder, 0, 8, 4, body, unrolled=unrolled)
    for_loop(builder, 0, 8, 4, scalars, rolled=True)  # whatever its body
    outer = [op for op in block.ops if isinstance(op, scf.ForOp)]
    assert [UNROLLED in loop.attributes for loop in outer] == [True, False, False, True]
