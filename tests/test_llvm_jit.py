"""scf/arith/memref/func -> llvm dialect -> llvmlite JIT, checked against numpy."""

from __future__ import annotations

import ctypes
import math
import struct

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from teir_lowering.lane import TEIR_LANE
from teir_lowering.llvm.pipeline import (
    LOWER_TO_LLVM_PASSES,
    LLVMLoweringError,
    LowerToLLVMDialectPass,
)
from teir_lowering.runtime.jit import JitCompilationError, JitModule

PTR = ctypes.c_void_p
I64 = ctypes.c_int64


def _context() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    ctx.load_dialect(TEIR_LANE)
    return ctx


def parse(source: str) -> tuple[ModuleOp, Context]:
    ctx = _context()
    return Parser(ctx, source).parse_module(), ctx


def compile_mlir(source: str) -> JitModule:
    module, ctx = parse(source)
    LowerToLLVMDialectPass().apply(ctx, module)
    return JitModule(module)


def data(array: np.ndarray) -> int:
    assert array.flags.c_contiguous
    return array.ctypes.data


_C_FLOAT = {"f32": ctypes.c_float, "f64": ctypes.c_double}
_NP_FLOAT = {"f32": np.float32, "f64": np.float64}


# --------------------------------------------------------------------------------------
# Loops over memrefs
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ft", ["f32", "f64"])
def test_elementwise_multiply_add(ft: str):
    jit = compile_mlir(
        f"""
        func.func @k(%a: memref<?x{ft}>, %b: memref<?x{ft}>, %out: memref<?x{ft}>,
                     %n: index) {{
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %one = arith.constant 1.0 : {ft}
          scf.for %i = %c0 to %n step %c1 {{
            %x = memref.load %a[%i] : memref<?x{ft}>
            %y = memref.load %b[%i] : memref<?x{ft}>
            %m = arith.mulf %x, %y : {ft}
            %r = arith.addf %m, %one : {ft}
            memref.store %r, %out[%i] : memref<?x{ft}>
          }}
          func.return
        }}
        """
    )
    kernel = jit.function("k", None, PTR, PTR, PTR, I64)
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 1000, 4099):
        a = rng.standard_normal(n).astype(_NP_FLOAT[ft])
        b = rng.standard_normal(n).astype(_NP_FLOAT[ft])
        out = np.zeros(n, _NP_FLOAT[ft])
        kernel(data(a), data(b), data(out), n)
        np.testing.assert_array_equal(out, a * b + _NP_FLOAT[ft](1.0))
    # addresses stay visible to LLVM (getelementptr), so the loop is vectorized
    scalar = {"f32": "float", "f64": "double"}[ft]
    assert f"x {scalar}>" in jit.llvm_ir


def test_unaligned_buffers():
    """Vector code must not assume more than element alignment of numpy views."""
    jit = compile_mlir(
        """
        func.func @scale(%a: memref<?xf32>, %out: memref<?xf32>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %two = arith.constant 2.0 : f32
          scf.for %i = %c0 to %n step %c1 {
            %x = memref.load %a[%i] : memref<?xf32>
            %r = arith.mulf %x, %two : f32
            memref.store %r, %out[%i] : memref<?xf32>
          }
          func.return
        }
        """
    )
    kernel = jit.function("scale", None, PTR, PTR, I64)
    base = np.arange(1030, dtype=np.float32)
    out_base = np.zeros(1030, np.float32)
    a, out = base[1:1025], out_base[3:1027]  # 4- and 12-byte offsets
    kernel(data(a), data(out), a.size)
    np.testing.assert_array_equal(out, 2 * a)


