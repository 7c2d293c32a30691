"""Record form: lossless round trips of every spec example and the flat import."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.printer import Printer

from conftest import FLAT_EXAMPLES, SPEC_EXAMPLES, TREE_EXAMPLES, load
from teir_dialect import from_json, teir_context, to_json
from teir_dialect.flat import flat_to_tree


def test_there_are_examples() -> None:
    assert len(TREE_EXAMPLES) >= 13 and len(FLAT_EXAMPLES) >= 8


@pytest.mark.parametrize("path", TREE_EXAMPLES, ids=lambda p: p.stem)
def test_tree_example_round_trips_exactly(path: Path) -> None:
    record = load(path)
    assert to_json(from_json(record)) == record
    assert to_json(from_json(path)) == record  # from a path
    assert to_json(from_json(json.dumps(record))) == record  # from JSON text


@pytest.mark.parametrize("path", TREE_EXAMPLES + FLAT_EXAMPLES, ids=lambda p: p.stem)
def test_ir_text_round_trips(path: Path) -> None:
    module = from_json(path)
    ctx = teir_context()
    for generic in (False, True):
        text = _print(module, generic)
        reparsed = Parser(ctx, text).parse_module()
        reparsed.verify()
        assert _print(reparsed, False) == _print(module, False)
        assert to_json(reparsed) == to_json(module)


def _print(module, generic: bool) -> str:
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


@pytest.mark.parametrize("path", FLAT_EXAMPLES, ids=lambda p: p.stem)
def test_flat_example_imports_to_a_tree_that_round_trips(path: Path) -> None:
    tree = flat_to_tree(load(path))
    assert to_json(from_json(tree)) == tree
    assert to_json(from_json(path)) == tree


def _by_id(records: list[dict]) -> dict:
    return {r["id"]: r for r in records}


def test_flat_records_example() -> None:
    """records.md's flat BRGEMM: parallel p, r; BRGEMM over s, q, (t, u); Zero first."""
    tree = flat_to_tree(load(SPEC_EXAMPLES / "flat" / "records_example.json"))
    assert tree["tensors"] == ["in0", "in1", "out"]
    prims = _by_id(tree["primitives"])
    assert prims["brgemm_sqtu"]["axes"] == {"M": ["s"], "N": ["q"], "K": ["t", "u"]}
    assert prims["zero_sq"]["axes"] == {"M": ["s"], "N": ["q"]}
    assert prims["zero_sq"]["operation"] == "Zero"
    iters = _by_id(tree["schedule"]["iterations"])
    assert [iters["p"]["policy"], iters["r"]["policy"]] == ["parallel", "parallel"]
    assert iters["r"]["children"] == ["zero", "brgemm"]
    # No K axis is iterated by the schedule: the first access of each tile is
    # every access, so the Zero runs unguarded before the BRGEMM.
    invs = _by_id(tree["schedule"]["invocations"])
    assert invs["zero"]["guard"] is None
    axes = _by_id(tree["axes"])
    assert axes["t"]["strides"] == [384 * 4, 8 * 4, 0]
    assert axes["p"]["offsets"] == [0, 0, 0]


def test_flat_guards_name_every_scheduled_k_axis() -> None:
    """GEMM under a scheduled K axis t: Zero on first(t), ReLU on last(t)."""
    record = load(SPEC_EXAMPLES / "flat" / "contraction_gemm.json")
    record["prim_first"] = "Zero"
    record["prim_last"] = "ReLU"
    tree = flat_to_tree(record)
    invs = tree["schedule"]["invocations"]
    assert [(i["id"], i["guard"]) for i in invs] == [
        ("zero", ["first(t)"]),
        ("gemm", None),
        ("relu", ["last(t)"]),
    ]
    prims = _by_id(tree["primitives"])
    assert prims["gemm_squ"]["axes"] == {"M": ["s"], "N": ["q"], "K": ["u"]}
    assert prims["relu_sq"]["operation"] == "ReLU"
    iters = _by_id(tree["schedule"]["iterations"])
    assert iters["t"]["children"] == ["zero", "gemm", "relu"]
    from_json(tree)


def test_flat_scalar_contraction_guards_every_k() -> None:
    record = load(SPEC_EXAMPLES / "flat" / "scalar_contraction.json")
    record["prim_first"] = "Zero"
    tree = flat_to_tree(record)
    zero = _by_id(tree["schedule"]["invocations"])["zero"]
    assert zero["guard"] == ["first(t)", "first(u)"]
    assert _by_id(tree["primitives"])["contraction_scalar"]["axes"] == {
        "M": [], "N": [], "K": []
    }


@pytest.mark.parametrize("first, last, expected", [("Zero", "None", 3.0),
                                                    ("None", "ReLU", 8.0)])
