"""teir_lowering.dask: da.einsum / da.tensordot on chunked arrays run TEIR
kernels per chunk and equal numpy, on the threaded scheduler and on a local
cluster of two worker processes (plus one that joins after `register`).
"""

from __future__ import annotations

import numpy as np
import pytest

# dask is the optional extra `.[dask]` (.ci/run and ./main-job install it).
dask = pytest.importorskip("dask", reason="the dask extra is not installed: pip install -e '.[dask]'")
distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

import dask.array as da
from dask.array.dispatch import einsum_lookup, tensordot_lookup
from distributed import Client, LocalCluster

import teir_lowering.dask as teir_dask

RNG = np.random.default_rng(5)


@pytest.fixture
def registered():
    """TEIR's chunk functions in this process's dispatch tables, numpy's back after."""
    saved = {table: dict(table._lookup) for table in (einsum_lookup, tensordot_lookup)}
    teir_dask.register()
    yield
    for table, lookup in saved.items():
        table._lookup.clear()
        table._lookup.update(lookup)


def _chunked(shape, chunks, dtype=np.float64):
    array = RNG.standard_normal(shape).astype(dtype)
    return array, da.from_array(array, chunks=chunks)


def test_threaded_scheduler(registered):
    a, x = _chunked((12, 10), (6, 5))
    b, y = _chunked((10, 8), (5, 4))
    c, z = _chunked((8, 6), (4, 3))
    before = teir_dask.calls()
    with dask.config.set(scheduler="threads", num_workers=2):
        chain = da.einsum("ij,jk,kl->il", x, y, z, optimize="greedy").compute()
        pair = da.einsum("ij,jk->ki", x, y).compute()
        summed = da.einsum("ij->j", x).compute()
        dot = da.tensordot(x, y, axes=([1], [0])).compute()
    np.testing.assert_allclose(chain, np.einsum("ij,jk,kl->il", a, b, c), rtol=1e-10)
    np.testing.assert_allclose(pair, np.einsum("ij,jk->ki", a, b), rtol=1e-10)
    np.testing.assert_allclose(summed, a.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(dot, np.tensordot(a, b, axes=([1], [0])), rtol=1e-10)
    after = teir_dask.calls()
    # x has 2x2 chunks, y 2x2: a pair has 2*2*2 blocks (the contraction split in
    # two); dask also calls the chunk function on empty arrays for the result's meta.
    assert after.get("einsum", 0) - before.get("einsum", 0) >= 8 + 8 + 4
    assert after.get("tensordot", 0) - before.get("tensordot", 0) >= 8


def test_float32_chunks(registered):
    a, x = _chunked((8, 6, 4), (4, 3, 4), np.float32)
    b, y = _chunked((4, 6), (4, 3), np.float32)
    result = da.einsum("abc,cb->a", x, y).compute(scheduler="threads")
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, np.einsum("abc,cb->a", a, b), rtol=1e-5)


@pytest.mark.parametrize("make, expected", [
    (lambda x, y: da.einsum("ij,jk->ik", x, y.astype(np.float32)), np.float64),
    (lambda x, y: da.einsum("ij,jk->ik", x, y, dtype=np.float32, casting="same_kind"),
     np.float32),
    (lambda x, y: da.einsum("ii,ij->j", x, y), np.float64),
])
def test_chunks_follow_numpy_semantics(registered, make, expected):
    """Mixed types, dtype= and repeated indices per chunk as np.einsum has them."""
    a, x = _chunked((4, 4), (2, 2))
    b, y = _chunked((4, 4), (2, 2))
    before = teir_dask.calls().get("einsum", 0)
    result = make(x, y).compute(scheduler="sync")
    assert result.dtype == expected
    reference = make(da.from_array(a, chunks=2), da.from_array(b, chunks=2))
    np.testing.assert_allclose(result, _numpy(reference), rtol=1e-5, atol=1e-5)
    assert teir_dask.calls().get("einsum", 0) > before


