"""Upstream MLIR as a client of TEIR's output, run: the scf-level IR lowered by
mlir-opt-19's own passes and the llvm-dialect IR, both made LLVM IR by
mlir-translate-19, compute the same bytes as TEIR's kernel.

Needs Debian's mlir-19-tools (.ci/run installs it where it can); without it
the tests are skipped with that reason. tests/filecheck/upstream checks that
mlir-opt-19 parses and verifies the same IR.
"""

from __future__ import annotations

import ctypes
import io
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from llvmlite import binding as llvm

from conftest import SPEC_EXAMPLES, TREE_EXAMPLES
from teir_dialect import teir_context
from teir_lowering.llvm.upstream import UpstreamTarget
from teir_lowering.runtime.jit import JitModule, host_target_machine
from teir_lowering.runtime.kernel import (
    compile_kernel,
    load_module,
    lower_to_llvm,
    scf_pipeline,
)
from teir_passes.pipeline import OptimizePass
from teir_tools.teir_run import make_inputs

TOOLS = ("mlir-opt-19", "mlir-translate-19")
pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in TOOLS),
    reason="mlir-opt-19 / mlir-translate-19 not on PATH (apt-get install mlir-19-tools)",
)

MLIR_LOWERING = ("--convert-scf-to-cf", "--convert-vector-to-llvm",
                 "--finalize-memref-to-llvm", "--convert-arith-to-llvm",
                 "--convert-func-to-llvm", "--reconcile-unrealized-casts")

EINSUMS = sorted((Path(__file__).parent / "filecheck" / "upstream" / "Inputs").glob("*.json"))
DEFAULT_TIER = {  # a parallel loop, a guarded reduction, a transpose, every data type
    "10_7_7_parallel_brgemm", "10_2_2_guarded_reduction", "10_7_2_tiled_permutation",
    "einsum_gemm_fp16", "einsum_gemm_bf16", "einsum_gemm_tf32", "einsum_gemm_fp64",
    "einsum_relu_bf16", "einsum_segmented_fp32",
}
CASES = [
    pytest.param(path, id=path.stem,
                 marks=() if path.stem in DEFAULT_TIER else pytest.mark.slow)
    for path in [*TREE_EXAMPLES, SPEC_EXAMPLES / "flat" / "records_example.json", *EINSUMS]
]


def _run(command: list[str], text: str) -> str:
    done = subprocess.run(command, input=text, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stderr}"
    return done.stdout


def _upstream(module: object) -> str:
    output = io.StringIO()
    UpstreamTarget().emit(teir_context(), module, output)  # pyright: ignore
    return output.getvalue()


def _jit(llvm_ir: str) -> tuple[object, int]:
    """The engine (keep it alive) and the address of @kernel in `llvm_ir`."""
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, host_target_machine())
    engine.finalize_object()
    return engine, engine.get_function_address("kernel")


def _translated(path: Path) -> tuple[str, str]:
    """LLVM IR that mlir-translate-19 makes of TEIR's scf level (lowered by
    mlir-opt-19's passes) and of its llvm level (parsed and verified by mlir-opt-19)."""
    ctx = teir_context()
    optimized = load_module(path)
    OptimizePass().apply(ctx, optimized)
    scf = optimized.clone()
    for scf_pass in scf_pipeline():
        scf_pass.apply(ctx, scf)
    llvm_level = optimized.clone()
    lower_to_llvm(llvm_level, ctx)
    from_scf = _run(["mlir-translate-19", "--mlir-to-llvmir"],
                    _run(["mlir-opt-19", *MLIR_LOWERING], _upstream(scf)))
    from_llvm = _run(["mlir-translate-19", "--mlir-to-llvmir"],
                     _run(["mlir-opt-19"], _upstream(llvm_level)))
    return from_scf, from_llvm


@pytest.mark.parametrize("path", [case.values[0] for case in CASES if case.marks],
                         ids=lambda path: path.stem)
def test_upstream_mlir_takes_every_example(path: Path) -> None:
    """The cases the default tier does not run (below) at least parse, verify and
    translate upstream; tests/filecheck/upstream checks teir-opt's own path."""
    for llvm_ir in _translated(path):
        assert "define void @kernel(" in llvm_ir and "ret void" in llvm_ir


