"""Regression tests for bad input reaching the records and the verifier.

Each case was found by trying the project as a new user would; before the fix
it crashed (KeyError, RecursionError, IndexError, UnicodeEncodeError), was accepted
silently, or was misread.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable
from io import StringIO

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.printer import Printer

from conftest import SPEC_EXAMPLES, examples, load
from teir_dialect import TeirError, from_json, to_json
from teir_dialect.dialect import MAX_SCHEDULE_DEPTH
from teir_dialect.records import load_json, load_module, parse_mlir

PERMUTATION = SPEC_EXAMPLES / "tree" / "10_7_1_scalar_permutation.json"


def chain(depth: int) -> dict:
    """A unary Copy under `depth` nested iteration nodes over extent-1 axes."""
    return {
        "tensors": ["in0", "out"],
        "axes": [
            {"id": f"a{i}", "extent": 1, "strides": [0, 0], "offsets": [0, 0]}
            for i in range(depth)
        ],
        "primitives": [{"id": "c", "operation": "Copy", "axes": {"M": [], "N": []},
                        "metadata": {"data_type": "FP32"}}],
        "schedule": {
            "roots": ["a0"],
            "iterations": [
                {"id": f"a{i}", "axis": f"a{i}", "policy": "sequential",
                 "children": [f"a{i + 1}" if i + 1 < depth else "x"], "guard": None}
                for i in range(depth)
            ],
            "invocations": [{"id": "x", "primitive": "c", "guard": None}],
        },
    }


# -- 1. the tensor count is checked before tensors are indexed -------------------------


def test_contraction_with_two_tensors_names_the_rule() -> None:
    record = chain(1)
    record["primitives"][0]["operation"] = "Contraction"
    record["primitives"][0]["axes"]["K"] = []
    with pytest.raises(TeirError, match="operation constraint: primitive 'c' is a "
                       "Contraction, which needs three tensors"):
        from_json(record)


def test_teir_opt_reports_the_two_tensor_contraction(tmp_path: pathlib.Path) -> None:
    record = chain(1)
    record["primitives"][0]["operation"] = "Contraction"
    record["primitives"][0]["axes"]["K"] = []
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    run = subprocess.run([sys.executable, "-m", "teir_tools.teir_opt", str(path)], check=False,
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "needs three tensors" in run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


# -- 3. paths, text, empty and unreadable files ------------------------------------------


@pytest.mark.parametrize("prefix", ["  \n", "\ufeff", "// a comment\n", "\n\n\t"])
def test_json_files_with_leading_text_are_read_as_files(
    tmp_path: pathlib.Path, prefix: str
) -> None:
    path = tmp_path / "record.json"
    path.write_text(prefix + PERMUTATION.read_text(), encoding="utf-8")
    expected = load(PERMUTATION)
    assert to_json(from_json(str(path))) == expected
    assert to_json(from_json(path)) == expected  # a pathlib.Path
    assert to_json(from_json(os.fsencode(path).decode())) == expected


def test_json_text_is_text_and_pathlike_is_a_path(tmp_path: pathlib.Path) -> None:
    text = PERMUTATION.read_text()
    assert to_json(from_json(text)) == load(PERMUTATION)
    assert to_json(from_json("\ufeff" + text)) == load(PERMUTATION)

    class Where(os.PathLike):
        def __fspath__(self) -> str:
            return str(PERMUTATION)

    assert to_json(from_json(Where())) == load(PERMUTATION)


def test_empty_and_unreadable_inputs_have_their_own_messages(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(TeirError, match="empty.json is empty"):
        from_json(empty)
    with pytest.raises(TeirError, match="empty input"):
        from_json("")
    with pytest.raises(TeirError, match="is a directory, not a file"):
        from_json(tmp_path)
    with pytest.raises(TeirError, match="No such file"):
        from_json(str(tmp_path / "missing.json"))
    with pytest.raises(TeirError, match="invalid JSON at line 1"):
        from_json('{"tensors": ')
    # bytes are a file's or a stream's contents: never a path, however they look
    (tmp_path / "not json").write_text('{"tensors": ')
    with pytest.raises(TeirError, match="invalid JSON at line 1 column 1"):
        from_json(str(tmp_path / "not json").encode())
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TeirError, match="not UTF-8"):
        load_json(binary)


def test_load_module_reads_mlir_and_reports_parse_errors(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @k( {")
    with pytest.raises(TeirError):
        load_module(path)
    with pytest.raises(TeirError, match="is empty"):
        (tmp_path / "empty.mlir").write_text("")
        load_module(tmp_path / "empty.mlir")


# -- 5. offsets and footprints fit a signed 64-bit index ----------------------------------


def test_footprint_beyond_64_bits_is_rejected() -> None:
    record = chain(2)
    record["axes"][0] |= {"extent": 2**40, "strides": [2**30, 2**30]}
    record["axes"][1] |= {"extent": 2**40, "strides": [2**62, 4]}
    with pytest.raises(TeirError, match="index range: invocation 'x' addresses in0"):
        from_json(record)


def test_offsets_that_sum_past_64_bits_are_rejected() -> None:
    record = chain(2)
    record["axes"][0]["offsets"] = [2**62, 0]
    record["axes"][1]["offsets"] = [2**62, 0]
    with pytest.raises(TeirError, match="index range"):
        from_json(record)


def test_offsets_past_64_bits_in_the_record_are_rejected() -> None:
    record = chain(1)
    record["axes"][0]["offsets"] = [2**63, 0]
    with pytest.raises(TeirError, match="64-bit"):
        from_json(record)


# -- 6. deep schedules -----------------------------------------------------------------


def test_the_deepest_accepted_schedule_verifies_and_prints() -> None:
    module = from_json(chain(MAX_SCHEDULE_DEPTH))
    assert str(module).count("teir.iter") == MAX_SCHEDULE_DEPTH
    assert to_json(module) == chain(MAX_SCHEDULE_DEPTH)


@pytest.mark.parametrize("depth", [MAX_SCHEDULE_DEPTH + 1, 200, 5000])
def test_deeper_schedules_get_a_diagnostic(depth: int) -> None:
    with pytest.raises(TeirError, match=f"schedule depth: iteration node 'a{MAX_SCHEDULE_DEPTH}'"
                       f" is nested {MAX_SCHEDULE_DEPTH + 1} iteration nodes deep"):
        from_json(chain(depth))


def test_a_cycle_is_still_reported() -> None:
    record = chain(3)
    record["schedule"]["iterations"][2]["children"] = ["a1"]
    record["schedule"]["roots"] = ["a0"]
    with pytest.raises(TeirError, match="schedule rule"):
        from_json(record)


def test_many_invocations_verify() -> None:
    record = chain(1)
    record["schedule"]["iterations"][0]["children"] = [f"x{i}" for i in range(3000)]
    record["schedule"]["invocations"] = [
        {"id": f"x{i}", "primitive": "c", "guard": None} for i in range(3000)
    ]
    module = from_json(record)
    assert to_json(module) == record


# -- 7. ids keep their JSON type ------------------------------------------------------------


def test_number_and_string_ids_do_not_collide() -> None:
    record = chain(1)
    record["axes"][0]["id"] = 7
    record["schedule"]["iterations"][0]["axis"] = "7"
    with pytest.raises(TeirError, match="id rule: iteration node 'a0' names axis '7' as a "
                       "string, but the axis is defined with a number id"):
        from_json(record)
    fixed = copy.deepcopy(record)
    fixed["schedule"]["iterations"][0]["axis"] = 7
    assert to_json(from_json(fixed)) == fixed
    record["primitives"][0]["id"] = 3
    record["schedule"]["iterations"][0]["axis"] = 7
    record["schedule"]["invocations"][0]["primitive"] = "3"
    with pytest.raises(TeirError, match="id rule: invocation 'x' names primitive '3'"):
        from_json(record)


# -- 8. input beyond the readers' limits: a diagnostic and exit 1 from every tool -------


def _iter_chain_mlir(depth: int) -> str:
    """A Copy under `depth` nested teir.iter regions, as MLIR text."""
    axes = "".join(
        f"    teir.axis a{i} extent 1 strides [0, 0] offsets [0, 0]\n" for i in range(depth)
    )
    opens = "".join(f"teir.iter a{i} over a{i} {{\n" for i in range(depth))
    return (
        "func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {\n"
        "  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {\n"
        f"{axes}"
        '    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}\n'
        f"    teir.schedule {{\n{opens}teir.invoke x -> c\n{'}' * depth}\n    }}\n"
        "  }\n  func.return\n}\n"
    )


def _metadata(text: str) -> str:
    return json.dumps(chain(1)).replace('"data_type": "FP32"', '"data_type": "FP32", ' + text)


MATMUL = "linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)"
LINALG = ("func.func @mm(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {{\n"
          "  {}\n  func.return\n}}\n")

BAD_INPUTS = {
    "json-100000-deep.json": (
        lambda: "[" * 100_000 + "]" * 100_000,
        "record depth: the array or object at line 1 column 65 is nested more than 64 deep"),
    "metadata-900-deep.json": (
        lambda: _metadata('"x": ' + "[" * 900 + "]" * 900),
        ("record depth: primitives[0].metadata.x[0][0]... nests arrays and objects more "
        "than 64 deep")),
    "integer-4301-digits.json": (
        lambda: _metadata('"n": ' + "7" * 4301),
        "has 4301 digits, beyond 64-bit integers"),
    "lone-surrogate-id.json": (
        lambda: json.dumps(chain(1)).replace('"id": "x"', '"id": "\\ud800"'),
        "text rule: schedule.invocations[0].id holds the lone surrogate U+D800"),
    "matmul-indexing-maps.mlir": (
        lambda: LINALG.format(MATMUL.replace("ins(", "indexing_maps = [] ins(")),
        "linalg.matmul: indexing_maps must be a list of three affine maps (a, b, out)"),
    "matmul-mangled-outs.mlir": (
        lambda: LINALG.format(MATMUL.replace("outs(%C", "%C(%A")),
        "Expected '=' after operation result list"),
    "teir-iter-200-deep.mlir": (
        lambda: _iter_chain_mlir(200),
        ("schedule depth: this teir.iter is nested 129 iteration nodes deep; TEIR accepts "
        "at most 128")),
    "teir-iter-5000-deep.mlir": (
        lambda: _iter_chain_mlir(5000),
        "nesting depth: this bracket opens level 257; TEIR reads MLIR nested at most 256"),
    "integer-4301-digits.mlir": (
        lambda: _iter_chain_mlir(1).replace("extent 1", "extent " + "7" * 4301),
        "integer range: an integer literal of more than 4300 digits"),
    "extent-beyond-64-bits.mlir": (
        lambda: _iter_chain_mlir(1).replace("extent 1", "extent " + str(2**64)),
        "integer range: an extent must fit in 64 bits"),
    "id-not-utf8.mlir": (
        lambda: _iter_chain_mlir(1).replace("teir.invoke x", 'teir.invoke "\\ED\\A0\\80"'),
        "id rule: an id is Unicode text, and this string literal's bytes are not UTF-8"),
}


def _tool(name: str) -> Callable[[list[str]], int]:
    from teir_tools import teir_opt, teir_run, teir_tune

    return {"teir-opt": teir_opt.main, "teir-run": teir_run.main,
            "teir-tune": teir_tune.main}[name]


@pytest.mark.parametrize("tool", ["teir-opt", "teir-run", "teir-tune"])
@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_gets_a_diagnostic_and_exit_1(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], tool: str, name: str
) -> None:
    text, message = BAD_INPUTS[name]
    path = tmp_path / name
    path.write_text(text(), encoding="utf-8")
    assert _tool(tool)([str(path)]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_to_compile_kernel_is_a_teir_error(tmp_path: pathlib.Path, name: str) -> None:
    from teir_lowering.runtime.kernel import compile_kernel

    text, message = BAD_INPUTS[name]
    path = tmp_path / name
    path.write_text(text(), encoding="utf-8")
    with pytest.raises(TeirError) as info:
        compile_kernel(path)
    assert message in str(info.value)


def test_plain_xdsl_opt_stops_a_deep_schedule_with_a_parse_error(tmp_path: pathlib.Path) -> None:
    """The teir.iter parser bounds its own recursion, so xdsl-opt (the xdsl.universe
    entry point) reports the rule, not a RecursionError."""
    path = tmp_path / "deep.mlir"
    path.write_text(_iter_chain_mlir(200))
    run = subprocess.run(
        [sys.executable, "-c", "from xdsl.tools.xdsl_opt import main; main()", str(path)],
        check=False, capture_output=True, text=True,
    )
    assert run.returncode == 1
    assert "schedule depth: this teir.iter is nested 129 iteration nodes deep" in run.stderr
    assert "RecursionError" not in run.stderr


@pytest.mark.parametrize("tool", ["teir-opt", "teir-run", "teir-tune"])
def test_a_nul_in_a_path_is_a_diagnostic(
    capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    assert _tool(tool)(["a\0b.json"]) == 1
    err = capsys.readouterr().err
    assert f"{tool}: error: cannot read 'a\\x00b.json': a path cannot hold a NUL character" in err


def test_teir_opt_refuses_a_nul_in_the_output_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert _tool("teir-opt")([str(PERMUTATION), "-o", "out\0.mlir"]) == 1
    assert ("teir-opt: error: cannot write 'out\\x00.mlir': a path cannot hold a NUL "
            "character") in capsys.readouterr().err


def _on_a_deep_stack(frames: int, call: Callable[[], object]) -> object:
    return call() if frames == 0 else _on_a_deep_stack(frames - 1, call)


def test_the_deepest_schedule_parses_from_a_deep_caller_stack(tmp_path: pathlib.Path) -> None:
    """xDSL's parser needs about seven frames per level: the readers make room for
    the deepest input they accept whatever the caller's stack."""
    path = tmp_path / "deepest.mlir"
    path.write_text(_iter_chain_mlir(MAX_SCHEDULE_DEPTH))
    module = _on_a_deep_stack(600, lambda: load_module(path))
    assert str(module).count("teir.iter") == MAX_SCHEDULE_DEPTH


