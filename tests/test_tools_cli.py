"""The command-line tools behave as users of compiler tools expect: a misspelt
pass or option gets a suggestion, a misread input a hint, a progress bar ends
full, and a check reports no mismatch that is not one."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conftest import ROOT, SPEC_EXAMPLES
from teir_dialect import from_json
from teir_dialect.records import find_configs
from teir_lowering.frontends import numpy_peer
from teir_tools import teir_opt, teir_run, teir_tune

CONTRACTION = str(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json")

OVERLAPPING_OUT = {  # out[m + n] += sum_k in0[m, k] in1[k, n]: out aliases itself
    "dim_ids": ["m", "n", "k"], "dim_types": ["M", "N", "K"],
    "exec_types": ["seq", "seq", "seq"], "dim_sizes": [4, 4, 8],
    "strides": [[8, 0, 1], [0, 1, 4], [1, 1, 0]],
    "data_type": "FP32", "prim_first": "None", "prim_main": "GEMM", "prim_last": "None",
}

MATMUL_RELU = """
func.func @matmul_relu(%A: memref<16x8xf32>, %B: memref<8x32xf32>, %C: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%C : memref<16x32xf32>)
  linalg.matmul ins(%A, %B : memref<16x8xf32>, memref<8x32xf32>) outs(%C : memref<16x32xf32>)
  func.return
}
"""


def test_tune_an_einsum_without_extents_asks_for_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert teir_tune.main(["ij,jk->ik"]) == 1
    err = capsys.readouterr().err
    assert ("teir-tune: error: 'ij,jk->ik' is an einsum: give the extents of its indices "
            "with --extents, e.g. --extents i=64,j=64,k=64") in err
    assert "tuning" not in err  # no progress bar before the error


def test_tune_ends_its_bar_full_and_show_names_type_and_threads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    assert teir_tune.main(["ij,jk->ik", "--extents", "i=8,j=8,k=8", "--dtype", "FP16",
                           "--budget", "0.3", "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert "100%" in err.split("\r")[-1], err  # a bar appears once candidates run
    assert teir_tune.main(["--show"]) == 0
    out = capsys.readouterr().out
    assert "  ij,jk->ik i=8,j=8,k=8: FP16, 1 thread(s) on " in out, out


def _opt(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert teir_opt.main([CONTRACTION, *args]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return err


def test_tune_of_bad_input_shows_no_bar(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{")
    assert teir_tune.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("teir-tune: error: ") and "tuning" not in err, err


@pytest.mark.parametrize("options, message", [
    (["--budget=nan"], "--budget must be a positive number of seconds (finite) and --beam at least 1"),
    (["--budget=inf"], "--budget must be a positive number of seconds (finite) and --beam at least 1"),
    (["--threads", "0"], "--threads must be an int >= 1, got 0"),
])
def test_tune_refuses_a_budget_or_thread_count_before_it_stores(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """nan passed `budget <= 0` and stored the baseline before failing on a float
    conversion; inf failed on a format; --threads 0 tuned for every core."""
    from teir_passes import schedule_cache

    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    record = Path(__file__).parent.parent / "examples" / "spec" / "tree" / \
        "10_7_5_scalar_contraction.json"
    assert teir_tune.main([str(record), *options]) == 1
    assert capsys.readouterr().err == f"teir-tune: error: {message}\n"
    assert schedule_cache.entries() == []


@pytest.mark.parametrize("arguments", [["x.json", "--show"], ["--show", "--clear"],
                                       ["x.json", "--clear"]])
def test_tune_show_and_clear_go_alone(arguments: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`teir-tune CONFIG --show` ignored CONFIG, `--show --clear` only showed."""
    with pytest.raises(SystemExit) as exited:
        teir_tune.main(arguments)
    assert exited.value.code == 2
    assert "--show and --clear take no configuration and go alone" in capsys.readouterr().err


