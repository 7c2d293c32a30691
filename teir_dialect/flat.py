"""Import of the flat form (`teir-flat-spec.rst`) into the tree form.

The flat form lists axes with a type (C/M/N/K) and an execution type
(seq/parallel/prim). Non-`prim` axes become a chain of iteration nodes in
their order; `prim` axes become the role lists of the primitives. The
first/last-access primitives become invocations guarded by `first()`/`last()`
of every schedule-iterated axis along which out's tile stays put (the K axes,
and any with stride 0 on out): exactly the first and the last access of each
output tile.

Decision: the flat spec's own scalar examples have no `prim` axis, which R1
(Copy) and R2 (GEMM) would reject. A configuration without `prim` axes is
therefore read as scalar (the main primitive acts on single elements) and R1-R3
apply only when there is at least one `prim` axis.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from teir_dialect.dialect import fresh_id
from teir_dialect.json_checks import TeirError, check_keys, is_id, is_int
from teir_dialect.vocabulary import (
    TENSOR_NAMES,
    DataType,
    GuardKind,
    OperationKind,
    Policy,
    Role,
    parse_enum,
    spelled,
)


class DimType(StrEnum):
    """Which tensors an axis spans: all (C), in0 and out (M), in1 and out (N), the inputs (K)."""

    C = "C"
    M = "M"
    N = "N"
    K = "K"


class ExecType(StrEnum):
    SEQ = "seq"
    PARALLEL = "parallel"
    PRIM = "prim"


DIM_TYPES = tuple(DimType)
EXEC_TYPES = {ExecType.SEQ: Policy.SEQUENTIAL, ExecType.PARALLEL: Policy.PARALLEL,
              ExecType.PRIM: None}
PRIM_FIRST = ("None", "Zero", "ReLU")
PRIM_MAIN = ("None", "Copy", "ReLU", "GEMM", "BRGEMM")
PRIM_LAST = ("None", "ReLU")

PARTICIPATION = {
    2: {DimType.C: (1, 1)},
    3: {DimType.C: (1, 1, 1), DimType.M: (1, 0, 1), DimType.N: (0, 1, 1),
        DimType.K: (1, 1, 0)},
}
"""Which tensors an axis of each type touches (in0, [in1,] out)."""


def fail(message: str) -> None:
    raise TeirError(f"flat form: {message}")


def _vector(record: dict[str, Any], key: str, size: int) -> list[Any]:
    value = record[key]
    if not isinstance(value, list) or len(value) != size:
        fail(f"{key} must be a list of {size} entries (one per axis), got {value!r}")
    return value


def _name(operation: str, axes: list[str | int]) -> str:
    if not axes:
        return f"{operation}_scalar"
    texts = [str(a) for a in axes]
    joiner = "" if all(len(t) == 1 for t in texts) else "_"
    return f"{operation}_{joiner.join(texts)}"


@dataclass(frozen=True)
class FlatConfig:
    """A flat-form record whose fields have the right shapes and values."""

    ids: list[str | int]
    dim_types: list[str]
    exec_types: list[str]
    sizes: list[int]
    strides: list[list[int]]
    data_type: DataType
    first: str
    main: str
    last: str

    @property
    def tensors(self) -> int:
        return len(self.strides)

    @property
    def scheduled(self) -> list[int]:
        """Positions of the axes the schedule iterates, outermost first."""
        return [i for i, e in enumerate(self.exec_types) if e != ExecType.PRIM]

    def prim_axes(self, dim_type: str) -> list[str | int]:
        return [
            self.ids[i]
            for i in range(len(self.ids))
            if self.exec_types[i] == ExecType.PRIM and self.dim_types[i] == dim_type
        ]


def read_flat(record: Any) -> FlatConfig:
    """The fields of a flat record, checked one by one (vector lengths, domains)."""
    record = check_keys(
        "the flat configuration",
        record,
        ("dim_types", "exec_types", "dim_sizes", "strides", "data_type", "prim_main"),
        ("dim_ids", "prim_first", "prim_last"),
    )
    dims = len(record["dim_types"]) if isinstance(record["dim_types"], list) else 0
    if dims == 0:
        fail("dim_types must be a non-empty list")
    dim_types = _vector(record, "dim_types", dims)
    exec_types = _vector(record, "exec_types", dims)
    sizes = _vector(record, "dim_sizes", dims)
    ids = _vector(record, "dim_ids", dims) if "dim_ids" in record else [
        f"d{i}" for i in range(dims)
    ]
    for i, (ident, dim_type, exec_type, size) in enumerate(
        zip(ids, dim_types, exec_types, sizes)
    ):
        if not is_id(ident):
            fail(f"dim_ids[{i}] must be a string or integer id, got {ident!r}")
        if dim_type not in DIM_TYPES:
            fail(f"axis '{ident}' has dim_type {dim_type!r}; expected C, M, N or K")
        if not isinstance(exec_type, str) or exec_type not in EXEC_TYPES:
            fail(f"axis '{ident}' has exec_type {exec_type!r}; expected seq, parallel or prim")
        if not is_int(size) or size <= 0:
            fail(f"axis '{ident}' has dim_size {size!r}; expected a positive integer")
    if len({str(i) for i in ids}) != dims:
        fail(f"dim_ids must be unique, got {ids!r}")

    strides = record["strides"]
    if not isinstance(strides, list) or len(strides) not in PARTICIPATION:
        fail("strides must hold 2 rows (in0, out) or 3 rows (in0, in1, out)")
    for j, row in enumerate(strides):
        if not isinstance(row, list) or len(row) != dims:
            fail(f"strides[{j}] must hold {dims} entries (one per axis)")
        for i, value in enumerate(row):
            if not is_int(value) or value < 0:
                fail(f"strides[{j}][{i}] must be a non-negative integer, got {value!r}")

    data_type = parse_enum(DataType, record["data_type"])
    if data_type is None:
        fail(f"data_type {record['data_type']!r} is not one of {spelled(DataType)}")
    first = record.get("prim_first", "None")
    main = record["prim_main"]
    last = record.get("prim_last", "None")
    for key, value, allowed in (
        ("prim_first", first, PRIM_FIRST),
        ("prim_main", main, PRIM_MAIN),
        ("prim_last", last, PRIM_LAST),
    ):
        if value not in allowed:  # (JSON's null shown as null, not as Python's None)
            shown = "null" if value is None else json.dumps(value)
            fail(f"{key} is {shown}; expected one of "
                 f"{', '.join(json.dumps(a) for a in allowed)}")
    assert data_type is not None
    return FlatConfig(ids, dim_types, exec_types, sizes, strides, data_type, first, main, last)


def check_operation_type(flat: FlatConfig) -> None:
    """The operation-type constraints: tensor count, axis types, first/last primitives."""
    main, tensors = flat.main, flat.tensors
    if main in ("Copy", "ReLU"):
        if tensors != 2:
            fail(f"operation type: prim_main {main} is unary and needs 2 tensors, got {tensors}")
        if any(t != DimType.C for t in flat.dim_types):
            fail(
                f"operation type: a unary operation ({main}) has only C axes, "
                f"got {flat.dim_types}"
            )
        if flat.first != "None" or flat.last != "None":
            fail(
                f"operation type: a unary operation ({main}) has prim_first and "
                "prim_last None"
            )
    elif main in ("GEMM", "BRGEMM"):
        if tensors != 3:
            fail(
                f"operation type: prim_main {main} is a binary contraction and needs "
                f"3 tensors, got {tensors}"
            )
        if flat.first not in ("None", "Zero"):
            fail(
                "operation type: a binary contraction has prim_first None or Zero, "
                f"got {flat.first}"
            )
    else:
        fail(
            "operation type: prim_main None names no operation; use Copy or ReLU "
            "(unary) or GEMM or BRGEMM (binary contraction)"
        )


def check_participation(flat: FlatConfig) -> None:
    """An axis has stride 0 on every tensor its type does not touch."""
    names = TENSOR_NAMES[flat.tensors]
    for i, (ident, dim_type) in enumerate(zip(flat.ids, flat.dim_types)):
        for j, touches in enumerate(PARTICIPATION[flat.tensors][dim_type]):
            if not touches and flat.strides[j][i] != 0:
                fail(
                    f"axis '{ident}' of type {dim_type} does not touch {names[j]}, so its "
                    f"stride on {names[j]} must be 0, got {flat.strides[j][i]}"
                )


def check_prim_rules(flat: FlatConfig) -> None:
    """R1-R3, once the configuration has a prim axis (see the module docstring)."""
    prim = {t: flat.prim_axes(t) for t in DimType}
    if not any(prim.values()):
        return
    main = flat.main
    elementwise = main == OperationKind.COPY or flat.first != "None" or flat.last != "None"
    if elementwise and not (prim[DimType.C] or prim[DimType.M] or prim[DimType.N]):
        fail("R1: Copy, Zero and ReLU need at least one prim axis of type C, M or N")
    for kernel, k_count, rule in (("GEMM", 1, "R2"), ("BRGEMM", 2, "R3")):
        if main == kernel and (
            prim[DimType.C] or len(prim[DimType.M]) != 1 or len(prim[DimType.N]) != 1
            or len(prim[DimType.K]) != k_count
        ):
            fail(
                f"{rule}: {kernel} needs prim axes of exactly one M, one N, "
                f"{k_count} K and no C; got C={prim['C']}, M={prim['M']}, "
                f"N={prim['N']}, K={prim['K']}"
            )


def tree_axes(flat: FlatConfig) -> list[dict[str, Any]]:
    """TEIR-Axes: element strides scaled to bytes, no offsets."""
    width = flat.data_type.width
    return [
        {
            "id": flat.ids[i],
            "extent": flat.sizes[i],
            "strides": [flat.strides[j][i] * width for j in range(flat.tensors)],
            "offsets": [0] * flat.tensors,
        }
        for i in range(len(flat.ids))
    ]


def tree_primitives(flat: FlatConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """TEIR-Primitives and the invocations of them, in execution order: for a
    contraction Zero (first), Contraction, ReLU (last), guarded by first()/last()
    of every scheduled axis that does not move out's tile."""
    taken = {str(flat.ids[i]) for i in flat.scheduled}
    # the scheduled axes along which out's tile stays put: the K axes, and an M/N
    # axis with stride 0 on out (its every index accesses the same tile again)
    k_axes = [flat.ids[i] for i in flat.scheduled
              if flat.dim_types[i] == DimType.K or flat.strides[-1][i] == 0]
    primitives: list[dict[str, Any]] = []
    invocations: list[dict[str, Any]] = []

    def invoke(operation: str, kind: str, roles: dict[str, list[Any]],
               guard_kind: str | None) -> None:
        prim_id = _name(kind, [a for axes in roles.values() for a in axes])
        primitives.append({
            "id": prim_id, "operation": operation, "axes": roles,
            "metadata": {"data_type": str(flat.data_type)},
        })
        guard = [f"{guard_kind}({k})" for k in k_axes] if guard_kind and k_axes else None
        invocations.append({"id": fresh_id(kind, taken), "primitive": prim_id, "guard": guard})

    if flat.tensors == 2:
        c_axes = flat.prim_axes(DimType.C)
        invoke(flat.main, flat.main.lower(), {Role.M: c_axes[:1], Role.N: c_axes[1:]}, None)
    else:
        tile = {Role.M: flat.prim_axes(DimType.M), Role.N: flat.prim_axes(DimType.N)}
        has_prim = any(flat.prim_axes(t) for t in DIM_TYPES)
        if flat.first == OperationKind.ZERO:
            invoke(OperationKind.ZERO, "zero", dict(tile), GuardKind.FIRST)
        kind = flat.main.lower() if has_prim else "contraction"
        invoke(OperationKind.CONTRACTION, kind, {**tile, Role.K: flat.prim_axes(DimType.K)}, None)
        if flat.last == OperationKind.RELU:
            invoke(OperationKind.RELU, "relu", dict(tile), GuardKind.LAST)
    return primitives, invocations