def test_flat_guards_take_every_axis_that_keeps_the_out_tile(first, last, expected) -> None:
    """An M axis r with stride 0 on out accesses the same out tile at each index:
    first()/last() of r too, so the tile is zeroed once and relu'd once (it was
    zeroed at every r: 2 instead of 1*1 + 2*1 = 3)."""
    from teir_lowering.runtime.kernel import compile_kernel

    record = {"dim_ids": ["r", "s", "q", "u"], "dim_types": ["M", "M", "N", "K"],
              "exec_types": ["seq", "prim", "prim", "prim"], "dim_sizes": [2, 1, 1, 1],
              "strides": [[1, 1, 0, 1], [0, 0, 1, 1], [0, 1, 1, 0]], "data_type": "FP32",
              "prim_first": first, "prim_main": "GEMM", "prim_last": last}
    guards = [i["guard"] for i in flat_to_tree(record)["schedule"]["invocations"]]
    assert guards == ([["first(r)"], None] if first == "Zero" else [None, ["last(r)"]])
    a, b = np.array([1, 2], np.float32), np.array([1], np.float32)
    out = np.array([5], np.float32)  # 5 + 1 + 2 without Zero
    compile_kernel(record)(a, b, out)
    assert out[0] == expected


def test_a_guard_names_an_axis_as_written_before_spaces_are_dropped() -> None:
    """Ids are any text: `first( k)` is the axis " k" when there is one (it was
    stripped to k, another axis), and `first( k )` is k when no axis is named with
    the spaces."""
    def record(guard: str, ids: tuple[str, str]) -> dict:
        outer, inner = ids
        return {"tensors": ["in0", "in1", "out"], "axes": [
            {"id": inner, "extent": 3, "strides": [4, 4, 0], "offsets": [0, 0, 0]},
            {"id": outer, "extent": 2, "strides": [12, 12, 0], "offsets": [0, 0, 0]}],
            "primitives": [
                {"id": "z", "operation": "Zero", "axes": {"M": [], "N": []},
                 "metadata": {"data_type": "FP32"}},
                {"id": "c", "operation": "Contraction", "axes": {"M": [], "N": [], "K": []},
                 "metadata": {"data_type": "FP32"}}],
            "schedule": {"roots": ["n0"], "iterations": [
                {"id": "n0", "axis": outer, "policy": "sequential", "children": ["n1"],
                 "guard": None},
                {"id": "n1", "axis": inner, "policy": "sequential",
                 "children": ["zero", "mac"], "guard": None}],
                "invocations": [{"id": "zero", "primitive": "z", "guard": [guard]},
                                {"id": "mac", "primitive": "c", "guard": None}]}}

    def guard_of(tree: dict) -> list[str]:
        return _by_id(to_json(from_json(tree))["schedule"]["invocations"])["zero"]["guard"]

    assert guard_of(record("first( k)", (" k", "k"))) == ["first( k)"]
    assert guard_of(record("first( k )", ("o", "k"))) == ["first(k)"]
    assert guard_of(record("last(k )", ("k ", "k"))) == ["last(k )"]


def test_flat_unary_roles_fill_m_then_n() -> None:
    tree = flat_to_tree(load(SPEC_EXAMPLES / "flat" / "tiled_permutation.json"))
    (prim,) = tree["primitives"]
    assert prim["operation"] == "Copy"
    assert prim["axes"] == {"M": ["d"], "N": ["b"]}
    assert tree["tensors"] == ["in0", "out"]
    assert [i["id"] for i in tree["schedule"]["iterations"]] == ["a", "c"]


def test_flat_default_dim_ids() -> None:
    record = load(SPEC_EXAMPLES / "flat" / "scalar_permutation.json")
    del record["dim_ids"]
    tree = flat_to_tree(record)
    assert [a["id"] for a in tree["axes"]] == ["d0", "d1", "d2", "d3"]


def test_node_ids_avoid_axis_ids() -> None:
    record = load(SPEC_EXAMPLES / "flat" / "contraction_gemm.json")
    record["dim_ids"] = ["gemm", "r", "t", "s", "q", "u"]
    tree = flat_to_tree(record)
    ids = [n["id"] for n in tree["schedule"]["iterations"] + tree["schedule"]["invocations"]]
    assert len(ids) == len(set(ids))
    from_json(tree)


def test_numeric_ids_keep_their_type() -> None:
    record = load(SPEC_EXAMPLES / "tree" / "10_2_1_minimal.json")
    text = json.dumps(record).replace('"x"', "1").replace('"op"', "2")
    record = json.loads(text)
    assert to_json(from_json(record)) == record
    assert record["schedule"]["roots"] == [1]


def test_metadata_values_survive() -> None:
    record = load(SPEC_EXAMPLES / "tree" / "10_2_1_minimal.json")
    record["primitives"][0]["metadata"].update(
        {"note": "x", "n": 3, "f": 0.1, "b": False, "none": None, "l": [1, [2]], "d": {"k": 1}}
    )
    assert to_json(from_json(record)) == record
