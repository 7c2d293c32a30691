"""Compiled kernels on disk (teir_lowering.kernel_cache): a second process loads the
machine code instead of lowering again, and gets the same results; a damaged or
disabled cache compiles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from conftest import SPEC_EXAMPLES
from teir_lowering import kernel_cache
from teir_lowering.kernel import _CACHE, compile_kernel

EXAMPLE = SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"

RUN = f"""
import sys, numpy as np
from teir_lowering.kernel import compile_kernel
from teir_dialect.interpreter import run_reference
from strategies import random_arrays
import json
record = json.load(open({str(EXAMPLE)!r}))
kernel = compile_kernel(record, threads=2)
arrays = random_arrays(record, np.random.default_rng(0))
expected = [a.copy() for a in arrays]
run_reference(record, expected)
kernel(*arrays)
np.testing.assert_allclose(arrays[-1], expected[-1], rtol=1e-5, atol=1e-5)
print("cached" if "cached" in kernel.stages else "compiled")
"""


def run_in_process(cache: Path, **environment: str) -> str:
    env = {**os.environ, "TEIR_CACHE_DIR": str(cache), **environment,
           "PYTHONPATH": str(Path(__file__).parent)}
    result = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                            env=env, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_second_process_loads_the_kernel_and_gets_the_same_results(tmp_path: Path) -> None:
    assert run_in_process(tmp_path) == "compiled"
    assert sorted(p.suffix for p in (tmp_path / "kernels").iterdir()) == [".json", ".ll", ".o"]
    assert run_in_process(tmp_path) == "cached"


def test_a_damaged_entry_is_compiled_again(tmp_path: Path) -> None:
    assert run_in_process(tmp_path) == "compiled"
    (code,) = (tmp_path / "kernels").glob("*.o")
    data = bytearray(code.read_bytes())
    data[len(data) // 2] ^= 0xFF
    code.write_bytes(bytes(data))
    assert run_in_process(tmp_path) == "compiled"  # the hash does not match
    assert run_in_process(tmp_path) == "cached"  # written again


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    assert run_in_process(tmp_path, TEIR_KERNEL_CACHE="0") == "compiled"
    assert not (tmp_path / "kernels").exists()


def test_in_process_reload_and_clear(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    record = EXAMPLE.read_text()
    saved = dict(_CACHE)  # other tests of this process expect their kernels compiled
    try:
        _CACHE.clear()
        first = compile_kernel(record, threads=1)
        _CACHE.clear()
        second = compile_kernel(record, threads=1)
    finally:
        _CACHE.clear()
        _CACHE.update(saved)
    assert "cached" not in first.stages and "cached" in second.stages
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(t.needed_bytes // 4).astype(np.float32)
              for t in first.tensors]
    results = []
    for kernel in (first, second):
        out = arrays[-1].copy()
        kernel(*arrays[:-1], out)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    assert kernel_cache.clear() == 1
    assert not list((tmp_path / "kernels").glob("*.json"))