def test_memref_of_vectors_on_unaligned_buffers():
    """Vector loads/stores carry the element alignment, not the vector's (32 bytes)."""
    jit = compile_mlir(
        """
        func.func @vk(%a: memref<?xvector<8xf32>>, %out: memref<?xvector<8xf32>>,
                      %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %two = arith.constant dense<2.0> : vector<8xf32>
          scf.for %i = %c0 to %n step %c1 {
            %x = memref.load %a[%i] : memref<?xvector<8xf32>>
            %y = arith.mulf %x, %two : vector<8xf32>
            memref.store %y, %out[%i] : memref<?xvector<8xf32>>
          }
          func.return
        }
        """
    )
    assert "load <8 x float>" in jit.llvm_ir and "align 32" not in jit.llvm_ir
    kernel = jit.function("vk", None, PTR, PTR, I64)
    base = np.arange(803, dtype=np.float32)
    out_base = np.zeros(803, np.float32)
    a, out = base[1:801], out_base[3:803]
    kernel(data(a), data(out), 100)
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("ft", ["f32", "f64"])
def test_sum_reduction_with_iter_args(ft: str):
    jit = compile_mlir(
        f"""
        func.func @sum(%a: memref<?x{ft}>, %n: index) -> {ft} {{
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %zero = arith.constant 0.0 : {ft}
          %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> ({ft}) {{
            %x = memref.load %a[%i] : memref<?x{ft}>
            %next = arith.addf %acc, %x : {ft}
            scf.yield %next : {ft}
          }}
          func.return %s : {ft}
        }}
        """
    )
    total = jit.function("sum", _C_FLOAT[ft], PTR, I64)
    a = np.random.default_rng(1).random(3001).astype(_NP_FLOAT[ft])
    expected = _NP_FLOAT[ft](0)
    for x in a:  # no fast-math: the sum is sequential, as written
        expected = _NP_FLOAT[ft](expected + x)
    assert total(data(a), a.size) == expected
    assert total(data(a), 0) == 0.0


def test_scf_if_with_cmpi_cmpf_and_select():
    jit = compile_mlir(
        """
        func.func @branchy(%a: memref<?xf32>, %out: memref<?xf32>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c2 = arith.constant 2 : index
          %half = arith.constant 0.5 : f32
          %quarter = arith.constant 0.25 : f32
          %two = arith.constant 2.0 : f32
          scf.for %i = %c0 to %n step %c1 {
            %x = memref.load %a[%i] : memref<?xf32>
            %rem = arith.remui %i, %c2 : index
            %even = arith.cmpi eq, %rem, %c0 : index
            %v = scf.if %even -> (f32) {
              %big = arith.cmpf ogt, %x, %half : f32
              %doubled = arith.mulf %x, %two : f32
              %s = arith.select %big, %x, %doubled : f32
              scf.yield %s : f32
            } else {
              %small = arith.cmpf olt, %x, %quarter : f32
              %neg = arith.negf %x : f32
              %s = arith.select %small, %neg, %x : f32
              scf.yield %s : f32
            }
            memref.store %v, %out[%i] : memref<?xf32>
          }
          func.return
        }
        """
    )
    kernel = jit.function("branchy", None, PTR, PTR, I64)
    a = np.random.default_rng(2).random(999).astype(np.float32)
    out = np.zeros_like(a)
    kernel(data(a), data(out), a.size)
    even = np.arange(a.size) % 2 == 0
    expected = np.where(
        even, np.where(a > 0.5, a, a * 2), np.where(a < 0.25, -a, a)
    ).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


def test_relu_as_select():
    jit = compile_mlir(
        """
        func.func @relu(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %zero = arith.constant 0.0 : f32
          scf.for %i = %c0 to %n step %c1 {
            %v = memref.load %x[%i] : memref<?xf32>
            %neg = arith.cmpf olt, %v, %zero : f32
            %r = arith.select %neg, %zero, %v : f32
            memref.store %r, %y[%i] : memref<?xf32>
          }
          func.return
        }
        """
    )
    relu = jit.function("relu", None, PTR, PTR, I64)
    x = np.random.default_rng(3).standard_normal(2053).astype(np.float32)
    x[:4] = [np.nan, -0.0, np.inf, -np.inf]
    y = np.empty_like(x)
    relu(data(x), data(y), x.size)
    np.testing.assert_array_equal(y, np.where(x < 0, np.float32(0), x))


