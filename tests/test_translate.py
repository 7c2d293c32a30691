"""The translation of the scf level straight to LLVM IR (teir_lowering.llvm.translate)
against the pass pipeline it stands in for: the same kernels, the same bytes."""

from __future__ import annotations

import ctypes
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import func

from teir_dialect import teir_context
from teir_dialect.arrays import tensor_specs
from teir_dialect.builders import einsum_config
from teir_dialect.host import pinned
from teir_dialect.records import TeirError, load_module
from teir_lowering.codegen.gomp_launch import GompLaunchPass
from teir_lowering.codegen.outline_parallel import launches_threads
from teir_lowering.codegen.storage import stored_data_type
from teir_lowering.llvm.pipeline import LowerToLLVMDialectPass
from teir_lowering.llvm.translate import TranslationError, translate_to_llvm_ir
from teir_lowering.runtime.jit import JitModule, load_libgomp
from teir_lowering.runtime.kernel import compile_kernel, lower_to_scf, translate
from teir_passes import mark_streamed_out
from teir_passes.pipeline import OptimizePass

ROOT = Path(__file__).resolve().parent.parent
SPEC = sorted((ROOT / "examples" / "spec").rglob("*.json"))


def _einsum(subscripts: str, shapes: list[tuple[int, ...]], dtype, relu: bool = False,
            data_type: str | None = None) -> dict:
    operands = [np.zeros(shape, dtype) for shape in shapes]
    return einsum_config(subscripts, *operands, dtype=data_type, relu=relu)


EINSUM = {
    "gemm-fp32-relu": lambda: _einsum("ij,jk->ik", [(37, 29), (29, 45)], np.float32, True),
    "gemm-fp64": lambda: _einsum("ij,jk->ik", [(20, 33), (33, 17)], np.float64),
    "gemm-fp16-relu": lambda: _einsum("ij,jk->ik", [(20, 24), (24, 9)], np.float16, True),
    "gemm-bf16": lambda: _einsum("ij,jk->ik", [(19, 24), (24, 13)], ml_dtypes.bfloat16),
    "gemm-tf32": lambda: _einsum("ij,jk->ik", [(16, 40), (40, 12)], np.float32,
                                 data_type="TF32"),
    "dot-kernel": lambda: _einsum("ij,kj->ik", [(33, 40), (21, 40)], np.float32),
    "contraction": lambda: _einsum("trus,pqtu->pqrs", [(4, 5, 6, 7), (3, 5, 4, 6)],
                                   np.float32, True),
    "transpose-c": lambda: _einsum("ji,jk->ki", [(64, 48), (64, 40)], np.float32),
    "permutation": lambda: _einsum("abcd->dcba", [(9, 10, 11, 12)], np.float32),
    "permutation-fp16": lambda: _einsum("abc->cba", [(17, 6, 33)], np.float16),
    "brgemm-parallel": lambda: _einsum("trus,pqtu->pqrs", [(8, 16, 64, 32),
                                                           (16, 64, 8, 64)], np.float32),
}


def _compile_both(config: object) -> tuple[JitModule, JitModule, str, list]:
    """The kernel of `config` through the pass pipeline (`teir-to-llvm`, as teir-opt
    shows it) and through the translation (as compile_kernel compiles it, without
    canonicalize and cse)."""
    engines = []
    for route in ("pipeline", "translation"):
        module = load_module(config)
        function = next(op for op in module.ops if isinstance(op, func.FuncOp))
        name = function.sym_name.data
        from teir_dialect.dialect import ConfigOp

        config_op = next(op for op in function.walk() if isinstance(op, ConfigOp))
        specs = tensor_specs(config_op, {
            tensor: stored_data_type(tensor, value.type)
            for tensor, value in zip(config_op.tensor_names, config_op.tensors)})
        ctx = teir_context()
        OptimizePass().apply(ctx, module)
        lower_to_scf(module, ctx, clean=route == "pipeline")
        if launches_threads(module):
            load_libgomp()
        if route == "pipeline":
            LowerToLLVMDialectPass().apply(ctx, module)
            GompLaunchPass().apply(ctx, module)
            engines.append(JitModule(module))
        else:
            text, linked = translate(module, ctx)
            engines.append(JitModule.from_llvm_ir(text, linked=linked))
    return engines[0], engines[1], name, specs


def _same_bytes(config: object, seed: int = 0) -> None:
    pipeline, translation, name, specs = _compile_both(config)
    rng = np.random.default_rng(seed)
    inputs = []
    for spec in specs:
        count = spec.needed_bytes // spec.dtype.itemsize + 5
        values = rng.standard_normal(count).astype(spec.dtype)
        values[-5:] = np.nan  # past the footprint: must stay as they are
        inputs.append(values)
    results = []
    for engine in (pipeline, translation):
        arrays = [a.copy() for a in inputs]
        kernel = engine.function(name, None, *[ctypes.c_void_p] * len(arrays))
        kernel(*[a.ctypes.data for a in arrays])
        results.append(arrays)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert not np.array_equal(results[1][-1][:-5], inputs[-1][:-5])  # the kernel wrote


@pytest.mark.parametrize("path", SPEC, ids=[p.stem for p in SPEC])
def test_spec_examples_translate_to_the_same_kernels(path: Path) -> None:
    _same_bytes(path)


@pytest.mark.parametrize("name", sorted(EINSUM))
def test_einsum_records_translate_to_the_same_kernels(name: str) -> None:
    with pinned("avx512"):
        _same_bytes(EINSUM[name]())


