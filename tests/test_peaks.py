"""The peak loops the benchmarks and `teir-run --bench` measure against compute what
they claim: each iteration one FMA (or one `vdpbf16ps`, two products a lane) per
chain, so their FLOP counts are the work done."""

from __future__ import annotations

import numpy as np
import pytest

from teir_dialect.host import native_host
from teir_lowering.measure.peaks import PAIRS, FmaPeak


@pytest.mark.parametrize("dtype", [
    "FP32", "FP64",
    pytest.param(PAIRS, marks=pytest.mark.skipif(
        "avx512bf16" not in native_host().features, reason="vdpbf16ps needs AVX512-BF16")),
])
def test_a_peak_loop_does_the_work_it_counts(dtype: str) -> None:
    loop = FmaPeak(dtype)
    io = loop.io()
    steps = 1000
    loop.function(steps, io.ctypes.data)
    # every accumulator starts at 0 and gains x * y (1 * 1e-7, rounded to bf16 for
    # PAIRS) per product; their sum lands in io's first vector
    y = np.float32(1e-7)
    if dtype == PAIRS:  # truncated to bf16
        y = (np.array([y]).view(np.uint32) >> 16 << 16).view(np.float32)[0]
    products = loop.chains * steps * loop.flops_per_lane // 2
    np.testing.assert_allclose(io[: loop.lanes], products * y, rtol=1e-3)
    run, flops = loop.call(1, 0.001)
    assert run() > 0 and flops >= loop.flops_per_lane * loop.lanes * loop.chains