def test_lane_compare_and_select():
    # the teir_lane ops as the vectorized ReLU and bf16 rounding print them, parsed
    # back: select(x < 0, 0, x) and select(isnan(x), quiet, bits) lane by lane
    jit = compile_mlir(
        """
        func.func @lanes(%x: memref<?xf32>, %y: memref<?xf32>, %q: memref<?xi32>,
                         %n: index) {
          %c0 = arith.constant 0 : index
          %c8 = arith.constant 8 : index
          %zero = arith.constant dense<0.0> : vector<8xf32>
          %quiet = arith.constant dense<-1> : vector<8xi32>
          scf.for %i = %c0 to %n step %c8 {
            %v = vector.load %x[%i] : memref<?xf32>, vector<8xf32>
            %neg = teir_lane.cmpf olt, %v, %zero : vector<8xf32>
            %r = teir_lane.select %neg, %zero, %v : vector<8xi1>, vector<8xf32>
            vector.store %r, %y[%i] : memref<?xf32>, vector<8xf32>
            %nan = teir_lane.cmpf uno, %v, %v : vector<8xf32>
            %bits = arith.bitcast %v : vector<8xf32> to vector<8xi32>
            %b = teir_lane.select %nan, %quiet, %bits : vector<8xi1>, vector<8xi32>
            vector.store %b, %q[%i] : memref<?xi32>, vector<8xi32>
          }
          func.return
        }
        """
    )
    lanes = jit.function("lanes", None, PTR, PTR, PTR, I64)
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32)
    x[:5] = [np.nan, -0.0, np.inf, -np.inf, np.nan]
    y, q = np.empty_like(x), np.empty(x.size, np.int32)
    lanes(data(x), data(y), data(q), x.size)
    np.testing.assert_array_equal(y, np.where(x < 0, np.float32(0), x))
    assert np.signbit(y[1])
    np.testing.assert_array_equal(q, np.where(np.isnan(x), -1, x.view(np.int32)))


def test_index_arithmetic():
    jit = compile_mlir(
        """
        func.func @divmod(%q: memref<?xi64>, %r: memref<?xi64>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c3 = arith.constant 3 : index
          %c4 = arith.constant 4 : index
          %c5 = arith.constant 5 : index
          %c50 = arith.constant 50 : index
          scf.for %i = %c0 to %n step %c1 {
            %centered = arith.subi %i, %c50 : index
            %scaled = arith.muli %centered, %c3 : index
            %shifted = arith.addi %scaled, %c1 : index
            %quot = arith.divsi %shifted, %c4 : index
            %rem = arith.remsi %shifted, %c5 : index
            %quot64 = arith.index_cast %quot : index to i64
            %rem64 = arith.index_cast %rem : index to i64
            memref.store %quot64, %q[%i] : memref<?xi64>
            memref.store %rem64, %r[%i] : memref<?xi64>
          }
          func.return
        }
        """
    )
    kernel = jit.function("divmod", None, PTR, PTR, I64)
    n = 100
    q = np.zeros(n, np.int64)
    r = np.zeros(n, np.int64)
    kernel(data(q), data(r), n)
    values = [(i - 50) * 3 + 1 for i in range(n)]
    # C semantics: division truncates toward zero, the remainder has the dividend's sign
    assert q.tolist() == [int(v / 4) for v in values]
    assert r.tolist() == [int(math.fmod(v, 5)) for v in values]


def test_nested_loops_matmul():
    jit = compile_mlir(
        """
        func.func @matmul(%a: memref<?xf64>, %b: memref<?xf64>, %c: memref<?xf64>,
                          %m: index, %n: index, %k: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %zero = arith.constant 0.0 : f64
          scf.for %i = %c0 to %m step %c1 {
            scf.for %j = %c0 to %n step %c1 {
              %acc = scf.for %p = %c0 to %k step %c1 iter_args(%s = %zero) -> (f64) {
                %ik0 = arith.muli %i, %k : index
                %ik = arith.addi %ik0, %p : index
                %pn0 = arith.muli %p, %n : index
                %pn = arith.addi %pn0, %j : index
                %x = memref.load %a[%ik] : memref<?xf64>
                %y = memref.load %b[%pn] : memref<?xf64>
                %xy = arith.mulf %x, %y : f64
                %s2 = arith.addf %s, %xy : f64
                scf.yield %s2 : f64
              }
              %in0 = arith.muli %i, %n : index
              %in = arith.addi %in0, %j : index
              memref.store %acc, %c[%in] : memref<?xf64>
            }
          }
          func.return
        }
        """
    )
    matmul = jit.function("matmul", None, PTR, PTR, PTR, I64, I64, I64)
    rng = np.random.default_rng(4)
    m, n, k = 13, 17, 19
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    c = np.zeros((m, n))
    matmul(data(a), data(b), data(c), m, n, k)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


