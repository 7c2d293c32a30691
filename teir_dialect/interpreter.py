"""Reference interpreter: runs a TEIR configuration on numpy arrays, exactly as specified.

`run_reference(config, arrays)` executes the schedule as the ordered program of
§10.2 on the raw bytes of the arrays (tensor order in0, [in1,] out), in place:

* Roots run in order, the children of an iteration node in order. Sequential
  and parallel iteration both run in increasing index order (a well-formed
  parallel node gives the same result in any order; `parallel_order="reverse"`
  runs parallel nodes backwards so tests can check that).
* A guard (conjunction of `first(x)` / `last(x)`) is checked before a node is
  entered; False skips the node's whole subtree.
* The tile address of tensor j for an invocation is the sum over the ancestor
  iteration axes of `offsets[j] + strides[j] * index` (bytes, §10.4). The
  primitive then runs over its role axes; the element at role indices
  (i_1..i_n) sits at the tile address plus, per role axis,
  `offsets[j] + strides[j] * i` (role-axis offsets count, as in records.md).
  Addresses are byte offsets from the start of each array's data.
* Primitives are the scalar loop nest over the role axes in the order M..., N...,
  K... (list order, outermost first):
  Zero `out = +0`; Copy `out = in0` (bit copy); ReLU `out = relu(in0)` with two
  tensors, `out = relu(out)` in place with three, where relu(x) is 0 if x < 0
  and x otherwise (NaN and -0.0 pass through unchanged, bit for bit);
  Contraction `out[m, n] += in0[m, k] * in1[k, n]` over all K indices.

Exactness with respect to aliasing inside one tensor: a role axis with stride 0
on out repeats updates of the same element. Copy/ReLU then keep the value of the
last iteration of the loop nest (the one a sequential loop leaves behind), and
Contraction accumulates every contribution (`np.add.at` in loop order).

Numerics (decision, documented; the compiled kernels follow the same rules):

* Zero, Copy and ReLU are exact for every data type: they move stored bits
  (relu compares the stored value, which is exact in every format).
* FP16, BF16 (stored in 16 bits) and TF32 (stored as FP32): a Contraction
  widens its inputs to float32 (exactly), rounds TF32 inputs to TF32 first (10
  explicit mantissa bits, nearest even, NaN kept: `round_tf32`), multiplies
  them exactly (the products of such inputs fit float32) and accumulates in
  float32, in loop order, starting from the element's current value; the sum
  is rounded once to the storage type when stored (nearest even). A K loop of
  the schedule outside the primitive therefore rounds to the storage type
  after every invocation, as the kernels do.
* FP32, FP64: the products and sums of one invocation are formed in float64 in
  loop order and rounded once to the element type when stored: exactly the
  sequential loop for FP64, at least as accurate for FP32, so compiled code
  (FP32 FMAs in another order) is compared against it with a tolerance.
* Conversions to a narrower format round to nearest even; values beyond its
  finite range become ±Inf, subnormals are kept (no flush to zero), NaN stays
  NaN (BF16: quiet, `_float64_to_bf16`).

Storage: FP16 -> float16, FP32 and TF32 -> float32, FP64 -> float64, BF16 ->
uint16 bit patterns (`STORAGE_DTYPE`; arrays of ml_dtypes.bfloat16 hold the
same bytes). Values use the machine's native byte order.

Tensors are distinct buffers. If out overlaps an input array in memory (e.g. the
same array passed as in0 and out), the interpreter falls back to element-by-element
execution, which reads every operand from memory right before using it, so the
literal sequential loop semantics holds; each Contraction update is then rounded
to the element type (`vectorize=False` selects this mode explicitly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from teir_dialect.arrays import check_arrays, tensor_specs
from teir_dialect.dialect import ConfigOp, InvokeOp, IterOp, PrimitiveOp, ScheduleNode
from teir_dialect.records import TeirError, find_configs, load_module
from teir_dialect.vocabulary import DataType, GuardKind, OperationKind, Role

__all__ = [
    "STORAGE_DTYPE",
    "from_float64",
    "load_config",
    "reference_outputs",
    "round_tf32",
    "run_reference",
    "to_float64",
]

STORAGE_DTYPE: dict[str, np.dtype[Any]] = {
    t: np.dtype(np.uint16) if t is DataType.BF16 else t.numpy_dtypes[0] for t in DataType
}
"""The numpy dtype the interpreter reads each data type as (BF16 as raw 16-bit patterns)."""

_ACCUMULATOR: dict[str, np.dtype[Any]] = {
    t: np.dtype(np.float64) if t in (DataType.FP32, DataType.FP64) else np.dtype(np.float32)
    for t in DataType
}
"""The dtype a Contraction accumulates each data type in (see Numerics)."""


# --------------------------------------------------------------------------
# Element conversions
# --------------------------------------------------------------------------


def _bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _float64_to_bf16(values: np.ndarray) -> np.ndarray:
    """float64 -> BF16 bit patterns, round to nearest even, rounded once."""
    x = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    upper = u >> 16
    lower = u & 0xFFFF
    rounded = (u + 0x7FFF + (upper & 1)) >> 16
    # Rounding to float32 first may land exactly on a BF16 tie that x itself is
    # not on (double rounding): then x decides the direction.
    fake_tie = (lower == 0x8000) & (f.astype(np.float64) != x) & np.isfinite(x)
    if fake_tie.any():
        away = np.abs(x) > np.abs(f.astype(np.float64))
        rounded = np.where(fake_tie, np.where(away, upper + 1, upper), rounded)
    rounded = np.where(np.isnan(f), upper | 0x0040, rounded)
    return rounded.astype(np.uint16)


def round_tf32(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 explicit mantissa bits, nearest even, the low
    13 bits cleared): overflow gives ±Inf, subnormals round alike, NaN is kept."""
    f = np.asarray(values, dtype=np.float32)
    u = f.view(np.uint32)
    with np.errstate(over="ignore"):  # NaN patterns near the top wrap; they are kept below
        rounded = ((u + np.uint32(0xFFF) + ((u >> 13) & 1)) & np.uint32(0xFFFFE000)).astype(
            np.uint32
        )
    return np.where(np.isnan(f), f, rounded.view(np.float32))


