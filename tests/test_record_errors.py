"""Bad records get a TeirError naming the rule and the offending ids."""

from __future__ import annotations

import copy
import json
import pathlib
import re

import pytest

from teir_dialect import TeirError, from_json, to_json
from teir_dialect.dialect import make_id
from teir_dialect.records import load_module


def tiny() -> dict:
    """A small well-formed unary configuration: out[k] = in0[k] over |k| = 4."""
    return {
        "tensors": ["in0", "out"],
        "axes": [{"id": "k", "extent": 4, "strides": [4, 4], "offsets": [0, 0]}],
        "primitives": [
            {"id": "cp", "operation": "Copy", "axes": {"M": [], "N": []},
             "metadata": {"data_type": "FP32"}}
        ],
        "schedule": {
            "roots": ["k"],
            "iterations": [
                {"id": "k", "axis": "k", "policy": "sequential", "children": ["c"],
                 "guard": None}
            ],
            "invocations": [{"id": "c", "primitive": "cp", "guard": None}],
        },
    }


def test_tiny_is_well_formed() -> None:
    from_json(tiny())


def _mutated(path: str, value: object) -> dict:
    record = tiny()
    target = record
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]
    last = keys[-1]
    if value is DELETE:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return record


DELETE = object()

CASES = [
    ("tensors", ["a", "b"], r"operation constraint: tensors must be"),
    ("axes.0.extent", 0, r"axis rule: axis 'k' has extent 0"),
    ("axes.0.extent", 2.5, r"axis rule: axis 'k' has extent 2.5"),
    ("axes.0.extent", True, r"axis rule: axis 'k' has extent True"),
    ("axes.0.strides", [4], r"axis rule: axis 'k' has 1 strides"),
    ("axes.0.strides", [4, -4], r"axis rule: axis 'k' has stride -4 on out"),
    ("axes.0.strides", [4, "x"], r"record form: axis 'k' strides must hold 64-bit integers"),
    ("axes.0.offsets", DELETE, r"record form: axes\[0\] lacks field\(s\) offsets"),
    ("axes.0.colour", "red", r"record form: axes\[0\] has unknown field\(s\) colour"),
    ("axes.0.id", 1.5, r"record form: axes\[0\].id must be a string or integer id"),
    ("primitives.0.operation", "Add", r"primitive rule: primitive 'cp' has operation 'Add'"),
    ("primitives.0.axes", {"M": []}, r"primitive 'cp' \(Copy\) defines no role list for N"),
    ("primitives.0.axes", {"M": ["q"], "N": []}, r"names axis 'q' in role M, which is not an axis"),
    ("primitives.0.metadata", {}, r"primitive 'cp' needs metadata data_type"),
    ("schedule.roots", ["nope"], r"schedule rule: root 'nope' is not a schedule node"),
    ("schedule.roots", ["k", "k"], r"schedule rule: root 'k' appears twice in roots"),
    ("schedule.roots", ["k", "c"], r"schedule rule: root 'c' is also a child of 'k'"),
    ("schedule.roots", [], r"schedule rule: node 'k' is neither a root nor anybody's child"),
    ("schedule.iterations.0.children", ["c", "c"], r"node 'c' is a child of both 'k' and 'k'"),
    ("schedule.iterations.0.children", ["zz"], r"iteration node 'k' has child 'zz', which is not a schedule node"),
    ("schedule.iterations.0.children", [], r"node 'c' is neither a root nor anybody's child"),
    ("schedule.iterations.0.policy", "diagonal", r"iteration node rule: iteration node 'k' has policy 'diagonal'"),
    ("schedule.iterations.0.axis", "zz", r"iteration node rule: iteration node 'k' iterates axis 'zz', which is not an axis"),
    ("schedule.invocations.0.primitive", "zz", r"invocation node rule: invocation 'c' invokes primitive 'zz'"),
    ("schedule.invocations.0.children", ["k"], r"invocation node rule: invocation 'c' has children"),
    ("schedule.invocations.0.guard", ["first(q)"], r"guard rule: guard of invocation 'c' names axis 'q', which no ancestor of 'c' iterates"),
    ("schedule.invocations.0.guard", ["middle(k)"], r"guard rule: guard of 'c' has term 'middle\(k\)'"),
    ("schedule.invocations.0.guard", "first(k)", r"record form: guard of 'c' must be a list"),
    ("schedule.iterations.0.guard", ["first(k)"], r"guard rule: guard of iteration node 'k' names axis 'k'"),
    ("schedule", {"roots": []}, r"record form: schedule lacks field\(s\) iterations, invocations"),
]


