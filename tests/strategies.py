"""Hypothesis strategies: random well-formed TEIR configurations and their buffers.

`configs()` draws tree-form records (records.md) that pass `from_json`:

* 2 or 3 tensors, one data type per configuration (FP32 or FP64 by default);
* 1-6 axes with extents 1-5; byte strides are multiples of the element width,
  zeros included (each tensor either gets a dense layout over a random subset
  and order of the axes, possibly padded, or arbitrary multiples); offsets are
  non-negative multiples of the width;
* a schedule forest of 1-3 roots; iteration nodes may have several children
  (sibling branches) and guards; invocation leaves carry guards drawn from their
  ancestor axes (first, last, or both);
* every primitive kind the tensor count allows (2 tensors: Zero, Copy, ReLU;
  3 tensors: Zero, ReLU in place, Contraction), with role lists (possibly
  empty) drawn from the axes not iterated on the invocation's path; primitives
  are sometimes shared by several invocations, sometimes unused;
* `parallel` only where it is race-free: for an iteration node over axis a with
  extent > 1, the stride of a on out must be at least the byte span its
  subtree writes to out in one iteration (offsets included: from the lowest to
  the end of the highest byte any invocation below may write). Every primitive
  writes out, and the only reads of out (ReLU in place, Contraction) are of
  the elements the same invocation writes, so iterations of such a node commute;
* total scalar work (element operations, ignoring guards) at most `max_work`.

`random_arrays(record, rng)` gives C-contiguous buffers sized from the footprint.

`mutated(record)` draws variants of a given record (the spec's examples, say)
with other extents, strides and offsets, which the generator above rarely
makes: out tiles that overlap across the iterations of a sequential loop.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from teir_dialect import from_json
from teir_dialect.analysis import footprint
from teir_dialect.interpreter import STORAGE_DTYPE, from_float64
from teir_dialect.records import find_configs
from teir_dialect.vocabulary import DataType

KINDS = {2: ("Zero", "Copy", "ReLU"), 3: ("Zero", "ReLU", "Contraction")}


@dataclass(frozen=True)
class GeneratedConfig:
    """A drawn configuration: its tree-form record and what its buffers need."""

    record: dict[str, Any]
    data_type: str
    dtype: np.dtype[Any]
    ranges: tuple[tuple[int, int] | None, ...]  # footprint [start, stop) per tensor
    work: int  # element operations, guards ignored

    @property
    def nbytes(self) -> tuple[int, ...]:
        """Bytes each tensor needs (0 for a tensor the configuration never touches)."""
        return tuple(0 if r is None else r[1] for r in self.ranges)


def footprint_ranges(record: dict[str, Any]) -> tuple[tuple[int, int] | None, ...]:
    """[start, stop) bytes per tensor (None: untouched), after `from_json`."""
    config = find_configs(from_json(record))[0]
    touched = footprint(config)
    return tuple(
        None if touched[name] is None else (touched[name].start, touched[name].stop)
        for name in config.tensor_names
    )


def record_data_type(record: dict[str, Any]) -> str:
    types = {p["metadata"]["data_type"] for p in record["primitives"]}
    if len(types) != 1:
        raise ValueError(f"expected one data type in the record, got {sorted(types)}")
    return types.pop()


def random_arrays(
    record: dict[str, Any],
    rng: np.random.Generator,
    *,
    slack: int = 4,
    fill: float | None = None,
) -> list[np.ndarray]:
    """Buffers for `record`: its data type, random normal values, `slack` spare elements.

    Each array covers the tensor's footprint plus `slack` elements. With `fill`,
    everything outside the footprint holds `fill` (a sentinel) instead.
    """
    data_type = record_data_type(record)
    dtype = STORAGE_DTYPE[data_type]
    width = dtype.itemsize
    arrays: list[np.ndarray] = []
    for touched in footprint_ranges(record):
        start, stop = touched if touched is not None else (0, 0)
        size = -(-stop // width) + slack
        values = rng.standard_normal(size)
        if fill is not None:
            inside = np.zeros(size, dtype=bool)
            inside[start // width : -(-stop // width)] = True
            values = np.where(inside, values, fill)
        arrays.append(np.ascontiguousarray(from_float64(values, data_type)))
    return arrays


def _guard(draw: st.DrawFn, path: list[str]) -> list[str] | None:
    """None, or first/last terms over up to two axes of `path`."""
    if not path or draw(st.integers(0, 2)) > 0:  # a guard one time in three
        return None
    axes = draw(st.lists(st.sampled_from(path), min_size=1, max_size=2, unique=True))
    terms: list[str] = []
    for axis in axes:
        kinds = draw(st.sampled_from([("first",), ("last",)] * 2 + [("first", "last")]))
        terms += [f"{kind}({axis})" for kind in kinds]
    return terms


def _strides(draw: st.DrawFn, extents: list[int], width: int) -> list[int]:
    """One tensor's byte strides over all axes."""
    count = len(extents)
    if draw(st.booleans()):
        return [width * draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8])) for _ in extents]
    # Dense layout over a random subset of the axes in random order, maybe padded.
    order = draw(st.permutations(range(count)))
    used = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    strides = [0] * count
    step = width
    for axis in reversed(order):  # the last axis of `order` is innermost
        if used[axis]:
            strides[axis] = step
            step *= extents[axis] + draw(st.sampled_from([0, 0, 0, 1]))
    return strides