def _contraction_operand(values: np.ndarray, data_type: str) -> np.ndarray:
    """Stored inputs of a Contraction as the values it multiplies (see Numerics)."""
    wide = to_float64(values, data_type).astype(_ACCUMULATOR[data_type])
    return round_tf32(wide) if data_type == DataType.TF32 else wide


def to_float64(values: np.ndarray, data_type: str) -> np.ndarray:
    """Stored elements of `data_type` as float64 values (a new array)."""
    if data_type == DataType.BF16:
        return _bf16_to_float32(values).astype(np.float64)
    return np.asarray(values).astype(np.float64)


def from_float64(values: np.ndarray, data_type: str) -> np.ndarray:
    """float64 values rounded once (nearest even) to the storage of `data_type`."""
    if data_type == DataType.BF16:
        return _float64_to_bf16(values)
    with np.errstate(over="ignore", invalid="ignore"):  # out of range: infinity; NaN stays
        return np.asarray(values, dtype=np.float64).astype(STORAGE_DTYPE[data_type])


def _to_compare(values: np.ndarray, data_type: str) -> np.ndarray:
    """Stored elements as values that compare like the data type (for relu)."""
    return _bf16_to_float32(values) if data_type == DataType.BF16 else values


# --------------------------------------------------------------------------
# Memory: raw bytes of each tensor, element loads and stores at byte addresses
# --------------------------------------------------------------------------