@pytest.mark.parametrize(("path", "value", "message"), CASES, ids=[c[2][:40] for c in CASES])
def test_bad_tree_record(path: str, value: object, message: str) -> None:
    with pytest.raises(TeirError, match=message):
        from_json(_mutated(path, value))


def test_childless_iteration_node() -> None:
    record = tiny()
    record["schedule"]["iterations"][0]["children"] = []
    record["schedule"]["invocations"] = []
    with pytest.raises(TeirError, match=r"iteration node rule: iteration node 'k' has no children"):
        from_json(record)


def test_cycle_is_reported() -> None:
    record = tiny()
    record["axes"].append({"id": "j", "extent": 2, "strides": [0, 0], "offsets": [0, 0]})
    record["schedule"]["iterations"] += [
        {"id": "a", "axis": "j", "policy": "sequential", "children": ["b"], "guard": None},
        {"id": "b", "axis": "j", "policy": "sequential", "children": ["a"], "guard": None},
    ]
    with pytest.raises(TeirError, match=r"schedule rule: node '[ab]' is its own descendant"):
        from_json(record)


def test_duplicate_node_ids_across_kinds() -> None:
    record = tiny()
    record["schedule"]["invocations"][0]["id"] = "k"
    record["schedule"]["iterations"][0]["children"] = ["k"]
    with pytest.raises(TeirError, match=r"schedule node id 'k' is defined twice"):
        from_json(record)


def test_numeric_and_string_ids_collide() -> None:
    record = tiny()
    record["axes"].append({"id": 7, "extent": 2, "strides": [0, 4], "offsets": [0, 0]})
    record["axes"].append({"id": "7", "extent": 2, "strides": [0, 4], "offsets": [0, 0]})
    with pytest.raises(TeirError, match=r"axis rule: axis id '7' is defined twice"):
        from_json(record)


def test_invalid_json_text() -> None:
    with pytest.raises(TeirError, match=r"invalid JSON at line 1"):
        from_json('{"tensors": [}')


def test_a_key_twice_in_one_object_is_refused() -> None:
    """json.loads keeps the last of two equal keys: `"extent": 6, "extent": 600`
    was read as 600 without a word."""
    text = json.dumps(tiny()).replace('"extent": 4', '"extent": 6, "extent": 600', 1)
    with pytest.raises(TeirError, match=r"record form: the key 'extent' appears twice in "
                                        r"one JSON object \(with keys 'id', 'extent'"):
        from_json(text)


def test_unknown_shape() -> None:
    with pytest.raises(TeirError, match=r"expected a tree-form record"):
        from_json({"hello": 1})


def test_missing_file() -> None:
    with pytest.raises(TeirError, match=r"cannot read"):
        from_json("/nonexistent/config.json")


def _flat() -> dict:
    """records.md's flat example (BRGEMM with a Zero first-access primitive)."""
    return {
        "dim_ids": ["p", "r", "t", "s", "q", "u"],
        "dim_types": ["N", "M", "K", "M", "N", "K"],
        "exec_types": ["parallel", "parallel", "prim", "prim", "prim", "prim"],
        "dim_sizes": [4, 3, 2, 16, 8, 8],
        "strides": [[0, 128, 384, 1, 0, 16], [128, 0, 8, 0, 16, 1], [384, 16, 0, 1, 48, 0]],
        "data_type": "FP32",
        "prim_first": "Zero",
        "prim_main": "BRGEMM",
        "prim_last": "None",
    }


