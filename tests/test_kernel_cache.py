"""Compiled kernels on disk (teir_lowering.runtime.kernel_cache): a second process loads the
machine code instead of lowering again, and gets the same results; a damaged,
mixed-up or planted entry, or a disabled cache, compiles.

Each corruption is tried in a fresh process (`ATTACK`) with a time and memory
limit, so that a regression (a crash, a hang on a FIFO, reading /dev/zero)
fails its test instead of taking pytest down."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from conftest import SPEC_EXAMPLES
from teir_dialect import TeirError, cache_files
from teir_dialect.interpreter import run_reference
from teir_lowering.runtime import kernel_cache
from teir_lowering.runtime.kernel import _CACHE, compile_kernel

EXAMPLE = SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"
SMALL = SPEC_EXAMPLES / "tree" / "10_2_1_minimal.json"
"""A sequential kernel on 24-byte tensors (EXAMPLE is parallel and touches kilobytes)."""

RUN = f"""
import sys, numpy as np
from teir_lowering.runtime.kernel import compile_kernel
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


EINSUM_RUN = """
import sys, numpy as np
from teir_lowering import einsum
a = np.arange(8 * 30 * 40, dtype=np.float32).reshape(8, 30, 40) % 7
b = np.arange(40 * 50, dtype=np.float32).reshape(40, 50) % 5
np.testing.assert_array_equal(einsum("abc,cd->abd", a, b, threads=2), np.einsum("abc,cd->abd", a, b))
np.testing.assert_array_equal(einsum("abc->cba", a), np.einsum("abc->cba", a))
print(" ".join(sorted(m for m in sys.modules if m.startswith(
    ("teir_lowering.codegen.", "teir_lowering.llvm", "xdsl.dialects.llvm")))))
"""


def test_kernels_from_the_cache_import_no_code_generator(tmp_path: Path) -> None:
    """A new process whose `einsum` calls (a parallel GEMM, a permutation) find their
    kernels on disk imports neither code generator nor xDSL's llvm dialect:
    importing them was most of such a first call (0.3 s of 0.35, README, Compile
    time). The planner's light modules (the GEMM plan, the launchers' team array)
    it may."""
    env = {**os.environ, "TEIR_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", EINSUM_RUN], capture_output=True,
                           text=True, env=env, check=False) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    compiled, cached = (set(run.stdout.split()) for run in runs)
    assert "teir_lowering.codegen.emit" in compiled  # the first process compiled
    assert cached <= {"teir_lowering.codegen.gemm_plan", "teir_lowering.codegen.storage",
                      "teir_lowering.codegen.team"}, cached


NEW_SHAPE_RUN = """
import sys, numpy as np
from teir_lowering import einsum
n = int(sys.argv[1])
a = np.arange(n * 256, dtype=np.float32).reshape(n, 256) % 7
b = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) % 5
np.testing.assert_array_equal(einsum("ij,jk->ik", a, b), a @ b)
print(" ".join(sorted(m for m in sys.modules if m.startswith(
    ("teir_lowering.codegen.", "xdsl.dialects.llvm")))))
"""


def test_a_new_kernel_takes_its_launchers_from_the_cache(tmp_path: Path) -> None:
    """The libgomp launchers are LLVM IR built in xDSL's llvm dialect, per set of
    parallel-loop signatures; kept on disk, a new process compiling a new shape
    of the same parallel GEMM links them without importing that dialect (its
    import and the build were a third of such a first call: README, Compile
    time)."""
    env = {**os.environ, "TEIR_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", NEW_SHAPE_RUN, str(n)], capture_output=True,
                           text=True, env=env, check=False) for n in (256, 255)]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    first, second = (set(run.stdout.split()) for run in runs)
    assert {"teir_lowering.codegen.gomp_launch", "xdsl.dialects.llvm"} <= first
    assert "teir_lowering.codegen.emit" in second  # compiled, not loaded
    assert not second & {"teir_lowering.codegen.gomp_launch", "xdsl.dialects.llvm"}, second


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


