"""linalg's named contractions that xDSL 0.74 lacks (teir_dialect.linalg_ops) and
linalg.matmul with MLIR's `indexing_maps`, converted by convert-linalg-to-teir,
compiled and run: each against numpy's own formula for the op (not the maps
TEIR gives it), in float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest

from teir_dialect import TeirError
from teir_lowering.frontends.linalg_run import prepare_linalg

OPS = {  # name: (operand shapes, numpy's formula: out + f(a, b))
    "batch_matmul": ([(2, 4, 8), (2, 8, 16), (2, 4, 16)], lambda a, b: a @ b),
    "batch_matmul_transpose_a": ([(2, 8, 4), (2, 8, 16), (2, 4, 16)],
                                 lambda a, b: a.transpose(0, 2, 1) @ b),
    "batch_matmul_transpose_b": ([(2, 4, 8), (2, 16, 8), (2, 4, 16)],
                                 lambda a, b: a @ b.transpose(0, 2, 1)),
    "matmul_transpose_a": ([(8, 4), (8, 16), (4, 16)], lambda a, b: a.T @ b),
    "matmul_transpose_b": ([(4, 8), (16, 8), (4, 16)], lambda a, b: a @ b.T),
    "matvec": ([(4, 8), (8,), (4,)], lambda a, b: a @ b),
    "vecmat": ([(8,), (8, 16), (16,)], lambda a, b: a @ b),
    "batch_matvec": ([(2, 4, 8), (2, 8), (2, 4)], lambda a, b: np.einsum("bmk,bk->bm", a, b)),
    "dot": ([(8,), (8,), ()], lambda a, b: a @ b),
}
TYPES = {np.float32: ("f32", 1e-5), np.float64: ("f64", 1e-12)}


def _memref(shape: tuple[int, ...], element: str) -> str:
    return f"memref<{''.join(f'{n}x' for n in shape)}{element}>"


@pytest.mark.parametrize("dtype", [
    np.float32, pytest.param(np.float64, marks=pytest.mark.slow)], ids=lambda t: t.__name__)
def test_named_contractions_match_numpy(dtype: type) -> None:
    element, tolerance = TYPES[dtype]
    arguments, lines = [], []
    for name, (shapes, _) in OPS.items():
        types = [_memref(shape, element) for shape in shapes]
        names = [f"%{name}_{i}" for i in range(3)]
        arguments += [f"{n}: {t}" for n, t in zip(names, types)]
        lines.append(f"  linalg.{name} ins({names[0]}, {names[1]} : {types[0]}, {types[1]}) "
                     f"outs({names[2]} : {types[2]})")
    text = (f"func.func @named({', '.join(arguments)}) {{\n" + "\n".join(lines)
            + "\n  func.return\n}\n")
    program = prepare_linalg(text)
    assert len(program.steps) == len(OPS)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(dtype)
              for shapes, _ in OPS.values() for shape in shapes]
    result = [a.copy() for a in arrays]
    program.run(result)
    for index, (name, (_, formula)) in enumerate(OPS.items()):
        a, b, c = arrays[3 * index: 3 * index + 3]
        expected = c.astype(np.float64) + formula(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(result[3 * index + 2], expected, rtol=tolerance,
                                   atol=tolerance * 8, err_msg=name)


def test_matmul_with_indexing_maps_matches_numpy() -> None:
    """MLIR's keyword form: a transposed A and B through the maps."""
    text = """
func.func @mm(%At: memref<8x4xf32>, %Bt: memref<16x8xf32>, %C: memref<4x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%At, %Bt : memref<8x4xf32>, memref<16x8xf32>) outs(%C : memref<4x16xf32>)
  func.return
}
"""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((8, 4), (16, 8), (4, 16))]
    result = [a.copy() for a in arrays]
    prepare_linalg(text).run(result)
    np.testing.assert_allclose(result[2], arrays[2] + arrays[0].T @ arrays[1].T, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("text, message", [
    ("linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>] ins(%A, %A : "
     + "memref<4x4xf32>, memref<4x4xf32>) outs(%A : memref<4x4xf32>)",
     "linalg.matmul: indexing_maps must be a list of three affine maps (a, b, out)"),
    ("linalg.batch_matmul ins(%A, %A : memref<4x4xf32>, memref<4x4xf32>) outs(%A : "
     + "memref<4x4xf32>)",
     "linalg.batch_matmul: an operand of type memref<4x4xf32> has rank 2"),
])
def test_bad_named_ops_are_diagnostics(text: str, message: str) -> None:
    with pytest.raises(TeirError) as info:
        prepare_linalg(f"func.func @f(%A: memref<4x4xf32>) {{\n  {text}\n  func.return\n}}\n")
    assert message in str(info.value)


BUFFERIZED = """
func.func @mm(%arg0: memref<16x8xf32>, %arg1: memref<8x32xf32>, %arg2: memref<16x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
  linalg.fill ins(%cst : f32) outs(%alloc : memref<16x32xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<16x8xf32>, memref<8x32xf32>) outs(%alloc : memref<16x32xf32>)
  memref.copy %alloc, %arg2 : memref<16x32xf32> to memref<16x32xf32>
  memref.dealloc %alloc : memref<16x32xf32>
  return
}
"""
"""What mlir-opt --one-shot-bufferize ... --buffer-results-to-out-params leaves of a
matmul on tensors (a temporary, then a copy into the out-parameter)."""


def test_bufferized_ir_with_a_temporary_and_a_copy_runs() -> None:
    program = prepare_linalg(BUFFERIZED)
    assert [len(step.arguments) for step in program.steps] == [3, 2]  # matmul, copy
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 8)), rng.standard_normal((8, 32))
    arrays = [a.astype(np.float32), b.astype(np.float32), np.full((16, 32), 7, np.float32)]
    program.run(arrays)
    np.testing.assert_allclose(arrays[2], a @ b, rtol=1e-5, atol=1e-5)


def test_a_function_returning_its_result_is_refused_with_the_route() -> None:
    text = BUFFERIZED.replace(", %arg2: memref<16x32xf32>) {", ") -> memref<16x32xf32> {")
    text = text.replace("  memref.copy %alloc, %arg2 : memref<16x32xf32> to memref<16x32xf32>\n",
                        "").replace("  memref.dealloc %alloc : memref<16x32xf32>\n  return",
                                    "  return %alloc : memref<16x32xf32>")
    with pytest.raises(TeirError) as info:
        prepare_linalg(text)
    assert ("the function returns values; runs take results as out-parameters (after "
            "one-shot bufferization: mlir-opt --buffer-results-to-out-params)") in str(info.value)
