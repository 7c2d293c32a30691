"""Schedule transformations preserve results: random configurations x random scripts.

Every step either applies, and then the reference interpreter gives the same
bytes on the transformed configuration as on the original one (FP64, where
the interpreter's arithmetic is the sequential loop's, so an unchanged order
of operations per element means identical bits; FP16 and BF16, where every
store rounds, so moving a reduction loop between a primitive and the
schedule would show), or it refuses with a
TransformError; a transformation must never produce an ill-formed
configuration. A few transformed configurations are also compiled.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SPEC_EXAMPLES, TREE_EXAMPLES, examples, load
from strategies import as_fp64, configs, random_arrays, step_strategy
from teir_dialect import from_json, teir_context, to_json
from teir_dialect.interpreter import run_reference
from teir_passes import apply_schedule
from teir_passes.pipeline import OptimizePass
from teir_passes.schedule_edit import BrokenTransform, TransformError


def run(record: dict, arrays: list[np.ndarray]) -> np.ndarray:
    result = [a.copy() for a in arrays]
    run_reference(record, result)
    return result[-1]


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_scripts_keep_results(data: st.DataObject) -> None:
    generated = data.draw(configs(data_types=("FP64", "FP16", "BF16"), max_work=4000))
    record = generated.record
    arrays = random_arrays(record, np.random.default_rng(0))
    expected = run(record, arrays)
    module = from_json(record)
    applied = []
    for step in data.draw(st.lists(step_strategy(record), min_size=1, max_size=4)):
        trial = module.clone()
        try:
            apply_schedule(trial, [step])
        except BrokenTransform:
            raise
        except TransformError:
            continue  # refused: nothing it could prove exact
        module = trial
        applied.append(step)
    transformed = to_json(module)
    np.testing.assert_array_equal(
        run(transformed, arrays).view(np.uint8), expected.view(np.uint8),
        err_msg=f"steps {json.dumps(applied)} changed the result",
    )


@settings(max_examples=examples(200, 20), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_tiles_with_remainders_keep_results(data: st.DataObject) -> None:
    """teir-tile with a size that does not divide its axis, on the spec examples in
    FP64: the tail nests keep every bit. Tiling loops that move on out always
    applies (their tiles and tails write other out bytes); tiling reduction loops
    or role axes may be refused."""
    record = as_fp64(load(data.draw(st.sampled_from(TREE_EXAMPLES))))
    extents = {a["id"]: a["extent"] for a in record["axes"]}
    first = data.draw(st.sampled_from([a for a, n in extents.items() if n > 2]))
    others = [a for a in extents if a != first]
    axes = [first, *data.draw(st.lists(st.sampled_from(others), max_size=2, unique=True)
                              if others else st.just([]))]
    sizes = [data.draw(st.sampled_from([s for s in range(2, extents[first]) if extents[first] % s])),
             *(data.draw(st.integers(1, extents[a])) for a in axes[1:])]
    module = from_json(record)
    try:
        apply_schedule(module, [{"op": "tile", "axes": axes, "sizes": sizes}])
    except BrokenTransform:
        raise
    except TransformError:
        iterated = {node["axis"] for node in record["schedule"]["iterations"]}
        moving = {a["id"] for a in record["axes"] if a["strides"][-1] and a["id"] in iterated}
        assert not set(axes) <= moving, f"tiling {axes} by {sizes} was refused"
        return
    arrays = random_arrays(record, np.random.default_rng(0))
    np.testing.assert_array_equal(
        run(to_json(module), arrays).view(np.uint8), run(record, arrays).view(np.uint8),
        err_msg=f"tiling {axes} by {sizes} changed the result of {record['axes']}",
    )


def _canonical(record: dict) -> dict:
    """The record with axes and primitives in id order (the order carries no meaning)."""
    result = copy.deepcopy(record)
    result["axes"].sort(key=lambda a: str(a["id"]))
    result["primitives"].sort(key=lambda p: str(p["id"]))
    return result


def test_spec_tiled_permutation_from_the_scalar_one() -> None:
    """§10.7.1 -> §10.7.2 by teir-lift-elementwise, record for record."""
    module = from_json(SPEC_EXAMPLES / "tree" / "10_7_1_scalar_permutation.json")
    apply_schedule(module, [{"op": "lift-elementwise"}])
    assert _canonical(to_json(module)) == _canonical(
        load(SPEC_EXAMPLES / "tree" / "10_7_2_tiled_permutation.json")
    )


@pytest.mark.parametrize("data_type", ["FP16", "BF16"])
def test_reduction_loops_stay_where_16_bit_stores_round(data_type: str) -> None:
    """§10.7.6 in FP16/BF16: its k loop rounds at every store; folding it into the
    BRGEMM or splitting a K role axis would round once, so both are refused and
    teir-optimize keeps the bits."""
    record = load(SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json")
    for primitive in record["primitives"]:
        primitive["metadata"]["data_type"] = data_type
    for axis in record["axes"]:  # FP32 byte strides -> 16-bit ones
        axis["strides"] = [s // 2 for s in axis["strides"]]
        axis["offsets"] = [o // 2 for o in axis["offsets"]]
    module = from_json(record)
    apply_schedule(module, [{"op": "fold-guarded-reduction"}])
    assert to_json(module) == to_json(from_json(record))
    gemm = next(p for p in record["primitives"] if p["operation"] == "Contraction")
    with pytest.raises(TransformError, match=rf"is {data_type}: a reduction loop of the "
                       "schedule rounds at every store"):
        apply_schedule(from_json(record), [{"op": "split", "axis": gemm["axes"]["K"][0],
                                            "factor": 2}])
    arrays = random_arrays(record, np.random.default_rng(3))
    optimized = from_json(record)
    apply_schedule(optimized, [{"op": "teir-optimize"}])
    np.testing.assert_array_equal(run(to_json(optimized), arrays).view(np.uint8),
                                  run(record, arrays).view(np.uint8))


def test_spec_reordered_batched_gemm_and_on_to_gemm() -> None:
    """§10.7.3 -> §10.7.4 by teir-reorder (and the guard hoisting), then a GEMM."""
    module = from_json(SPEC_EXAMPLES / "tree" / "10_7_3_scalar_batched_gemm.json")
    apply_schedule(module, [
        {"op": "reorder", "order": ["b", "c", "d", "a"]},
        {"op": "teir-canonicalize-guards"},
    ])
    assert _canonical(to_json(module)) == _canonical(
        load(SPEC_EXAMPLES / "tree" / "10_7_4_scalar_batched_gemm_reordered.json")
    )
    apply_schedule(module, [{"op": "teir-lift-gemm"}, {"op": "teir-match-gemm"}])
    prims = {p["id"]: p for p in to_json(module)["primitives"]}
    assert prims["gemm_bca"]["axes"] == {"M": ["b"], "N": ["c"], "K": ["a"]}


def test_spec_brgemm_from_the_gemm_schedule() -> None:
    """§10.7.6 -> §10.7.7 by teir-fold-guarded-reduction."""
    module = from_json(SPEC_EXAMPLES / "tree" / "10_7_6_contraction_gemm.json")
    apply_schedule(module, [{"op": "fold-guarded-reduction"}, {"op": "parallelize", "axis": "p"},
                            {"op": "parallelize", "axis": "r"}])
    expected = load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
    got = to_json(module)
    assert _canonical(got)["primitives"] == _canonical(expected)["primitives"]
    assert [n["policy"] for n in got["schedule"]["iterations"]] == ["parallel", "parallel"]


def test_apply_schedule_names_the_failing_step() -> None:
    module = from_json(SPEC_EXAMPLES / "tree" / "10_7_1_scalar_permutation.json")
    with pytest.raises(TransformError, match=r"step 1 \(split\): teir-split: factor 9 "
                       r"exceeds the extent 4 of axis 'c'"):
        apply_schedule(module, [{"op": "parallelize", "axis": "a"},
                                {"op": "split", "axis": "c", "factor": 9}])
    with pytest.raises(TransformError, match=r"step 0 \(split\): teir-split\{axis=\"c\" "
                       r"factor=\"2\"\}: Incompatible types: given \('2',\)"):
        apply_schedule(module, [{"op": "split", "axis": "c", "factor": "2"}])
    with pytest.raises(TransformError, match=r"step 0 \(split\): .*factor must not be a boolean"):
        apply_schedule(module, [{"op": "split", "axis": "c", "factor": True}])
    with pytest.raises(TransformError, match=r"step 0 \(tile\): sizes must be a string, a "
                       r"number, a boolean or a list of them, got \[2, null\]"):
        apply_schedule(module, [{"op": "tile", "axes": ["c"], "sizes": [2, None]}])
    with pytest.raises(TransformError, match=r"step 0 \(split\): .*requires argument \"factor\""):
        apply_schedule(module, [{"op": "split", "axis": "c"}])
    with pytest.raises(TransformError, match=r"step 0 \(\?\): a step is an object"):
        apply_schedule(module, ["split"])


def test_script_steps_are_pass_specs() -> None:
    # a step is its pass's spec: boolean options, "a,b" lists and either spelling of
    # an option's name, as teir-opt -p takes them
    from teir_passes.script import make_step

    assert str(make_step({"op": "tile", "axes": "p,r", "sizes": [2, 1]})) == (
        'teir-tile{axes="p","r" sizes=2,1}')
    assert make_step({"op": "teir-optimize", "auto-schedule": False}).auto_schedule is False
    assert make_step({"op": "teir-optimize", "auto_schedule": False, "threads": 2}).threads == 2
    scripted, direct = (from_json(SPEC_EXAMPLES / "tree" / "10_7_1_scalar_permutation.json")
                        for _ in range(2))
    apply_schedule(scripted, [{"op": "teir-optimize", "auto-schedule": False}])
    OptimizePass(auto_schedule=False).apply(teir_context(), direct)
    assert to_json(scripted) == to_json(direct)


@pytest.mark.parametrize("script", [
    [{"op": "split", "axis": "s", "factor": 5}, {"op": "split", "axis": "q", "factor": 3}],
    [{"op": "tile", "axes": ["p", "r"], "sizes": [2, 1]}, {"op": "sequentialize", "axis": "r"}],
    # remainders on the M and N role axes (16 by 5, 8 by 3) and on the loop r (3 by 2)
    [{"op": "tile", "axes": ["s", "q", "r"], "sizes": [5, 3, 2]}],
])
def test_transformed_schedules_compile_to_the_same_result(script: list[dict]) -> None:
    from teir_lowering import compile_kernel

    record = load(SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json")
    module = from_json(record)
    apply_schedule(module, script)
    kernel = compile_kernel(module)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(t.needed_bytes // 4).astype(np.float32) for t in kernel.tensors]
    expected = run(record, arrays)
    got = [a.copy() for a in arrays]
    kernel(*got)
    np.testing.assert_allclose(got[-1], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("factor", [8, 12])
def test_a_split_shared_by_a_zero_and_its_gemm_keeps_them_in_one_loop(factor: int) -> None:
    """Splitting the columns of `ik,kj->ij` (row-major C) wraps the Zero and the GEMM
    in one loop, whose epilogue then fuses the Zero (one fork, one pass over C),
    also when the block leaves a remainder (after the loop). The check once counted
    the remainder as an index of full blocks: the last block then reached into the
    next row and the two got a loop each."""
    from teir_lowering.frontends.einsum_frontend import einsum_config

    a = np.random.default_rng(0).standard_normal((6, 5))
    b = np.random.default_rng(1).standard_normal((5, 48))
    record = einsum_config("ik,kj->ij", a, b)
    module = from_json(record)
    apply_schedule(module, [{"op": "teir-lift-gemm"},
                            {"op": "split", "axis": "j", "factor": factor}])
    split = to_json(module)
    loops = [n for n in split["schedule"]["iterations"] if n["axis"] == "j"]
    assert len(loops) == 1 and len(loops[0]["children"]) == 2, split["schedule"]
    arrays = random_arrays(record, np.random.default_rng(2))
    np.testing.assert_array_equal(run(split, arrays), run(record, arrays))