def test_a_retuned_schedule_is_compiled_again(tmp_path: Path, monkeypatch) -> None:
    """A kernel compiled under a tuned schedule is keyed by the script too: a
    re-tune that stores another script under the same entry name is compiled
    afresh, in this process and from the disk cache (the first script's machine
    code was loaded for every later script, even an invalid one)."""
    from teir_lowering.runtime.kernel import _entry, load_module
    from teir_passes import schedule_cache

    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    record = (SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json").read_text()
    function, _ = _entry(load_module(record), None)
    saved = dict(_CACHE)
    optimized = []
    try:
        for script in ([], [{"op": "reorder", "order": ["q", "p"]}],
                       [{"op": "split", "axis": "nope", "factor": 2}]):
            schedule_cache.store(str(function), 1, script, 1.0, 2.0, "label")
            _CACHE.clear()  # from the disk cache, then in this process
            if script and script[0]["op"] == "split":
                with pytest.raises(TeirError, match="no configuration has an axis 'nope'"):
                    compile_kernel(record, threads=1)
                continue
            kernel = compile_kernel(record, threads=1)
            assert compile_kernel(record, threads=1) is kernel
            assert "cached" not in kernel.stages
            optimized.append(kernel.stages["optimized"])
    finally:
        _CACHE.clear()
        _CACHE.update(saved)
    assert optimized[0] != optimized[1]


ATTACK = """
import sys, numpy as np
from teir_lowering.runtime.kernel import _CACHE, compile_kernel
from teir_dialect.interpreter import run_reference
path = sys.argv[1]
states = []
for attempt in range(2):  # the second compile loads what the first wrote
    _CACHE.clear()
    kernel = compile_kernel(path, threads=2)
    states.append("cached" if "cached" in kernel.stages else "compiled")
    rng = np.random.default_rng(attempt)
    buffers, arrays = [], []
    for tensor in kernel.tensors:  # each array a view at the start of a larger buffer
        size = -(-tensor.needed_bytes // tensor.dtype.itemsize)
        buffers.append(rng.standard_normal(size + 64).astype(tensor.dtype))
        arrays.append(buffers[-1][:size])
    before = [buffer.copy() for buffer in buffers]
    expected = [array.copy() for array in arrays]
    run_reference(path, expected)
    kernel(*arrays)
    np.testing.assert_allclose(arrays[-1], expected[-1], rtol=1e-5, atol=1e-5)
    for buffer, old, array in zip(buffers, before, arrays):
        assert (buffer[array.size:] == old[array.size:]).all(), "written past an array"
print(*states)
"""

MEMORY = 1 << 30
"""The attack's address-space limit: reading /dev/zero or a huge file fails fast."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def attack(cache: Path, example: Path) -> str:
    """What compiling `example` twice in a fresh process says: 'compiled cached' etc."""
    env = {**os.environ, "TEIR_CACHE_DIR": str(cache)}
    try:
        result = subprocess.run([sys.executable, "-c", ATTACK, str(example)],
                                capture_output=True, text=True, env=env, timeout=60,
                                preexec_fn=_limit_memory, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the compile hung on the damaged cache")
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    return result.stdout.strip()


def fresh_compile(example: Path) -> object:
    """`compile_kernel(example)` past the in-memory cache (kept for the other tests)."""
    saved = dict(_CACHE)
    try:
        _CACHE.clear()
        return compile_kernel(example, threads=1)
    finally:
        _CACHE.clear()
        _CACHE.update(saved)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, dict[Path, str]]:
    """A cache folder holding the entries of EXAMPLE and SMALL, and their keys."""
    cache = tmp_path_factory.mktemp("pristine")
    before = os.environ.get("TEIR_CACHE_DIR")
    keys = {}
    try:
        os.environ["TEIR_CACHE_DIR"] = str(cache)
        for example in (EXAMPLE, SMALL):
            known = set((cache / "kernels").glob("*.json"))
            fresh_compile(example)
            (meta,) = set((cache / "kernels").glob("*.json")) - known
            keys[example] = meta.stem
    finally:
        if before is None:
            del os.environ["TEIR_CACHE_DIR"]
        else:
            os.environ["TEIR_CACHE_DIR"] = before
    return cache, keys


def _copy(pristine: tuple[Path, dict[Path, str]], to: Path) -> Path:
    shutil.copytree(pristine[0], to, dirs_exist_ok=True)
    return to / "kernels"


def _replace(path: Path, make: Callable[[Path], object]) -> None:
    path.unlink()
    make(path)


def flip_parallel(folder: Path, key: str, other: str) -> None:
    meta = folder / f"{key}.json"
    parallel = json.loads(meta.read_text())["parallel"]
    meta.write_text(meta.read_text().replace(json.dumps(parallel), json.dumps(not parallel)))


def copy_another_kernel(folder: Path, key: str, other: str) -> None:
    for suffix in (".ll", ".o", ".json"):
        shutil.copyfile(folder / f"{other}{suffix}", folder / f"{key}{suffix}")


def truncate_object(folder: Path, key: str, other: str) -> None:
    code = folder / f"{key}.o"
    code.write_bytes(code.read_bytes()[: code.stat().st_size // 2])


def garble_object(folder: Path, key: str, other: str) -> None:
    code = folder / f"{key}.o"
    data = bytearray(code.read_bytes())
    data[len(data) // 2] ^= 0xFF
    code.write_bytes(bytes(data))


def nest_metadata(folder: Path, key: str, other: str) -> None:
    (folder / f"{key}.json").write_text("[" * 100_000)  # deeper than json's recursion


def fifo_metadata(folder: Path, key: str, other: str) -> None:
    _replace(folder / f"{key}.json", os.mkfifo)


def object_links_to_dev_zero(folder: Path, key: str, other: str) -> None:
    _replace(folder / f"{key}.o", lambda path: path.symlink_to("/dev/zero"))


def huge_ir(folder: Path, key: str, other: str) -> None:
    os.truncate(folder / f"{key}.ll", kernel_cache.CODE_LIMIT + 1)  # sparse: no disk used


def directory_for_object(folder: Path, key: str, other: str) -> None:
    _replace(folder / f"{key}.o", Path.mkdir)


def _name(value: object) -> str | None:
    return getattr(value, "__name__", None) or getattr(value, "stem", None)


@pytest.mark.parametrize(("corrupt", "victim", "donor"), [
    (flip_parallel, EXAMPLE, SMALL),  # was: a segfault in every later process
    (copy_another_kernel, SMALL, EXAMPLE),  # was: EXAMPLE's code on SMALL's arrays
    (fifo_metadata, EXAMPLE, SMALL),  # was: a hang
    (object_links_to_dev_zero, EXAMPLE, SMALL),  # was: memory without bound
], ids=_name)
def test_an_attacked_entry_is_a_miss_compiled_and_written_again(
    corrupt, victim: Path, donor: Path, pristine, tmp_path: Path
) -> None:
    """In a fresh process: the kernel compiles, computes the reference's results
    without writing past its arrays, and loads from the rewritten entry next time."""
    keys = pristine[1]
    corrupt(_copy(pristine, tmp_path), keys[victim], keys[donor])
    assert attack(tmp_path, victim) == "compiled cached"


@pytest.mark.parametrize("corrupt", [
    flip_parallel, copy_another_kernel, truncate_object, garble_object, nest_metadata,
    huge_ir, directory_for_object,
], ids=_name)
def test_a_damaged_entry_does_not_load_and_is_compiled(
    corrupt, pristine, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    folder, keys = _copy(pristine, tmp_path), pristine[1]
    key = keys[SMALL]
    assert kernel_cache.load(key) is not None
    corrupt(folder, key, keys[EXAMPLE])
    assert kernel_cache.load(key) is None
    kernel = fresh_compile(SMALL)
    assert "cached" not in kernel.stages
    arrays = [np.arange(t.needed_bytes // 4, dtype=np.float32) for t in kernel.tensors]
    expected = [a.copy() for a in arrays]
    run_reference(SMALL, expected)
    kernel(*arrays)
    np.testing.assert_array_equal(arrays[-1], expected[-1])
    if corrupt is directory_for_object:  # cannot be written again; clear leaves it
        assert kernel_cache.clear() == 2
        assert [p.name for p in folder.iterdir()] == [f"{key}.o"]
    else:  # written again
        assert kernel_cache.load(key) is not None


def test_a_note_is_bound_to_its_question(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    kernel_cache.remember("is it?", True)
    kernel_cache.remember("is that?", False)
    assert (kernel_cache.recall("is it?"), kernel_cache.recall("is that?")) == (True, False)
    notes = {kernel_cache.kernel_key("note", q): q for q in ("is it?", "is that?")}
    first, second = (tmp_path / "kernels" / f"{key}.note" for key in notes)
    shutil.copyfile(second, first)
    assert kernel_cache.recall("is it?") is None
    # an answer changed in place (a note may hold code: the launchers' LLVM IR)
    kernel_cache.remember("what?", "define void @f() { ret void }")
    note = tmp_path / "kernels" / f"{kernel_cache.kernel_key('note', 'what?')}.note"
    note.write_text(note.read_text().replace("ret void", "unreachable"))
    assert kernel_cache.recall("what?") is None
    kernel_cache.remember("what?", "define void @f() { ret void }")
    assert kernel_cache.recall("what?") == "define void @f() { ret void }"


def test_only_regular_files_of_this_user_within_the_limit_are_read(
    tmp_path: Path, monkeypatch
) -> None:
    entry = tmp_path / "entry"
    entry.write_bytes(b"1234")
    assert cache_files.read(entry, 4) == b"1234"
    assert cache_files.read(entry, 3) is None
    (tmp_path / "link").symlink_to(entry)
    assert cache_files.read(tmp_path / "link", 4) is None
    os.mkfifo(tmp_path / "fifo")
    assert cache_files.read(tmp_path / "fifo", 4) is None
    assert cache_files.read(tmp_path, 4) is None
    assert cache_files.read(tmp_path / "none", 4) is None
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(entry).st_uid + 1)
    assert cache_files.read(entry, 4) is None


SCHEDULES = """
import json, os, sys
from pathlib import Path
from teir_passes import schedule_cache
folder = Path(os.environ["TEIR_CACHE_DIR"])
entry = schedule_cache.store("ir", 1, [{"op": "reorder"}], 1.0, 2.0, "label")
other = schedule_cache.store("other ir", 1, [], 1.0, 2.0, "other")
path, other_path = (folder / f"{e.key}.json" for e in (entry, other))
found = [schedule_cache.lookup("ir", 1) == entry]
for corrupt in sys.argv[1:]:
    path.unlink()
    if corrupt == "fifo":
        os.mkfifo(path)
    elif corrupt == "dev-zero":
        path.symlink_to("/dev/zero")
    elif corrupt == "huge":
        path.write_bytes(b"{")
        os.truncate(path, 1 << 31)
    elif corrupt == "directory":
        path.mkdir()
    elif corrupt == "nested":
        path.write_text("[" * 100_000)
    elif corrupt == "another key":
        path.write_bytes(other_path.read_bytes())
    elif corrupt == "wrong types":
        path.write_text(json.dumps({**json.loads(other_path.read_text()),
                                    "key": entry.key, "script": "reorder"}))
    found.append(schedule_cache.lookup("ir", 1))
    if path.is_dir():
        path.rmdir()
    else:
        path.unlink()
    schedule_cache.store("ir", 1, entry.script, 1.0, 2.0, "label")
print(found)
"""


def test_a_corrupted_tuned_schedule_is_no_entry(tmp_path: Path) -> None:
    kinds = ["fifo", "dev-zero", "huge", "directory", "nested", "another key", "wrong types"]
    env = {**os.environ, "TEIR_CACHE_DIR": str(tmp_path)}
    try:
        result = subprocess.run([sys.executable, "-c", SCHEDULES, *kinds], capture_output=True,
                                text=True, env=env, timeout=60, preexec_fn=_limit_memory,
                                check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("looking a schedule up hung on the damaged cache")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == str([True] + [None] * len(kinds))


def test_a_loaded_kernel_names_its_functions_and_shows_its_assembly() -> None:
    """A kernel from the cache hands MCJIT its object code for an empty module (the
    IR is not parsed); it still names its functions and reads back its assembly."""
    from teir_lowering.runtime.jit import JitModule

    record = SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"
    compiled = compile_kernel(record, threads=2, keep_ir=True)._engine
    loaded = JitModule.from_machine_code(compiled.llvm_ir, compiled.object_code)
    assert loaded.defined_functions == compiled.defined_functions
    assert {"kernel", "kernel__ndarray"} <= set(loaded.defined_functions)
    assert loaded.assembly() == compiled.assembly()
    with pytest.raises(KeyError, match="defines @kernel"):
        loaded.address("missing")
    assert loaded.address("kernel")
