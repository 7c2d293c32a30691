"""Regression tests for bad input reaching the records and the verifier.

Each case was found by trying the project as a new user would; before the fix
it crashed (KeyError, RecursionError), was accepted silently, or was misread.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import SPEC_EXAMPLES, load
from teir_dialect import TeirError, from_json, to_json
from teir_dialect.dialect import MAX_SCHEDULE_DEPTH
from teir_dialect.records import load_json, load_module

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