def test_static_two_dimensional_memref():
    jit = compile_mlir(
        """
        func.func @transpose(%src: memref<4x8xf32>, %dst: memref<8x4xf32>) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          %c8 = arith.constant 8 : index
          scf.for %i = %c0 to %c4 step %c1 {
            scf.for %j = %c0 to %c8 step %c1 {
              %v = memref.load %src[%i, %j] : memref<4x8xf32>
              memref.store %v, %dst[%j, %i] : memref<8x4xf32>
            }
          }
          func.return
        }
        """
    )
    transpose = jit.function("transpose", None, PTR, PTR)
    src = np.arange(32, dtype=np.float32).reshape(4, 8)
    dst = np.zeros((8, 4), np.float32)
    transpose(data(src), data(dst))
    np.testing.assert_array_equal(dst, src.T)


def test_func_call_and_index_arguments():
    jit = compile_mlir(
        """
        func.func @poly(%x: f64, %i: index) -> f64 {
          %ii = arith.index_cast %i : index to i64
          %fi = arith.sitofp %ii : i64 to f64
          %xx = arith.mulf %x, %x : f64
          %r = arith.addf %xx, %fi : f64
          func.return %r : f64
        }
        func.func @apply(%a: memref<?xf64>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          scf.for %i = %c0 to %n step %c1 {
            %x = memref.load %a[%i] : memref<?xf64>
            %y = func.call @poly(%x, %i) : (f64, index) -> f64
            memref.store %y, %a[%i] : memref<?xf64>
          }
          func.return
        }
        """
    )
    apply = jit.function("apply", None, PTR, I64)
    poly = jit.function("poly", ctypes.c_double, ctypes.c_double, I64)
    a = np.linspace(-2, 2, 101)
    expected = a * a + np.arange(a.size)
    apply(data(a), a.size)
    np.testing.assert_array_equal(a, expected)
    assert poly(3.0, 4) == 13.0


def test_memrefs_with_an_offset_cross_calls_as_base_pointers():
    """A function takes a memref as the pointer to its base (the element its layout's
    offset counts from); a caller passing a subview or a reinterpret_cast view
    passes that view's base, and a reinterpret_cast restarts from its source's base
    (the offset was applied twice through a call: `B` read 36 elements too far)."""
    jit = compile_mlir(
        """
        func.func @view(%A: memref<4x8xf32, strided<[16, 1], offset: 36>>, %B: memref<4x8xf32>) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          %c8 = arith.constant 8 : index
          scf.for %i = %c0 to %c4 step %c1 {
            scf.for %j = %c0 to %c8 step %c1 {
              %v = memref.load %A[%i, %j] : memref<4x8xf32, strided<[16, 1], offset: 36>>
              memref.store %v, %B[%i, %j] : memref<4x8xf32>
            }
          }
          func.return
        }
        func.func @subview(%X: memref<8x16xf32>, %B: memref<4x8xf32>) {
          %s = memref.subview %X[2, 4] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 36>>
          func.call @view(%s, %B) : (memref<4x8xf32, strided<[16, 1], offset: 36>>, memref<4x8xf32>) -> ()
          func.return
        }
        func.func @recast(%A: memref<4x8xf32, strided<[16, 1], offset: 36>>, %B: memref<4x8xf32>) {
          %flat = memref.reinterpret_cast %A to offset: [0], sizes: [128], strides: [1] : memref<4x8xf32, strided<[16, 1], offset: 36>> to memref<128xf32>
          %again = memref.reinterpret_cast %flat to offset: [36], sizes: [4, 8], strides: [16, 1] : memref<128xf32> to memref<4x8xf32, strided<[16, 1], offset: 36>>
          func.call @view(%again, %B) : (memref<4x8xf32, strided<[16, 1], offset: 36>>, memref<4x8xf32>) -> ()
          func.return
        }
        """
    )
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    for name in ("view", "subview", "recast"):
        b = np.zeros((4, 8), np.float32)
        jit.function(name, None, PTR, PTR)(data(x), data(b))
        np.testing.assert_array_equal(b, x[2:6, 4:12], err_msg=name)


