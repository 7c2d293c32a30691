"""Errors by kind: bad input is a TeirError; well-formed input TEIR does not
compile is an Unsupported (a TeirError naming what); neither is an internal error."""

from __future__ import annotations

import json

import pytest

from teir_dialect import TeirError, Unsupported
from teir_lowering.runtime.kernel import compile_kernel


def _copy_record(offset: int) -> dict:
    return {
        "tensors": ["in0", "out"],
        "axes": [{"id": "a", "extent": 2, "strides": [4, 4], "offsets": [offset, 0]}],
        "primitives": [{"id": "c", "operation": "Copy", "axes": {"M": [], "N": []},
                        "metadata": {"data_type": "FP32"}}],
        "schedule": {
            "roots": ["a"],
            "iterations": [{"id": "a", "axis": "a", "policy": "sequential",
                            "children": ["x"], "guard": None}],
            "invocations": [{"id": "x", "primitive": "c", "guard": None}],
        },
    }


def test_a_byte_misaligned_tile_is_unsupported_not_bad_input() -> None:
    with pytest.raises(Unsupported, match="byte-misaligned tiles are not supported"):
        compile_kernel(_copy_record(2), optimize=False)


def test_a_misaligned_axis_is_named_as_the_record_names_it() -> None:
    """The scheduled configuration's axes have other ids (the spec's BRGEMM: p and q
    fused into 'pq'); the refusal names the record's axis."""
    from conftest import SPEC_EXAMPLES

    record = json.loads((SPEC_EXAMPLES / "tree" / "10_7_7_parallel_brgemm.json").read_text())
    for axis in record["axes"]:
        if axis["id"] == "p":
            axis["offsets"][-1] = 2
    with pytest.raises(Unsupported, match="the offset of axis 'p' is 2 bytes on out"):
        compile_kernel(record)


def test_an_ill_formed_record_is_bad_input_not_unsupported() -> None:
    record = _copy_record(0)
    record["axes"][0]["extent"] = -1
    with pytest.raises(TeirError) as caught:
        compile_kernel(record, optimize=False)
    assert not isinstance(caught.value, Unsupported)


def test_unsupported_is_a_teir_error() -> None:
    """Callers that refuse bad input refuse unsupported input too."""
    assert issubclass(Unsupported, TeirError)
