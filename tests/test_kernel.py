"""compile_kernel: spec examples and fuzzed configurations against the reference.

Differential checks: the compiled kernel, the reference interpreter and (where
the operation is an einsum or a transpose) numpy agree; 1 and 2 threads give
bit-identical results; bad calls raise Python exceptions before native code runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import FLAT_EXAMPLES, SPEC_EXAMPLES, TREE_EXAMPLES, examples
from strategies import configs, random_arrays
from teir_dialect import from_json
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_lowering.frontends.numpy_peer import numpy_peer
from teir_lowering.runtime.kernel import compile_kernel


def _inputs(kernel, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(max(1, -(-t.needed_bytes // t.dtype.itemsize)) + 3).astype(t.dtype)
        for t in kernel.tensors
    ]


def _tolerance(dtype: np.dtype) -> dict:
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("path", TREE_EXAMPLES + FLAT_EXAMPLES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_spec_example_matches_reference_and_numpy(path: Path) -> None:
    kernel = compile_kernel(path)
    inputs = _inputs(kernel)
    compiled = [a.copy() for a in inputs]
    kernel(*compiled, threads=1)
    expected = [a.copy() for a in inputs]
    run_reference(path, expected)
    np.testing.assert_allclose(compiled[-1], expected[-1], **_tolerance(compiled[-1].dtype))
    for before, after in zip(inputs[:-1], compiled[:-1]):
        np.testing.assert_array_equal(before, after)  # inputs are not written
    peer = numpy_peer(find_configs(from_json(path))[0])
    if peer is not None:
        from_numpy = [a.copy() for a in inputs]
        peer[1](from_numpy)
        np.testing.assert_allclose(compiled[-1], from_numpy[-1], **_tolerance(compiled[-1].dtype))
    two_threads = [a.copy() for a in inputs]
    kernel(*two_threads, threads=2)
    np.testing.assert_array_equal(two_threads[-1], compiled[-1])


def test_numpy_peers_exist_for_the_contractions_and_permutations() -> None:
    names = {p.stem for p in TREE_EXAMPLES if numpy_peer(find_configs(from_json(p))[0])}
    assert {"10_7_1_scalar_permutation", "10_7_2_tiled_permutation", "10_7_5_scalar_contraction",
            "10_7_6_contraction_gemm", "10_7_7_parallel_brgemm"} <= names


@settings(max_examples=examples(250, 30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_fuzzed_configuration_matches_reference(generated) -> None:
    kernel = compile_kernel(generated.record)
    rng = np.random.default_rng(1)
    inputs = random_arrays(generated.record, rng, fill=7.0)
    compiled = [a.copy() for a in inputs]
    kernel(*compiled, threads=2)
    expected = [a.copy() for a in inputs]
    run_reference(generated.record, expected)
    for got, want in zip(compiled, expected):  # every tensor, slack included
        np.testing.assert_allclose(got, want, **_tolerance(got.dtype))
    single = [a.copy() for a in inputs]
    kernel(*single, threads=1)
    np.testing.assert_array_equal(single[-1], compiled[-1])


# -- bad calls -----------------------------------------------------------------


@pytest.fixture(scope="module")
def brgemm():
    return compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")


def _exact(kernel) -> list[np.ndarray]:
    return [np.zeros(t.needed_bytes // t.dtype.itemsize, t.dtype) for t in kernel.tensors]


def test_exact_sizes_are_accepted(brgemm) -> None:
    brgemm(*_exact(brgemm))


def test_wrong_array_count(brgemm) -> None:
    with pytest.raises(TypeError, match=r"has 3 tensors \(in0, in1, out\), got 2 arrays"):
        brgemm(*_exact(brgemm)[:2])


@pytest.mark.parametrize("index", [0, 1, 2])
def test_one_element_too_small(brgemm, index: int) -> None:
    arrays = _exact(brgemm)
    arrays[index] = arrays[index][:-1]
    name = ("in0", "in1", "out")[index]
    with pytest.raises(ValueError, match=rf"{name} has \d+ bytes but the configuration touches"):
        brgemm(*arrays)


def test_byte_short_buffer_as_wrong_dtype(brgemm) -> None:
    arrays = _exact(brgemm)
    arrays[2] = np.zeros(arrays[2].nbytes - 1, np.uint8)
    with pytest.raises(TypeError, match=r"out must hold float32 elements, got uint8"):
        brgemm(*arrays)


def test_wrong_dtype(brgemm) -> None:
    arrays = _exact(brgemm)
    arrays[0] = arrays[0].astype(np.float64)
    with pytest.raises(TypeError, match=r"in0 must hold float32 elements, got float64"):
        brgemm(*arrays)


def test_non_contiguous(brgemm) -> None:
    arrays = _exact(brgemm)
    arrays[1] = np.zeros(arrays[1].size * 2, np.float32)[::2]
    with pytest.raises(ValueError, match=r"tensor in1 must be a C-contiguous array"):
        brgemm(*arrays)


def test_read_only_out(brgemm) -> None:
    arrays = _exact(brgemm)
    arrays[2].flags.writeable = False
    with pytest.raises(ValueError, match=r"tensor out must be a writeable array"):
        brgemm(*arrays)


def test_not_an_array(brgemm) -> None:
    arrays = _exact(brgemm)
    with pytest.raises(TypeError, match=r"in0 must be a numpy array, got list"):
        brgemm(list(arrays[0]), arrays[1], arrays[2])


def test_multidimensional_arrays_are_addressed_by_bytes(brgemm) -> None:
    arrays = [a.reshape(-1, 2) if a.size % 2 == 0 else a for a in _exact(brgemm)]
    brgemm(*arrays)


def test_a_tensor_of_primitives_of_two_types_is_refused_naming_them() -> None:
    """A primitive of another data type (even one never invoked) made out's memref
    bytes, and the lowering said only 'tensor out holds i8'."""
    from teir_dialect import TeirError

    record = json.loads((SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json").read_text())
    record["primitives"].append({"id": "unused64", "operation": "Zero",
                                 "axes": {"M": [], "N": []},
                                 "metadata": {"data_type": "FP64"}})
    with pytest.raises(TeirError, match="tensor out is accessed by primitives of several "
                       r"data types, .*'unused64' \(FP64\).*; a kernel's tensor holds one"):
        compile_kernel(record)


def test_kernels_are_cached() -> None:
    path = SPEC_EXAMPLES / "tree" / "10_7_2_tiled_permutation.json"
    assert compile_kernel(path) is compile_kernel(path)


def test_thread_count_is_not_compiled_in() -> None:
    """One compilation serves every thread count: `threads=` at compile time is
    the calls' default, and kernels that differ only in it share the machine code."""
    path = SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"
    one, two = (compile_kernel(path, threads=n, optimize=False) for n in (1, 2))
    assert one.parallel
    assert (one.threads, two.threads) == (1, 2)
    assert one._engine is two._engine and one._function is two._function
    assert compile_kernel(path, threads=2, optimize=False).stages is one.stages
    inputs = _inputs(one, seed=8)
    results = []
    for kernel in (one, two):
        arrays = [a.copy() for a in inputs]
        kernel(*arrays)
        results.append(arrays[-1])
    np.testing.assert_array_equal(results[0], results[1])


