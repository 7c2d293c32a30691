"""The JSON record form (`shared/spec/records.md`) to and from `teir` IR.

`from_json` takes the tree form or the flat form (told apart by their keys),
checks what only the records can get wrong (JSON types, references, the shape
of the schedule forest), builds the IR and runs the dialect's verifiers. Before
that, the whole record is walked without recursion (`check_json_value`): nesting
beyond MAX_RECORD_DEPTH, integers beyond 64 bits and strings that are not Unicode
text are refused by rule. `parse_mlir` is the one reader of MLIR text.
`to_json` writes the tree form. A round trip keeps every id (string or
integer), value and order; the `iterations` and `invocations` collections are
written in depth-first order of the schedule.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    f64,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from teir_dialect.dialect import (
    MAX_SCHEDULE_DEPTH,
    AxisOp,
    ConfigOp,
    GuardAttr,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleOp,
    id_text,
    id_value,
    make_id,
)
from teir_dialect.flat import flat_to_tree
from teir_dialect.json_checks import (
    JsonDict,
    TeirError,
    Unsupported,
    check_id,
    check_int_list,
    check_json_value,
    check_keys,
    check_list,
    fail,
    is_int,
    quote,
    shown_int,
)
from teir_dialect.limits import (
    MAX_RECORD_DEPTH,
    MAX_TEXT_NESTING,
    line_column,
    recursion_room,
    too_deep,
)
from teir_dialect.vocabulary import (
    TENSOR_NAMES,
    DataType,
    OperationKind,
    Policy,
    parse_enum,
    spelled,
)

# --------------------------------------------------------------------------
# Metadata values <-> attributes
# --------------------------------------------------------------------------


def json_to_attr(value: object) -> Attribute:
    """A JSON value as an attribute that converts back to the same value."""
    if isinstance(value, bool):
        return IntegerAttr(int(value), i1)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise TeirError(f"record form: integer {shown_int(value)} does not fit in 64 bits")
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if value is None:
        return NoneAttr()
    if isinstance(value, list):
        return ArrayAttr([json_to_attr(item) for item in value])
    if isinstance(value, dict):
        return DictionaryAttr({str(k): json_to_attr(v) for k, v in value.items()})
    raise TeirError(f"record form: {value!r} is not a JSON value")


def attr_to_json(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, NoneAttr):
        return None
    if isinstance(attr, ArrayAttr):
        return [attr_to_json(item) for item in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {key: attr_to_json(value) for key, value in attr.data.items()}
    return str(attr)


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

_GUARD_TERM = re.compile(r"^\s*(first|last)\s*\((.+)\)\s*$", re.DOTALL)


def path_shown(path: str) -> str:
    """A path for a message: as typed, or as a Python literal when it holds
    characters a terminal would not show (a NUL, a lone surrogate, a newline)."""
    return path if path.isprintable() else ascii(path)


def bad_path_reason(path: str) -> str:
    """Why the OS refuses a path string (Python raises ValueError for these)."""
    if "\0" in path:
        return "a path cannot hold a NUL character"
    return "the path is not valid text for the file system (it holds a lone surrogate)"


def read_text(path: str | os.PathLike[str]) -> str:
    """A file's text, with a clear TeirError for a missing, unreadable or empty file."""
    where = os.fspath(path)
    if where == "":
        raise TeirError("record form: empty input; expected a record, JSON text or a path")
    try:
        data = Path(where).read_bytes()
    except IsADirectoryError:
        raise TeirError(f"cannot read {where}: it is a directory, not a file") from None
    except OSError as err:
        raise TeirError(f"cannot read {where}: {err.strerror or err}") from None
    except ValueError:  # a NUL, or a lone surrogate the file system cannot encode
        raise TeirError(f"cannot read {path_shown(where)}: {bad_path_reason(where)}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TeirError(f"cannot read {where}: not UTF-8 text ({err.reason})") from None
    if not text.strip():
        expected = "MLIR" if where.endswith(".mlir") else "a JSON record"
        raise TeirError(f"record form: {where} is empty; expected {expected}")
    return text


def _parse_json_text(text: str) -> Any:
    """JSON text, `//` comment lines and a byte-order mark allowed; checked by
    `check_json_value` (depth, 64-bit integers, Unicode strings)."""
    text = "\n".join(
        "" if line.lstrip().startswith("//") else line
        for line in text.removeprefix("\ufeff").splitlines()
    )
    if not text.strip():
        raise TeirError("record form: the input is empty; expected a JSON record")

    def parse_int(literal: str) -> int:
        # Python refuses to convert more than 4300 digits (a ValueError); a 64-bit
        # integer has at most 19.
        if len(literal.removeprefix("-")) > 19:
            line, column = line_column(text, max(text.find(literal), 0))
            fail(
                f"integer range: the integer at line {line} column {column} has "
                f"{len(literal.removeprefix('-'))} digits, beyond 64-bit integers; "
                "every integer of a record fits in 64 bits"
            )
        return int(literal)

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) != len(pairs):  # json.loads keeps the last one silently
            seen: set[str] = set()
            for twice, _ in pairs:
                if twice in seen:
                    break
                seen.add(twice)
            shown = ", ".join(map(repr, list(value)[:8])) + (", ..." if len(value) > 8 else "")
            fail(f"record form: the key {twice!r} appears twice in one JSON object "
                 f"(with keys {shown})")
        return value

    try:
        value = json.loads(text, parse_int=parse_int, object_pairs_hook=unique_keys)
    except RecursionError:
        offset = too_deep(text, MAX_RECORD_DEPTH, json=True)
        line, column = line_column(text, offset or 0)
        raise TeirError(
            f"record depth: the array or object at line {line} column {column} is "
            f"nested more than {MAX_RECORD_DEPTH} deep; a record nests at most "
            f"{MAX_RECORD_DEPTH}"
        ) from None
    check_json_value(value, MAX_RECORD_DEPTH)
    return value


