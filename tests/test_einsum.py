"""teir_lowering.einsum against np.einsum, the auto-scheduler's exactness, the tuner.

Compiles are the cost here (about a second each on an idle core), so the
compiled cases are few and chosen to cover the paths: a direct GEMM, the
transposed (TTGT) path with and without a transpose of the output, a
permutation of a non-contiguous view, ReLU, `out=`. The auto-scheduler is
checked for exactness on many configurations with the interpreter instead.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BF16_PAIRS, SPEC_EXAMPLES, examples, rotate
from strategies import configs, random_arrays
from teir_dialect import TeirError, einsum_config, from_json, to_json
from teir_dialect.builders import scalar_nest
from teir_dialect.context import teir_context
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_lowering import einsum
from teir_passes import apply_schedule
from teir_passes.auto_schedule import SCRIPT_ATTR, Knobs, auto_schedule

RNG = np.random.default_rng(7)


def _arrays(subscripts: str, extents: dict[str, int], dtype=np.float32) -> list[np.ndarray]:
    terms = subscripts.split("->")[0].split(",")
    return [RNG.standard_normal([extents[i] for i in t]).astype(dtype) for t in terms]


@pytest.mark.parametrize("subscripts, extents", [
    ("ik,kj->ij", {"i": 37, "j": 29, "k": 23}),                      # a GEMM directly
    ("aebf,dfce->abcd", {"a": 5, "b": 6, "c": 7, "d": 4, "e": 3, "f": 8}),     # transposes, out in order
    ("dca,bd->abc", {"a": 9, "b": 8, "c": 7, "d": 10}),                  # transposes, out transposed
])
def test_contractions_match_numpy(subscripts: str, extents: dict[str, int]) -> None:
    arrays = _arrays(subscripts, extents)
    expected = np.einsum(subscripts, *arrays)
    np.testing.assert_allclose(einsum(subscripts, *arrays), expected, rtol=1e-5, atol=1e-5)
    out = np.full(expected.shape, np.nan, np.float32)
    assert einsum(subscripts, *arrays, out=out, relu=True, threads=1) is out
    np.testing.assert_allclose(out, np.maximum(expected, 0), rtol=1e-5, atol=1e-5)


def test_permutation_of_a_view_and_fp64() -> None:
    base = RNG.standard_normal((6, 9, 10, 11))
    view = base[:, ::2, :, 1:]
    np.testing.assert_array_equal(einsum("abcd->dcba", view), view.transpose(3, 2, 1, 0))


@pytest.mark.parametrize("subscripts, shape, dtype", rotate([
    ("abc->cba", (64, 16, 64)),   # rows of out 4 KiB apart and short: streamed in cache
    ("ab->ba", (256, 256)),       # rows of out 1 KiB apart: blocks walk down out's rows
    ("abc->cba", (27, 5, 22)),    # edges of whole blocks overlapping the last
], ["float16", "bfloat16", "float32", "float64"]))
def test_transposing_tiles_in_every_type(subscripts: str, shape: tuple[int, ...],
                                         dtype: str) -> None:
    """The transposing Copy and ReLU tiles' paths, bit for bit in each storage type
    (a 16-bit type has twice the lanes, so other edges and crowding); the default
    tier runs each shape in one type and each type on one shape (`rotate`)."""
    import ml_dtypes

    kind = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    x = RNG.standard_normal(shape).astype(kind)
    x.flat[::7] = -0.0
    want = np.einsum(subscripts, x)
    assert einsum(subscripts, x).tobytes() == np.ascontiguousarray(want).tobytes()
    relu = np.where(want < 0, np.zeros((), kind), want).astype(kind)
    assert einsum(subscripts, x, relu=True).tobytes() == np.ascontiguousarray(relu).tobytes()


@BF16_PAIRS
def test_paired_bf16_products_through_einsum() -> None:
    """`bf16_products="pairs"` reaches the microkernel (the kernel's IR pairs) and the
    result stays within BF16's error bound; the plans of the two modes are apart."""
    import ml_dtypes

    from teir_lowering.runtime import kernel as kernel_module

    a = RNG.standard_normal((67, 40)).astype(ml_dtypes.bfloat16)
    b = RNG.standard_normal((40, 33)).astype(ml_dtypes.bfloat16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    compiled = []
    original = kernel_module.compile_kernel

    def spy(config, **options):
        kernel = original(config, keep_ir=True, **options)
        compiled.append(kernel.stages["scf"])
        return kernel

    import teir_lowering.frontends.einsum_frontend as frontend
    frontend.compile_kernel = spy
    try:
        paired = einsum("ij,jk->ik", a, b, bf16_products="pairs", threads=1)
        plain = einsum("ij,jk->ik", a, b, threads=1)
    finally:
        frontend.compile_kernel = original
    assert any("teir_lane.dot_bf16_pairs" in ir for ir in compiled)
    assert not all("teir_lane.dot_bf16_pairs" in ir for ir in compiled)
    for result in (paired, plain):
        error = np.abs(result.astype(np.float64) - want)
        assert (error <= 2.0**-7 * scale + 1e-30).all()


def test_paired_bf16_products_are_named_errors_elsewhere() -> None:
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="bf16_products is one of sequential, pairs"):
        einsum("ij,jk->ik", x, x, bf16_products="fused")
    with pytest.raises(ValueError, match="pairs the products of BF16 contractions; this "
                                         "einsum computes in FP32"):
        einsum("ij,jk->ik", x, x, bf16_products="pairs")


def test_package_attribute_stays_the_function() -> None:
    """`teir_lowering.einsum` is the function after calls too, not the submodule of
    that name that the first call imports."""
    import teir_lowering

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        assert callable(teir_lowering.einsum)
        np.testing.assert_array_equal(teir_lowering.einsum("ab->ba", x), x.T)


def test_what_einsum_does_not_cover_is_an_error_not_a_fallback() -> None:
    """teir_lowering.einsum refuses what is no TEIR data type; the kernel-level
    einsum under it takes only canonical subscripts and non-negative strides
    (test_einsum_semantics checks numpy's semantics on top)."""
    from teir_lowering.frontends.einsum_frontend import einsum as kernel_einsum

    a = np.ones((3, 3), np.float32)
    with pytest.raises(TypeError, match="is int64"):
        einsum("ij->ji", a.astype(np.int64))
    with pytest.raises(TeirError, match="repeated|twice|diagonal"):
        kernel_einsum("ii->i", a)
    with pytest.raises(TeirError, match="negative stride"):
        kernel_einsum("ij->ji", a[::-1])
    with pytest.raises(TypeError, match="operand 0 must be a numpy array"):
        kernel_einsum("ij->ji", [[1.0]])


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_auto_schedule_keeps_results_and_its_script_replays(data: st.DataObject) -> None:
    """FP64: the interpreter on the scheduled configuration gives the original's bits,
    and the recorded script applied to the original gives the same configuration."""
    generated = data.draw(configs(data_types=("FP64",), max_work=4000))
    knobs = data.draw(st.builds(Knobs, st.sampled_from([None, 2, 4]),
                                st.sampled_from([None, 2, 4]),
                                st.sampled_from([None, 1, 2, 8]), st.booleans()))
    module = from_json(generated.record)
    (config,) = find_configs(module)
    steps = auto_schedule(config, teir_context(), threads=2, knobs=knobs)
    arrays = random_arrays(generated.record, np.random.default_rng(0))
    before, after = [a.copy() for a in arrays], [a.copy() for a in arrays]
    run_reference(generated.record, before)
    run_reference(config, after)
    np.testing.assert_array_equal(after[-1].view(np.uint8), before[-1].view(np.uint8),
                                  err_msg=json.dumps(steps))
    replayed = from_json(generated.record)
    apply_schedule(replayed, steps)
    scheduled = to_json(module)
    assert to_json(replayed) == scheduled
    if steps:
        assert json.loads(config.attributes[SCRIPT_ATTR].data) == steps  # pyright: ignore


def test_tuner_stores_a_script_that_compile_kernel_uses(tmp_path, monkeypatch) -> None:
    from teir_lowering import compile_kernel
    from teir_lowering.frontends.tune import tune
    from teir_passes import schedule_cache

    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    record = einsum_config("ik,kj->ij", (48, 40), (40, 56))
    entry = tune(record, threads=1, budget=3.0)
    assert [e.key for e in schedule_cache.entries()] == [entry.key]
    assert entry.seconds <= entry.baseline
    kernel = compile_kernel(record, threads=1)
    assert "teir.invoke" in kernel.stages["optimized"]
    a, b = RNG.standard_normal((48, 40)).astype(np.float32), RNG.standard_normal(
        (40, 56)).astype(np.float32)
    out = np.empty(48 * 56, np.float32)
    kernel(a, b, out)
    np.testing.assert_allclose(out.reshape(48, 56), a @ b, rtol=1e-4, atol=1e-4)
    assert schedule_cache.clear() == 1


def test_tuner_schedules_each_knob_setting_once(tmp_path, monkeypatch) -> None:
    """A knob setting that neighbours several candidates is scheduled once."""
    from teir_lowering.frontends import tune as tuning

    monkeypatch.setenv("TEIR_CACHE_DIR", str(tmp_path))
    scheduled: list[object] = []
    original = tuning._scheduled

    def counting(module, threads, knobs):
        scheduled.append(knobs)
        return original(module, threads, knobs)

    monkeypatch.setattr(tuning, "_scheduled", counting)
    tuning.tune(einsum_config("ik,kj->ij", (48, 40), (40, 56)), threads=1, budget=4.0)
    assert len(scheduled) > 2 and len(set(scheduled)) == len(scheduled)


def test_spec_contraction_from_einsum_schedules_like_the_hand_written_one() -> None:
    """trus,pqtu->pqrs from einsum_config: teir-optimize finds §10.7.7's BRGEMM."""
    hand = from_json(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
    extents = {a.axis_id: a.size for a in find_configs(hand)[0].axes}
    shapes = [tuple(extents[i] for i in term) for term in ("trus", "pqtu")]
    module = from_json(einsum_config("trus,pqtu->pqrs", *shapes))
    apply_schedule(module, [{"op": "teir-optimize"}])
    kernels = [p.attributes.get("kernel") for p in find_configs(module)[0].primitives]
    assert any(k is not None and k.kind_name == "brgemm" for k in kernels)


NEST_EXTENTS = {"p": 3, "q": 4, "r": 2, "s": 5, "t": 3, "u": 4}


@pytest.mark.parametrize("order", ["pqrstu", "tupqrs", "rtpusq", "utsrqp", "sruqtp"])
def test_scalar_nests_in_any_order_get_the_same_exact_brgemm(order: str) -> None:
    """teir-optimize puts a plain nest in memory order and lifts it to a BRGEMM whose
    K axes keep the nest's reduction order (FP64: bit-exact against the nest)."""
    shapes = [tuple(NEST_EXTENTS[i] for i in term) for term in ("trus", "pqtu")]
    record = scalar_nest(einsum_config("trus,pqtu->pqrs", *shapes, dtype="FP64"), order)
    module = from_json(record)
    apply_schedule(module, [{"op": "teir-optimize"}])
    optimized = to_json(module)
    kinds = {p["operation"]: p["axes"] for p in optimized["primitives"]}
    assert kinds["Contraction"]["K"] == [i for i in order if i in "tu"]
    arrays = random_arrays(record, np.random.default_rng(0))
    results = []
    for candidate in (record, optimized):
        copies = [a.copy() for a in arrays]
        run_reference(candidate, copies)
        results.append(copies[-1])
    np.testing.assert_array_equal(results[0], results[1])


def test_a_matched_gemm_in_its_own_layout_is_not_copied() -> None:
    """`dca,bd->cab` (the GEMM inside TCCG 2's plan) has every group contiguous
    already: when teir-optimize gives it a microkernel, the plan runs that kernel
    on the arrays (no plan of copies); a GEMM in its own layout that is not
    matched is still copied into [M, K] x [K, N] order (in TCCG 2 that copy was
    all of A, 32 MB, before the same GEMM)."""
    from teir_lowering.frontends.einsum_frontend import _transposed_plan

    a = np.zeros((9, 7, 5), np.float32)
    b = np.zeros((3, 9), np.float32)
    out = np.zeros((7, 5, 3), np.float32)
    assert _transposed_plan("dca,bd->cab", (a, b), out, False, None, matched=True) is None
    assert _transposed_plan("dca,bd->cab", (a, b), out, False, None) is not None
    result = np.empty((5, 3, 7), np.float32)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(a.shape).astype(np.float32), rng.standard_normal(b.shape).astype(np.float32)
    einsum("dca,bd->abc", a, b, out=result)
    np.testing.assert_allclose(result, np.einsum("dca,bd->abc", a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrow_tiles_of_a_grouped_einsum_are_transposed_in_every_type(dtype) -> None:
    """TCCG 23 (`aecf,fbed->abcd`, extents 21-24): teir-optimize's BRGEMM tile on the
    arrays is 21 x 21. Width is judged in vectors of 4-byte elements whatever the
    type: in FP64 (under three vectors of 8 lanes) the tile ran 1.35x slower than
    the transposes and one GEMM of 504 x 441 x 504 on the AVX-512 host."""
    from teir_dialect.host import pinned
    from teir_dialect.records import load_module
    from teir_lowering.frontends.einsum_frontend import _direct_gemm

    extents = {"a": 24, "b": 21, "c": 21, "d": 21, "e": 21, "f": 24}
    a = np.zeros([extents[i] for i in "aecf"], dtype)
    b = np.zeros([extents[i] for i in "fbed"], dtype)
    with pinned("avx512"):
        assert not _direct_gemm(load_module(einsum_config("aecf,fbed->abcd", a, b)))


@pytest.mark.parametrize("subscripts, orders", [
    ("dca,bd->abc", ("dca", "bd", "bca")),        # neither ends with c: M unit-stride, as in0
    ("ebad,ce->abcd", ("ebad", "ce", "cbad")),    # out's last index last (TCCG 5)
    ("geab,dfgc->abcdef", ("geab", "gcdf", "eabcdf")),  # the same (TCCG 43)
    ("adk,bk->abd", ("adk", "bk", "bad")),        # out's last index last
    ("aebf,dfce->abcd", ("abef", "efcd", "abcd")),  # both copied, result straight to out
    ("abz,zbc->zac", ("zab", "zbc", "zac")),      # in0 copied to bring the batch first
])
def test_transposed_plan_copies_only_what_breaks_a_gemm(subscripts: str,
                                                        orders: tuple[str, str, str]) -> None:
    from teir_lowering.frontends.einsum_frontend import _gemm_orders

    inputs, output = subscripts.split("->")
    a, b = inputs.split(",")
    batch = [i for i in output if i in a and i in b]
    rows = [i for i in output if i in a and i not in b]
    columns = [i for i in output if i in b and i not in a]
    reduced = [i for i in a if i in b and i not in output]
    assert _gemm_orders(a, b, output, batch, rows, columns, reduced) == orders


@pytest.mark.parametrize("subscripts, larger, orders", [
    # A (larger than out) copied in its own order: whole 54 x 54 blocks move (TCCG 3)
    ("dbea,ec->abcd", (True, False), ("dbae", "ec", "dbac")),
    ("dbea,ec->abcd", (False, False), ("abde", "ec", "cabd")),  # out's order otherwise
    ("aebf,dfce->abcd", (True, True), ("abef", "efcd", "abcd")),  # out's order makes out
])
def test_a_copied_operand_larger_than_out_keeps_its_own_order(
        subscripts: str, larger: tuple[bool, bool], orders: tuple[str, str, str]) -> None:
    from teir_lowering.frontends.einsum_frontend import _gemm_orders

    inputs, output = subscripts.split("->")
    a, b = inputs.split(",")
    rows = [i for i in output if i in a and i not in b]
    columns = [i for i in output if i in b and i not in a]
    reduced = [i for i in a if i in b and i not in output]
    assert _gemm_orders(a, b, output, [], rows, columns, reduced, larger) == orders