def tree_schedule(flat: FlatConfig, invocations: list[dict[str, Any]]) -> dict[str, Any]:
    """The scheduled axes as a chain of iteration nodes around the invocations."""
    scheduled = flat.scheduled
    iterations: list[dict[str, Any]] = []
    for position, i in enumerate(scheduled):
        inner = (
            [flat.ids[scheduled[position + 1]]]
            if position + 1 < len(scheduled)
            else [inv["id"] for inv in invocations]
        )
        iterations.append(
            {
                "id": flat.ids[i],
                "axis": flat.ids[i],
                "policy": EXEC_TYPES[flat.exec_types[i]],
                "children": inner,
                "guard": None,
            }
        )
    roots = [flat.ids[scheduled[0]]] if scheduled else [inv["id"] for inv in invocations]
    return {"roots": roots, "iterations": iterations, "invocations": invocations}


def flat_to_tree(record: Any) -> dict[str, Any]:
    """The tree-form record equivalent to a flat-form record."""
    flat = read_flat(record)
    check_operation_type(flat)
    check_participation(flat)
    check_prim_rules(flat)
    primitives, invocations = tree_primitives(flat)
    return {
        "tensors": list(TENSOR_NAMES[flat.tensors]),
        "axes": tree_axes(flat),
        "primitives": primitives,
        "schedule": tree_schedule(flat, invocations),
    }