def test_parallelism_is_read_from_the_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parallel schedule gets a libgomp launcher, a sequential one none (compiled
    here: a kernel another test left in the disk cache has no llvm stage)."""
    from teir_lowering.runtime import kernel as kernel_module

    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    monkeypatch.setattr(kernel_module, "_CACHE", {})
    # As written (p, r parallel): the auto-scheduler keeps so small a kernel on one thread.
    parallel = compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json",
                              optimize=False, keep_ir=True)
    sequential = compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json",
                                keep_ir=True)
    assert parallel.parallel and "__teir_launch_" in parallel.stages["llvm"]
    assert not sequential.parallel and "__teir_launch_" not in sequential.stages["llvm"]


BAD_THREADS = [
    ("2", TypeError, r"threads must be an int >= 1, got '2' of type str"),
    (2.0, TypeError, r"threads must be an int >= 1, got 2\.0 of type float"),
    (True, TypeError, r"threads must be an int >= 1, got True of type bool"),
    (0, ValueError, r"threads must be an int >= 1, got 0"),
    (-1, ValueError, r"threads must be an int >= 1, got -1"),
    (2**31, ValueError, r"threads must be at most 2147483647, got 2147483648"),
]


@pytest.mark.parametrize("threads, error, message", BAD_THREADS)
def test_bad_thread_count_at_compile_time(threads, error, message) -> None:
    with pytest.raises(error, match=message):
        compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json", threads=threads)


@pytest.mark.parametrize("threads, error, message", BAD_THREADS)
def test_bad_thread_count_per_call(brgemm, threads, error, message) -> None:
    with pytest.raises(error, match=message):
        brgemm(*_exact(brgemm), threads=threads)


def test_numpy_integer_thread_counts_are_accepted(brgemm) -> None:
    brgemm(*_exact(brgemm), threads=np.int64(1))
    assert compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json",
                          threads=np.int32(2)).threads == 2


@pytest.mark.parametrize("value, message", [
    ("0", r"TEIR_NUM_THREADS must be an int >= 1, got 0"),
    ("-3", r"TEIR_NUM_THREADS must be an int >= 1, got -3"),
    ("two", r"TEIR_NUM_THREADS must be an int >= 1, got 'two'"),
    ("1.5", r"TEIR_NUM_THREADS must be an int >= 1, got '1.5'"),
    ("99999999999", r"TEIR_NUM_THREADS must be at most 2147483647, got 99999999999"),
])
def test_bad_teir_num_threads(monkeypatch, value: str, message: str) -> None:
    monkeypatch.setenv("TEIR_NUM_THREADS", value)
    with pytest.raises(ValueError, match=message):
        compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")


def test_teir_num_threads_sets_the_default(monkeypatch) -> None:
    monkeypatch.setenv("TEIR_NUM_THREADS", "3")
    assert compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json").threads == 3


def test_concurrent_calls_from_python_threads(brgemm) -> None:
    """Calls release the GIL and share no state: results equal a serial call."""
    inputs = _inputs(brgemm, seed=3)
    expected = [a.copy() for a in inputs]
    brgemm(*expected, threads=1)
    results: list[np.ndarray] = []

    def work() -> None:
        arrays = [a.copy() for a in inputs]
        for _ in range(20):
            arrays[-1][:] = inputs[-1]
            brgemm(*arrays, threads=1)
        results.append(arrays[-1])

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4
    for result in results:
        np.testing.assert_array_equal(result, expected[-1])


def test_contraction_k_axis_offsets_on_out_count() -> None:
    """Regression (found by fuzzing): a K axis with stride 0 but an offset on out
    shifts the accumulated element."""
    record = {
        "tensors": ["in0", "in1", "out"],
        "axes": [{"id": "k", "extent": 3, "strides": [4, 4, 0], "offsets": [0, 0, 8]}],
        "primitives": [{"id": "dot", "operation": "Contraction",
                        "axes": {"M": [], "N": [], "K": ["k"]},
                        "metadata": {"data_type": "FP32"}}],
        "schedule": {"roots": ["d"], "iterations": [],
                     "invocations": [{"id": "d", "primitive": "dot", "guard": None}]},
    }
    kernel = compile_kernel(record)
    a = np.arange(3, dtype=np.float32)
    b = np.ones(3, dtype=np.float32)
    out = np.zeros(3, dtype=np.float32)
    kernel(a, b, out)
    np.testing.assert_array_equal(out, [0, 0, 3])


def test_out_overlapping_an_input_is_rejected(brgemm) -> None:
    arrays = _exact(brgemm)
    shared = np.zeros(max(a.size for a in arrays) * 2, np.float32)
    in0 = shared[: arrays[0].size]
    out = shared[arrays[0].size // 2 : arrays[0].size // 2 + arrays[2].size]
    with pytest.raises(ValueError, match=r"out overlaps in0 in memory"):
        brgemm(in0, arrays[1], out)


def test_buffers_may_share_bytes_the_kernel_does_not_touch(brgemm) -> None:
    """Overlap is judged on footprints: an input's untouched tail may hold out."""
    inputs = _inputs(brgemm, seed=5)
    sizes = [t.needed_bytes // 4 for t in brgemm.tensors]
    expected = [a[:n].copy() for a, n in zip(inputs, sizes)]
    brgemm(*expected)
    shared = np.concatenate([inputs[0][: sizes[0]], inputs[2][: sizes[2]]])
    in0, out = shared, shared[sizes[0]:]  # in0 spans out's bytes, beyond its footprint
    brgemm(in0, inputs[1][: sizes[1]].copy(), out)
    np.testing.assert_array_equal(out, expected[-1])


def test_calls_go_through_the_ndarray_entry_with_the_same_results(brgemm) -> None:
    """The fast entry (data pointers read natively) and the ctypes-address path agree,
    and both refuse overlapping buffers."""
    from teir_lowering.runtime.ndarray_entry import data_offset

    assert data_offset() == 16  # CPython's object header; numpy's data field follows it
    assert brgemm._entry is not None
    inputs = _inputs(brgemm, seed=6)
    fast = [a.copy() for a in inputs]
    brgemm(*fast)
    entry, brgemm._entry = brgemm._entry, None
    try:
        slow = [a.copy() for a in inputs]
        brgemm(*slow)
        shared = np.zeros(sum(a.size for a in inputs), np.float32)
        with pytest.raises(ValueError, match=r"out overlaps in0 in memory"):
            brgemm(shared, inputs[1], shared[1:])
    finally:
        brgemm._entry = entry
    np.testing.assert_array_equal(fast[-1], slow[-1])


def test_planned_calls_read_addresses_only_and_agree(brgemm) -> None:
    """`call_planned` (einsum's plans: layouts known at planning) gives __call__'s
    result, through the native entry or without it, refuses out overlapping an
    input's footprint and checks the thread count like a call."""
    inputs = _inputs(brgemm, seed=8)
    expected = [a.copy() for a in inputs]
    brgemm(*expected)
    for entry in (brgemm._entry, None):
        saved, brgemm._entry = brgemm._entry, entry
        try:
            got = [a.copy() for a in inputs]
            brgemm.call_planned(got, 1)
            np.testing.assert_array_equal(got[-1], expected[-1])
        finally:
            brgemm._entry = saved
    shared = np.zeros(sum(a.size for a in inputs), np.float32)
    with pytest.raises(ValueError, match="out overlaps an input"):
        brgemm.call_planned([shared, inputs[1], shared[1:]])
    with pytest.raises(ValueError, match="thread"):
        brgemm.call_planned(inputs, 0)


def test_read_only_inputs_are_accepted(brgemm) -> None:
    inputs = _inputs(brgemm, seed=7)
    expected = [a.copy() for a in inputs]
    brgemm(*expected)
    for array in inputs[:-1]:
        array.flags.writeable = False
    brgemm(*inputs)
    np.testing.assert_array_equal(inputs[-1], expected[-1])


def _guarded_parallel_records() -> list[dict]:
    """Records the exact race rule accepts only by reading guards: a parallel p with
    stride 0 on out whose writes first(p)/last(p) pin to one index each (on
    disjoint halves of out), and a parallel p whose leaves would overlap across
    indices but run in different runs of p (first(s) and last(s))."""
    def axis(name: str, extent: int, in0: int, out: int, offset: int = 0) -> dict:
        return {"id": name, "extent": extent, "strides": [in0, out], "offsets": [0, offset]}

    def copy(name: str, role: str) -> dict:
        return {"id": name, "operation": "Copy", "axes": {"M": [role], "N": []},
                "metadata": {"data_type": "FP32"}}

    def leaf(name: str, prim: str, guard: list[str]) -> dict:
        return {"id": name, "primitive": prim, "guard": guard}

    pinned = {
        "tensors": ["in0", "out"],
        "axes": [axis("p", 4, 32, 0), axis("m", 8, 4, 4), axis("n", 8, 4, 4, 32)],
        "primitives": [copy("head", "m"), copy("tail", "n"),
                       {"id": "z", "operation": "Zero", "axes": {"M": ["m"], "N": []},
                        "metadata": {"data_type": "FP32"}}],
        "schedule": {"roots": ["p"], "iterations": [
            {"id": "p", "axis": "p", "policy": "parallel", "guard": None,
             "children": ["zero", "x", "y"]}],
            "invocations": [leaf("zero", "z", ["first(p)"]), leaf("x", "head", ["first(p)"]),
                            leaf("y", "tail", ["last(p)"])]},
    }
    runs = {
        "tensors": ["in0", "out"],
        "axes": [axis("s", 2, 128, 0), axis("p", 4, 32, 8), axis("m", 2, 4, 4),
                 axis("n", 2, 4, 4, 4)],
        "primitives": [copy("even", "m"), copy("odd", "n")],
        "schedule": {"roots": ["s"], "iterations": [
            {"id": "s", "axis": "s", "policy": "sequential", "guard": None, "children": ["p"]},
            {"id": "p", "axis": "p", "policy": "parallel", "guard": None,
             "children": ["x", "y"]}],
            "invocations": [leaf("x", "even", ["first(s)"]), leaf("y", "odd", ["last(s)"])]},
    }
    return [pinned, runs]


@pytest.mark.parametrize("record", _guarded_parallel_records(), ids=["pinned", "runs"])
def test_guarded_parallel_writes_match_reference_at_two_threads(record: dict) -> None:
    kernel = compile_kernel(record, optimize=False)  # optimized, too small to fork
    assert kernel.parallel
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(64).astype(np.float32), np.full(24, 7.0, np.float32)]
    expected = [a.copy() for a in inputs]
    run_reference(record, expected)
    for threads in (1, 2):
        compiled = [a.copy() for a in inputs]
        kernel(*compiled, threads=threads)
        np.testing.assert_array_equal(compiled[-1], expected[-1])