def test_streaming_stores_translate_with_their_fence(monkeypatch) -> None:
    """Non-temporal stores keep their flag and get one sfence per return."""
    monkeypatch.setattr(mark_streamed_out, "STREAMED_MIN_BYTES", 1)
    config = _einsum("ab->ba", [(64, 48)], np.float32)
    module = load_module(config)
    ctx = teir_context()
    OptimizePass().apply(ctx, module)
    lower_to_scf(module, ctx)
    text, _ = translate(module, ctx)
    functions = [part for part in text.split("define ")[1:]]
    streaming = [part for part in functions if "!nontemporal !0" in part]
    assert streaming
    for part in functions:
        lines = part.splitlines()
        returns = [i for i, line in enumerate(lines) if line.strip() == "ret void"]
        fenced = [i for i in returns if "llvm.x86.sse.sfence" in lines[i - 1]]
        assert fenced == (returns if part in streaming else [])
    _same_bytes(config)


def test_the_tensors_reach_llvm_as_noalias() -> None:
    """teir-to-scf marks the kernel's tensors `llvm.noalias` (they do not overlap where
    it writes, which compile_kernel's kernels check) and the translation passes it on:
    LLVM then drops its run-time overlap checks."""
    kernel = compile_kernel(_einsum("ijk,jk->ik", [(8, 9, 10), (9, 10)], np.float32),
                            keep_ir=True)
    header = next(line for line in kernel._engine.llvm_ir.splitlines()
                  if line.startswith("define") and "@kernel(" in line)
    assert header.count("ptr noalias") == 3, header
    with pytest.raises(ValueError, match="overlaps"):
        a = np.zeros((8, 9, 10), np.float32)
        kernel(a, np.zeros((9, 10), np.float32), a.reshape(-1)[:80].reshape(8, 10))


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_kernels_match_numpy(threads: int) -> None:
    """compile_kernel runs the translation: a parallel BRGEMM at 1 and 2 threads."""
    rng = np.random.default_rng(1)
    a = rng.random((8, 16, 64, 32), dtype=np.float32)
    b = rng.random((16, 64, 8, 64), dtype=np.float32)
    config = einsum_config("trus,pqtu->pqrs", a, b)
    kernel = compile_kernel(config, threads=threads)
    want = np.einsum("trus,pqtu->pqrs", a, b, dtype=np.float64)
    out = np.zeros(want.size, np.float32)
    kernel(a.ravel(), b.ravel(), out)
    assert kernel.parallel
    np.testing.assert_allclose(out.reshape(want.shape), want, rtol=1e-5)


SCF_OPS = """
func.func @k(%x: memref<?xf64>, %out: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %two) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %d = arith.divf %v, %two : f64
    %m = arith.subf %d, %acc : f64
    %neg = arith.negf %m : f64
    %f = math.fma %neg, %v, %acc : f64
    %low = arith.maxui %i, %c1 : index
    %r = arith.remui %n, %low : index
    %q = arith.index_cast %r : index to i32
    %b = arith.sitofp %q : i32 to f64
    %e = arith.addf %f, %b : f64
    %p = arith.cmpi eq, %i, %c0 : index
    %t = scf.if %p -> (f64) {
      scf.yield %e : f64
    } else {
      %g = arith.maxnumf %e, %two : f64
      %h = arith.mulf %g, %two : f64
      scf.yield %h : f64
    }
    memref.store %t, %out[%i] : memref<?xf64>
    scf.yield %t : f64
  }
  memref.store %s, %out[%n] : memref<?xf64>
  func.return
}
"""


def test_scalar_ops_match_the_pipeline() -> None:
    """Ops beyond the microkernels' (divf, subf, negf, maxui, remui, index_cast,
    sitofp, maxnumf, scf.if with results), through both routes, on the same data."""
    from xdsl.parser import Parser

    results = []
    x = np.random.default_rng(2).standard_normal(9)
    for route in ("pipeline", "translation"):
        ctx = teir_context()
        module = Parser(ctx, SCF_OPS).parse_module()
        if route == "pipeline":
            LowerToLLVMDialectPass().apply(ctx, module)
            engine = JitModule(module)
        else:
            engine = JitModule.from_llvm_ir(translate_to_llvm_ir(module))
        out = np.zeros(10)
        engine.function("k", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
            x.ctypes.data, out.ctypes.data, 9)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    assert np.all(results[1] != 0)


@pytest.mark.parametrize("source, named", [
    (("func.func @k(%m: memref<4x4xf32>) {\n  %c0 = arith.constant 0 : index\n"
     "  %v = memref.load %m[%c0, %c0] : memref<4x4xf32>\n  func.return\n}"),
     "memref.load with 2 indices"),
    ("func.func @k(%a: i32) {\n  %b = arith.ceildivsi %a, %a : i32\n  func.return\n}",
     "arith.ceildivsi"),
    ("func.func @k() -> i32 {\n  %a = arith.constant 1 : i32\n  func.return %a : i32\n}",
     "returns values"),
])
def test_what_is_not_translated_is_named(source: str, named: str) -> None:
    from xdsl.parser import Parser

    module = Parser(teir_context(), source).parse_module()
    with pytest.raises(TranslationError, match=named):
        translate_to_llvm_ir(module)


def test_compile_kernel_reports_a_translation_failure_as_a_teir_error(monkeypatch) -> None:
    from teir_lowering.llvm import translate as translate_module

    def failing(module, attributes=""):
        raise TranslationError("vector.gather is not translated to LLVM IR")

    monkeypatch.setattr(translate_module, "translate_to_llvm_ir", failing)
    monkeypatch.setenv("TEIR_KERNEL_CACHE", "0")
    from teir_lowering.runtime import kernel as kernel_module

    monkeypatch.setattr(kernel_module, "_CACHE", {})
    with pytest.raises(TeirError, match="vector.gather"):
        compile_kernel(_einsum("ij,jk->ik", [(5, 6), (6, 7)], np.float64), keep_ir=True)