def test_a_misspelt_pass_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert ("teir-opt: error: unknown pass 'teir-optimise' in -p 'teir-optimise': did you "
            "mean 'teir-optimize'? (teir-opt --help lists the passes)"
            ) in _opt(capsys, "-p", "teir-optimise")


def test_an_unknown_pass_option_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert ("teir-opt: error: unknown option 'factr' of pass 'teir-split': did you mean "
            "'factor'? (its options: axis, factor, inner)"
            ) in _opt(capsys, "-p", "teir-split{axis=p factr=2}")
    assert "unknown option 'bogus' of pass 'teir-to-scf' (its options: " in _opt(
        capsys, "-p", "teir-to-scf{bogus=1}")


def test_json_on_stdin_without_f_json_gets_a_hint() -> None:
    text = Path(CONTRACTION).read_text()
    run = subprocess.run([sys.executable, "-m", "teir_tools.teir_opt"], input=text,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert ("teir-opt: error: stdin starts with '{', like a JSON record, but is read as "
            "MLIR: pass -f json to read a record from stdin") in run.stderr
    run = subprocess.run([sys.executable, "-m", "teir_tools.teir_opt", "-f", "json"],
                         input=text, capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "teir.config" in run.stdout


def test_an_out_that_aliases_itself_has_no_numpy_peer() -> None:
    (config,) = find_configs(from_json(json.dumps(OVERLAPPING_OUT)))
    assert numpy_peer.out_aliases_itself(config)
    assert numpy_peer.numpy_peers(config) == []
    dense = dict(OVERLAPPING_OUT, strides=[[8, 0, 1], [0, 1, 4], [4, 1, 0]])
    (config,) = find_configs(from_json(json.dumps(dense)))
    assert not numpy_peer.out_aliases_itself(config) and numpy_peer.numpy_peers(config)


def test_check_reports_no_false_mismatch_on_an_out_that_aliases_itself(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = tmp_path / "overlap.json"
    path.write_text(json.dumps(OVERLAPPING_OUT))
    assert teir_run.main([str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "MISMATCH" not in out
    assert "check against reference interpreter: " in out and "(ok" in out
    assert "numpy not compared: out's strides address some element from several" in out


def test_bench_of_a_linalg_function_times_numpy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    path = tmp_path / "matmul.mlir"
    path.write_text(MATMUL_RELU)
    assert teir_run.main([str(path), "--bench", "--repeat", "3", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "\n  teir   " in out
    assert "\n  numpy  " in out and "np.einsum('ac,cb->ab', optimize=True)" in out, out


@pytest.mark.parametrize("lit_status", [0, 3])
def test_run_tests_finds_the_virtualenv(tmp_path: Path, lit_status: int) -> None:
    """Without the venv on PATH, ./run-tests writes the project's bytecode and runs
    pytest, then lit, from .venv/bin, and fails when lit fails."""
    shutil.copy(ROOT / "run-tests", tmp_path / "run-tests")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "log"
    for tool, status in (("python", 0), ("lit", lit_status)):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\necho "{tool} says"\n'
                          f"exit {status}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    environment = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    run = subprocess.run(["bash", str(tmp_path / "run-tests"), "-k", "x"], env=environment,
                         capture_output=True, text=True, check=False)
    assert run.returncode == lit_status, run.stderr
    assert run.stdout.splitlines() == ["python says", "lit says"]
    log_lines = log.read_text().splitlines()
    assert log_lines == ["python -m compileall -q teir_dialect passes lowering tools",
                         "python -m pytest -n auto tests -k x", "lit -sv tests/filecheck"]


def test_einsum_takes_bfloat16_arrays_as_bf16() -> None:
    from teir_lowering import einsum

    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 4)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((4, 6)).astype(ml_dtypes.bfloat16)
    result = einsum("ij,jk->ik", a, b)
    assert result.dtype == ml_dtypes.bfloat16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 2 * 2.0**-8 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(result.astype(np.float64) - exact) <= bound)
