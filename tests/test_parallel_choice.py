"""The auto-scheduler parallelizes only what pays for its fork/join (issue 25, defect 8;
issue 23: fork costs by host and team size, written-parallel small kernels, 16 cores)."""

from __future__ import annotations

import json
from dataclasses import replace
from math import prod

import numpy as np
import pytest

from conftest import SPEC_EXAMPLES, load
from teir_dialect import from_json, to_json
from teir_dialect.builders import einsum_config, with_unit_role
from teir_dialect.host import PINNED_HOSTS, Host, pinned, pinned_host
from teir_dialect.interpreter import run_reference
from teir_passes import apply_schedule
from teir_passes.auto_schedule import fork_pays


def _record(k: int, m: int) -> dict:
    """A 16-bit reduction loop k (kept in the schedule: moving it into the primitive
    would round less often) around an FP16 tile of m elements."""
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": [{"id": "k", "extent": k, "strides": [2 * m, 2, 0], "offsets": [0, 0, 0]},
                 {"id": "i", "extent": m, "strides": [2, 0, 2], "offsets": [0, 0, 0]}],
        "primitives": [{"id": "c", "operation": "Contraction",
                        "axes": {"M": ["i"], "N": [], "K": []},
                        "metadata": {"data_type": "FP16"}}],
        "schedule": {"roots": ["k"],
                     "iterations": [{"id": "k", "axis": "k", "policy": "sequential",
                                     "children": ["x"], "guard": None}],
                     "invocations": [{"id": "x", "primitive": "c", "guard": None}]},
    }


def _parallel_loops(record: dict) -> list[str]:
    module = from_json(record)
    with pinned("avx2"):
        apply_schedule(module, [{"op": "teir-auto-schedule", "threads": 2}])
    return [n["axis"] for n in to_json(module)["schedule"]["iterations"]
            if n["policy"] == "parallel"]


def test_no_parallel_loop_that_forks_once_per_iteration_of_a_long_sequential_loop() -> None:
    """100,000 iterations of k, 4096 elements each: a parallel loop inside k would
    fork 100,000 times for 8 kflop each (it did: 10.5 s at two threads, 0.07 s at
    one, on the AMD EPYC Zen 5 host)."""
    assert _parallel_loops(_record(100_000, 4096)) == []


def test_a_parallel_loop_inside_a_short_sequential_loop_still_pays() -> None:
    """Two iterations of k over 4 Mi elements: each fork has megabytes to move."""
    assert _parallel_loops(_record(2, 1 << 22)) == ["i"]


@pytest.mark.parametrize("k, m", [(3, 1 << 20), (50, 64)])
def test_the_schedule_computes_the_record(k: int, m: int) -> None:
    from teir_lowering import compile_kernel

    record = _record(k, m)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n).astype(np.float16) for n in (k * m, k, m)]
    expected = [a.copy() for a in arrays]
    run_reference(record, expected)
    got = [a.copy() for a in arrays]
    compile_kernel(record, threads=2)(*got)
    np.testing.assert_array_equal(got[-1], expected[-1])


def test_a_tiny_loop_inside_sequential_loops_stays_sequential() -> None:
    """§10.7.3 with N = 10^6: d (2 scalar iterations) is innermost under a, b, c,
    which cannot move (their tiles overlap); parallel, it forked 15 million times."""
    record = load(SPEC_EXAMPLES / "tree" / "10_7_3_scalar_batched_gemm.json")
    (c,) = [axis for axis in record["axes"] if axis["id"] == "c"]
    c["extent"] = 10**6
    assert _parallel_loops(record) == []


def test_the_batch_loop_around_large_gemms_runs_in_parallel() -> None:
    """b runs in parallel (outermost); its two iterations are too few for 4 per
    thread, so the GEMM's columns are cut inside it, joining the parallel loop.
    With B ten times larger, 64 MB read from memory at every call (`streamed_in`),
    one block per thread is enough: b alone."""
    assert _parallel_loops(einsum_config("bij,bjk->bik", (2, 8, 8), (2, 8, 10**5))) == ["b", "k"]
    assert _parallel_loops(einsum_config("bij,bjk->bik", (2, 8, 8), (2, 8, 10**6))) == ["b"]