def _json_error(err: json.JSONDecodeError, where: str = "") -> TeirError:
    return TeirError(
        f"record form: invalid JSON{' in ' + where if where else ''} at line "
        f"{err.lineno} column {err.colno}: {err.msg}"
    )


def load_json(source: object) -> Any:
    """A configuration given as a dict, JSON text, or a path to a JSON file.

    `pathlib.Path` and other `os.PathLike` objects are paths; a `str` that
    parses as JSON is JSON text, any other `str` a path; `bytes` are UTF-8 JSON
    text. Lines whose first non-blank characters are `//` are comments (so test
    files can carry lit RUN lines) and a UTF-8 byte-order mark is ignored.
    """
    if isinstance(source, (dict, list)):
        check_json_value(source, MAX_RECORD_DEPTH)
        return source
    if isinstance(source, os.PathLike):
        where = os.fspath(source)
        try:
            return _parse_json_text(read_text(where))
        except json.JSONDecodeError as err:
            raise _json_error(err, str(where)) from None
    text_only = isinstance(source, bytes)  # a file's or a stream's contents: no path
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise TeirError(f"record form: input is not UTF-8 text ({err.reason})") from None
    if not isinstance(source, str):
        raise TeirError(
            f"expected a dict, JSON text or a path, got {type(source).__name__}"
        )
    try:
        return _parse_json_text(source)
    except json.JSONDecodeError as err:
        if (text_only or source.lstrip("\ufeff \t\r\n").startswith(("{", "["))
                or "\n" in source):
            raise _json_error(err) from None  # JSON text, not a path
        return load_json(Path(source))
    except TeirError:
        if source.strip():
            raise
        raise TeirError(
            "record form: empty input; expected a record, JSON text or a path"
        ) from None


def load_module(source: object, *, name: str = "kernel") -> ModuleOp:
    """A verified module from a module (cloned), a record dict, JSON text, or a
    `.json`/`.mlir` path; a TeirError names what is wrong."""
    if isinstance(source, ModuleOp):
        module = source.clone()
    elif isinstance(source, (str, os.PathLike)) and os.fspath(source).endswith(".mlir"):
        from xdsl.utils.exceptions import DiagnosticException, ParseError

        where = os.fspath(source)
        try:
            module = parse_mlir(read_text(where), where)
        except (ParseError, DiagnosticException) as err:
            raise TeirError(str(err)) from None
    else:
        return from_json(source, name=name)
    try:
        with recursion_room():
            module.verify()
    except VerifyException as err:
        raise TeirError(str(err)) from None
    return module


XDSL_PARSER_FAILURES = (
    IndexError, KeyError, ValueError, TypeError, AttributeError, AssertionError,
    OverflowError,
)
"""Plain exceptions xDSL's parser raises on some bad text instead of a ParseError
(an IndexError on `linalg.matmul` without operands, a ValueError on an integer
Python cannot convert)."""


