"""`teir-run`: the main job's driver checks (numpy peers included), times, and
reports bad input without a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

from conftest import SPEC_EXAMPLES
from teir_dialect import ConfigOp, TeirError, from_json, teir_context
from teir_dialect.analysis import footprint
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_lowering.frontends.numpy_peer import numpy_peer
from teir_passes.pipeline import OptimizePass


def _teir_run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "teir_tools.teir_run", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def test_check_and_bench_report_both_checks_and_both_times() -> None:
    run = _teir_run(
        str(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"),
        "--check",
        "--bench",
        "--repeat",
        "3",
    )
    assert run.returncode == 0, run.stderr
    assert re.search(r"check against reference interpreter: .* \(ok", run.stdout)
    assert re.search(r"check against numpy \(np\.einsum.*\(ok", run.stdout)
    assert re.search(r"\n  teir +[\d.]+ us +[\d.]+ GFLOP/s +[\d.]+% of the FP32 FMA peak "
                     r"at \d+ thread\(s\) \(median of per-round ratios; the peak: [\d.]+ "
                     r"GFLOP/s at best, [\d.]+ median\)\n", run.stdout), run.stdout
    assert re.search(r"\n  best numpy peer +[\d.]+ us +[\d.]+ GFLOP/s +[\d.]+x  np\.",
                     run.stdout), run.stdout
    assert re.search(r"\n  TEIR / best numpy peer: median of 3 per-round ratios: [\d.]+x ",
                     run.stdout), run.stdout
    assert re.search(r"\n  numpy [\d.]+, BLAS: \S+ \S+ architecture \S+ .* at \d+ "
                     r"thread\(s\) \(threadpoolctl", run.stdout), run.stdout
    assert re.search(r"\n  copy bandwidth: [\d.]+ GB/s", run.stdout), run.stdout


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


def test_footprint_beyond_memory_is_a_diagnostic_naming_each_tensor(
    tmp_path: Path,
) -> None:
    run = _teir_run(str(_huge_copy_record(tmp_path / "huge.json")), "--check")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "teir-run: error: " in run.stderr
    assert "in0 needs 1099511627776 bytes (1 TiB)" in run.stderr
    assert "out needs 1099511627776 bytes (1 TiB)" in run.stderr
    assert "--check holds 5 copies" in run.stderr  # 3 + a float64 copy of FP32 tensors


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


# --------------------------------------------------------------------------
# numpy peers of Contractions with a ReLU epilogue (what --check compares with)


def _flat(name: str, first: str, last: str) -> dict[str, Any]:
    record = json.loads((SPEC_EXAMPLES / "flat" / f"{name}.json").read_text())
    return {**record, "prim_first": first, "prim_last": last}


def _tree(name: str) -> dict[str, Any]:
    return json.loads((SPEC_EXAMPLES / "tree" / f"{name}.json").read_text())


def _random_inputs(config: ConfigOp, seed: int = 0) -> list[np.ndarray]:
    """FP32 arrays covering the footprint, half negative so that relu matters."""
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(max(1, (touched.stop if touched else 0) // 4) + 3, np.float32)
        for touched in footprint(config).values()
    ]


def _peer_and_reference(config: ConfigOp) -> tuple[str, np.ndarray, np.ndarray]:
    peer = numpy_peer(config)
    assert peer is not None
    inputs = _random_inputs(config)
    expected = [a.copy() for a in inputs]
    run_reference(config, expected)
    from_numpy = [a.copy() for a in inputs]
    peer[1](from_numpy)
    return peer[0], from_numpy[-1], expected[-1]


def _config(record: dict[str, Any], optimize: bool = False) -> ConfigOp:
    module = from_json(record)
    if optimize:  # teir-optimize: guards hoisted around the K loops, GEMM/BRGEMM lifted
        OptimizePass().apply(teir_context(), module)
    return find_configs(module)[0]


FLAT_CONTRACTIONS = (
    "contraction_gemm",
    "parallel_brgemm",
    "scalar_batched_gemm",
    "scalar_batched_gemm_reordered",
    "scalar_contraction",
)
RELU_CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "tree-10_2_2_guarded_reduction": (_tree("10_2_2_guarded_reduction"), False),
    **{
        f"flat-{name}-{first}-ReLU": (_flat(name, first, "ReLU"), False)
        for name in FLAT_CONTRACTIONS
        for first in ("Zero", "None")
    },
    **{
        f"optimized-{name}-Zero-ReLU": (_flat(name, "Zero", "ReLU"), True)
        for name in ("contraction_gemm", "scalar_contraction")
    },
}
"""(record, whether teir-optimize runs first) of each Contraction + ReLU case."""


@pytest.mark.parametrize("case", sorted(RELU_CASES))
def test_relu_epilogue_has_a_peer_that_matches_the_reference(case: str) -> None:
    description, got, expected = _peer_and_reference(_config(*RELU_CASES[case]))
    assert description.startswith("relu(np.einsum(")
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _reduction_inputs() -> list[np.ndarray]:
    """For §10.2.2 (out = relu(sum_k in0[k] in1[k]), |k| = 7): the partial sums are
    negative until the last k, whose contribution makes the sum +4."""
    in1 = np.array([-1.0] * 6 + [10.0], np.float32)
    return [np.ones(7, np.float32), in1, np.array([5.0], np.float32)]


def test_relu_epilogue_peer_clips_negative_results() -> None:
    peer = numpy_peer(_config(_tree("10_2_2_guarded_reduction")))
    assert peer is not None
    arrays = _reduction_inputs()
    arrays[1] = -arrays[1]  # the sum is -4: relu gives 0
    peer[1](arrays)
    assert arrays[-1].tolist() == [0.0]
    gemm = _config(_flat("contraction_gemm", "Zero", "ReLU"))
    _, got, expected = _peer_and_reference(gemm)
    assert (expected == 0).sum() > 100  # many clipped elements, equal in both
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _guarded_reduction(relu_guard: list[str] | None, order: list[str]) -> dict[str, Any]:
    record = _tree("10_2_2_guarded_reduction")
    record["schedule"]["iterations"][0]["children"] = order
    record["schedule"]["invocations"][2]["guard"] = relu_guard
    return record


NOT_FINAL = {
    # relu of every partial sum, not of the result
    "unguarded-in-the-reduction": _guarded_reduction(
        None, ["zero", "contraction", "relu"]
    ),
    "first-k": _guarded_reduction(["first(k)"], ["zero", "contraction", "relu"]),
    # at the last k, but before that iteration's contribution
    "before-the-contraction": _guarded_reduction(
        ["last(k)"], ["zero", "relu", "contraction"]
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_FINAL))
def test_no_peer_where_relu_is_not_the_final_step(case: str) -> None:
    """These configurations compute something else than relu(einsum): no peer."""
    config = _config(NOT_FINAL[case])
    assert numpy_peer(config) is None
    final = _config(_tree("10_2_2_guarded_reduction"))
    results = []
    for each in (config, final):
        arrays = _reduction_inputs()
        run_reference(each, arrays)
        results.append(arrays[-1].tolist())
    assert results[1] == [4.0]
    assert results[0] != [4.0]  # a relu(einsum) peer would be wrong here


def test_no_peer_where_relu_covers_another_tile() -> None:
    """A ReLU over part of the contraction's out tile (one row of s) is no epilogue."""
    record = _flat("contraction_gemm", "Zero", "ReLU")
    module = from_json(record)
    relu = next(p for p in find_configs(module)[0].primitives if p.kind == "ReLU")
    assert {a.axis_id for a in relu.all_role_axes} == {"s", "q"}
    text = str(module).replace("ReLU {M = [s], N = [q]}", "ReLU {M = [], N = [q]}")
    partial = find_configs(Parser(teir_context(), text).parse_module())[0]
    assert numpy_peer(partial) is None