class _Memory:
    def __init__(self, arrays: Sequence[np.ndarray]):
        self.bytes = [arr.reshape(-1).view(np.uint8) for arr in arrays]
        self._typed: dict[tuple[int, str], np.ndarray] = {}

    def typed(self, tensor: int, dtype: np.dtype[Any]) -> np.ndarray:
        """The tensor's bytes as elements of `dtype` starting at byte 0."""
        key = (tensor, dtype.str)
        view = self._typed.get(key)
        if view is None:
            raw = self.bytes[tensor]
            usable = raw.size - raw.size % dtype.itemsize
            view = raw[:usable].view(dtype)
            self._typed[key] = view
        return view

    def load(self, tensor: int, addrs: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
        """Elements at byte addresses `addrs` (all congruent modulo the width)."""
        width = dtype.itemsize
        if addrs.size == 0:
            return np.empty(0, dtype)
        if int(addrs[0]) % width == 0:
            return self.typed(tensor, dtype)[addrs // width]
        index = addrs[:, None] + np.arange(width)
        return self.bytes[tensor][index].view(dtype).reshape(addrs.size)

    def store(
        self, tensor: int, addrs: np.ndarray, values: np.ndarray, dtype: np.dtype[Any]
    ) -> None:
        """Write `values` at byte addresses `addrs` (no address repeats)."""
        width = dtype.itemsize
        if addrs.size == 0:
            return
        values = np.asarray(values, dtype=dtype)
        if int(addrs[0]) % width == 0:
            self.typed(tensor, dtype)[addrs // width] = values
            return
        index = addrs[:, None] + np.arange(width)
        self.bytes[tensor][index] = np.ascontiguousarray(values).view(np.uint8).reshape(
            addrs.size, width
        )


# --------------------------------------------------------------------------
# Compiled primitives
# --------------------------------------------------------------------------


def _role_addresses(axes: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Relative byte addresses of the loop nest over (extent, stride, offset) axes.

    Flattened in loop order: the first axis is the outermost loop.
    """
    rel = np.zeros(1, dtype=np.int64)
    for extent, stride, offset in axes:
        step = offset + stride * np.arange(extent, dtype=np.int64)
        rel = (rel[:, None] + step[None, :]).reshape(-1)
    return rel


@dataclass
class _Prim:
    primitive_id: str
    kind: str
    data_type: str
    dtype: np.dtype[Any]
    tensors: int  # tensor count of the configuration
    count: int  # elements of the loop nest
    rel: dict[int, np.ndarray]  # tensor index -> relative byte addresses, loop order
    out_unique: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    out_last: np.ndarray | None = None  # loop position of each unique address's last use
    out_inverse: np.ndarray | None = None  # loop position -> unique address index
    scalar: bool = False  # one element, native float type: Python scalar fast path
    # 16-bit Contraction whose elements are stored more than once (an M/N axis of
    # stride 0 on out): (start, stop) of each run of loop positions on one element
    out_runs: list[tuple[int, int]] | None = None

    @property
    def out(self) -> int:
        return self.tensors - 1

    @property
    def unary(self) -> bool:
        return self.tensors == 2


def _compile_primitive(prim: PrimitiveOp, config: ConfigOp) -> _Prim:
    kind = prim.kind
    names = config.tensor_names
    role_axes = list(prim.all_role_axes)
    rel: dict[int, np.ndarray] = {}
    for tensor in prim.accessed_tensors:
        j = names.index(tensor)
        rel[j] = _role_addresses(
            [(a.size, a.stride_values[j], a.offset_values[j]) for a in role_axes]
        )
    count = int(np.prod([a.size for a in role_axes], dtype=np.int64))
    data_type = prim.data_type
    compiled = _Prim(
        primitive_id=prim.primitive_id,
        kind=kind,
        data_type=data_type,
        dtype=STORAGE_DTYPE[data_type],
        tensors=len(names),
        count=count,
        rel=rel,
    )
    out_rel = rel[compiled.out]
    unique, first_of_reversed, inverse = np.unique(
        out_rel[::-1], return_index=True, return_inverse=True
    )
    if unique.size == out_rel.size:
        compiled.out_unique = out_rel  # no repeats: keep loop order
    else:
        compiled.out_unique = unique
        compiled.out_last = out_rel.size - 1 - first_of_reversed
        compiled.out_inverse = inverse.reshape(-1)[::-1].copy()
    if kind == OperationKind.CONTRACTION and data_type.rounds_stores and out_rel.size:
        # a store ends each M/N tuple's K loop (loop order M..., N..., K...) and
        # each stretch of positions on one element
        k_count = int(np.prod([a.size for a in prim.role_axes(Role.K)], dtype=np.int64))
        cuts = np.union1d(np.flatnonzero(out_rel[1:] != out_rel[:-1]) + 1,
                          np.arange(k_count, out_rel.size, k_count))
        if cuts.size + 1 > unique.size:  # some element is stored more than once
            bounds = [0, *cuts.tolist(), int(out_rel.size)]
            compiled.out_runs = list(pairwise(bounds))
    # Python floats compute in float64: right for FP32/FP64 Contractions, and for
    # element-wise primitives of every type but BF16 (stored as bit patterns)
    compiled.scalar = count == 1 and (
        data_type in (DataType.FP32, DataType.FP64)
        or (kind != OperationKind.CONTRACTION and data_type != DataType.BF16)
    )
    return compiled


def _relu_stored(values: np.ndarray, data_type: str, dtype: np.dtype[Any]) -> np.ndarray:
    negative = _to_compare(values, data_type) < 0
    return np.where(negative, dtype.type(0), values).astype(dtype)


def _execute_vector(p: _Prim, mem: _Memory, tiles: Sequence[int]) -> None:
    out = p.out
    dtype = p.dtype
    out_addrs = p.out_unique + tiles[out]
    if p.kind == OperationKind.ZERO:
        mem.store(out, out_addrs, np.zeros(out_addrs.size, dtype), dtype)
    elif p.kind == OperationKind.COPY or (p.kind == OperationKind.RELU and p.unary):
        src = p.rel[0] if p.out_last is None else p.rel[0][p.out_last]
        values = mem.load(0, src + tiles[0], dtype)
        if p.kind == OperationKind.RELU:
            values = _relu_stored(values, p.data_type, dtype)
        mem.store(out, out_addrs, values, dtype)
    elif p.kind == OperationKind.RELU:  # in place on out; relu is idempotent, repeats are harmless
        values = mem.load(out, out_addrs, dtype)
        mem.store(out, out_addrs, _relu_stored(values, p.data_type, dtype), dtype)
    elif p.kind == OperationKind.CONTRACTION:
        if p.out_runs is not None:
            _execute_runs(p, mem, tiles)
            return
        a = _contraction_operand(mem.load(0, p.rel[0] + tiles[0], dtype), p.data_type)
        b = _contraction_operand(mem.load(1, p.rel[1] + tiles[1], dtype), p.data_type)
        accumulator = _ACCUMULATOR[p.data_type]
        acc = to_float64(mem.load(out, out_addrs, dtype), p.data_type).astype(accumulator)
        with np.errstate(over="ignore", invalid="ignore"):
            products = a.astype(np.float64) * b  # exact for the 16-bit formats and TF32
            if p.out_inverse is None:
                acc = (acc + products).astype(accumulator)
            else:  # one element after another in loop order, each sum rounded to acc's type
                np.add.at(acc, p.out_inverse, products)
        mem.store(out, out_addrs, from_float64(acc, p.data_type), dtype)
    else:  # pragma: no cover - the verifier rejects other operations
        raise TeirError(f"primitive '{p.primitive_id}' has unknown operation {p.kind}")


def _execute_scalar(p: _Prim, mem: _Memory, tiles: Sequence[int]) -> None:
    """One element of a native float type: Python scalars (same results, faster)."""
    width = p.dtype.itemsize
    out = p.out
    o = int(p.out_unique[0]) + tiles[out]
    if o % width:
        _execute_vector(p, mem, tiles)
        return
    out_view = mem.typed(out, p.dtype)
    o //= width
    if p.kind == OperationKind.ZERO:
        out_view[o] = 0
        return
    if p.kind == OperationKind.RELU and not p.unary:
        value = out_view[o]
        if value < 0:
            out_view[o] = 0
        return
    i = int(p.rel[0][0]) + tiles[0]
    if i % width:
        _execute_vector(p, mem, tiles)
        return
    in0 = mem.typed(0, p.dtype)[i // width]
    if p.kind == OperationKind.COPY:
        out_view[o] = in0
    elif p.kind == OperationKind.RELU:
        out_view[o] = p.dtype.type(0) if in0 < 0 else in0
    else:  # Contraction
        k = int(p.rel[1][0]) + tiles[1]
        if k % width:
            _execute_vector(p, mem, tiles)
            return
        in1 = mem.typed(1, p.dtype)[k // width]
        out_view[o] = float(out_view[o]) + float(in0) * float(in1)


def _execute_runs(p: _Prim, mem: _Memory, tiles: Sequence[int]) -> None:
    """A 16-bit Contraction that stores some elements more than once: each run of
    loop positions on one element loads it, accumulates in float32 in loop order
    and stores it rounded, as the loop nest does; one sum over all of an
    element's positions would round once where the loop nest rounds per store."""
    dtype = p.dtype
    out = p.out
    a = _contraction_operand(mem.load(0, p.rel[0] + tiles[0], dtype), p.data_type)
    b = _contraction_operand(mem.load(1, p.rel[1] + tiles[1], dtype), p.data_type)
    with np.errstate(over="ignore", invalid="ignore"):
        products = (a.astype(np.float64) * b).astype(np.float32)  # exact: 16-bit inputs
        for start, stop in p.out_runs or ():
            target = np.array([int(p.rel[out][start]) + tiles[out]], dtype=np.int64)
            current = to_float64(mem.load(out, target, dtype), p.data_type).astype(np.float32)
            total = np.cumsum(np.concatenate([current, products[start:stop]]),
                              dtype=np.float32)[-1:]
            mem.store(out, target, from_float64(total.astype(np.float64), p.data_type), dtype)


def _execute_elementwise(p: _Prim, mem: _Memory, tiles: Sequence[int]) -> None:
    """The literal sequential loop nest: one element at a time, read right before use."""
    dtype = p.dtype
    out = p.out
    rel_out = p.rel[out]

    def at(tensor: int, position: int) -> np.ndarray:
        return np.array([int(p.rel[tensor][position]) + tiles[tensor]], dtype=np.int64)

    for pos in range(p.count):
        target = np.array([int(rel_out[pos]) + tiles[out]], dtype=np.int64)
        if p.kind == OperationKind.ZERO:
            mem.store(out, target, np.zeros(1, dtype), dtype)
        elif p.kind == OperationKind.COPY:
            mem.store(out, target, mem.load(0, at(0, pos), dtype), dtype)
        elif p.kind == OperationKind.RELU:
            source = at(0, pos) if p.unary else target
            tensor = 0 if p.unary else out
            value = mem.load(tensor, source, dtype)
            mem.store(out, target, _relu_stored(value, p.data_type, dtype), dtype)
        else:  # Contraction, rounded to the element type after every update
            a = _contraction_operand(mem.load(0, at(0, pos), dtype), p.data_type)
            b = _contraction_operand(mem.load(1, at(1, pos), dtype), p.data_type)
            c = to_float64(mem.load(out, target, dtype), p.data_type)
            with np.errstate(over="ignore", invalid="ignore"):
                total = (c + a.astype(np.float64) * b).astype(_ACCUMULATOR[p.data_type])
            mem.store(out, target, from_float64(total, p.data_type), dtype)


# --------------------------------------------------------------------------
# Compiled schedule
# --------------------------------------------------------------------------

Guard = tuple[tuple[str, int], ...]
"""(axis id, required index) per term: first(x) -> 0, last(x) -> |x| - 1."""


@dataclass
class _Invoke:
    node_id: str
    guard: Guard
    prim: _Prim


@dataclass
class _Iter:
    node_id: str
    axis: str
    extent: int
    offsets: tuple[int, ...]
    strides: tuple[int, ...]
    parallel: bool
    guard: Guard
    children: list[_Iter | _Invoke]


def _compile_guard(node: ScheduleNode, config: ConfigOp) -> Guard:
    if node.guard is None:
        return ()
    terms: list[tuple[str, int]] = []
    for term in node.guard.terms:
        axis = config.axis(term.axis_text)
        terms.append((axis.axis_id, 0 if term.kind.data == GuardKind.FIRST else axis.size - 1))
    return tuple(terms)


def _compile_node(
    node: ScheduleNode, config: ConfigOp, prims: dict[str, _Prim]
) -> _Iter | _Invoke:
    guard = _compile_guard(node, config)
    if isinstance(node, InvokeOp):
        prim_id = node.primitive_id
        if prim_id not in prims:
            prims[prim_id] = _compile_primitive(node.primitive_op(), config)
        return _Invoke(node.node_id, guard, prims[prim_id])
    assert isinstance(node, IterOp)
    axis = node.axis_op()
    return _Iter(
        node_id=node.node_id,
        axis=axis.axis_id,
        extent=axis.size,
        offsets=axis.offset_values,
        strides=axis.stride_values,
        parallel=node.parallel,
        guard=guard,
        children=[_compile_node(child, config, prims) for child in node.children],
    )


class _Runner:
    def __init__(self, mem: _Memory, vectorize: bool, reverse_parallel: bool):
        self.mem = mem
        self.index: dict[str, int] = {}
        self.reverse_parallel = reverse_parallel
        self.vectorize = vectorize

    def run(self, nodes: Sequence[_Iter | _Invoke], tiles: tuple[int, ...]) -> None:
        index = self.index
        for node in nodes:
            if node.guard and any(index[axis] != want for axis, want in node.guard):
                continue
            if isinstance(node, _Invoke):
                prim = node.prim
                if not self.vectorize:
                    _execute_elementwise(prim, self.mem, tiles)
                elif prim.scalar:
                    _execute_scalar(prim, self.mem, tiles)
                else:
                    _execute_vector(prim, self.mem, tiles)
                continue
            steps = range(node.extent)
            if node.parallel and self.reverse_parallel:
                steps = reversed(steps)
            base = tuple(t + o for t, o in zip(tiles, node.offsets))
            strides = node.strides
            for i in steps:
                index[node.axis] = i
                self.run(node.children, tuple(b + s * i for b, s in zip(base, strides)))
            del index[node.axis]


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def load_config(config: object) -> ConfigOp:
    """The verified ConfigOp of a ConfigOp, of an op holding exactly one, or of what
    `records.load_module` loads (a record dict, JSON text, a .json/.mlir path)."""
    ir = config if isinstance(config, Operation) else load_module(config)
    configs = find_configs(ir)
    if len(configs) != 1:
        raise TeirError(f"run_reference expects exactly one teir.config, found {len(configs)}")
    if ir is config:  # load_module verified the others
        try:
            configs[0].verify()
        except VerifyException as err:
            raise TeirError(str(err)) from None
    return configs[0]


def _data_range(arr: np.ndarray) -> tuple[int, int]:
    start = int(arr.__array_interface__["data"][0])
    return start, start + arr.nbytes


def _check_arrays(config: ConfigOp, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The arrays as plain ndarrays; any plain numeric dtype: the interpreter reads
    each array's bytes as the primitives' data type (teir_dialect.arrays)."""
    return check_arrays("run_reference", tensor_specs(config), arrays)


def _output_overlaps_an_input(arrays: Sequence[np.ndarray]) -> bool:
    """Whether out shares memory with an input (inputs are only read)."""
    if not arrays[-1].nbytes:
        return False
    out_start, out_stop = _data_range(arrays[-1])
    return any(
        start < out_stop and out_start < stop
        for start, stop in (_data_range(arr) for arr in arrays[:-1] if arr.nbytes)
    )


def run_reference(
    config: object,
    arrays: Sequence[np.ndarray],
    *,
    parallel_order: str = "forward",
    vectorize: bool = True,
) -> None:
    """Execute `config` in place on `arrays` (in0, [in1,] out), as the spec defines.

    `config` is a ConfigOp, an op (e.g. a module) holding exactly one, or anything
    `from_json` accepts. Each array is addressed by its raw bytes from its start
    and must be C-contiguous and cover the configuration's footprint; a
    ValueError naming the tensor is raised otherwise (TeirError, also a
    ValueError, for an ill-formed configuration).

    `parallel_order="reverse"` runs parallel iteration nodes in decreasing index
    order (a well-formed configuration gives the same result). `vectorize=False`
    runs every primitive element by element (also chosen automatically when
    out overlaps an input array in memory).
    """
    if parallel_order not in ("forward", "reverse"):
        raise ValueError(
            "run_reference: parallel_order is 'forward' or 'reverse', "
            f"got {parallel_order!r}"
        )
    op = load_config(config)
    arrays = _check_arrays(op, list(arrays))
    prims: dict[str, _Prim] = {}
    roots = [_compile_node(root, op, prims) for root in op.schedule.roots]
    mem = _Memory(arrays)
    vectorize = vectorize and not _output_overlaps_an_input(arrays)
    _Runner(mem, vectorize, parallel_order == "reverse").run(roots, (0,) * len(arrays))


def reference_outputs(
    config: object, arrays: Sequence[np.ndarray], **options: Any
) -> list[np.ndarray]:
    """Run on C-contiguous copies of `arrays` and return them (in0, [in1,] out).

    The arrays passed are left unchanged; options go to `run_reference`.
    """
    copies = [np.array(arr, copy=True, order="C") for arr in arrays]
    run_reference(config, copies, **options)
    return copies
