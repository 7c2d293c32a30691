"""Tree-form records with a plain schedule, built from an iteration space.

`build_record` is the one place that turns "these indices, these byte strides
and offsets per tensor, this operation" into a configuration; the einsum front
end (`einsum_config`) and the linalg importer (`convert-linalg-to-teir`) both
go through it. The schedule it writes is the plain one of §10.7.1 and §10.7.5:
one sequential iteration node per dimension, the free dimensions (those with
a stride on out) outermost in the order given, then the reduction dimensions;
scalar primitives (empty role lists); Zero under the free loops before the
reduction loops and ReLU after them, so no guard is needed. In FP16/BF16 the
reduction dimensions are instead the K role of the Contraction (one rounding
per out element and invocation, what the spec's Contraction means): as loops
of the schedule they would round every partial sum, and no pass may lift them
(that would change the results), so the kernel would stay scalar. The passes of
`teir-optimize` (lifting to GEMM/BRGEMM) and the schedule transformations turn
it into a fast one; this module only has to make it right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.ir import SSAValue

from teir_dialect.dialect import ConfigOp, fresh_id
from teir_dialect.records import TeirError, find_configs, from_json, tree_to_func
from teir_dialect.strided import Box, Undecided, tuples_overlap
from teir_dialect.vocabulary import (
    TENSOR_NAMES,
    DataType,
    OperationKind,
    Policy,
    parse_enum,
    spelled,
)

if TYPE_CHECKING:
    import numpy as np

JsonDict = dict[str, Any]

ZERO, COPY, RELU, CONTRACTION = (
    OperationKind.ZERO,
    OperationKind.COPY,
    OperationKind.RELU,
    OperationKind.CONTRACTION,
)

OPERATIONS: dict[tuple[OperationKind, ...], tuple[int, ...]] = {
    (COPY,): (2,),
    (RELU,): (2, 3),  # 2 tensors: out = relu(in0); 3: relu(out) in place
    (ZERO,): (2, 3),
    (CONTRACTION,): (3,),
    (ZERO, CONTRACTION): (3,),
    (CONTRACTION, RELU): (3,),
    (ZERO, CONTRACTION, RELU): (3,),
}
"""The operation sequences a plain schedule expresses, with their tensor counts."""

@dataclass(frozen=True)
class Dimension:
    """One index of the iteration space: its extent and, per tensor (in0, [in1,]
    out), the byte stride and byte offset it adds (stride 0: the tensor lacks it)."""

    name: str
    extent: int
    strides: Sequence[int]
    offsets: Sequence[int] | None = field(default=None)


def data_type_of(value: object) -> DataType:
    import numpy as np

    """A DataType from its spelling ("FP32", "TF32", ...) or a numpy float dtype."""
    if isinstance(value, str) and (found := parse_enum(DataType, value)) is not None:
        return found
    try:
        dtype = None if value is None else np.dtype(value)  # pyright: ignore
    except (TypeError, ValueError):
        dtype = None
    # BF16 by its usual dtype only: uint16 arrays hold its bits but say nothing of it
    for data_type in (DataType.FP16, DataType.BF16, DataType.FP32, DataType.FP64):
        if dtype is not None and dtype == data_type.numpy_dtypes[0]:
            return data_type
    raise TeirError(
        f"data type: {value!r} is not a TEIR data type; expected {spelled(DataType)} "
        "or a numpy float16/float32/float64 or ml_dtypes.bfloat16 dtype"
    )


def _is_int(value: object) -> bool:
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _int_list(where: str, values: Sequence[int], count: int) -> list[int]:
    values = list(values)
    if len(values) != count or not all(_is_int(v) for v in values):
        raise TeirError(f"{where} must be {count} integers (one per tensor), got {values!r}")
    return [int(v) for v in values]


def writes_each_once(axes: Sequence[tuple[int, int]], width: int) -> bool:
    """Whether (extent, byte stride) axes place distinct index tuples on disjoint
    `width`-byte elements (exactly: teir_dialect.strided's search)."""
    if any(extent > 1 and stride == 0 for extent, stride in axes):
        return False
    try:
        return not tuples_overlap([Box(0, (), width)], axes)
    except Undecided:
        return False


def _check_dimensions(dimensions: Sequence[Dimension], tensors: int) -> list[Dimension]:
    checked: list[Dimension] = []
    names: set[str] = set()
    for dim in dimensions:
        if not isinstance(dim, Dimension):
            raise TeirError(f"iteration space: expected a Dimension, got {dim!r}")
        where = f"dimension {dim.name!r}"
        if not isinstance(dim.name, str) or not dim.name:
            raise TeirError(f"iteration space: {where} needs a non-empty string name")
        if dim.name in names:
            raise TeirError(f"iteration space: dimension name {dim.name!r} is used twice")
        names.add(dim.name)
        if not _is_int(dim.extent) or dim.extent < 1:
            raise TeirError(
                f"axis rule: {where} has extent {dim.extent!r}; extents are positive "
                "integers (TEIR has no empty axes)"
            )
        strides = _int_list(f"strides of {where}", dim.strides, tensors)
        if any(s < 0 for s in strides):
            raise TeirError(
                f"axis rule: {where} has strides {strides}; TEIR strides are "
                "non-negative byte counts"
            )
        offsets = [0] * tensors if dim.offsets is None else _int_list(
            f"offsets of {where}", dim.offsets, tensors
        )
        checked.append(Dimension(dim.name, int(dim.extent), tuple(strides), tuple(offsets)))
    return checked


def _operations(operations: Sequence[OperationKind | str]) -> tuple[OperationKind, ...]:
    kinds = tuple(parse_enum(OperationKind, op) for op in operations)
    if None in kinds or kinds not in OPERATIONS:
        allowed = "; ".join(" + ".join(seq) for seq in OPERATIONS)
        raise TeirError(
            f"operation: {list(operations)!r} is not an operation a plain schedule "
            f"expresses; expected one of: {allowed}"
        )
    return kinds  # pyright: ignore[reportReturnType]


def build_record(
    dimensions: Sequence[Dimension],
    operations: Sequence[OperationKind | str],
    data_type: DataType | str,
    *,
    base_offsets: Sequence[int] | None = None,
) -> JsonDict:
    """The verified tree-form record of `operations` over the iteration space.

    `operations` is one of OPERATIONS' keys (Copy; ReLU; Zero; Contraction with
    Zero first and/or ReLU last). The tensor count comes from the strides (or
    `base_offsets`; without dimensions it is 3 for a Contraction, else 2).
    Dimensions of extent > 1 with stride 0 on out are reduced (Contraction
    only); the others are free and must reach each out element once. `base_offsets` (bytes, per
    tensor) and the dimensions' offsets add up to where each tensor starts; the
    record carries the total on the outermost dimension that encloses every
    access to the tensor (an extent-1 dimension `base` is added when none does).
    """
    data_type = data_type_of(data_type)
    kinds = _operations(operations)
    if dimensions:
        tensors = len(list(dimensions[0].strides))
    elif base_offsets is not None:
        tensors = len(list(base_offsets))
    else:
        tensors = 3 if CONTRACTION in kinds else 2
    if tensors not in OPERATIONS[kinds]:
        raise TeirError(
            f"operation constraint: {' + '.join(kinds)} takes "
            f"{' or '.join(map(str, OPERATIONS[kinds]))} tensors, got {tensors}"
        )
    dims = _check_dimensions(dimensions, tensors)
    base = [0] * tensors if base_offsets is None else _int_list(
        "base_offsets", base_offsets, tensors
    )
    out = tensors - 1

    # An extent-1 dimension takes index 0 only: free, whatever its strides.
    reduced = [d for d in dims if d.strides[out] == 0 and d.extent > 1 and CONTRACTION in kinds]
    free = [d for d in dims if d not in reduced]
    for dim in free:
        if dim.strides[out] == 0 and dim.extent > 1:
            raise TeirError(
                f"overlapping output: dimension {dim.name!r} (extent {dim.extent}) has "
                f"stride 0 on out, so {' + '.join(kinds)} would write each out element "
                f"{dim.extent} times"
            )
    if not writes_each_once([(d.extent, d.strides[out]) for d in free], data_type.width):
        raise TeirError(
            "overlapping output: the free dimensions "
            f"{', '.join(repr(d.name) for d in free)} reach some out element twice "
            f"(extents {[d.extent for d in free]}, out strides "
            f"{[d.strides[out] for d in free]} bytes, {data_type.width}-byte elements)"
        )

    totals = [b + sum(d.offsets[t] for d in dims) for t, b in enumerate(base)]  # pyright: ignore
    names = {d.name for d in dims}
    k_role = bool(reduced) and data_type.rounds_stores
    if k_role:
        reduced = _fused_contiguous(reduced, names)
    order = free + reduced
    names |= {d.name for d in order}
    # Zero and ReLU sit outside the reduction loops: only a free outermost
    # dimension (or a lone Contraction) encloses every invocation.
    if any(totals) and not (order and (free or kinds == (CONTRACTION,))):
        order.insert(0, Dimension(fresh_id("base", names), 1, (0,) * tensors))
    axes = [
        {
            "id": d.name,
            "extent": d.extent,
            "strides": list(d.strides),
            "offsets": totals if i == 0 else [0] * tensors,
        }
        for i, d in enumerate(order)
    ]

    primitives: list[JsonDict] = []
    invocations: dict[OperationKind, JsonDict] = {}
    for kind in kinds:
        prim_id = f"{kind.lower()}_scalar"
        roles = {role: [] for role in kind.roles}
        primitives.append({
            "id": prim_id, "operation": str(kind), "axes": roles,
            "metadata": {"data_type": str(data_type)},
        })
        invocations[kind] = {
            "id": fresh_id(kind.lower(), names), "primitive": prim_id, "guard": None,
        }

    if k_role:
        contraction = primitives[kinds.index(CONTRACTION)]
        contraction["id"] = "contraction_k"
        contraction["axes"]["K"] = [d.name for d in reduced]
        invocations[CONTRACTION]["primitive"] = "contraction_k"
    loops = order[: len(order) - len(reduced)]
    schedule = _schedule(loops, [] if k_role else order[len(loops):], kinds, invocations)
    record = {
        "tensors": list(TENSOR_NAMES[tensors]),
        "axes": axes,
        "primitives": primitives,
        "schedule": schedule,
    }
    from_json(record)  # the builder's promise: exactly what from_json accepts
    return record


def _fused_contiguous(dims: list[Dimension], names: set[str]) -> list[Dimension]:
    """`dims` (outermost first) with each one that continues the next contiguously
    on every tensor (stride = extent x the next one's) fused with it: the K role
    of a 16-bit Contraction, which teir-fuse-axes (a pass over loops) does not
    see, walked in the same order by fewer, longer axes (`ijk->` summed
    as one K of 210,000 elements by the dot kernel, not three by the general
    one). Offsets are the record's totals, not the fused dimensions'."""
    fused: list[Dimension] = []
    for dim in dims:
        last = fused[-1] if fused else None
        if last is not None and all(
                a == dim.extent * b for a, b in zip(last.strides, dim.strides)):
            name = fresh_id(last.name + dim.name, names)
            names.add(name)
            fused[-1] = Dimension(name, last.extent * dim.extent, dim.strides)
        else:
            fused.append(dim)
    return fused


def _chain(dims: Sequence[Dimension], inner: list[Any], iterations: list[JsonDict]) -> list[Any]:
    """Nodes iterating `dims` outermost first around `inner`; returns the new roots."""
    children = inner
    chain: list[JsonDict] = []
    for dim in reversed(dims):
        chain.append({
            "id": dim.name, "axis": dim.name, "policy": str(Policy.SEQUENTIAL),
            "children": children, "guard": None,
        })
        children = [dim.name]
    iterations.extend(reversed(chain))  # depth-first order
    return children


def _schedule(
    outer: Sequence[Dimension],
    reduced: Sequence[Dimension],
    kinds: tuple[OperationKind, ...],
    invocations: dict[OperationKind, JsonDict],
) -> JsonDict:
    """Zero, the reduction chain around the Contraction, ReLU, under the outer chain."""
    outer_nodes: list[JsonDict] = []
    inner_nodes: list[JsonDict] = []
    body: list[Any] = []
    for kind in kinds:
        if kind is CONTRACTION:
            body += _chain(reduced, [invocations[kind]["id"]], inner_nodes)
        else:
            body.append(invocations[kind]["id"])
    roots = _chain(outer, body, outer_nodes)
    return {
        "roots": roots,
        "iterations": outer_nodes + inner_nodes,
        "invocations": list(invocations.values()),
    }


def build_config(record: JsonDict, tensors: Sequence[SSAValue]) -> ConfigOp:
    """A teir.config over `tensors` (memref values, in tensor order) holding the record."""
    config = find_configs(tree_to_func(record))[0]
    body = list(config.body.block.ops)
    for op in body:
        op.detach()
    return ConfigOp(tensors, body)


# --------------------------------------------------------------------------
# einsum
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Operand:
    """An einsum operand: shape, strides (bytes, or elements until the width is
    known) and the numpy dtype of an array (None for a described layout)."""

    where: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    in_bytes: bool
    dtype: np.dtype[Any] | None

    def byte_strides(self, width: int) -> tuple[int, ...]:
        return self.strides if self.in_bytes else tuple(s * width for s in self.strides)


def _int_tuple(value: object) -> tuple[int, ...] | None:
    if isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    return None


def _c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _operand(where: str, value: object) -> _Operand:
    import numpy as np

    if isinstance(value, np.ndarray):
        return _Operand(where, value.shape, value.strides, True, value.dtype)
    if (shape := _int_tuple(value)) is not None:
        return _Operand(where, shape, _c_strides(shape), False, None)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        shape, strides = _int_tuple(value[0]), _int_tuple(value[1])
        if shape is not None and strides is not None:
            if len(shape) != len(strides):
                raise TeirError(
                    f"einsum: {where} has shape {shape} but {len(strides)} strides"
                )
            return _Operand(where, shape, strides, False, None)
    raise TeirError(
        f"einsum: {where} must be a numpy array, a shape tuple, or (shape, element "
        f"strides), got {type(value).__name__} {value!r}"[:300]
    )


def _parse_subscripts(subscripts: object, count: int) -> tuple[list[str], str]:
    if not isinstance(subscripts, str):
        raise TeirError(f"einsum: subscripts must be a string, got {subscripts!r}")
    text = "".join(subscripts.split())
    if "..." in text or "." in text:
        raise TeirError(f"einsum: {subscripts!r} uses an ellipsis; name every index")
    if "->" not in text:
        raise TeirError(
            f"einsum: {subscripts!r} has no '->'; write the output indices explicitly "
            "(implicit output is not supported)"
        )
    left, _, output = text.partition("->")
    if "->" in output:
        raise TeirError(f"einsum: {subscripts!r} has more than one '->'")
    inputs = left.split(",")
    if len(inputs) > 2 or count > 2:
        raise TeirError(
            f"einsum: {subscripts!r} with {count} operand(s): TEIR takes one operand "
            "(a permutation) or two (a binary contraction), not more"
        )
    if count == 0:
        raise TeirError("einsum: no operands given")
    if len(inputs) != count:
        raise TeirError(
            f"einsum: {subscripts!r} names {len(inputs)} operand(s) but {count} were given"
        )
    for index, term in enumerate([*inputs, output]):
        for letter in term:
            if not (letter.isascii() and letter.isalpha()):
                raise TeirError(
                    f"einsum: {subscripts!r} has {letter!r}; indices are letters a-z, A-Z"
                )
        repeated = sorted({letter for letter in term if term.count(letter) > 1})
        if repeated:
            which = "the output" if index == len(inputs) else f"operand {index}"
            raise TeirError(
                f"einsum: index {repeated[0]!r} appears twice in {which} ({term!r}); "
                "diagonals and traces are not supported"
            )
    for letter in output:
        if not any(letter in term for term in inputs):
            raise TeirError(f"einsum: output index {letter!r} is in no input ({subscripts!r})")
    if count == 1 and (lost := [x for x in inputs[0] if x not in output]):
        raise TeirError(
            f"einsum: index {lost[0]!r} of the one operand is not in the output; one "
            "operand is a permutation (Copy), summing needs two operands"
        )
    return inputs, output


def _einsum_type(dtype: object, operands: Sequence[_Operand]) -> DataType:
    dtypes = {op.dtype for op in operands if op.dtype is not None}
    if dtype is not None:
        data_type = data_type_of(dtype)
        storage = data_type.numpy_dtypes
        for op in operands:
            if op.dtype is not None and op.dtype not in storage:
                raise TeirError(
                    f"einsum: {op.where} holds {op.dtype} but {data_type} is stored as "
                    + " or ".join(map(str, storage))
                )
        return data_type
    if len(dtypes) > 1:
        listing = ", ".join(f"{op.where} {op.dtype}" for op in operands if op.dtype)
        raise TeirError(f"einsum: the arrays disagree on the element type ({listing})")
    if not dtypes:
        return DataType.FP32
    return data_type_of(dtypes.pop())


def einsum_config(
    subscripts: str,
    *operands: object,
    out: object = None,
    dtype: object = None,
    relu: bool = False,
    bf16_products: str | None = None,
) -> JsonDict:
    """The tree-form record computing `np.einsum(subscripts, *operands)` into out.

    One operand with `->` is a permutation (Copy); two are a binary contraction
    (Zero first, then scalar multiply-accumulate; batch, free and contracted
    indices anywhere). `relu=True` applies ReLU last (relu(x) = x < 0 ? +0 : x).
    Each operand, and `out`, is a numpy array (its shape, byte strides and dtype;
    addresses count from the array's first element), a shape tuple
    (C-contiguous) or (shape, element strides); `out` defaults to a C-contiguous
    array of the output shape. `dtype` ("FP32", "TF32", "BF16", ...) overrides
    the arrays' type (float16/32/64 give FP16/FP32/FP64; FP32 without arrays).
    `bf16_products` goes into the Contraction's metadata (`ops.BF16_PRODUCTS`: the
    verifier takes it on a BF16 Contraction only).
    """
    inputs, output = _parse_subscripts(subscripts, len(operands))
    given = [_operand(f"operand {i}", value) for i, value in enumerate(operands)]
    extents: dict[str, int] = {}
    where_from: dict[str, str] = {}
    for term, op in zip(inputs, given):
        if len(op.shape) != len(term):
            raise TeirError(
                f"einsum: {op.where} has {len(op.shape)} dimensions {op.shape} but "
                f"subscripts {term!r} name {len(term)}"
            )
        for letter, extent in zip(term, op.shape):
            if extent == 0:
                raise TeirError(f"einsum: index {letter!r} of {op.where} has extent 0")
            known = extents.setdefault(letter, extent)
            where_from.setdefault(letter, op.where)
            if known != extent:
                kind = (
                    f"broadcasting (size 1 against {max(known, extent)}) is not supported"
                    if 1 in (known, extent)
                    else "they must agree"
                )
                raise TeirError(
                    f"einsum: index {letter!r} has extent {known} in "
                    f"{where_from[letter]} and {extent} in {op.where}; {kind}"
                )
    out_shape = tuple(extents[letter] for letter in output)
    result = _operand("out", out_shape if out is None else out)
    if result.shape != out_shape:
        raise TeirError(
            f"einsum: out has shape {result.shape}; {subscripts!r} gives {out_shape}"
        )
    data_type = _einsum_type(dtype, [*given, result])
    width = data_type.width
    terms = [*inputs, output]
    strides: list[dict[str, int]] = []
    for term, op in zip(terms, [*given, result]):
        byte_strides = op.byte_strides(width)
        for letter, stride in zip(term, byte_strides):
            if stride < 0 and extents[letter] > 1:
                raise TeirError(
                    f"einsum: {op.where} has a negative stride ({stride} bytes) along "
                    f"index {letter!r}, as numpy views like a[::-1] do; TEIR strides "
                    "are non-negative: pass a copy (np.ascontiguousarray)"
                )
        # An extent-1 index takes only index 0: its stride does not matter.
        strides.append({x: (s if extents[x] > 1 else 0) for x, s in zip(term, byte_strides)})
    for letter in output:
        if strides[-1][letter] == 0 and extents[letter] > 1:
            raise TeirError(
                f"einsum: overlapping output: out has stride 0 along output index "
                f"{letter!r} (extent {extents[letter]}), so its elements would be "
                "written more than once"
            )
    contracted = [x for term in inputs for x in term if x not in output]
    order = [*output, *dict.fromkeys(contracted)]
    dimensions = [
        Dimension(x, extents[x], tuple(s.get(x, 0) for s in strides)) for x in order
    ]
    if len(operands) == 1:
        kinds: list[OperationKind] = [RELU if relu else COPY]
    else:
        kinds = [ZERO, CONTRACTION, *([RELU] if relu else [])]
    record = build_record(dimensions, kinds, data_type)
    if bf16_products is not None:
        for prim in record["primitives"]:
            if prim["operation"] == str(CONTRACTION):
                prim["metadata"] = {**prim["metadata"], "bf16_products": bf16_products}
    return record


def with_unit_role(record: JsonDict, axis: str, role: str) -> JsonDict:
    """`record` with its extent-1 iteration of `axis` taken out of the schedule and
    `axis` put into `role` (M or N) of every primitive instead: the free index a
    GEMV lacks on one side (`ij,j->i` as `ij,jz->iz`), so that teir-lift-gemm
    finds the GEMM it is and the microkernel runs it. The same computation:
    the axis takes index 0 only, in the schedule or in a primitive."""
    axes = {a["id"]: a for a in record["axes"]}
    if axes.get(axis, {}).get("extent") != 1 or role not in ("M", "N"):
        raise TeirError(f"with_unit_role: {axis!r} must be an extent-1 axis and {role!r} "
                        "M or N")
    schedule = record["schedule"]
    nodes = [n for n in schedule["iterations"] if n["axis"] == axis]
    if len(nodes) != 1 or nodes[0]["guard"] is not None:
        raise TeirError(f"with_unit_role: {axis!r} must be iterated once, unguarded")
    (node,) = nodes

    def splice(children: list[str]) -> list[str]:
        return [c for child in children
                for c in (node["children"] if child == node["id"] else [child])]

    iterations = [{**n, "children": splice(n["children"])}
                  for n in schedule["iterations"] if n is not node]
    primitives = [{**p, "axes": {**p["axes"], role: [axis, *p["axes"][role]]}}
                  for p in record["primitives"]]
    result = {**record, "primitives": primitives, "schedule": {
        **schedule, "roots": splice(schedule["roots"]), "iterations": iterations,
    }}
    from_json(result)
    return result


def _nest_parts(record: JsonDict, order: Sequence[str], who: str
                ) -> tuple[dict[str, str], dict[str, JsonDict]]:
    """The Zero and Contraction ids and the axes of `record`, checked for a nest of
    one loop per axis in `order`."""
    kinds = {p["operation"]: p["id"] for p in record["primitives"]}
    axes = {a["id"]: a for a in record["axes"]}
    if set(kinds) != {"Zero", "Contraction"} or sorted(order) != sorted(axes):
        raise TeirError(
            f"{who}: needs a Zero and a Contraction and one loop per axis "
            f"({', '.join(axes)}), got {sorted(kinds)} and order {list(order)}"
        )
    return kinds, axes


def _loops(prefix: str, order: Sequence[str], body: list[str]) -> list[JsonDict]:
    """Sequential nodes `prefix_axis`, one per axis of `order` (outermost first),
    each the only child of the one before, the last holding `body`."""
    return [{"id": f"{prefix}_{axis}", "axis": axis, "policy": "sequential", "guard": None,
             "children": [f"{prefix}_{order[n + 1]}"] if n + 1 < len(order) else body}
            for n, axis in enumerate(order)]


def scalar_nest(record: JsonDict, order: str | Sequence[str]) -> JsonDict:
    """`record` (a binary contraction from `einsum_config`, without ReLU) with its
    schedule replaced by one loop per axis in `order`, outermost first, around the
    scalar Zero guarded by `first()` of every reduction axis and the scalar
    Contraction: the loop nest a user might write by hand, in any order."""
    kinds, axes = _nest_parts(record, order, "scalar_nest")
    reduced = [axis for axis in order if axes[axis]["strides"][-1] == 0]
    return {**record, "schedule": {
        "roots": [f"loop_{order[0]}"],
        "iterations": _loops("loop", order, ["zero", "mac"]),
        "invocations": [
            {"id": "zero", "primitive": kinds["Zero"],
             "guard": [f"first({axis})" for axis in reduced] or None},
            {"id": "mac", "primitive": kinds["Contraction"], "guard": None},
        ],
    }}


def zeroed_nest(record: JsonDict, order: Sequence[str]) -> JsonDict:
    """`record` (a binary contraction from `einsum_config`, without ReLU) with its
    schedule replaced by two loop nests: the scalar Zero under a loop per free
    axis, then the scalar Contraction under one loop per axis in `order`,
    outermost first. Unlike `scalar_nest` the Zero needs no `first()` guard, so
    the sums may run outside free loops, as written (guarded, the Zero would
    bring the sums back inside: teir-canonicalize-guards' rule 5)."""
    kinds, axes = _nest_parts(record, order, "zeroed_nest")
    free = [axis for axis in order if axes[axis]["strides"][-1] != 0]
    zero, mac = _loops("zero", free, ["zero"]), _loops("loop", order, ["mac"])
    return {**record, "schedule": {
        "roots": [zero[0]["id"] if zero else "zero", mac[0]["id"]],
        "iterations": zero + mac,
        "invocations": [
            {"id": "zero", "primitive": kinds["Zero"], "guard": None},
            {"id": "mac", "primitive": kinds["Contraction"], "guard": None},
        ],
    }}


def segmented_rows(record: JsonDict, batch: str, reduced: str, row: str) -> JsonDict:
    """`record` (a batched GEMV from `einsum_config`: out[b][i] = sum over j of
    A[b][i][j] x[b][j], any strides) as one loop over the rows `row` (i) around
    a Zero, the Contraction {M = [], N = [batch], K = [reduced]} and, when the
    record has one, a ReLU of the row: where A's (j, b) runs and x are contiguous
    (b at unit stride, j at |b| elements) teir-match-gemm makes that Contraction
    a segmented dot (`teir_dialect.gemm`)."""
    return _batched_gemv(record, batch, reduced, row, "segmented_rows", loop=True)


def periodic_product(record: JsonDict, batch: str, reduced: str, row: str) -> JsonDict:
    """`record` (a batched GEMV from `einsum_config`, as for `segmented_rows`) as one
    Zero, Contraction {M = [row], N = [batch], K = [reduced]} and (when the record
    has one) ReLU of the whole out: where A's and out's (i, b) runs are contiguous
    (b at unit stride, i at |b| elements) and x's b too, teir-match-gemm makes
    that Contraction a periodic product (`teir_dialect.gemm`)."""
    return _batched_gemv(record, batch, reduced, row, "periodic_product", loop=False)


def _batched_gemv(record: JsonDict, batch: str, reduced: str, row: str, who: str,
                  loop: bool) -> JsonDict:
    """The primitives and schedule of `segmented_rows` (`loop`: a loop over the rows)
    or `periodic_product` (the rows in the primitives)."""
    kinds = {p["operation"]: p for p in record["primitives"]}
    axes = {a["id"] for a in record["axes"]}
    if not {"Zero", "Contraction"} <= set(kinds) <= {"Zero", "Contraction", "ReLU"} or (
            axes != {batch, reduced, row}):
        raise TeirError(
            f"{who}: needs a Zero and a Contraction over axes {batch}, {reduced} "
            f"and {row}, got {sorted(kinds)} over {sorted(axes)}")
    rows = [] if loop else [row]
    roles = {"Zero": {"M": [*rows, batch][:1], "N": [batch] if rows else []},
             "Contraction": {"M": rows, "N": [batch], "K": [reduced]},
             "ReLU": {"M": [*rows, batch][:1], "N": [batch] if rows else []}}
    steps = [kind for kind in ("Zero", "Contraction", "ReLU") if kind in kinds]
    names = {kind: f"{kind.lower()}_{batch}" for kind in steps}
    invocations = [{"id": kind.lower(), "primitive": names[kind], "guard": None}
                   for kind in steps]
    iterations = [{"id": f"row_{row}", "axis": row, "policy": "sequential",
                   "children": [kind.lower() for kind in steps], "guard": None}]
    return {**record,
            "primitives": [{"id": names[kind], "operation": kind, "axes": roles[kind],
                            "metadata": kinds[kind]["metadata"]} for kind in steps],
            "schedule": {"roots": [f"row_{row}"] if loop else [i["id"] for i in invocations],
                         "iterations": iterations if loop else [],
                         "invocations": invocations}}


__all__ = [
    "OPERATIONS",
    "Dimension",
    "build_config",
    "build_record",
    "data_type_of",
    "einsum_config",
    "periodic_product",
    "scalar_nest",
    "segmented_rows",
    "with_unit_role",
    "writes_each_once",
    "zeroed_nest",
]