def test_teir_run_checks_a_relu_epilogue_against_numpy(tmp_path: Path) -> None:
    record = tmp_path / "relu.json"
    record.write_text(json.dumps(_flat("contraction_gemm", "Zero", "ReLU")))
    run = _teir_run(str(record), "--check")
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(
        r"check against numpy \(relu\(np\.einsum\('trus,pqtu->pqrs'.*\(ok", run.stdout
    ), run.stdout


def test_median_time_batches_short_calls_after_a_slow_first_call() -> None:
    """A slow first call (a thread's start) must not leave each timed batch one
    call long, where the timer's and the loop's cost would dominate."""
    from teir_lowering.measure.timing import median_time

    calls = 0

    def function() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            time.sleep(0.02)

    seconds = median_time(function, 5)
    assert calls > 5 * 100  # batches of many calls
    assert seconds < 1e-4


# --------------------------------------------------------------------------
# --example / --list-examples: the records shipped as the package teir_examples

EXAMPLES = SPEC_EXAMPLES.parent
SHIPPED = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.json"))


def test_every_example_record_is_package_data() -> None:
    """pyproject.toml's package-data globs must catch each record in examples/."""
    import tomllib

    setuptools = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text())["tool"][
        "setuptools"
    ]
    assert setuptools["package-dir"]["teir_examples"] == "examples"
    globs = setuptools["package-data"]["teir_examples"]
    assert len(SHIPPED) > 20
    missing = [p for p in SHIPPED if not any(Path(p).match(g) for g in globs)]
    assert missing == []