@pytest.mark.parametrize("subscripts, shapes, parallel, block", [
    ("ij,jz->iz", ((2048, 2048), (2048, 1)), ["i"], None),
    ("ji,jz->iz", ((2048, 2048), (2048, 1)), ["i"], 1024),
    ("ij,jz->iz", ((1024, 1024), (1024, 1)), [], None),
])
def test_a_gemv_from_memory_runs_one_block_per_thread(
        subscripts: str, shapes: tuple, parallel: list[str], block: int | None) -> None:
    """A GEMV whose 16 MB matrix comes from memory at every call: a multiply-add per
    element loaded, far below the FMA rate, so its time is the matrix's bytes
    (`fork_pays`' from_memory) and two threads pay on a guest, where its flops
    alone did not (it ran at one). Its rows are cut into one block per thread, not four: a
    column-streaming GEMV (`ji,j->i`) read its rows in 1 KiB pieces, 2x slower
    at one thread. A 4 MB matrix stays in the caches and on one thread. (The
    GEMV as `einsum` gives it: the vector's extent-1 index z in the N role.)"""
    record = with_unit_role(einsum_config(subscripts, *shapes), "z", "N")
    module = from_json(record)
    with pinned(replace(pinned_host("avx2"), virtualized=True)):  # a guest's fork
        apply_schedule(module, [{"op": "teir-auto-schedule", "threads": 2}])
    scheduled = to_json(module)
    assert [n["axis"] for n in scheduled["schedule"]["iterations"]
            if n["policy"] == "parallel"] == parallel
    if block is not None:
        (row,) = [a for a in scheduled["axes"] if a["id"] == "i_in"]
        assert row["extent"] == block


@pytest.mark.parametrize("host_name", ["avx2", "avx512"])
@pytest.mark.parametrize("dtype, blocks", [("FP32", 8), ("FP16", 2), ("BF16", 8)])
def test_an_fp16_contraction_runs_one_block_per_thread(host_name: str, dtype: str,
                                                       blocks: int) -> None:
    """`ij,jk->ik` 256^3 at two threads: its columns cut into four blocks a thread,
    but in FP16 one a thread, as each block widens all of A (the operand the blocks
    share) to f32 again (8 blocks: 0.93-0.94x FP32's rate, 2: 0.97-0.99x). BF16 is
    widened by a shift as it is read: four a thread."""
    module = from_json(einsum_config("ij,jk->ik", (256, 256), (256, 256), dtype=dtype))
    with pinned(pinned_host(host_name)):
        apply_schedule(module, [{"op": "teir-auto-schedule", "threads": 2}])
    scheduled = to_json(module)
    extents = {a["id"]: a["extent"] for a in scheduled["axes"]}
    assert [extents[n["axis"]] for n in scheduled["schedule"]["iterations"]
            if n["policy"] == "parallel"] == [blocks]


def test_no_parallel_loop_under_a_sequential_one_under_a_parallel_one() -> None:
    """i (4 iterations) runs in parallel; b may not (its iterations write common
    bytes); k below it would fork inside each thread, once per index of b."""
    record = {
        "tensors": ["in0", "out"],
        "axes": [
            {"id": "i", "extent": 4, "strides": [1 << 23, 1 << 23], "offsets": [0, 0]},
            {"id": "b", "extent": 2, "strides": [1 << 22, 4], "offsets": [0, 0]},
            {"id": "k", "extent": 1 << 20, "strides": [4, 4], "offsets": [0, 0]},
        ],
        "primitives": [{"id": "copy", "operation": "Copy", "axes": {"M": [], "N": []},
                        "metadata": {"data_type": "FP32"}}],
        "schedule": {
            "roots": ["i"],
            "iterations": [
                {"id": "i", "axis": "i", "policy": "sequential", "children": ["b"], "guard": None},
                {"id": "b", "axis": "b", "policy": "sequential", "children": ["k"], "guard": None},
                {"id": "k", "axis": "k", "policy": "sequential", "children": ["x"], "guard": None},
            ],
            "invocations": [{"id": "x", "primitive": "copy", "guard": None}],
        },
    }
    assert _parallel_loops(record) == ["i"]


def _flat_contraction(p: int, q: int, r: int, s: int, t: int, u: int) -> dict:
    """trus,pqtu->pqrs in flat BRGEMM form with p and r parallel (benchmarks/run.py's
    contraction case)."""
    return {
        "dim_ids": ["p", "r", "t", "s", "q", "u"],
        "dim_types": ["N", "M", "K", "M", "N", "K"],
        "exec_types": ["parallel", "parallel", "prim", "prim", "prim", "prim"],
        "dim_sizes": [p, r, t, s, q, u],
        "strides": [[0, u * s, r * u * s, 1, 0, s],
                    [q * t * u, 0, u, 0, t * u, 1],
                    [q * r * s, s, 0, 1, r * s, 0]],
        "data_type": "FP32", "prim_first": "Zero", "prim_main": "BRGEMM", "prim_last": "None",
    }