FLAT_CASES = [
    ({"prim_main": "GEMM"}, r"flat form: R2: GEMM needs prim axes of exactly one M, one N, 1 K"),
    ({"exec_types": ["parallel", "parallel", "seq", "prim", "prim", "prim"]},
     r"flat form: R3: BRGEMM needs prim axes of exactly one M, one N, 2 K"),
    ({"prim_main": "Copy"}, r"operation type: prim_main Copy is unary and needs 2 tensors"),
    ({"prim_main": "None"}, r"operation type: prim_main None names no operation"),
    ({"prim_first": "ReLU"}, r"operation type: a binary contraction has prim_first None or Zero"),
    ({"prim_last": "Zero"}, r'prim_last is "Zero"; expected one of "None", "ReLU"'),
    ({"prim_first": None}, r'prim_first is null; expected one of "None", "Zero", "ReLU"'),
    ({"data_type": "FP8"}, r"data_type 'FP8' is not one of"),
    ({"dim_sizes": [4, 3, 2, 16, 8]}, r"dim_sizes must be a list of 6 entries"),
    ({"dim_sizes": [4, 3, 0, 16, 8, 8]}, r"axis 't' has dim_size 0"),
    ({"dim_types": ["N", "M", "K", "M", "N", "X"]}, r"axis 'u' has dim_type 'X'"),
    ({"exec_types": ["par", "parallel", "prim", "prim", "prim", "prim"]}, r"axis 'p' has exec_type 'par'"),
    ({"strides": [[0, 128, 384, 1, 0, 16], [128, 0, 8, 0, 16, 1]]},
     r"prim_main BRGEMM is a binary contraction and needs 3 tensors, got 2"),
    ({"strides": [[1, 128, 384, 1, 0, 16], [128, 0, 8, 0, 16, 1], [384, 16, 0, 1, 48, 0]]},
     r"axis 'p' of type N does not touch in0, so its stride on in0 must be 0, got 1"),
    ({"strides": [[0, 128, 384, 1, 0, 16], [128, 0, 8, 0, 16, 1], [384, 16, 0, 1, 48, -1]]},
     r"strides\[2\]\[5\] must be a non-negative integer"),
    ({"dim_ids": ["p", "p", "t", "s", "q", "u"]}, r"dim_ids must be unique"),
    ({"exec_types": ["seq", "parallel", "parallel", "prim", "prim", "prim"],
      "prim_main": "GEMM"},
     r"parallel race: iteration node 't' runs axis 't' in parallel"),
]


@pytest.mark.parametrize(("change", "message"), FLAT_CASES, ids=[c[1][:40] for c in FLAT_CASES])
def test_bad_flat_record(change: dict, message: str) -> None:
    record = _flat()
    record.update(change)
    with pytest.raises(TeirError, match=message):
        from_json(record)


def test_flat_unary_rules() -> None:
    record = {
        "dim_types": ["C", "M"], "exec_types": ["seq", "prim"], "dim_sizes": [2, 3],
        "strides": [[3, 1], [1, 2]], "data_type": "FP32", "prim_main": "Copy",
    }
    with pytest.raises(TeirError, match=r"a unary operation \(Copy\) has only C axes"):
        from_json(record)
    record["dim_types"] = ["C", "C"]
    record["exec_types"] = ["seq", "seq"]
    record["prim_first"] = "Zero"
    with pytest.raises(TeirError, match=r"a unary operation \(Copy\) has prim_first and prim_last None"):
        from_json(record)


def test_flat_r1() -> None:
    record = _flat()
    record["exec_types"] = ["parallel", "parallel", "seq", "seq", "seq", "prim"]
    record["prim_main"] = "GEMM"
    with pytest.raises(TeirError, match=r"R1: Copy, Zero and ReLU need at least one prim axis"):
        from_json(record)


def test_error_messages_carry_no_traceback_text() -> None:
    with pytest.raises(TeirError) as info:
        from_json(_mutated("axes.0.extent", -3))
    assert "Traceback" not in str(info.value)
    assert re.search(r"'k'", str(info.value))


def _json_values(draw_from: dict) -> list[tuple[list, object]]:
    """Every (path, value) leaf of a record, for mutation."""
    leaves: list[tuple[list, object]] = []

    def walk(node: object, path: list) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, path + [key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, path + [index])
        leaves.append((path, node))

    walk(draw_from, [])
    return leaves


REPLACEMENTS = [None, 0, -1, 1, 2**70, 1.5, True, "", "k", "c", "zz", [], {}, ["k"],
                ["first(k)"], {"M": []}]