def test_list_examples_names_every_shipped_record() -> None:
    run = _teir_run("--list-examples")
    assert run.returncode == 0, run.stderr
    listed = {line.split()[-1]: line.split()[:2] for line in run.stdout.splitlines()}
    assert sorted(listed) == SHIPPED
    assert listed["spec/tree/10_7_7_parallel_brgemm.json"] == [
        "10_7_7_parallel_brgemm",
        "tree",
    ]
    assert listed["brgemm_large.json"] == ["brgemm_large", "flat"]


def test_example_runs_a_shipped_record() -> None:
    run = _teir_run("--example", "10_6_3_gemm", "--check")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("example 10_6_3_gemm: kernel @kernel")
    assert re.search(r"check against numpy \(np\.einsum\('km,nk->nm'.*\(ok", run.stdout)


def test_unknown_example_is_a_diagnostic_with_suggestions() -> None:
    run = _teir_run("--example", "brgemm")
    assert run.returncode == 1
    assert run.stderr.startswith(
        "teir-run: error: no example named 'brgemm'; did you mean brgemm_large, "
        "parallel_brgemm, 10_7_7_parallel_brgemm? (teir-run --list-examples lists the "
        f"{len(SHIPPED)} examples)"
    )


def test_config_or_example_but_not_both() -> None:
    for args in ((), ("x.json", "--example", "10_6_3_gemm")):
        run = _teir_run(*args)
        assert run.returncode == 2
        assert "teir-run: error: give either CONFIG or --example NAME" in run.stderr


def test_teir_run_runs_a_linalg_function_against_numpy() -> None:
    """A linalg-level .mlir file goes through convert-linalg-to-teir and is checked
    against numpy evaluating the linalg ops, not TEIR."""
    path = Path(__file__).parent / "filecheck" / "transforms" / "linalg-to-llvm.mlir"
    run = _teir_run(str(path), "--check", "--bench", "--repeat", "3")
    assert run.returncode == 0, run.stderr
    assert "1 TEIR configuration(s) from linalg" in run.stdout
    assert run.stdout.count("(ok,") == 3


def test_a_linalg_file_is_told_by_its_ops_not_its_text(tmp_path: Path) -> None:
    """Whether a .mlir file is run as linalg (converted) or as a TEIR kernel is read
    from its ops: a comment naming teir.config made a linalg file a kernel without
    a configuration, and a file without the text "linalg." (memref.copy alone)
    one too."""
    from teir_dialect.records import load_module
    from teir_tools.teir_run import _holds_linalg

    commented = tmp_path / "commented.mlir"
    commented.write_text(
        "// lowered later to a teir.config\n"
        "func.func @cp(%a: memref<4xf32>, %b: memref<4xf32>) {\n"
        "  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)\n"
        "  func.return\n}\n")
    copy = tmp_path / "copy.mlir"
    copy.write_text("func.func @cp(%a: memref<4xf32>, %b: memref<4xf32>) {\n"
                    "  memref.copy %a, %b : memref<4xf32> to memref<4xf32>\n"
                    "  func.return\n}\n")
    kernel = Path(__file__).parent / "filecheck" / "spec" / "tree_10_6_3_gemm.mlir"
    assert _holds_linalg(load_module(commented)) and _holds_linalg(load_module(copy))
    assert not _holds_linalg(load_module(kernel))