def test_chunks_on_demand_give_every_thread_count_the_same_bytes() -> None:
    """The launcher hands out chunks of total / (8 x threads) iterations: 21 parallel
    (p, r) iterations leave remainders at every count; the bytes never depend on
    which thread ran a chunk."""
    p, q, r, s, t, u = 3, 5, 7, 4, 2, 3
    record = {
        "dim_ids": ["p", "r", "t", "s", "q", "u"],
        "dim_types": ["N", "M", "K", "M", "N", "K"],
        "exec_types": ["parallel", "parallel", "prim", "prim", "prim", "prim"],
        "dim_sizes": [p, r, t, s, q, u],
        "strides": [[0, u * s, r * u * s, 1, 0, s], [q * t * u, 0, u, 0, t * u, 1],
                    [q * r * s, s, 0, 1, r * s, 0]],
        "data_type": "FP32", "prim_first": "Zero", "prim_main": "BRGEMM", "prim_last": "None",
    }
    kernel = compile_kernel(record, optimize=False)
    assert kernel.parallel
    rng = np.random.default_rng(5)
    a = rng.standard_normal((t, r, u, s)).astype(np.float32)
    b = rng.standard_normal((p, q, t, u)).astype(np.float32)
    results = []
    for threads in (1, 2, 3, 5, 16):
        out = np.full(p * q * r * s, np.nan, np.float32)
        kernel(a.ravel(), b.ravel(), out, threads=threads)
        results.append(out)
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
    np.testing.assert_allclose(results[0].reshape(p, q, r, s),
                               np.einsum("trus,pqtu->pqrs", a, b), rtol=1e-5, atol=1e-5)