def parse_mlir(
    text: str, where: str, *, context: Context | None = None, implicit_module: bool = True
) -> ModuleOp:
    """xDSL's parse of MLIR text (teir_context() unless `context`), every failure a
    ParseError at the place it stopped: text nested deeper than MAX_TEXT_NESTING is
    refused before xDSL's recursive parser sees it, and an exception of xDSL's
    parser that is not a diagnostic (an IndexError on a mangled linalg op, a
    ValueError on a 5,000-digit integer) is reported as the parse error it is."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException, ParseError
    from xdsl.utils.lexer import Input, Span

    from teir_dialect.context import teir_context

    source = Input(text, where)
    if (offset := too_deep(text, MAX_TEXT_NESTING)) is not None:
        raise ParseError(
            Span(offset, offset + 1, source),
            f"nesting depth: this bracket opens level {MAX_TEXT_NESTING + 1}; TEIR "
            f"reads MLIR nested at most {MAX_TEXT_NESTING} deep",
        )
    parser = Parser(context or teir_context(), text, where)
    try:
        with recursion_room():
            return parser.parse_module(implicit_module)
    except (ParseError, DiagnosticException):
        raise
    except RecursionError:
        reason = "the text nests too deeply for xDSL's parser"
    except XDSL_PARSER_FAILURES as err:
        if isinstance(err, ValueError) and "integer string conversion" in str(err):
            reason = (
                "integer range: an integer literal of more than 4300 digits; TEIR's "
                "integers fit in 64 bits"
            )
        else:
            reason = f"xDSL's parser failed here ({type(err).__name__}: {err})"
    raise ParseError(Span(parser.pos, parser.pos + 1, source), f"parse error: {reason}")


def is_flat_form(record: object) -> bool:
    return isinstance(record, dict) and "dim_types" in record


def from_json(source: object, *, name: str = "kernel") -> ModuleOp:
    """A verified module holding `func.func @name` around the configuration."""
    record = load_json(source)
    if is_flat_form(record):
        record = flat_to_tree(record)
    elif not isinstance(record, dict) or "schedule" not in record:
        raise TeirError(
            "record form: expected a tree-form record (tensors, axes, primitives, "
            "schedule) or a flat-form record (dim_types, exec_types, ...)"
        )
    try:
        module = ModuleOp([tree_to_func(record, name)])
        module.verify()
    except VerifyException as err:
        raise TeirError(str(err)) from None
    return module


def _guard(where: str, value: object, axis_ids: Mapping[str, str | int]) -> GuardAttr | None:
    if value is None:
        return None
    terms: list[GuardTermAttr] = []
    for term in check_list(where, value):
        match = _GUARD_TERM.match(term) if isinstance(term, str) else None
        if match is None:
            raise TeirError(
                f"guard rule: {where} has term {term!r}; a term is "
                "\"first(AXIS)\" or \"last(AXIS)\""
            )
        kind, axis = match.groups()
        if axis not in axis_ids and axis.strip() in axis_ids:
            axis = axis.strip()  # `first( k )` for k; an id " k" is taken as written
        terms.append(GuardTermAttr(kind, axis_ids.get(axis, axis)))
    return GuardAttr(terms) if terms else None


def _tensor_types(record: JsonDict) -> list[MemRefType]:
    """memref<?xT> per tensor, T from the data type of the primitives using it
    (i8, raw bytes, when they disagree). Primitives with an unknown operation or
    data type, or needing tensors the record does not have, are left for the
    verifier to report."""
    names = TENSOR_NAMES[len(record["tensors"])]
    types: dict[str, set[DataType]] = {name: set() for name in names}
    all_types: set[DataType] = set()
    for prim in record["primitives"]:
        data_type = parse_enum(DataType, prim["metadata"].get("data_type"))
        operation = parse_enum(OperationKind, prim["operation"])
        if data_type is None or operation is None:
            continue
        all_types.add(data_type)
        for tensor in operation.tensors_accessed(len(names)):
            if tensor in types:
                types[tensor].add(data_type)
    result: list[MemRefType] = []
    for name in names:
        element = {t.storage_type for t in types[name] or all_types}
        result.append(MemRefType(element.pop() if len(element) == 1 else i8, [DYNAMIC_INDEX]))
    return result


def tree_to_func(record: object, name: str = "kernel") -> func.FuncOp:
    """Check the tree-form record and build `func.func @name` around it."""
    record = check_keys(
        "the configuration", record, ("tensors", "axes", "primitives", "schedule")
    )
    tensors = check_list("tensors", record["tensors"])
    if tuple(tensors) not in TENSOR_NAMES.values():
        fail(
            'operation constraint: tensors must be ["in0", "out"] or '
            f'["in0", "in1", "out"], got {tensors!r}'
        )

    body: list[Operation] = []
    axis_ids: dict[str, str | int] = {}
    for index, axis in enumerate(check_list("axes", record["axes"])):
        where = f"axes[{index}]"
        axis = check_keys(where, axis, ("id", "extent", "strides", "offsets"))
        axis_id = check_id(f"{where}.id", axis["id"])
        where = f"axis {quote(axis_id)}"
        if not is_int(axis["extent"]):
            fail(f"axis rule: {where} has extent {axis['extent']!r}; expected an integer")
        body.append(
            AxisOp(
                axis_id,
                axis["extent"],
                check_int_list(f"{where} strides", axis["strides"]),
                check_int_list(f"{where} offsets", axis["offsets"]),
            )
        )
        axis_ids.setdefault(str(axis_id), axis_id)

    for index, prim in enumerate(check_list("primitives", record["primitives"])):
        where = f"primitives[{index}]"
        prim = check_keys(where, prim, ("id", "operation", "axes"), ("metadata",))
        prim_id = check_id(f"{where}.id", prim["id"])
        where = f"primitive {quote(prim_id)}"
        if not isinstance(prim["operation"], str):
            fail(f"primitive rule: {where} has operation {prim['operation']!r}")
        roles = prim["axes"]
        if not isinstance(roles, dict):
            raise TeirError(f"record form: axes of {where} must be an object of role lists")
        for role, ids in roles.items():
            for axis in check_list(f"role {role} of {where}", ids):
                check_id(f"role {role} of {where}", axis)
        metadata = prim.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            fail(f"record form: metadata of {where} must be an object")
        body.append(
            PrimitiveOp(
                prim_id,
                prim["operation"],
                roles,
                DictionaryAttr({k: json_to_attr(v) for k, v in metadata.items()}),
            )
        )

    body.append(_schedule(record["schedule"], axis_ids))
    types = _tensor_types(record)
    block = Block(arg_types=types)
    for arg, tensor in zip(block.args, tensors):
        arg.name_hint = tensor
    block.add_ops([ConfigOp(block.args, body), func.ReturnOp()])
    return func.FuncOp(name, (types, []), Region(block))


def _check_depths(records: Mapping[str, tuple[str, JsonDict]], parent_of: Mapping[str, str]) -> None:
    """No cycles, and no iteration node nested deeper than MAX_SCHEDULE_DEPTH: each
    node's depth from its root, found by walking up to a node whose depth is
    known (linear in the number of nodes)."""
    depth: dict[str, int] = {"": 0}
    for start in records:
        chain: list[str] = []
        current = start
        while current not in depth:
            if current in chain:
                fail(f"schedule rule: node '{current}' is its own descendant (a cycle)")
            chain.append(current)
            current = parent_of[current]
        level = depth[current]
        for node_id in reversed(chain):
            level += 1
            depth[node_id] = level
            if level > MAX_SCHEDULE_DEPTH and records[node_id][0] == "iterations":
                fail(
                    f"schedule depth: iteration node '{node_id}' is nested {level} "
                    f"iteration nodes deep; TEIR accepts at most {MAX_SCHEDULE_DEPTH}"
                )


def _schedule(schedule: object, axis_ids: Mapping[str, str | int]) -> ScheduleOp:
    schedule = check_keys("schedule", schedule, ("roots", "iterations", "invocations"))
    records: dict[str, tuple[str, JsonDict]] = {}
    for kind, required, optional in (
        ("iterations", ("id", "axis", "policy", "children"), ("guard",)),
        ("invocations", ("id", "primitive"), ("guard", "children")),
    ):
        for index, node in enumerate(check_list(f"schedule.{kind}", schedule[kind])):
            node = check_keys(f"schedule.{kind}[{index}]", node, required, optional)
            node_id = check_id(f"schedule.{kind}[{index}].id", node["id"])
            if str(node_id) in records:
                fail(f"schedule rule: schedule node id {quote(node_id)} is defined twice")
            records[str(node_id)] = (kind, node)

    parent_of: dict[str, str] = {}
    roots = check_list("schedule.roots", schedule["roots"])
    for root in roots:
        check_id("schedule.roots", root)
        if str(root) not in records:
            fail(f"schedule rule: root {quote(root)} is not a schedule node")
        if str(root) in parent_of:
            fail(f"schedule rule: root {quote(root)} appears twice in roots")
        parent_of[str(root)] = ""
    for node_id, (kind, node) in records.items():
        if kind == "invocations":
            if node.get("children"):
                fail(
                    f"invocation node rule: invocation '{node_id}' has children; "
                    "invocation nodes are leaves"
                )
            continue
        for child in check_list(f"children of iteration node '{node_id}'", node["children"]):
            check_id(f"children of iteration node '{node_id}'", child)
            if str(child) not in records:
                fail(
                    f"schedule rule: iteration node '{node_id}' has child {quote(child)}, "
                    "which is not a schedule node"
                )
            previous = parent_of.get(str(child))
            if previous == "":
                fail(
                    f"schedule rule: root {quote(child)} is also a child of "
                    f"'{node_id}'; a root appears in no children list"
                )
            if previous is not None:
                fail(
                    f"schedule rule: node {quote(child)} is a child of both "
                    f"'{previous}' and '{node_id}'; a node has one parent"
                )
            parent_of[str(child)] = node_id
    for node_id in records:
        if node_id not in parent_of:
            fail(
                f"schedule rule: node '{node_id}' is neither a root nor anybody's "
                "child; every non-root node appears in exactly one children list"
            )
    _check_depths(records, parent_of)

    def build(node_id: str) -> Operation:
        kind, node = records[node_id]
        guard = _guard(f"guard of '{node_id}'", node.get("guard"), axis_ids)
        if kind == "invocations":
            check_id(f"primitive of invocation '{node_id}'", node["primitive"])
            return InvokeOp(node["id"], node["primitive"], guard=guard)
        check_id(f"axis of iteration node '{node_id}'", node["axis"])
        policy = node["policy"]
        if parse_enum(Policy, policy) is None:
            fail(
                f"iteration node rule: iteration node '{node_id}' has policy "
                f"{policy!r}; expected {spelled(Policy)}"
            )
        children = [build(str(child)) for child in node["children"]]
        return IterOp(node["id"], node["axis"], children, policy=policy, guard=guard)

    return ScheduleOp([build(str(root)) for root in roots])


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def find_configs(ir: Operation) -> list[ConfigOp]:
    if isinstance(ir, ConfigOp):
        return [ir]
    return [op for op in ir.walk() if isinstance(op, ConfigOp)]


def to_json(ir: Operation) -> JsonDict:
    """The tree-form record of the one configuration in `ir`."""
    configs = find_configs(ir)
    if len(configs) != 1:
        raise TeirError(
            f"to_json expects exactly one teir.config, found {len(configs)}; "
            "pass the teir.config op itself"
        )
    return config_to_json(configs[0])


def _guard_json(guard: GuardAttr | None) -> list[str] | None:
    return None if guard is None else [str(term) for term in guard.terms]


def config_to_json(config: ConfigOp) -> JsonDict:
    iterations: list[JsonDict] = []
    invocations: list[JsonDict] = []
    for node in config.schedule.walk_nodes():
        if isinstance(node, IterOp):
            iterations.append(
                {
                    "id": id_value(node.id),
                    "axis": id_value(node.axis),
                    "policy": node.policy.data,
                    "children": [id_value(child.id) for child in node.children],
                    "guard": _guard_json(node.guard),
                }
            )
        elif isinstance(node, InvokeOp):
            invocations.append(
                {
                    "id": id_value(node.id),
                    "primitive": id_value(node.primitive),
                    "guard": _guard_json(node.guard),
                }
            )
    return {
        "tensors": list(config.tensor_names),
        "axes": [
            {
                "id": id_value(axis.id),
                "extent": axis.size,
                "strides": list(axis.stride_values),
                "offsets": list(axis.offset_values),
            }
            for axis in config.axes
        ],
        "primitives": [
            {
                "id": id_value(prim.id),
                "operation": prim.kind,
                "axes": {
                    role: [id_value(a) for a in ids.data]  # pyright: ignore
                    for role, ids in prim.roles.data.items()
                },
                "metadata": attr_to_json(prim.metadata),
            }
            for prim in config.primitives
        ],
        "schedule": {
            "roots": [id_value(root.id) for root in config.schedule.roots],
            "iterations": iterations,
            "invocations": invocations,
        },
    }


def dumps(value: Any, indent: int = 0, width: int = 88) -> str:
    """JSON text that keeps each value on one line when it fits (records per line)."""
    flat = json.dumps(value)
    if len(flat) + indent <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 2, width)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


__all__ = [
    "TeirError",
    "Unsupported",
    "config_to_json",
    "find_configs",
    "from_json",
    "id_text",
    "load_json",
    "load_module",
    "make_id",
    "parse_mlir",
    "read_text",
    "to_json",
    "tree_to_func",
]