def _numpy(lazy):
    """The same graph computed by numpy's own chunk functions."""
    from dask.array.dispatch import einsum_lookup as lookup

    mine = lookup.dispatch(np.ndarray)
    lookup.register(np.ndarray, np.einsum)
    try:
        return lazy.compute(scheduler="sync")
    finally:
        lookup.register(np.ndarray, mine)


def test_integer_chunks_raise(registered):
    """No fallback to numpy: TEIR's chunk function refuses what it cannot do."""
    _, x = _chunked((4, 4), (2, 2))
    _, y = _chunked((4, 4), (2, 2))
    with pytest.raises(TypeError, match="int64"):
        da.einsum("ij,jk->ik", x.astype(np.int64), y.astype(np.int64)).compute(
            scheduler="sync")


def test_tensordot_chunks_take_numpy_result_types(registered):
    """da.tensordot / da.dot of mixed float types or byte-swapped chunks: numpy's
    result type (the chunk function refused them: 'a tree takes operands of one
    dtype')."""
    for left, right in ((np.float32, np.float64), (np.float16, np.float32), (">f8", "<f8")):
        a, x = _chunked((4, 6), (2, 3), left)
        b, y = _chunked((6, 3), (3, 3), right)
        got = da.tensordot(x, y, axes=1).compute(scheduler="sync")
        want = np.tensordot(a, b, axes=1)
        assert got.dtype == want.dtype.newbyteorder("=")
        np.testing.assert_allclose(got, want, rtol=1e-3)
        np.testing.assert_allclose(da.dot(x, y).compute(scheduler="sync"), want, rtol=1e-3)


@pytest.mark.parametrize("keywords, error, message", [
    ({"threads": 0}, ValueError, "register: threads must be an int >= 1, got 0"),
    ({"threads": "two"}, TypeError, "register: threads must be an int"),
    ({"threads": True}, TypeError, "register: threads must be an int"),
    ({"client": "notaclient"}, TypeError, "client must be a distributed.Client .*got str"),
])
def test_register_checks_its_arguments_before_it_registers(keywords, error, message):
    saved = {table: dict(table._lookup) for table in (einsum_lookup, tensordot_lookup)}
    try:
        with pytest.raises(error, match=message):
            teir_dask.register(**keywords)
        assert {table: dict(table._lookup) for table in saved} == saved
    finally:
        for table, lookup in saved.items():
            table._lookup.clear()
            table._lookup.update(lookup)


def _registered_here() -> bool:
    return (einsum_lookup.dispatch(np.ndarray) is teir_dask.chunk_einsum
            and tensordot_lookup.dispatch(np.ndarray) is teir_dask.chunk_tensordot)


def _one_chunk_einsum() -> int:
    array = np.arange(12.0).reshape(3, 4)
    einsum_lookup.dispatch(np.ndarray)("ij,kj->ik", array, array)
    return teir_dask.calls().get("einsum", 0)


def test_local_cluster_with_a_late_worker(registered):
    """Two worker processes run the chunks through TEIR; a third started after
    `register` gets the plugin too."""
    a, x = _chunked((16, 12), (4, 12))
    b, y = _chunked((12, 10), (12, 5))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        teir_dask.register(client)
        assert all(client.run(_registered_here).values())
        result = da.einsum("ij,jk->ik", x, y).compute()
        np.testing.assert_allclose(result, a @ b, rtol=1e-10)
        dot = da.tensordot(x, y, axes=1).compute()
        np.testing.assert_allclose(dot, a @ b, rtol=1e-10)
        counts = client.run(teir_dask.calls)
        assert sum(c.get("einsum", 0) for c in counts.values()) == 8
        assert sum(c.get("tensordot", 0) for c in counts.values()) == 8
        first = set(client.scheduler_info()["workers"])
        cluster.scale(3)
        client.wait_for_workers(3, timeout=60)
        (late,) = set(client.scheduler_info()["workers"]) - first
        assert client.run(_registered_here, workers=[late])[late]
        assert client.submit(_one_chunk_einsum, workers=[late], pure=False).result() == 1