def test_a_memref_argument_with_a_dynamic_offset_is_refused_by_name():
    module, ctx = parse(
        """
        func.func @k(%a: memref<4xf32, strided<[1], offset: ?>>) {
          func.return
        }
        """
    )
    with pytest.raises(DiagnosticException, match=r"argument 0 of @k .*dynamic"):
        LowerToLLVMDialectPass().apply(ctx, module)


def test_index_switch():
    jit = compile_mlir(
        """
        func.func @pick(%i: index) -> f64 {
          %r = scf.index_switch %i -> f64
          case 0 {
            %a = arith.constant 10.0 : f64
            scf.yield %a : f64
          }
          case 5 {
            %b = arith.constant 50.0 : f64
            scf.yield %b : f64
          }
          default {
            %d = arith.constant -1.0 : f64
            scf.yield %d : f64
          }
          func.return %r : f64
        }
        """
    )
    pick = jit.function("pick", ctypes.c_double, I64)
    assert [pick(i) for i in (0, 1, 5, 6, -3)] == [10.0, -1.0, 50.0, -1.0, -1.0]


def test_cf_assert_that_holds():
    jit = compile_mlir(
        """
        func.func @checked(%x: i64) -> i64 {
          %c0 = arith.constant 0 : i64
          %ok = arith.cmpi sge, %x, %c0 : i64
          cf.assert %ok, "x must be non-negative"
          %r = arith.addi %x, %x : i64
          func.return %r : i64
        }
        """
    )
    assert "llvm.trap" in jit.llvm_ir
    assert jit.function("checked", I64, I64)(21) == 42


# --------------------------------------------------------------------------------------
# Scalar semantics of single ops
# --------------------------------------------------------------------------------------

