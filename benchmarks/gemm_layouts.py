"""GFLOP/s of one GEMM tile (Zero + Contraction, no loops) in each of the 8 layouts.

    python benchmarks/gemm_layouts.py [--size 128] [--dtype FP32] [--repeat 50] [--relu]

`trans = "ABC"` as in `teir-match-gemm`: A "N" = m unit-stride on in0, "T" = k
unit; B "N" = k unit on in1, "T" = n unit; C "N" = m unit on out, "T" = n unit.
Each layout is compiled with `compile_kernel` (single thread) and timed with the
median of many calls; the script also reports which code the tile got
(`vector.fma` in the scf stage: a vector microkernel).
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from teir_lowering.measure.timing import median_time
from teir_lowering.runtime.kernel import compile_kernel

WIDTH = {"FP32": 4, "FP64": 8}


def layout_record(trans: str, m: int, n: int, k: int, dtype: str, relu: bool = False) -> dict:
    """C(m, n) = A(m, k) B(k, n) with dense operands in the layout `trans`."""
    w = WIDTH[dtype]

    def operand(letter: str, normal: tuple[str, int], other: tuple[str, int]) -> dict[str, int]:
        unit, lead = (normal, other) if letter == "N" else (other, normal)
        return {unit[0]: w, lead[0]: unit[1] * w}

    a = operand(trans[0], ("m", m), ("k", k))
    b = operand(trans[1], ("k", k), ("n", n))
    c = operand(trans[2], ("m", m), ("n", n))
    meta = {"data_type": dtype}
    axes = [
        {"id": axis, "extent": extent,
         "strides": [a.get(axis, 0), b.get(axis, 0), c.get(axis, 0)], "offsets": [0, 0, 0]}
        for axis, extent in (("m", m), ("n", n), ("k", k))
    ]
    primitives = [
        {"id": "zero_mn", "operation": "Zero", "axes": {"M": ["m"], "N": ["n"]}, "metadata": meta},
        {"id": "gemm_mnk", "operation": "Contraction",
         "axes": {"M": ["m"], "N": ["n"], "K": ["k"]}, "metadata": meta},
    ]
    invocations = [
        {"id": "zero", "primitive": "zero_mn", "guard": None},
        {"id": "gemm", "primitive": "gemm_mnk", "guard": None},
    ]
    if relu:
        primitives.append({"id": "relu_mn", "operation": "ReLU",
                           "axes": {"M": ["m"], "N": ["n"]}, "metadata": meta})
        invocations.append({"id": "relu", "primitive": "relu_mn", "guard": None})
    return {
        "tensors": ["in0", "in1", "out"],
        "axes": axes,
        "primitives": primitives,
        "schedule": {"roots": [i["id"] for i in invocations], "iterations": [],
                     "invocations": invocations},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--dtype", default="FP32", choices=sorted(WIDTH))
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--relu", action="store_true", help="a ReLU of the tile after the GEMM")
    args = parser.parse_args()
    size = args.size
    flops = 2.0 * size**3
    print(f"GEMM {size}^3 {args.dtype}{' + ReLU' if args.relu else ''}, 1 thread")
    print(f"{'trans':6} {'GFLOP/s':>8} {'us':>9}  code")
    for letters in itertools.product("NT", repeat=3):
        trans = "".join(letters)
        kernel = compile_kernel(layout_record(trans, size, size, size, args.dtype, args.relu),
                                threads=1)
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(t.needed_bytes // t.dtype.itemsize).astype(t.dtype)
                  for t in kernel.tensors]
        seconds = median_time(lambda k=kernel, a=arrays: k(*a, threads=1), args.repeat)
        code = "vector" if "vector.fma" in kernel.stages["scf"] else "scalar"
        print(f"{trans:6} {flops / seconds / 1e9:8.2f} {seconds * 1e6:9.1f}  {code}")


if __name__ == "__main__":
    main()