@pytest.mark.parametrize("path", CASES)
def test_upstream_lowerings_compute_the_bytes_of_teirs_kernel(path: Path) -> None:
    from_scf, from_llvm = _translated(path)

    kernel = compile_kernel(path)
    inputs = make_inputs(kernel, np.random.default_rng(0))
    expected = [a.copy() for a in inputs]
    kernel(*expected)
    if "@GOMP_parallel" in from_llvm:
        JitModule.load_library("libgomp.so.1")

    # mlir-opt's lowering: a memref<?xT> is (allocated, aligned, offset, size, stride)
    engine, address = _jit(from_scf)
    pointer, index = ctypes.c_void_p, ctypes.c_int64
    descriptor = [pointer, pointer, index, index, index]
    arrays = [a.copy() for a in inputs]
    ctypes.CFUNCTYPE(None, *(descriptor * len(arrays)))(address)(
        *(v for a in arrays for v in (a.ctypes.data, a.ctypes.data, 0, a.size, 1)))
    assert arrays[-1].tobytes() == expected[-1].tobytes()

    # TEIR's llvm dialect: a tensor is its base pointer
    engine, address = _jit(from_llvm)
    arrays = [a.copy() for a in inputs]
    ctypes.CFUNCTYPE(None, *([pointer] * len(arrays)))(address)(
        *(a.ctypes.data for a in arrays))
    assert arrays[-1].tobytes() == expected[-1].tobytes()
    del engine


NAMED = """
func.func @named(%A: memref<4x8xf32>, %Bt: memref<16x8xf32>, %C: memref<4x16xf32>, %x: memref<8xf32>, %y: memref<4xf32>, %s: memref<f32>, %bA: memref<2x4x8xf32>, %bB: memref<2x8x16xf32>, %bC: memref<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%C : memref<4x16xf32>)
  linalg.matmul_transpose_b ins(%A, %Bt : memref<4x8xf32>, memref<16x8xf32>) outs(%C : memref<4x16xf32>)
  linalg.matvec ins(%A, %x : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4xf32>)
  linalg.dot ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%s : memref<f32>)
  linalg.batch_matmul ins(%bA, %bB : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bC : memref<2x4x16xf32>)
  return
}
"""
SHAPES = [(4, 8), (16, 8), (4, 16), (8,), (4,), (), (2, 4, 8), (2, 8, 16), (2, 4, 16)]
GENERALIZE = ("--linalg-generalize-named-ops",)
PRINTED = {  # how mlir-opt prints linalg: custom, generic, named ops generalized
    "custom": (), "generic": ("--mlir-print-op-generic",), "generalized": GENERALIZE,
    "generalized-generic": (*GENERALIZE, "--mlir-print-op-generic"),
}


@pytest.mark.parametrize("form", PRINTED)
def test_linalg_printed_by_mlir_opt_converts_and_runs(form: str) -> None:
    from teir_lowering.frontends.linalg_run import prepare_linalg

    text = _run(["mlir-opt-19", *PRINTED[form]], NAMED)
    assert ("linalg.generic" in text) == ("generalized" in form)
    program = prepare_linalg(text)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    result = [a.copy() for a in arrays]
    program.run(result)
    a, bt, _, x, y, s, ba, bb, bc = (v.astype(np.float64) for v in arrays)
    expected = {2: a @ bt.T, 4: y + a @ x, 5: s + x @ x, 8: bc + ba @ bb}
    for index, want in expected.items():
        np.testing.assert_allclose(result[index], want, rtol=1e-5, atol=1e-5)


TENSORS = """
func.func @mm_relu(%A: tensor<16x8xf32>, %B: tensor<8x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %C = linalg.matmul ins(%A, %B : tensor<16x8xf32>, tensor<8x32xf32>) outs(%filled : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %C : tensor<16x32xf32>
}
"""
BUFFERIZE = (
    "--one-shot-bufferize=bufferize-function-boundaries "
    + "function-boundary-type-conversion=identity-layout-map",
    "--buffer-results-to-out-params",
)


def test_the_upstream_tensor_route_runs() -> None:
    """linalg on tensors: bufferized by mlir-opt (results as out-parameters), then TEIR."""
    from teir_lowering.frontends.linalg_run import prepare_linalg

    program = prepare_linalg(_run(["mlir-opt-19", *BUFFERIZE], TENSORS))
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((16, 8), (8, 32), (16, 32))]
    expected = arrays[0].astype(np.float64) @ arrays[1]
    program.run(arrays)
    np.testing.assert_allclose(arrays[2], expected, rtol=1e-5, atol=1e-5)