# -- 9. ids are any Unicode text: they round-trip and compile ----------------------------

ID_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)


def _with_ids(axis: str, node: str, primitive: str, invocation: str) -> dict:
    record = chain(1)
    record["axes"][0]["id"] = axis
    record["primitives"][0]["id"] = primitive
    record["primitives"][0]["metadata"]["note"] = axis + node
    iteration = record["schedule"]["iterations"][0]
    iteration |= {"id": node, "axis": axis, "children": [invocation]}
    record["schedule"]["roots"] = [node]
    record["schedule"]["invocations"][0] |= {"id": invocation, "primitive": primitive}
    return record


@settings(max_examples=examples(400, 40), deadline=None)
@given(ID_TEXT, ID_TEXT, ID_TEXT, ID_TEXT)
def test_any_unicode_ids_round_trip_through_mlir(
    axis: str, node: str, primitive: str, invocation: str
) -> None:
    assume(node != invocation)
    record = _with_ids(axis, node, primitive, invocation)
    module = from_json(record)
    assert to_json(parse_mlir(str(module), "custom")) == record
    generic = StringIO()
    Printer(generic, print_generic_format=True).print_op(module)
    assert to_json(parse_mlir(generic.getvalue(), "generic")) == record


@pytest.mark.parametrize("new_id", ["é", "🙂", "_1", "a b", 'x"y\\z'])
def test_non_ascii_and_odd_ids_compile_and_compute(new_id: str) -> None:
    from teir_dialect.interpreter import run_reference
    from teir_lowering.runtime.kernel import compile_kernel

    record = json.loads(PERMUTATION.read_text().replace('"a"', json.dumps(new_id)))
    kernel = compile_kernel(record)
    arrays = [np.arange(120, dtype=np.float32), np.zeros(120, dtype=np.float32)]
    expected = [a.copy() for a in arrays]
    kernel(*arrays)
    run_reference(from_json(record), expected)
    np.testing.assert_array_equal(arrays[1], expected[1])