def _schedule(record: dict, machine: str, threads: int) -> dict:
    module = from_json(record)
    with pinned(machine):
        apply_schedule(module, [{"op": "teir-auto-schedule", "threads": threads}])
    return to_json(module)


def _parallel_extents(record: dict, machine: str, threads: int = 0) -> list[int]:
    scheduled = _schedule(record, machine, threads)
    extents = {axis["id"]: axis["extent"] for axis in scheduled["axes"]}
    return [extents[n["axis"]] for n in scheduled["schedule"]["iterations"]
            if n["policy"] == "parallel"]


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_a_small_contraction_written_parallel_runs_on_one_thread(machine: str) -> None:
    """All extents 8 (0.5 MFLOP, microseconds on one core): the fork/join of its
    parallel p and r costs more than the second thread saves (41 GFLOP/s at two
    threads against 71 at one, AMD EPYC Zen 5)."""
    assert _parallel_extents(_flat_contraction(8, 8, 8, 8, 8, 8), machine, 2) == []


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_a_large_contraction_written_parallel_keeps_its_parallel_loops(machine: str) -> None:
    """p continues the BRGEMM's N axis q, so it goes into the call (fuse-axes on a
    role axis); r stays the loop the threads share."""
    scheduled = _schedule(_flat_contraction(32, 64, 32, 64, 8, 64), machine, 2)
    assert [n["axis"] for n in scheduled["schedule"]["iterations"]
            if n["policy"] == "parallel"] == ["r"]
    assert {"id": "pq", "extent": 2048} in [
        {"id": a["id"], "extent": a["extent"]} for a in scheduled["axes"]]


def test_one_fork_pays_from_the_work_the_host_does_in_a_fork_join() -> None:
    """The threshold follows the host's per-core rate and the team size: a wider
    vector does the same work in fewer cycles, a larger team joins in more."""
    avx2, avx512, wide = (PINNED_HOSTS[name] for name in ("avx2", "avx512", "avx512-16"))

    def threshold(machine: Host, threads: int, width: int = 4) -> float:
        return next(f for f in (2.0**e for e in range(10, 50))
                    if fork_pays(f, 0.0, machine, threads, width))

    assert not fork_pays(2.0 * 8**6, 0.0, avx512, 2)
    assert fork_pays(2.0 * 16**6, 0.0, avx512, 2)
    assert threshold(avx512, 2) == 2 * threshold(avx2, 2) == 2 * threshold(avx512, 2, 8)
    assert threshold(wide, 2) == threshold(avx512, 2)
    assert threshold(wide, 16) >= 2 * threshold(wide, 2)
    assert not fork_pays(1e12, 1e12, avx512, 1)


def test_a_guest_of_a_hypervisor_forks_only_for_more_work() -> None:
    """Waking an idle vCPU goes through the hypervisor: on the 2-vCPU KVM guest a
    fork/join took 41-72 microseconds, and a GEMM 128^3 FP64 ran at 87 GFLOP/s on
    two threads against 98 on one. A virtualized host forks that GEMM no more; a
    bare one still does, and both fork a large one."""
    import dataclasses

    bare = PINNED_HOSTS["avx512"]
    guest = dataclasses.replace(bare, virtualized=True)
    gemm = 2.0 * 128**3
    assert fork_pays(gemm, 0.0, bare, 2, 8)
    assert not fork_pays(gemm, 0.0, guest, 2, 8)
    assert fork_pays(2.0 * 464**3, 0.0, guest, 2, 4)
    assert guest.fingerprint() != bare.fingerprint()


def test_sixteen_cores_get_sixteen_threads_worth_of_parallel_iterations() -> None:
    """The spec contraction built by einsum_config: its parallel r loop (32
    iterations) feeds 2 cores four times over, but not 16, so the N axis of its
    BRGEMM is split for the rest, joining r's parallel loop."""
    record = einsum_config("trus,pqtu->pqrs", (8, 32, 64, 64), (32, 64, 8, 64))
    assert prod(_parallel_extents(record, "avx512")) == 32
    sixteen = _parallel_extents(record, "avx512-16")
    assert prod(sixteen) >= 4 * 16
    assert _parallel_extents(record, "avx512-16", 16) == sixteen