_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def test_cmpi_all_predicates():
    jit = compile_mlir(
        "\n".join(
            f"""
            func.func @{p}(%a: i32, %b: i32) -> i32 {{
              %c = arith.cmpi {p}, %a, %b : i32
              %r = arith.extui %c : i1 to i32
              func.return %r : i32
            }}
            """
            for p in _CMPI
        )
    )
    u = lambda v: v & 0xFFFFFFFF
    expected = {
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
        "slt": lambda a, b: a < b,
        "sle": lambda a, b: a <= b,
        "sgt": lambda a, b: a > b,
        "sge": lambda a, b: a >= b,
        "ult": lambda a, b: u(a) < u(b),
        "ule": lambda a, b: u(a) <= u(b),
        "ugt": lambda a, b: u(a) > u(b),
        "uge": lambda a, b: u(a) >= u(b),
    }
    values = [-5, -1, 0, 1, 7, 2**31 - 1, -(2**31)]
    for p in _CMPI:
        f = jit.function(p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
        for a in values:
            for b in values:
                assert f(a, b) == int(expected[p](a, b)), (p, a, b)


_CMPF = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip


def test_cmpf_all_predicates():
    jit = compile_mlir(
        "\n".join(
            f"""
            func.func @{p}(%a: f64, %b: f64) -> i32 {{
              %c = arith.cmpf {p}, %a, %b : f64
              %r = arith.extui %c : i1 to i32
              func.return %r : i32
            }}
            """
            for p in _CMPF
        )
    )
    relations = {
        "eq": lambda a, b: a == b,
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "ne": lambda a, b: a != b,
    }

    def expected(p: str, a: float, b: float) -> bool:
        unordered = math.isnan(a) or math.isnan(b)
        if p in ("false", "true"):
            return p == "true"
        if p == "ord":
            return not unordered
        if p == "uno":
            return unordered
        relation = relations[p[1:]]
        if p[0] == "o":
            return not unordered and relation(a, b)
        return unordered or relation(a, b)

    values = [math.nan, -math.inf, -1.5, -0.0, 0.0, 2.0, math.inf]
    for p in _CMPF:
        f = jit.function(p, ctypes.c_int32, ctypes.c_double, ctypes.c_double)
        for a in values:
            for b in values:
                assert f(a, b) == int(expected(p, a, b)), (p, a, b)


def test_float_min_max():
    jit = compile_mlir(
        "\n".join(
            f"""
            func.func @{op}(%a: f64, %b: f64) -> f64 {{
              %r = arith.{op} %a, %b : f64
              func.return %r : f64
            }}
            """
            for op in ("maximumf", "minimumf", "maxnumf", "minnumf")
        )
        + """
        func.func @max32(%a: f32, %b: f32) -> f32 {
          %r = arith.maximumf %a, %b : f32
          func.return %r : f32
        }
        """
    )
    d = ctypes.c_double
    maximumf, minimumf, maxnumf, minnumf = (
        jit.function(n, d, d, d) for n in ("maximumf", "minimumf", "maxnumf", "minnumf")
    )
    assert maximumf(1.0, 2.0) == 2.0 and minimumf(1.0, 2.0) == 1.0
    assert math.isnan(maximumf(math.nan, 1.0)) and math.isnan(minimumf(1.0, math.nan))
    assert maxnumf(math.nan, 1.0) == 1.0 and minnumf(1.0, math.nan) == 1.0
    assert math.copysign(1, maximumf(-0.0, 0.0)) == 1.0
    assert math.copysign(1, minimumf(0.0, -0.0)) == -1.0
    f = ctypes.c_float
    assert jit.function("max32", f, f, f)(-3.0, 1.5) == 1.5


def test_integer_min_max_and_bit_ops():
    ops = ["minsi", "maxsi", "minui", "maxui", "andi", "ori", "xori", "shli",
           "shrsi", "shrui", "divui", "remui"]  # fmt: skip
    jit = compile_mlir(
        "\n".join(
            f"""
            func.func @{op}(%a: i64, %b: i64) -> i64 {{
              %r = arith.{op} %a, %b : i64
              func.return %r : i64
            }}
            """
            for op in ops
        )
    )
    u = lambda v: v & (2**64 - 1)
    s = lambda v: v - 2**64 if v >= 2**63 else v
    expected = {
        "minsi": min,
        "maxsi": max,
        "minui": lambda a, b: s(min(u(a), u(b))),
        "maxui": lambda a, b: s(max(u(a), u(b))),
        "andi": lambda a, b: a & b,
        "ori": lambda a, b: a | b,
        "xori": lambda a, b: a ^ b,
        "shli": lambda a, b: s(u(a << b)),
        "shrsi": lambda a, b: a >> b,
        "shrui": lambda a, b: s(u(a) >> b),
        "divui": lambda a, b: s(u(a) // u(b)),
        "remui": lambda a, b: s(u(a) % u(b)),
    }
    pairs = [(-7, 3), (12345, 4), (-(2**63), 1), (2**62 + 3, 2), (5, 60)]
    for op in ops:
        f = jit.function(op, I64, I64, I64)
        for a, b in pairs:
            assert f(a, b) == expected[op](a, b), (op, a, b)


def test_casts():
    jit = compile_mlir(
        """
        func.func @sitofp(%x: i32) -> f64 {
          %r = arith.sitofp %x : i32 to f64
          func.return %r : f64
        }
        func.func @uitofp32(%x: i32) -> f32 {
          %r = arith.uitofp %x : i32 to f32
          func.return %r : f32
        }
        func.func @uitofp64(%x: i64) -> f64 {
          %r = arith.uitofp %x : i64 to f64
          func.return %r : f64
        }
        func.func @uitofp64f32(%x: i64) -> f32 {
          %r = arith.uitofp %x : i64 to f32
          func.return %r : f32
        }
        func.func @fptosi(%x: f64) -> i32 {
          %r = arith.fptosi %x : f64 to i32
          func.return %r : i32
        }
        func.func @fptoui(%x: f64) -> i64 {
          %r = arith.fptoui %x : f64 to i64
          func.return %r : i64
        }
        func.func @extf(%x: f32) -> f64 {
          %r = arith.extf %x : f32 to f64
          func.return %r : f64
        }
        func.func @truncf(%x: f64) -> f32 {
          %r = arith.truncf %x : f64 to f32
          func.return %r : f32
        }
        func.func @ext(%x: i8) -> i64 {
          %s = arith.extsi %x : i8 to i32
          %z = arith.extui %x : i8 to i32
          %s64 = arith.extsi %s : i32 to i64
          %z64 = arith.extui %z : i32 to i64
          %c1000 = arith.constant 1000 : i64
          %hi = arith.muli %s64, %c1000 : i64
          %r = arith.addi %hi, %z64 : i64
          func.return %r : i64
        }
        func.func @trunci(%x: i64) -> i8 {
          %r = arith.trunci %x : i64 to i8
          func.return %r : i8
        }
        func.func @index_roundtrip(%x: i32) -> i32 {
          %i = arith.index_cast %x : i32 to index
          %c2 = arith.constant 2 : index
          %d = arith.muli %i, %c2 : index
          %r = arith.index_cast %d : index to i32
          func.return %r : i32
        }
        func.func @bitcast(%x: f32) -> i32 {
          %r = arith.bitcast %x : f32 to i32
          func.return %r : i32
        }
        """
    )
    c = ctypes
    assert jit.function("sitofp", c.c_double, c.c_int32)(-7) == -7.0
    uitofp32 = jit.function("uitofp32", c.c_float, c.c_uint32)
    assert uitofp32(0xFFFFFFFF) == 4294967296.0
    uitofp64 = jit.function("uitofp64", c.c_double, c.c_uint64)
    uitofp64f32 = jit.function("uitofp64f32", c.c_float, c.c_uint64)
    # 2**63 + 2**39 + 1 rounds up in f32, but down if rounded to f64 first
    for v in (0, 1, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 2**39 + 1, 2**64 - 1):
        assert uitofp64(v) == float(v), v
        assert uitofp64f32(v) == np.uint64(v).astype(np.float32), v
    assert jit.function("fptosi", c.c_int32, c.c_double)(-3.9) == -3
    assert jit.function("fptoui", c.c_uint64, c.c_double)(1.5e19) == 15 * 10**18
    assert jit.function("extf", c.c_double, c.c_float)(0.1) == float(np.float32(0.1))
    assert jit.function("truncf", c.c_float, c.c_double)(0.1) == np.float32(0.1)
    ext = jit.function("ext", I64, c.c_int8)
    assert ext(-1) == -1 * 1000 + 255 and ext(5) == 5005
    assert jit.function("trunci", c.c_int8, I64)(0x1FF) == -1
    assert jit.function("index_roundtrip", c.c_int32, c.c_int32)(-21) == -42
    bits = struct.unpack("<i", struct.pack("<f", 1.5))[0]
    assert jit.function("bitcast", c.c_int32, c.c_float)(1.5) == bits


def test_math_fma_is_fused():
    jit = compile_mlir(
        """
        func.func @fma(%a: f64, %b: f64, %c: f64) -> f64 {
          %r = math.fma %a, %b, %c : f64
          func.return %r : f64
        }
        func.func @sqrt(%a: f32) -> f32 {
          %r = math.sqrt %a : f32
          func.return %r : f32
        }
        """
    )
    d = ctypes.c_double
    e = 2.0**-30
    # (1 + e)(1 - e) - 1 = -e^2 exactly; unfused, the product rounds to 1.0
    assert jit.function("fma", d, d, d, d)(1 + e, 1 - e, -1.0) == -(e * e)
    assert jit.function("sqrt", ctypes.c_float, ctypes.c_float)(2.25) == 1.5


# --------------------------------------------------------------------------------------
# The JIT object and errors
# --------------------------------------------------------------------------------------


def test_jit_inspection_and_missing_function():
    jit = compile_mlir(
        """
        func.func @id(%x: i64) -> i64 {
          func.return %x : i64
        }
        """
    )
    assert "define" in jit.llvm_ir and "@id" in jit.llvm_ir
    assert "id" in jit.assembly()
    assert jit.address("id") != 0
    with pytest.raises(KeyError, match="@id"):
        jit.address("missing")
    import llvmlite.binding as llvm

    if llvm.get_host_cpu_features().get("avx512f", False):
        assert '"prefer-vector-width"="512"' in jit.llvm_ir


def test_external_function_from_a_loaded_library():
    JitModule.load_library("libm.so.6")
    jit = compile_mlir(
        """
        func.func private @cbrt(f64) -> f64
        func.func @cube_root(%x: f64) -> f64 {
          %r = func.call @cbrt(%x) : (f64) -> f64
          func.return %r : f64
        }
        """
    )
    libm = ctypes.CDLL("libm.so.6")
    libm.cbrt.restype, libm.cbrt.argtypes = ctypes.c_double, [ctypes.c_double]
    cube_root = jit.function("cube_root", ctypes.c_double, ctypes.c_double)
    assert cube_root(27.0) == libm.cbrt(27.0) and abs(cube_root(27.0) - 3.0) < 1e-15
    with pytest.raises(JitCompilationError, match="no-such-library"):
        JitModule.load_library("no-such-library.so")


def test_pass_list_is_exposed_and_registered():
    # teir-opt -p teir-lower-to-llvm-dialect runs this list (the FileCheck tests name it)
    assert [p.name for p in LOWER_TO_LLVM_PASSES] == [
        "teir-bf16-as-i16",
        "teir-f16-moves-as-i16",
        "teir-convert-scf-to-cf",
        "teir-convert-alloca-to-llvm",
        "teir-convert-vector-to-llvm",
        "convert-vector-to-ptr",
        "teir-convert-memref-access-to-llvm",
        "convert-memref-to-ptr",
        "teir-convert-ptr-addressing-to-llvm",
        "convert-ptr-type-offsets",
        "teir-convert-ptr-to-llvm",
        "teir-convert-arith-to-llvm",
        "teir-convert-func-to-llvm",
        "teir-convert-cf-to-llvm",
        "reconcile-unrealized-casts",
        "teir-hoist-allocas",
        "teir-fence-nontemporal-stores",
    ]
    from teir_tools.universe import TEIR_UNIVERSE

    for lowering_pass in (*LOWER_TO_LLVM_PASSES, LowerToLLVMDialectPass()):
        if lowering_pass.name.startswith("teir-"):
            assert TEIR_UNIVERSE.all_passes[lowering_pass.name]() is type(lowering_pass)


def test_jit_rejects_a_module_not_lowered():
    module, _ = parse("func.func @f() {\n  func.return\n}")
    with pytest.raises(JitCompilationError, match="func.func"):
        JitModule(module)


def test_unsupported_op_is_reported():
    module, ctx = parse(
        """
        func.func @f(%a: i32, %b: i32) -> i32 {
          %r = arith.ceildivsi %a, %b : i32
          func.return %r : i32
        }
        """
    )
    with pytest.raises(LLVMLoweringError, match=r"arith\.ceildivsi \(in @f\)"):
        LowerToLLVMDialectPass().apply(ctx, module)


def test_unsupported_memref_op_is_reported():
    module, ctx = parse(
        """
        func.func @g(%n: index) -> f32 {
          %c0 = arith.constant 0 : index
          %m = memref.alloc(%n) : memref<?xf32>
          %v = memref.load %m[%c0] : memref<?xf32>
          func.return %v : f32
        }
        """
    )
    with pytest.raises(LLVMLoweringError, match=r"memref\.alloc"):
        LowerToLLVMDialectPass().apply(ctx, module)


def test_multiple_results_are_rejected():
    module, ctx = parse(
        """
        func.func @two(%a: i32) -> (i32, i32) {
          func.return %a, %a : i32, i32
        }
        """
    )
    with pytest.raises(DiagnosticException, match="returns 2 values"):
        LowerToLLVMDialectPass().apply(ctx, module)
