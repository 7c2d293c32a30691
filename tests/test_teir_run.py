"""`teir-run`: the main job's driver checks, times, and reports bad input without a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SPEC_EXAMPLES


def _teir_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "teir_tools.teir_run", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )


def test_check_and_bench_report_both_checks_and_both_times() -> None:
    run = _teir_run(str(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"),
                    "--check", "--bench", "--repeat", "3")
    assert run.returncode == 0, run.stderr
    assert re.search(r"check against reference interpreter: .* \(ok", run.stdout)
    assert re.search(r"check against numpy \(np\.einsum.*\(ok", run.stdout)
    lines = [line.split()[0] for line in run.stdout.splitlines()[3:6]]
    assert lines == ["teir", "numpy", "speedup"]
    assert re.search(r"teir\s+[\d.]+ us\s+[\d.]+ GFLOP/s", run.stdout)


def test_bad_record_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"tensors": ["in0", "out"], "axes": [{"id": "a", "extent": 4, "strides": [4, 4],'
        ' "offsets": [0, 0]}], "primitives": [{"id": "c", "operation": "Copy", "axes":'
        ' {"M": ["a"], "N": []}, "metadata": {"data_type": "FP32"}}], "schedule": {"roots":'
        ' ["x"], "iterations": [], "invocations": [{"id": "x", "primitive": "nope",'
        ' "guard": null}]}}'
    )
    run = _teir_run(str(bad))
    assert run.returncode == 1
    assert "teir-run: error: invocation node rule: invocation 'x'" in run.stderr
    assert "Traceback" not in run.stderr


def _huge_copy_record(path: Path) -> Path:
    """A Copy over 2^38 FP32 elements: in0 and out each need 2^40 bytes."""
    path.write_text(
        '{"tensors": ["in0", "out"], "axes": [{"id": "a", "extent": 274877906944,'
        ' "strides": [4, 4], "offsets": [0, 0]}], "primitives": [{"id": "copy",'
        ' "operation": "Copy", "axes": {"M": [], "N": []}, "metadata": {"data_type":'
        ' "FP32"}}], "schedule": {"roots": ["a"], "iterations": [{"id": "a", "axis": "a",'
        ' "policy": "sequential", "children": ["c"], "guard": null}], "invocations":'
        ' [{"id": "c", "primitive": "copy", "guard": null}]}}'
    )
    return path


def test_footprint_beyond_memory_is_a_diagnostic_naming_each_tensor(tmp_path: Path) -> None:
    run = _teir_run(str(_huge_copy_record(tmp_path / "huge.json")), "--check")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "teir-run: error: " in run.stderr
    assert "in0 needs 1099511627776 bytes (1 TiB)" in run.stderr
    assert "out needs 1099511627776 bytes (1 TiB)" in run.stderr
    assert "--check holds 3 copies" in run.stderr


def test_allocation_failure_is_a_diagnostic_naming_each_tensor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the available memory is unknown, numpy's MemoryError is the diagnostic."""
    from teir_tools import teir_run

    monkeypatch.setattr(teir_run, "available_memory", lambda: None)
    status = teir_run.main([str(_huge_copy_record(tmp_path / "huge.json"))])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("teir-run: error: cannot allocate the tensors: ")
    assert "in0 needs 1099511627776 bytes (1 TiB), out needs 1099511627776 bytes" in err
