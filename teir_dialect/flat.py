"""Import of the flat form (`teir-flat-spec.rst`) into the tree form.

The flat form lists axes with a type (C/M/N/K) and an execution type
(seq/parallel/prim). Non-`prim` axes become a chain of iteration nodes in
their order; `prim` axes become the role lists of the primitives. The
first/last-access primitives become invocations guarded by `first()`/`last()`
of every schedule-iterated K axis: exactly the first and the last access of
each output tile.

Decision: the flat spec's own scalar examples have no `prim` axis, which R1
(Copy) and R2 (GEMM) would reject. A configuration without `prim` axes is
therefore read as scalar (the main primitive acts on single elements) and R1-R3
apply only when there is at least one `prim` axis.
"""

from __future__ import annotations

from typing import Any

from teir_dialect.records import TeirError, _check_keys, _is_id, _is_int
from teir_dialect.vocabulary import DataType, parse_enum, spelled

DIM_TYPES = ("C", "M", "N", "K")
EXEC_TYPES = {"seq": "sequential", "parallel": "parallel", "prim": None}
PRIM_FIRST = ("None", "Zero", "ReLU")
PRIM_MAIN = ("None", "Copy", "ReLU", "GEMM", "BRGEMM")
PRIM_LAST = ("None", "ReLU")

PARTICIPATION = {
    2: {"C": (1, 1)},
    3: {"C": (1, 1, 1), "M": (1, 0, 1), "N": (0, 1, 1), "K": (1, 1, 0)},
}
"""Which tensors an axis of each type touches (in0, [in1,] out)."""


def _fail(message: str) -> None:
    raise TeirError(f"flat form: {message}")


def _vector(record: dict[str, Any], key: str, size: int) -> list[Any]:
    value = record[key]
    if not isinstance(value, list) or len(value) != size:
        _fail(f"{key} must be a list of {size} entries (one per axis), got {value!r}")
    return value


def _name(operation: str, axes: list[str | int]) -> str:
    if not axes:
        return f"{operation}_scalar"
    texts = [str(a) for a in axes]
    joiner = "" if all(len(t) == 1 for t in texts) else "_"
    return f"{operation}_{joiner.join(texts)}"


def _unique(name: str, taken: set[str]) -> str:
    candidate, suffix = name, 1
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


