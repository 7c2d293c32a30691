"""`teir-run`: the main job's driver checks, times, and reports bad input without a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