def test_a_linalg_run_of_a_function_with_calls_is_refused_by_name() -> None:
    from teir_lowering.frontends.linalg_run import prepare_linalg

    text = """
    func.func @mm(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
      linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
      func.return
    }
    func.func @caller(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
      func.call @mm(%A, %B, %C) : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>) -> ()
      func.return
    }
    """
    with pytest.raises(TeirError, match=r"@caller calls @mm \(func.call\); a run takes one"):
        prepare_linalg(text, name="caller")
    assert len(prepare_linalg(text, name="mm").steps) == 1


# --------------------------------------------------------------------------
# --bench: numpy at its best (clean environment, every formulation), named


def _environment(**variables: str) -> dict[str, str]:
    """This process's environment without the variables that steer numpy's BLAS,
    plus `variables`."""
    from teir_lowering.measure.blas import steering_variables

    clean = {k: v for k, v in os.environ.items()
             if k not in steering_variables(os.environ, teir=False)}
    return {**clean, **variables}


def _architecture(env: dict[str, str]) -> str:
    """The kernel set numpy's BLAS picks in a process started with `env`."""
    code = ("from teir_lowering.measure.blas import blas_info; "
            "print(blas_info().get('architecture'))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True).stdout.strip()


def _printed_architecture(stdout: str) -> str:
    found = re.search(r"\n  numpy [\d.]+, BLAS: \S+ \S+ architecture (\S+) ", stdout)
    assert found, stdout
    return found.group(1)


def test_bench_reruns_without_the_variables_that_steer_numpy_and_names_them() -> None:
    """OPENBLAS_CORETYPE=Haswell made OpenBLAS run AVX2 kernels on an AVX-512 CPU,
    and the main job print a speedup over that handicapped numpy."""
    env = _environment(OPENBLAS_CORETYPE="Haswell", OMP_WAIT_POLICY="passive")
    run = _teir_run("--example", "10_6_3_gemm", "--bench", "--repeat", "3", env=env)
    assert run.returncode == 0, run.stderr
    assert re.search(r"\n  removed from the environment \(they steer numpy's BLAS; the peers "
                     r"run at their best without them\): OMP_WAIT_POLICY, OPENBLAS_CORETYPE\n",
                     run.stdout), run.stdout
    assert _printed_architecture(run.stdout) == _architecture(_environment())
    assert "kept in the environment" not in run.stdout


def test_keep_env_keeps_the_variables_and_warns_that_they_handicap_numpy() -> None:
    env = _environment(OPENBLAS_CORETYPE="Haswell")
    run = _teir_run("--example", "10_6_3_gemm", "--bench", "--repeat", "3", "--keep-env",
                    env=env)
    assert run.returncode == 0, run.stderr
    assert ("\n  kept in the environment (--keep-env): OPENBLAS_CORETYPE=Haswell: they "
            "steer numpy's BLAS and may handicap the numpy peers") in run.stdout
    assert "removed from the environment" not in run.stdout
    assert _printed_architecture(run.stdout) == _architecture(env)


def test_bench_called_from_python_names_the_variables_it_cannot_remove(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from teir_tools import teir_run

    monkeypatch.setenv("OPENBLAS_VERBOSE", "0")
    assert teir_run.main(["--example", "10_6_3_gemm", "--bench", "--repeat", "3"]) == 0
    out = capsys.readouterr().out
    assert "kept in the environment (called from Python): " in out
    assert "OPENBLAS_VERBOSE=0" in out


def _peers(name: str) -> dict[str, Any]:
    from teir_lowering.frontends.numpy_peer import numpy_peers

    return dict(numpy_peers(_config(_tree(name))))


def test_contraction_peers_include_einsum_without_planning_and_tensordot() -> None:
    """np.einsum(optimize=True) plans its path on every call (most of a small
    contraction's time): the path planned once and optimize=False are peers too."""
    peers = _peers("10_6_3_gemm")
    assert set(peers) == {
        "np.einsum('km,nk->nm', optimize=True)",
        "np.einsum('km,nk->nm', optimize=False)",
        ("np.einsum('km,nk->nm', optimize=['einsum_path', (0, 1)]) (planned once by "
         "np.einsum_path)"),
        "np.tensordot(in1, in0, axes=([1], [0])) ('km,nk->nm')",  # no transposing copy
    }
    batched = _peers("10_7_3_scalar_batched_gemm")
    assert "np.matmul(in0, in1) over batch 'd' ('dba,dac->dbc')" in batched


@pytest.mark.parametrize("name", ["10_2_2_guarded_reduction", "10_6_3_gemm",
                                  "10_7_3_scalar_batched_gemm", "10_7_5_scalar_contraction"])
def test_every_peer_computes_what_the_reference_does(name: str) -> None:
    config = _config(_tree(name))
    expected = _random_inputs(config)
    inputs = [a.copy() for a in expected]
    run_reference(config, expected)
    peers = _peers(name)
    assert len(peers) >= 4
    for description, peer in peers.items():
        arrays = [a.copy() for a in inputs]
        call = peer.bind(arrays)  # views made once, each call computes again
        call()
        np.testing.assert_allclose(call(), expected[-1], rtol=1e-5, atol=1e-5,
                                   err_msg=description)


def test_bench_times_every_peer_and_reports_the_least_favourable_to_teir() -> None:
    run = _teir_run("--example", "10_6_3_gemm", "--bench", "--repeat", "3",
                    env=_environment())
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    peers = [line for line in lines if re.match(r"  (best numpy peer|other peer) ", line)]
    assert len(peers) == 4, run.stdout
    assert peers[0].startswith("  best numpy peer ")
    assert any("(planned once by np.einsum_path)" in line for line in peers)
    assert any("optimize=False" in line for line in peers)
    ratios = [float(m.group(1)) for line in peers
              if (m := re.search(r" ([\d.]+)x  np\.", line))]
    best = re.search(r"median of 3 per-round ratios: ([\d.]+)x", run.stdout)
    assert best and float(best.group(1)) == min(ratios), run.stdout


def test_interleaved_rounds_rotate_and_reuse_a_timed_call() -> None:
    """Each round times every function once, in a rotated order; a function whose
    call the caller timed already (`once`) gets no warm-up or calibration calls,
    the others one warm-up and CALIBRATION_CALLS timed calls."""
    from teir_lowering.measure.timing import interleaved, median_ratio

    order: list[str] = []
    functions = {name: (lambda name=name: order.append(name)) for name in "abc"}
    samples = interleaved(functions, 3, batch_seconds=0.0, once={"a": 1.0})
    assert {name: len(times) for name, times in samples.items()} == {"a": 3, "b": 3, "c": 3}
    assert order == ["b"] * 4 + ["c"] * 4 + ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert median_ratio([2.0, 9.0, 4.0], [1.0, 1.0, 2.0]) == 2.0


def test_one_slow_call_does_not_size_a_batch() -> None:
    """A batch is sized by the fastest calibration call: one slow call (a thread
    pool waking up) made a 2-thread kernel's batches two calls long, so that its
    samples timed mostly the first call after the settle."""
    import time

    from teir_lowering.measure.timing import interleaved

    calls = {"n": 0}

    def function() -> None:
        calls["n"] += 1
        time.sleep(0.05 if calls["n"] == 2 else 0.001)

    interleaved({"a": function}, 1, batch_seconds=0.02)
    assert calls["n"] >= 1 + 3 + 10  # warm-up, calibration, a batch of ~20 calls


def test_interleaved_reads_the_given_clock() -> None:
    """Samples come from `clock` (e.g. time.thread_time on a loaded host), not the
    wall clock: a clock that advances by 5 per reading gives 5 per sample."""
    from teir_lowering.measure.timing import interleaved

    ticks = iter(range(0, 10_000, 5))
    samples = interleaved({"a": lambda: None, "b": lambda: None}, 3, batch_seconds=0.0,
                          clock=lambda: float(next(ticks)))
    assert samples == {"a": [5.0] * 3, "b": [5.0] * 3}


def test_steering_variables_are_blas_openmp_and_numpy_dispatch_ones() -> None:
    from teir_lowering.measure.blas import steering_variables

    environment = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512",
                   "OMP_NUM_THREADS": "1", "MKL_CBWR": "AVX", "GOTO_NUM_THREADS": "1",
                   "NPY_DISABLE_CPU_FEATURES": "AVX512F", "TEIR_NUM_THREADS": "1",
                   "PATH": "/bin", "OPENBLAS": "not a prefix match"}
    peer = ["GOTO_NUM_THREADS", "MKL_CBWR", "NPY_DISABLE_CPU_FEATURES", "OMP_NUM_THREADS",
            "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]
    assert steering_variables(environment, teir=False) == peer
    assert steering_variables(environment) == sorted([*peer, "TEIR_NUM_THREADS"])