def flat_to_tree(record: Any) -> dict[str, Any]:
    """The tree-form record equivalent to a flat-form record."""
    record = _check_keys(
        "the flat configuration",
        record,
        ("dim_types", "exec_types", "dim_sizes", "strides", "data_type", "prim_main"),
        ("dim_ids", "prim_first", "prim_last"),
    )
    dims = len(record["dim_types"]) if isinstance(record["dim_types"], list) else 0
    if dims == 0:
        _fail("dim_types must be a non-empty list")
    dim_types = _vector(record, "dim_types", dims)
    exec_types = _vector(record, "exec_types", dims)
    sizes = _vector(record, "dim_sizes", dims)
    ids = _vector(record, "dim_ids", dims) if "dim_ids" in record else [
        f"d{i}" for i in range(dims)
    ]
    for i, (ident, dim_type, exec_type, size) in enumerate(
        zip(ids, dim_types, exec_types, sizes)
    ):
        if not _is_id(ident):
            _fail(f"dim_ids[{i}] must be a string or integer id, got {ident!r}")
        if dim_type not in DIM_TYPES:
            _fail(f"axis '{ident}' has dim_type {dim_type!r}; expected C, M, N or K")
        if not isinstance(exec_type, str) or exec_type not in EXEC_TYPES:
            _fail(f"axis '{ident}' has exec_type {exec_type!r}; expected seq, parallel or prim")
        if not _is_int(size) or size <= 0:
            _fail(f"axis '{ident}' has dim_size {size!r}; expected a positive integer")
    if len({str(i) for i in ids}) != dims:
        _fail(f"dim_ids must be unique, got {ids!r}")

    strides = record["strides"]
    if not isinstance(strides, list) or len(strides) not in PARTICIPATION:
        _fail("strides must hold 2 rows (in0, out) or 3 rows (in0, in1, out)")
    tensors = len(strides)
    for j, row in enumerate(strides):
        if not isinstance(row, list) or len(row) != dims:
            _fail(f"strides[{j}] must hold {dims} entries (one per axis)")
        for i, value in enumerate(row):
            if not _is_int(value) or value < 0:
                _fail(f"strides[{j}][{i}] must be a non-negative integer, got {value!r}")

    data_type = record["data_type"]
    if parse_enum(DataType, data_type) is None:
        _fail(f"data_type {data_type!r} is not one of {spelled(DataType)}")
    first = record.get("prim_first", "None")
    main = record["prim_main"]
    last = record.get("prim_last", "None")
    for key, value, allowed in (
        ("prim_first", first, PRIM_FIRST),
        ("prim_main", main, PRIM_MAIN),
        ("prim_last", last, PRIM_LAST),
    ):
        if value not in allowed:
            _fail(f"{key} is {value!r}; expected one of {', '.join(allowed)}")

    # Operation-type constraints.
    if main in ("Copy", "ReLU"):
        if tensors != 2:
            _fail(f"operation type: prim_main {main} is unary and needs 2 tensors, got {tensors}")
        if any(t != "C" for t in dim_types):
            _fail(f"operation type: a unary operation ({main}) has only C axes, got {dim_types}")
        if first != "None" or last != "None":
            _fail(
                f"operation type: a unary operation ({main}) has prim_first and "
                "prim_last None"
            )
    elif main in ("GEMM", "BRGEMM"):
        if tensors != 3:
            _fail(
                f"operation type: prim_main {main} is a binary contraction and needs "
                f"3 tensors, got {tensors}"
            )
        if first not in ("None", "Zero"):
            _fail(f"operation type: a binary contraction has prim_first None or Zero, got {first}")
    else:
        _fail(
            "operation type: prim_main None names no operation; use Copy or ReLU "
            "(unary) or GEMM or BRGEMM (binary contraction)"
        )

    for i, (ident, dim_type) in enumerate(zip(ids, dim_types)):
        for j, touches in enumerate(PARTICIPATION[tensors][dim_type]):
            if not touches and strides[j][i] != 0:
                tensor = ("in0", "in1", "out")[j] if tensors == 3 else ("in0", "out")[j]
                _fail(
                    f"axis '{ident}' of type {dim_type} does not touch {tensor}, so its "
                    f"stride on {tensor} must be 0, got {strides[j][i]}"
                )

    prim = {t: [ids[i] for i in range(dims) if exec_types[i] == "prim" and dim_types[i] == t]
            for t in DIM_TYPES}
    prim_count = sum(len(axes) for axes in prim.values())
    if prim_count:
        if (main == "Copy" or first in ("Zero", "ReLU") or last == "ReLU") and not (
            prim["C"] or prim["M"] or prim["N"]
        ):
            _fail("R1: Copy, Zero and ReLU need at least one prim axis of type C, M or N")
        for kernel, k_count in (("GEMM", 1), ("BRGEMM", 2)):
            if main == kernel and (
                prim["C"] or len(prim["M"]) != 1 or len(prim["N"]) != 1
                or len(prim["K"]) != k_count
            ):
                rule = "R2" if kernel == "GEMM" else "R3"
                _fail(
                    f"{rule}: {kernel} needs prim axes of exactly one M, one N, "
                    f"{k_count} K and no C; got C={prim['C']}, M={prim['M']}, "
                    f"N={prim['N']}, K={prim['K']}"
                )

    width = DataType(data_type).width
    axes = [
        {
            "id": ids[i],
            "extent": sizes[i],
            "strides": [strides[j][i] * width for j in range(tensors)],
            "offsets": [0] * tensors,
        }
        for i in range(dims)
    ]
    scheduled = [i for i in range(dims) if exec_types[i] != "prim"]
    taken = {str(ids[i]) for i in scheduled}
    metadata = {"data_type": data_type}
    primitives: list[dict[str, Any]] = []
    invocations: list[dict[str, Any]] = []

    def invoke(node: str, operation: str, kind: str, roles: dict[str, list[Any]],
               guard_kind: str | None) -> None:
        role_axes = [a for axes_of_role in roles.values() for a in axes_of_role]
        prim_id = _name(kind, role_axes)
        primitives.append(
            {"id": prim_id, "operation": operation, "axes": roles, "metadata": dict(metadata)}
        )
        k_axes = [ids[i] for i in scheduled if dim_types[i] == "K"]
        guard = [f"{guard_kind}({k})" for k in k_axes] if guard_kind and k_axes else None
        invocations.append({"id": _unique(node, taken), "primitive": prim_id, "guard": guard})

    if tensors == 2:
        roles = {"M": prim["C"][:1], "N": prim["C"][1:]}
        invoke(main.lower(), main, main.lower(), roles, None)
    else:
        tile = {"M": prim["M"], "N": prim["N"]}
        if first == "Zero":
            invoke("zero", "Zero", "zero", dict(tile), "first")
        kind = main.lower() if prim_count else "contraction"
        invoke(kind, "Contraction", kind, {**tile, "K": prim["K"]}, None)
        if last == "ReLU":
            invoke("relu", "ReLU", "relu", dict(tile), "last")

    iterations: list[dict[str, Any]] = []
    for position, i in enumerate(scheduled):
        inner = (
            [ids[scheduled[position + 1]]]
            if position + 1 < len(scheduled)
            else [inv["id"] for inv in invocations]
        )
        iterations.append(
            {
                "id": ids[i],
                "axis": ids[i],
                "policy": EXEC_TYPES[exec_types[i]],
                "children": inner,
                "guard": None,
            }
        )
    roots = [ids[scheduled[0]]] if scheduled else [inv["id"] for inv in invocations]
    return {
        "tensors": ["in0", "out"] if tensors == 2 else ["in0", "in1", "out"],
        "axes": axes,
        "primitives": primitives,
        "schedule": {"roots": roots, "iterations": iterations, "invocations": invocations},
    }