_LOAD_AND_RUN = """
import os
import numpy as np
from teir_lowering import compile_kernel
kernel = compile_kernel({path!r}, optimize=False)
assert kernel.parallel
kernel(*[np.zeros(t.needed_bytes // 4, np.float32) for t in kernel.tensors], threads=2)
print("left in the environment:", os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("chosen, spin_count, left", [
    ({}, "0", "None"),
    ({"OMP_WAIT_POLICY": "active"}, None, "active"),
])
def test_libgomp_sleeps_at_once_unless_the_environment_says_otherwise(
        chosen: dict, spin_count: str | None, left: str) -> None:
    """libgomp's threads spun for 300,000 pauses at every join; a worker woken onto the
    core where the caller spun waited that long. TEIR loads it passive, without
    leaving the variable in the environment; a policy the user set stands."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    environment |= {"OMP_DISPLAY_ENV": "VERBOSE", **chosen}
    script = _LOAD_AND_RUN.format(path=str(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json"))
    done = subprocess.run([sys.executable, "-c", script], env=environment,
                          capture_output=True, text=True, timeout=300, check=True)
    assert f"left in the environment: {left}" in done.stdout
    (line,) = [x for x in done.stderr.splitlines() if "GOMP_SPINCOUNT" in x]
    if spin_count is not None:
        assert line.split("=")[1].strip() == f"'{spin_count}'"
    else:
        assert line.split("=")[1].strip() != "'0'"


_PLACEMENT = """
import os
import numpy as np
from teir_lowering import compile_kernel
kernel = compile_kernel({path!r}, optimize=False)
assert kernel.parallel
arrays = [np.zeros(t.needed_bytes // 4, np.float32) for t in kernel.tensors]
cpus = set(os.sched_getaffinity(0))
first = min(cpus)
os.sched_setaffinity(0, {{first}})
kernel(*arrays, threads=2)  # libgomp starts its worker, which inherits {{first}}
workers = [int(t) for t in os.listdir("/proc/self/task")
           if int(t) != os.getpid() and os.sched_getaffinity(int(t)) == {{first}}]
assert workers, "no worker thread started"
os.sched_setaffinity(0, cpus)  # the caller may run anywhere again (still on first)
from teir_lowering.runtime import jit
moved = False
for _ in range(50):
    jit._TEAM[0][1] = 0  # unknown to the launcher: the worker places itself
    kernel(*arrays, threads=2)
    if all(first not in os.sched_getaffinity(t) for t in workers):
        moved = True
        break
print("cpus", len(cpus), "moved", moved, "caller", os.sched_getaffinity(0) == cpus,
      "workers", sorted(os.sched_getaffinity(workers[0])))
"""


def _run_unbound(script: str) -> subprocess.CompletedProcess:
    """`script` (formatted with the path of §10.7.7's parallel example) in a new
    Python process without the variables that make libgomp place the threads."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("OMP_PROC_BIND", "GOMP_CPU_AFFINITY", "OMP_PLACES")}
    path = str(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
    return subprocess.run([sys.executable, "-c", script.format(path=path)], env=environment,
                          capture_output=True, text=True, timeout=300, check=True)


def test_a_worker_on_the_callers_cpu_moves_to_another() -> None:
    """After an idle pause the scheduler woke libgomp's worker on the caller's CPU
    and left it there for tens of milliseconds (a short 2-thread kernel at one
    thread's speed). A worker that finds itself on the caller's CPU at a fork takes
    the caller's CPU mask without that CPU; the caller's own mask is untouched.
    Here the worker starts pinned to the caller's CPU (it inherits the caller's
    mask of one CPU), so every fork finds them together until it moves; its
    thread id is cleared from the launcher's record before each call, so that
    it moves by itself, not by the caller's placement."""
    done = _run_unbound(_PLACEMENT)
    words = done.stdout.split()
    cpus, moved, caller = int(words[1]), words[3], words[5]
    assert caller == "True", done.stdout
    # one CPU: no other to move to (sched_setaffinity refuses the empty mask)
    assert moved == ("True" if cpus > 1 else "False"), done.stdout


_PINNING = """
import ctypes, os
import numpy as np
from teir_lowering import compile_kernel
from teir_lowering.runtime import jit
libc = ctypes.CDLL(None)
kernel = compile_kernel({path!r}, optimize=False)
arrays = [np.zeros(t.needed_bytes // 4, np.float32) for t in kernel.tensors]
cpus = set(os.sched_getaffinity(0))
kernel(*arrays, threads=2)  # the worker writes its thread id
worker = jit._TEAM[0][1]
ours = str(worker) in os.listdir("/proc/self/task")
placed = restored = 0
for _ in range(20):
    cpu = libc.sched_getcpu()
    kernel(*arrays, threads=2)
    restored += os.sched_getaffinity(0) == cpus
    placed += os.sched_getaffinity(worker) == (cpus - {{cpu}} or cpus)
print("cpus", len(cpus), "ours", ours, "placed", placed, "restored", restored)
"""


def test_the_caller_places_the_worker_before_the_fork() -> None:
    """In a virtual machine a caller that woke on either CPU between calls moved in
    the middle of a call onto the CPU its worker was confined to (a 2-thread
    GEMM after 10 ms idle slower than one thread). The launcher pins the caller
    to its CPU for the call, gives its known workers the caller's mask without
    that CPU before waking them, and gives the caller its mask back."""
    done = _run_unbound(_PINNING)
    words = done.stdout.split()
    cpus, ours, placed, restored = int(words[1]), words[3], int(words[5]), int(words[7])
    assert ours == "True", done.stdout
    assert restored == 20, done.stdout
    # the caller may move between reading its CPU and the fork: most calls, not all
    assert placed >= (15 if cpus > 1 else 20), done.stdout


def test_a_thread_count_another_library_set_does_not_stick() -> None:
    """threadpoolctl (or any OpenMP code in the process) may call omp_set_num_threads
    between two calls: the kernel's own count is what the next call forks with."""
    import ctypes

    kernel = compile_kernel(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json",
                            optimize=False)
    libgomp = ctypes.CDLL("libgomp.so.1")
    arrays = [np.zeros(t.needed_bytes // 4, np.float32) for t in kernel.tensors]
    kernel(*arrays, threads=2)
    libgomp.omp_set_num_threads(1)
    kernel(*arrays, threads=2)
    assert libgomp.omp_get_max_threads() == 2