def test_blocks_for_the_threads_need_few_register_block_shapes() -> None:
    """An axis cut for the threads is cut into blocks that need the fewest vector
    pieces, a remainder block's counted, among those whose run on the threads in
    vector operations is within RUN_MARGIN of the shortest: 504 in 9 blocks of
    56 = 3 x 16 + 8 rather than 8 of 63 = 3 x 16 + 8 + 4 + 2 + 1 (TCCG 22's GEMM:
    927 ops at the scf level instead of 6,676, the same speed); 464 in 14 blocks
    of 32 and one of 16 rather than 8 of 58 = 3 x 16 + 8 + 2 (TCCG 12, a 464^3
    GEMM: 1.7x faster); 300 in 9 blocks of 32 and one of 12 rather than 15 of 20
    = 16 + 4, one shape fewer but a third longer run (`ij,kj->ik` 300^3: 1.22x
    faster in FP32, 1.57x in FP16 at one thread, AMD EPYC Zen 4)."""
    from teir_passes.auto_schedule import RUN_MARGIN, thread_block, vector_pieces

    assert vector_pieces(63, 16) == 5 and vector_pieces(56, 16) == 2
    assert vector_pieces(64, 16) == 1 and vector_pieces(7, 16) == 3
    assert thread_block(504, 8, 16, 2) == 56  # 9 blocks of 4 vector operations each
    assert thread_block(464, 8, 16, 2) == 32
    assert thread_block(464, 8, 8, 2) == 56  # FP64: not 58 = 7 x 8 + 2 in every block
    assert thread_block(300, 8, 16, 2) == 32
    assert thread_block(150, 8, 16, 2) == 16  # not 10 = 8 + 2 in every block
    assert thread_block(54872, 8, 16, 2) % 16 == 0  # 6859 divides, but leaves 11 lanes a block
    assert thread_block(97, 8, 16, 2) == 13  # prime, and too short for whole vectors
    # two blocks of whole vectors and 13 columns left, not a third block (the
    # remainder, on one thread after the parallel loop): TCCG 2's GEMM, N = 39597
    assert thread_block(39597, 2, 8, 2) == 19792
    assert thread_block(39597, 2, 16, 2) == 19792
    for lanes in (8, 16):
        for size in range(16, 600):
            block = thread_block(size, 8, lanes, 2)
            count = -(-size // block)

            def shapes(b: int, size: int = size, lanes: int = lanes) -> int:
                return vector_pieces(b, lanes) + (vector_pieces(size % b, lanes)
                                                  if size % b else 0)

            def run(b: int, size: int = size, lanes: int = lanes) -> int:
                def ops(extent: int) -> int:
                    return extent // lanes + (extent % lanes).bit_count()
                return -(-(size // b) // 2) * ops(b) + ops(size % b)

            fitting = [b for b in range(1, size)
                       if 8 <= -(-size // b) <= 16 and (size % b == 0 or b % lanes == 0)]
            if not fitting:
                assert block == -(-size // 8)
                continue
            assert block in fitting and 8 <= count <= 16
            shortest = min(run(b) for b in fitting)
            near = [b for b in fitting
                    if run(b) * RUN_MARGIN[1] <= shortest * RUN_MARGIN[0]]
            assert block in near, (size, lanes, block)
            assert shapes(block) == min(shapes(b) for b in near), (size, lanes, block)


def test_a_gemm_cut_for_two_threads_gets_blocks_of_whole_vectors() -> None:
    a = np.zeros((504, 441), np.float32)
    b = np.zeros((441, 63), np.float32)
    module = from_json(einsum_config("mk,kn->mn", a, b))
    with pinned("avx512"):
        apply_schedule(module, [{"op": "teir-auto-schedule", "threads": 2}])
    extents = {axis["id"]: axis["extent"] for axis in to_json(module)["axes"]}
    from teir_passes.auto_schedule import vector_pieces

    block = extents.get("m_in") or extents.get("n_in")
    assert block is not None and 504 % block == 0 and vector_pieces(block, 16) == 2, extents


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_a_gemm_whose_k_dwarfs_m_and_n_is_not_cut_for_threads(machine: str) -> None:
    """`cad,dcb->ab` (TCCG 14, FP64): M 101, N 98, K 10201. A thread block along M
    reads all of B (8 MB) and one along N all of A: blocks of a few rows streamed
    the other operand once each (one thread 2.5 -> 3.4 ms). Fewer blocks of at
    least 8 rows a byte of element than threads: neither axis is cut. The same
    GEMM with K 504 (TCCG 20's, B 1.8 MB) is cut. One block a thread (48 rows,
    the 5 left after the parallel loop) was measured too: `einsum` at one
    thread runs the threads' schedule, and TCCG 13 and 14 lost 25-30% there
    (27 -> 20 and 39 -> 28 GFLOP/s, AMD EPYC Zen 4) for 15-40% at two."""
    record = einsum_config("cad,dcb->ab", np.empty((101, 101, 101)), np.empty((101, 101, 98)))
    assert _parallel_extents(record, machine, 2) == []
    record = einsum_config("ik,kj->ij", np.empty((504, 504)), np.empty((504, 441)))
    assert prod(_parallel_extents(record, machine, 2)) >= 4


@pytest.mark.parametrize("machine", ["avx2", "avx512"])
def test_a_gemv_on_a_transposed_matrix_streams_its_columns(machine: str) -> None:
    """`ij,j->i` on `base.T` (964 x 472 FP32): as a GEMM (n = 1) the microkernel read
    a few vectors of a new column at each K step (2.2x the contiguous twin). Cut
    into K blocks of 8, not along M, each call streams 8 whole columns and y stays
    in L1; the contiguous twin (K at unit stride, the dot kernel) keeps its K."""
    from teir_dialect.records import find_configs
    from teir_lowering.frontends.einsum_frontend import _gemv_record
    from teir_passes.auto_schedule import SCRIPT_ATTR

    def script(matrix: np.ndarray) -> list[dict]:
        record = _gemv_record("ij,j->i", (matrix, np.empty(472, np.float32)),
                              np.empty(964, np.float32), False, None)
        assert record is not None
        module = from_json(record)
        with pinned(machine):
            apply_schedule(module, [{"op": "teir-auto-schedule", "threads": 1}])
        (config,) = find_configs(module)
        return json.loads(config.attributes[SCRIPT_ATTR].data)

    steps = script(np.empty((472, 964), np.float32).T)
    assert {"op": "split", "axis": "j", "factor": 8} in steps
    assert not any(s.get("axis") == "i" for s in steps)
    assert not any(s.get("axis") == "j" for s in script(np.empty((964, 472), np.float32)))


@pytest.mark.parametrize("dtype", ["FP32", "FP64"])
@pytest.mark.parametrize("extents", [(5, 7, 3, 20, 3, 9), (32, 16, 4, 16, 2, 8)])
def test_a_flat_records_loop_over_the_n_axis_runs_inside_the_calls(
        extents: tuple[int, ...], dtype: str) -> None:
    """The written-parallel p continues the BRGEMM's N axis q (fuse-axes on a role
    axis): the scheduled kernel computes what numpy does, at 1 and 2 threads."""
    from teir_lowering.runtime.kernel import compile_kernel

    p, q, r, s, t, u = extents
    record = {**_flat_contraction(*extents), "data_type": dtype}
    scheduled = _schedule(record, "avx512", 2)
    assert "pq" in {axis["id"] for axis in scheduled["axes"]}
    assert "p" not in {n["axis"] for n in scheduled["schedule"]["iterations"]}
    kind = np.float32 if dtype == "FP32" else np.float64
    rng = np.random.default_rng(7)
    a = rng.standard_normal((t, r, u, s)).astype(kind)
    b = rng.standard_normal((p, q, t, u)).astype(kind)
    expected = np.einsum("trus,pqtu->pqrs", a, b)
    kernel = compile_kernel(record)
    for threads in (1, 2):
        out = np.full((p, q, r, s), np.nan, kind)
        kernel(a, b, out, threads=threads)
        np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == "FP32" else 1e-12,
                                   atol=1e-5 if dtype == "FP32" else 1e-12)


@pytest.mark.parametrize("data_type", ["FP16", "BF16"])
def test_sixteen_bit_contractions_fork_where_fp32_does(data_type: str) -> None:
    """16-bit products are summed in f32 lanes, at FP32's rate: a GEMM 256^3 forks
    on the two-vCPU guest in FP16/BF16 as in FP32 (the fork test counted 16-bit
    lanes, twice as many: FP16/BF16 ran on one thread, 0.71x FP32's rate at two
    threads on the AMD EPYC Zen 4 guest)."""
    import dataclasses

    import ml_dtypes

    from teir_dialect.context import teir_context
    from teir_dialect.records import find_configs, load_module
    from teir_passes.pipeline import OptimizePass, optimize

    guest = dataclasses.replace(PINNED_HOSTS["avx512"], virtualized=True)
    numpy_type = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32}

    def parallel(name: str) -> list[int]:
        a = np.ones((256, 256), numpy_type[name])
        module = load_module(einsum_config("ij,jk->ik", a, a))
        with pinned(guest):
            optimize(module, teir_context(), OptimizePass(threads=2))
        (config,) = find_configs(module)
        return [n.axis_op().size for n in config.schedule.walk_nodes()
                if getattr(n, "parallel", False)]

    assert parallel("FP32") != []
    assert parallel(data_type) != []  # its blocks: test_an_fp16_contraction_runs_...


def test_k_blocks_divide_k_where_a_block_of_half_the_aim_does() -> None:
    """K (or a BRGEMM's batch) is cut into blocks that divide it when one from half
    the aimed block up does, so that no remainder primitive, a second microkernel
    to compile, is left: K = 900 in 3 blocks of 300 rather than 384, 384 and 132
    (TCCG 24's GEMM: four microkernels with the cut of its columns, two without).
    Otherwise the aim stays."""
    from teir_lowering.runtime.kernel import compile_kernel
    from teir_passes.auto_schedule import dividing_block

    assert dividing_block(900, 384) == 300
    assert dividing_block(504, 192) == 168
    assert dividing_block(8, 3) == 2
    assert dividing_block(768, 384) == 384
    assert dividing_block(503, 192) == 192  # prime: the aim, and a remainder
    assert dividing_block(1, 1) == 1
    for extent in range(1, 700):
        for target in range(1, 200):
            block = dividing_block(extent, target)
            dividing = [b for b in range(-(-target // 2), target + 1) if extent % b == 0]
            assert block == (max(dividing) if dividing else target), (extent, target)

    rng = np.random.default_rng(3)
    a = rng.standard_normal((96, 900)).astype(np.float32)
    b = rng.standard_normal((900, 40)).astype(np.float32)
    with pinned("avx512"):  # FP32 K blocks of 384: B's panel in half the L1
        kernel = compile_kernel(einsum_config("ij,jk->ik", a, b), threads=1)
    optimized = kernel.stages["optimized"]
    assert '\\22factor\\22: 300' in optimized and "_rem" not in optimized, optimized
    out = np.zeros((96, 40), np.float32)
    kernel(a, b, out, threads=1)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_m_blocks_divide_m_where_that_needs_fewer_register_block_shapes() -> None:
    """The M block that keeps A's block in half the L2 gives way to a divisor of M
    from half of it up that needs fewer register-block shapes, a remainder block
    counted as one more (its primitive is a second microkernel): TCCG 19's 2040
    rows in 3 blocks of 680 rather than 768, 768 and 504; a 4200-row FP32 GEMM
    (K = 64, aimed block 2048 on the pinned avx512 description) in 3 of 1400."""
    from teir_dialect.context import teir_context
    from teir_dialect.records import load_module
    from teir_lowering.runtime.kernel import compile_kernel
    from teir_passes.auto_schedule import dividing_rows, vector_pieces
    from teir_passes.pipeline import OptimizePass, optimize

    assert dividing_rows(2040, 768, 16) == 680
    assert dividing_rows(1536, 768, 16) == 768  # the aim divides
    assert dividing_rows(4096, 768, 16) == 512  # 768 leaves 256: a second microkernel
    assert dividing_rows(1537, 768, 16) == 768  # 29 x 53: no divisor in range
    assert dividing_rows(2040, 768, 8) == 680
    for extent in range(1, 600, 7):
        for target in range(1, 200, 3):
            block = dividing_rows(extent, target, 16)
            assert block == target or (extent % block == 0 and 2 * block >= target)
            if block != target:  # never more shapes than the aim with its remainder
                rest = extent % target
                assert vector_pieces(block, 16) <= vector_pieces(target, 16) + (
                    1 + vector_pieces(rest, 16) if rest else 0), (extent, target)

    rng = np.random.default_rng(4)
    a = rng.standard_normal((4200, 64)).astype(np.float32)
    b = rng.standard_normal((64, 24)).astype(np.float32)
    module = load_module(einsum_config("ij,jk->ik", a, b))
    with pinned("avx512"):
        optimize(module, teir_context(), OptimizePass(threads=1))
        kernel = compile_kernel(module, optimize=False, threads=1)
    scheduled = kernel.stages["teir"]
    assert '\\22factor\\22: 1400' in scheduled and "_rem" not in scheduled, scheduled
    out = np.zeros((4200, 24), np.float32)
    kernel(a, b, out, threads=1)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