@st.composite
def configs(
    draw: st.DrawFn,
    *,
    data_types: tuple[str, ...] = ("FP32", "FP64"),
    max_work: int = 20_000,
    max_nodes: int = 12,
) -> GeneratedConfig:
    """A random well-formed tree-form configuration (see the module docstring)."""
    tensors = draw(st.sampled_from([2, 3]))
    names = ["in0", "out"] if tensors == 2 else ["in0", "in1", "out"]
    data_type = draw(st.sampled_from(data_types))
    width = DataType(data_type).width

    axis_count = draw(st.integers(1, 6))
    axis_ids = [f"a{i}" for i in range(axis_count)]
    extents = [draw(st.integers(1, 5)) for _ in axis_ids]
    per_tensor = [_strides(draw, extents, width) for _ in names]
    offsets = [
        [width * draw(st.sampled_from([0, 0, 0, 1, 2])) for _ in names] for _ in axis_ids
    ]
    axes = [
        {
            "id": axis_ids[i],
            "extent": extents[i],
            "strides": [per_tensor[j][i] for j in range(tensors)],
            "offsets": offsets[i],
        }
        for i in range(axis_count)
    ]
    extent_of = dict(zip(axis_ids, extents))

    primitives: list[dict[str, Any]] = []
    iterations: dict[str, dict[str, Any]] = {}
    invocations: dict[str, dict[str, Any]] = {}
    children_of: dict[str, list[str]] = {}
    nodes_left = [draw(st.integers(1, max_nodes))]

    def new_primitive(path: list[str]) -> dict[str, Any]:
        free = [a for a in axis_ids if a not in path]
        kind = draw(st.sampled_from(KINDS[tensors]))
        chosen = draw(st.permutations(free))[: draw(st.integers(0, len(free)))]
        roles = ("M", "N", "K") if kind == "Contraction" else ("M", "N")
        cuts = sorted(draw(st.integers(0, len(chosen))) for _ in roles[1:])
        bounds = [0, *cuts, len(chosen)]
        prim = {
            "id": f"p{len(primitives)}",
            "operation": kind,
            "axes": {
                role: list(chosen[lo:hi])
                for role, lo, hi in zip(roles, bounds, bounds[1:])
            },
            "metadata": {"data_type": data_type},
        }
        primitives.append(prim)
        return prim

    def build(path: list[str]) -> str:
        nodes_left[0] -= 1
        free = [a for a in axis_ids if a not in path]
        if free and nodes_left[0] > 0 and draw(st.integers(0, 2)) > 0:
            node_id = f"i{len(iterations)}"
            axis = draw(st.sampled_from(free))
            iterations[node_id] = {
                "id": node_id,
                "axis": axis,
                "policy": "sequential",
                "children": [],
                "guard": _guard(draw, path),
            }
            count = draw(st.integers(1, 3)) if nodes_left[0] > 1 else 1
            children_of[node_id] = [build([*path, axis]) for _ in range(count)]
            iterations[node_id]["children"] = children_of[node_id]
            return node_id
        node_id = f"v{len(invocations)}"
        shareable = [
            p
            for p in primitives
            if not any(a in path for role in p["axes"].values() for a in role)
        ]
        if shareable and draw(st.integers(0, 3)) == 0:
            prim = draw(st.sampled_from(shareable))
        else:
            prim = new_primitive(path)
        invocations[node_id] = {
            "id": node_id,
            "primitive": prim["id"],
            "guard": _guard(draw, path),
        }
        return node_id

    roots = [build([]) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.integers(0, 5)) == 0:
        new_primitive([])  # defined, never invoked

    prim_by_id = {p["id"]: p for p in primitives}
    axis_by_id = {a["id"]: a for a in axes}
    out = tensors - 1

    def role_axes(prim: dict[str, Any]) -> list[str]:
        return [a for role in prim["axes"].values() for a in role]

    # Work: each invocation runs (product of ancestor extents) times.
    work = 0

    def count_work(node_id: str, runs: int) -> None:
        nonlocal work
        if node_id in invocations:
            prim = prim_by_id[invocations[node_id]["primitive"]]
            work += runs * int(np.prod([extent_of[a] for a in role_axes(prim)]))
            return
        runs *= extent_of[iterations[node_id]["axis"]]
        for child in children_of[node_id]:
            count_work(child, runs)

    for root in roots:
        count_work(root, 1)
    assume(work <= max_work)

    # Bytes of out one node may write, relative to its tile address: [low, high).
    def written(node_id: str) -> tuple[int, int]:
        if node_id in invocations:
            prim = prim_by_id[invocations[node_id]["primitive"]]
            low = high = 0
            for a in role_axes(prim):
                axis = axis_by_id[a]
                low += axis["offsets"][out]
                high += axis["offsets"][out] + axis["strides"][out] * (axis["extent"] - 1)
            return low, high + width
        spans = [written(child) for child in children_of[node_id]]
        low, high = min(s[0] for s in spans), max(s[1] for s in spans)
        node = iterations[node_id]
        axis = axis_by_id[node["axis"]]
        race_free = axis["extent"] == 1 or axis["strides"][out] >= high - low
        if race_free and draw(st.booleans()):
            node["policy"] = "parallel"
        offset = axis["offsets"][out]
        return low + offset, high + offset + axis["strides"][out] * (axis["extent"] - 1)

    for root in roots:
        written(root)

    record = {
        "tensors": names,
        "axes": axes,
        "primitives": primitives,
        "schedule": {
            "roots": roots,
            "iterations": list(iterations.values()),
            "invocations": list(invocations.values()),
        },
    }
    return GeneratedConfig(
        record=record,
        data_type=data_type,
        dtype=STORAGE_DTYPE[data_type],
        ranges=footprint_ranges(record),
        work=work,
    )


