"""Every pass keeps results exactly, on the spec's examples mutated and on generated records.

A mutation (`strategies.mutated`) changes extents, strides and offsets of an
example record: out tiles that overlap across the iterations of a sequential
loop, axes that stop moving on a tensor, shifted windows. Such records are
valid (a sequential schedule may write an element many times; the last write
wins), and a pass that moves loops without proving that their out tiles are
disjoint changes which write is last.

Two comparisons, each bit for bit in FP64:

* the reference interpreter on the record before and after each pass, with
  random normal inputs: the interpreter's arithmetic is the sequential loop's,
  so any change in the order of operations on an element shows, sums included;
* compiled kernels (`compile_kernel`, teir-optimize then the code generator)
  against the interpreter, with small integer inputs: every product and sum is
  exact in FP64 in any order (so FMAs and vector sums do not matter), while a
  write out of order, a wrong tile or a lost element still shows.

A pass may refuse (leave the IR as it is), never produce IR that fails to
verify.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FLAT_EXAMPLES, SPEC_EXAMPLES, TREE_EXAMPLES, examples, load
from strategies import as_fp64, configs, mutated, random_arrays, step_strategy
from teir_dialect import from_json, to_json
from teir_dialect.context import teir_context
from teir_dialect.interpreter import run_reference
from teir_passes import apply_schedule
from teir_passes.registry import PASSES
from teir_passes.schedule_edit import TransformError

PASS_NAMES = (
    "teir-canonicalize-guards",
    "teir-drop-unit-iterations",
    "teir-lift-gemm",
    "teir-fold-guarded-reduction",
    "teir-lift-brgemm",
    "teir-lift-elementwise",
    "teir-match-gemm",
    "teir-auto-schedule",
    "teir-optimize",
)
"""Every teir -> teir pass that needs no options (the schedule transformations with
options are drawn by tests/test_transforms.py's scripts)."""

SOURCES = [as_fp64(to_json(from_json(load(p)))) for p in TREE_EXAMPLES + FLAT_EXAMPLES]
"""Every worked example of both spec files, in tree form and FP64."""


def run(record: dict, arrays: list[np.ndarray]) -> np.ndarray:
    result = [a.copy() for a in arrays]
    run_reference(record, result)
    return result[-1]


def passes_keep_results(record: dict, names: tuple[str, ...] = PASS_NAMES) -> None:
    arrays = random_arrays(record, np.random.default_rng(0))
    expected = run(record, arrays)
    for name in names:
        module = from_json(record)
        PASSES[name]()().apply(teir_context(), module)
        module.verify()
        transformed = to_json(module)
        from_json(transformed)  # the result is a valid record again
        np.testing.assert_array_equal(
            run(transformed, arrays).view(np.uint8), expected.view(np.uint8),
            err_msg=f"{name} changed the result of {json.dumps(record)}",
        )


def records() -> st.SearchStrategy[dict]:
    """A mutated spec example or a generated FP64 record."""
    return st.one_of(
        st.sampled_from(SOURCES).flatmap(mutated),
        configs(data_types=("FP64",), max_work=4000).map(lambda g: g.record),
    )


@settings(max_examples=examples(2000, 50), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(record=records())
def test_every_pass_keeps_results_exactly(record: dict) -> None:
    passes_keep_results(record)


@settings(max_examples=examples(300, 8), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(record=records(), threads=st.sampled_from([1, 2]))
def test_compiled_kernels_match_the_interpreter_bit_for_bit(record: dict, threads: int) -> None:
    from teir_lowering import compile_kernel

    arrays = [np.rint(3 * a) for a in random_arrays(record, np.random.default_rng(1))]
    expected = run(record, arrays)
    kernel = compile_kernel(record, threads=threads)
    got = [a.copy() for a in arrays]
    kernel(*got)
    np.testing.assert_array_equal(got[-1].view(np.uint8), expected.view(np.uint8),
                                  err_msg=json.dumps(record))


def _reordered_with(axis: str, extent: int) -> dict:
    record = as_fp64(load(SPEC_EXAMPLES / "tree" / "10_7_4_scalar_batched_gemm_reordered.json"))
    for entry in record["axes"]:
        if entry["id"] == axis:
            entry["extent"] = extent
    return record


@pytest.mark.parametrize("extent", [5, 6, 7])
def test_lift_gemm_keeps_loops_whose_tiles_overlap_in_order(extent: int) -> None:
    """Issue 25, defect 1: §10.7.4 with b's extent 6 writes out tiles of different b
    over those of d; lifting b and c into a GEMM inside d ran d's writes first."""
    passes_keep_results(_reordered_with("b", extent), ("teir-lift-gemm", "teir-optimize"))


def test_lift_gemm_still_lifts_the_spec_example() -> None:
    module = from_json(as_fp64(load(SPEC_EXAMPLES / "tree" / "10_7_4_scalar_batched_gemm_reordered.json")))
    PASSES["teir-lift-gemm"]()().apply(teir_context(), module)
    kinds = {p["axes"].get("K") and "gemm" for p in to_json(module)["primitives"]}
    assert "gemm" in kinds


def test_scalar_contraction_with_overlapping_r_tiles() -> None:
    """The same defect on §10.7.5: r of extent 5-7 overlaps the tiles of other loops."""
    record = as_fp64(load(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json"))
    for extent in (5, 6, 7):
        variant = json.loads(json.dumps(record))
        for entry in variant["axes"]:
            if entry["id"] == "r":
                entry["extent"] = extent
        passes_keep_results(variant, ("teir-lift-gemm", "teir-optimize"))


@settings(max_examples=examples(1000, 40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_schedule_transformations_keep_mutated_examples_exactly(data: st.DataObject) -> None:
    """split, tile, reorder, fuse-axes, parallelize... (the steps that take options) on
    mutated spec examples: each step applies exactly or refuses."""
    record = data.draw(st.sampled_from(SOURCES).flatmap(mutated))
    arrays = random_arrays(record, np.random.default_rng(0))
    expected = run(record, arrays)
    module, applied = from_json(record), []
    for step in data.draw(st.lists(step_strategy(record), min_size=1, max_size=3)):
        trial = module.clone()
        try:
            apply_schedule(trial, [step])
        except TransformError:
            continue
        trial.verify()
        module = trial
        applied.append(step)
    np.testing.assert_array_equal(
        run(to_json(module), arrays).view(np.uint8), expected.view(np.uint8),
        err_msg=f"steps {json.dumps(applied)} changed the result of {json.dumps(record)}",
    )


SPLIT_OFFSET = {'tensors': ['in0', 'in1', 'out'],
 'axes': [{'id': 'p', 'extent': 4, 'strides': [0, 1024, 3072], 'offsets': [0, 0, 0]},
          {'id': 'r', 'extent': 3, 'strides': [1024, 0, 128], 'offsets': [0, 0, 0]},
          {'id': 't', 'extent': 2, 'strides': [3072, 64, 0], 'offsets': [0, 0, 0]},
          {'id': 's', 'extent': 16, 'strides': [8, 0, 0], 'offsets': [0, 0, 8]},
          {'id': 'q', 'extent': 1, 'strides': [0, 128, 384], 'offsets': [0, 0, 0]},
          {'id': 'u', 'extent': 8, 'strides': [128, 8, 0], 'offsets': [0, 0, 0]}],
 'primitives': [{'id': 'zero_sq',
                 'operation': 'Zero',
                 'axes': {'M': ['s'], 'N': ['q']},
                 'metadata': {'data_type': 'FP64'}},
                {'id': 'brgemm_sqtu',
                 'operation': 'Contraction',
                 'axes': {'M': ['s'], 'N': ['q'], 'K': ['t', 'u']},
                 'metadata': {'data_type': 'FP64'}}],
 'schedule': {'roots': ['p'],
              'iterations': [{'id': 'p',
                              'axis': 'p',
                              'policy': 'sequential',
                              'children': ['r'],
                              'guard': None},
                             {'id': 'r',
                              'axis': 'r',
                              'policy': 'sequential',
                              'children': ['zero', 'brgemm'],
                              'guard': None}],
              'invocations': [{'id': 'zero', 'primitive': 'zero_sq', 'guard': None},
                              {'id': 'brgemm', 'primitive': 'brgemm_sqtu', 'guard': None}]}}


def test_a_split_remainder_after_a_loop_over_an_offset_axis_keeps_its_order() -> None:
    """Split s (stride 0 on out, offset 8 there) by 9 under Zero and BRGEMM: the
    remainder Zero writes the element the loop's BRGEMM sums into, so each
    invocation gets its own loop and its remainder right after it. The check of
    the loop's bytes against the remainder's left out the outer axis's offset and
    kept one loop, zeroing the sums (found by the search below)."""
    record = json.loads(json.dumps(SPLIT_OFFSET))
    arrays = random_arrays(record, np.random.default_rng(0))
    expected = run(record, arrays)
    module = from_json(record)
    apply_schedule(module, [{"op": "split", "axis": "s", "factor": 9}])
    np.testing.assert_array_equal(run(to_json(module), arrays).view(np.uint8),
                                  expected.view(np.uint8))


OVERWRITING_LOOP = {
    "tensors": ["in0", "in1", "out"],
    "axes": [
        {"id": "p", "extent": 4, "strides": [8, 0, 0], "offsets": [0, 0, 0]},
        {"id": "q", "extent": 8, "strides": [0, 128, 384], "offsets": [0, 0, 0]},
        {"id": "r", "extent": 3, "strides": [1024, 0, 128], "offsets": [0, 0, 0]},
        {"id": "s", "extent": 1, "strides": [8, 0, 0], "offsets": [0, 0, 0]},
        {"id": "t", "extent": 2, "strides": [3072, 64, 0], "offsets": [0, 0, 0]},
        {"id": "u", "extent": 8, "strides": [128, 8, 0], "offsets": [0, 0, 0]},
    ],
    "primitives": [
        {"id": "zero_sq", "operation": "Zero", "axes": {"M": ["s"], "N": ["q"]},
         "metadata": {"data_type": "FP64"}},
        {"id": "gemm_squ", "operation": "Contraction", "axes": {"M": ["s"], "N": ["q"], "K": ["u"]},
         "metadata": {"data_type": "FP64"}},
    ],
    "schedule": {
        "roots": ["p"],
        "iterations": [
            {"id": "p", "axis": "p", "policy": "sequential", "children": ["r"], "guard": None},
            {"id": "r", "axis": "r", "policy": "sequential", "children": ["zero", "t"],
             "guard": None},
            {"id": "t", "axis": "t", "policy": "sequential", "children": ["gemm"], "guard": None},
        ],
        "invocations": [
            {"id": "zero", "primitive": "zero_sq", "guard": None},
            {"id": "gemm", "primitive": "gemm_squ", "guard": None},
        ],
    },
}
"""A mutated §10.7.6 record hypothesis found: p does not move on out (its iterations
overwrite the same elements; the last one's stay) and continues the M axis s
(extent 1) on in0. teir-auto-schedule fused p into s (fuse-axes), which made p's
iterations one call's rows on the same elements: their sums added up."""


def test_a_loop_that_overwrites_out_is_not_fused_into_a_free_role() -> None:
    passes_keep_results(OVERWRITING_LOOP)