def test_every_mutation_is_accepted_or_diagnosed() -> None:
    """Replace each field of a record by each odd value: TeirError or success only."""
    base = tiny()
    flat = _flat()
    for record in (base, flat):
        for path, _ in _json_values(record):
            if not path:
                continue
            for replacement in REPLACEMENTS:
                mutated = copy.deepcopy(record)
                target = mutated
                for key in path[:-1]:
                    target = target[key]
                target[path[-1]] = copy.deepcopy(replacement)
                try:
                    from_json(mutated)
                except TeirError:
                    pass


def test_json_text_and_comments() -> None:
    text = "// a lit RUN line\n" + json.dumps(tiny())
    module = from_json(text)
    assert "teir.config" in str(module)


# -- input that recursive readers and Python's own limits would choke on ----------------


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    return value


def test_json_text_nested_100000_deep_is_refused_with_its_place() -> None:
    with pytest.raises(TeirError, match=r"record depth: the array or object at line 1 "
                       r"column 65 is nested more than 64 deep"):
        from_json("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "text"])
def test_metadata_nested_900_deep_is_refused(as_text: bool) -> None:
    record = tiny()
    record["primitives"][0]["metadata"]["x"] = _nested(900)
    with pytest.raises(TeirError, match=r"record depth: primitives\[0\]\.metadata\.x\[0\]"
                       r"\[0\]\.\.\. nests arrays and objects more than 64 deep"):
        from_json(json.dumps(record) if as_text else record)


def test_metadata_at_the_depth_limit_round_trips() -> None:
    record = tiny()
    # record -> primitives -> [0] -> metadata -> x: the value's own arrays nest 60 deep.
    record["primitives"][0]["metadata"]["x"] = _nested(61)
    assert to_json(from_json(json.dumps(record))) == record
    record["primitives"][0]["metadata"]["x"] = _nested(62)
    with pytest.raises(TeirError, match="record depth"):
        from_json(record)


def test_a_4301_digit_integer_is_refused_by_rule() -> None:
    text = json.dumps(tiny()).replace('"extent": 4', '"extent": ' + "9" * 4301)
    with pytest.raises(TeirError, match=r"integer range: the integer at line 1 column \d+ "
                       r"has 4301 digits, beyond 64-bit integers"):
        from_json(text)
    record = tiny()
    record["axes"][0]["extent"] = 10**4400
    with pytest.raises(TeirError, match=r"integer range: axes\[0\]\.extent is an integer of "
                       r"about 4401 digits"):
        from_json(record)
    record = tiny()
    record["primitives"][0]["metadata"]["n"] = 2**63
    with pytest.raises(TeirError, match=r"integer range: primitives\[0\]\.metadata\.n is "
                       r"9223372036854775808, beyond 64-bit integers"):
        from_json(record)


@pytest.mark.parametrize(
    ("path", "place"),
    [("schedule.invocations.0.id", r"schedule\.invocations\[0\]\.id"),
     ("primitives.0.metadata.note", r"primitives\[0\]\.metadata\.note"),
     ("axes.0.id", r"axes\[0\]\.id")],
)
def test_a_lone_surrogate_is_refused_by_rule(path: str, place: str) -> None:
    message = rf"text rule: {place} holds the lone surrogate U\+D800, which is not Unicode"
    record = _mutated(path, "a\ud800")
    with pytest.raises(TeirError, match=message):
        from_json(record)
    with pytest.raises(TeirError, match=message):
        from_json(json.dumps(record))  # "\ud800" as JSON text


def test_make_id_refuses_a_lone_surrogate() -> None:
    with pytest.raises(ValueError, match=r"id rule: the id 'x\\udfff' holds a lone surrogate"):
        make_id("x\udfff")


@pytest.mark.parametrize("path", ["a\0b.json", "a\0b.mlir", pathlib.Path("x\0.json")],
                         ids=["json", "mlir", "Path"])
def test_a_nul_in_a_path_is_a_clear_error(path: object) -> None:
    with pytest.raises(TeirError, match=r"cannot read '.*\\x00.*': a path cannot hold a "
                       "NUL character"):
        load_module(path)