def as_fp64(record: dict[str, Any]) -> dict[str, Any]:
    """`record` (tree form) in FP64: byte strides and offsets scaled to 8-byte elements."""
    width = DataType(record_data_type(record)).width
    result = copy.deepcopy(record)
    for axis in result["axes"]:
        axis["strides"] = [s * 8 // width for s in axis["strides"]]
        axis["offsets"] = [o * 8 // width for o in axis["offsets"]]
    for prim in result["primitives"]:
        prim["metadata"]["data_type"] = "FP64"
    return result


@st.composite
def mutated(draw: st.DrawFn, record: dict[str, Any], *, max_extent: int = 7,
            max_work: int = 20_000) -> dict[str, Any]:
    """`record` (tree form, FP64) with random extents, strides and offsets: tiles that
    overlap across iterations, axes that stop moving, shifted windows. Only records
    that still verify are drawn (a mutation that makes a parallel loop race, say, is
    rejected), and the work stays within `max_work` element operations."""
    from teir_dialect import TeirError

    result = copy.deepcopy(record)
    width = DataType(record_data_type(result)).width
    axes = result["axes"]
    for axis in axes:
        if draw(st.booleans()):
            axis["extent"] = draw(st.integers(1, max_extent))
        for t in range(len(axis["strides"])):
            choice = draw(st.integers(0, 5))
            if choice == 1:
                axis["strides"][t] = 0
            elif choice == 2:
                axis["strides"][t] += width * draw(st.integers(1, 3))
            elif choice == 3:
                axis["strides"][t] = max(0, axis["strides"][t] - width * draw(st.integers(1, 3)))
            elif choice == 4:
                other = draw(st.sampled_from(axes))
                axis["strides"][t] = other["strides"][t]
            if draw(st.integers(0, 4)) == 0:
                axis["offsets"][t] += width * draw(st.integers(1, 3))
    if draw(st.integers(0, 3)) == 0:
        for node in result["schedule"]["iterations"]:
            node["policy"] = "sequential"
    size = int(np.prod([a["extent"] for a in axes]))
    assume(size <= max_work)
    try:
        footprint_ranges(result)
    except TeirError:
        assume(False)
    return result


def nested_pairs(record: dict) -> list[tuple[str, str]]:
    """(axis of a node, axis of its only child) for iteration nodes with one iteration child."""
    nodes = {n["id"]: n for n in record["schedule"]["iterations"]}
    return [
        (node["axis"], nodes[node["children"][0]]["axis"])
        for node in nodes.values()
        if len(node["children"]) == 1 and node["children"][0] in nodes
    ]


def step_strategy(record: dict) -> st.SearchStrategy[dict]:
    """A random transformation step naming this record's axes and nested loops."""
    axes = [a["id"] for a in record["axes"]]
    extents = {a["id"]: a["extent"] for a in record["axes"]}
    axis = st.sampled_from(axes)
    pairs = nested_pairs(record) or [(axes[0], axes[-1])]
    chains = [[a, b, c] for (a, b) in pairs for (b2, c) in pairs if b2 == b] + [
        list(p) for p in pairs]
    return st.one_of(
        axis.flatmap(lambda a: st.builds(
            lambda f: {"op": "split", "axis": a, "factor": f}, st.integers(1, extents[a]))),
        st.sampled_from(chains).flatmap(st.permutations).map(
            lambda order: {"op": "reorder", "order": list(order)}),
        st.sampled_from(pairs).map(lambda ab: {"op": "fuse-axes", "outer": ab[0], "inner": ab[1]}),
        axis.map(lambda a: {"op": "parallelize", "axis": a}),
        axis.map(lambda a: {"op": "sequentialize", "axis": a}),
        st.just({"op": "lift-elementwise"}),
        axis.map(lambda a: {"op": "widen-tile", "axis": a}),
        st.just({"op": "fold-guarded-reduction"}),
        st.sampled_from([{"op": "teir-lift-gemm"}, {"op": "teir-lift-brgemm"},
                         {"op": "teir-canonicalize-guards"}, {"op": "teir-auto-schedule"}]),
        st.sampled_from(chains).flatmap(lambda names: st.builds(
            lambda sizes: {"op": "tile", "axes": names[:2], "sizes": sizes},
            st.tuples(*(st.integers(1, extents[n]) for n in names[:2])).map(list))),
    )
