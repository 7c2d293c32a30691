"""convert-linalg-to-teir, differentially: random linalg contractions and copies
(random projected-permutation maps, shapes, strided layouts with offsets) are
converted, run (reference interpreter; a few compiled) and compared with numpy
computed straight from the linalg description; also the run API's own checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from teir_dialect import TeirError
from teir_dialect.interpreter import run_reference
from teir_dialect.records import find_configs
from teir_lowering.frontends.linalg_run import (
    load_linalg_module,
    prepare_linalg,
    run_linalg,
)
from teir_passes.convert_linalg_to_teir import (
    ConvertContraction,
    ConvertElementwise,
    RemarkUnconverted,
)

ELEMENT = {np.float32: "f32", np.float64: "f64"}
LETTERS = "abcdefgh"


@dataclass(frozen=True)
class Tensor:
    """A memref argument: the loop dimension of each of its dimensions, its element
    strides and offset."""

    name: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    def shape(self, extents: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(extents[d] for d in self.dims)

    def type(self, extents: tuple[int, ...], element: str) -> str:
        shape = "".join(f"{n}x" for n in self.shape(extents))
        strides = ", ".join(map(str, self.strides))
        return f"memref<{shape}{element}, strided<[{strides}], offset: {self.offset}>>"

    def size(self, extents: tuple[int, ...]) -> int:
        shape = self.shape(extents)
        return self.offset + 1 + sum((n - 1) * s for n, s in zip(shape, self.strides))

    def view(self, array: np.ndarray, extents: tuple[int, ...]) -> np.ndarray:
        return as_strided(array[self.offset:], self.shape(extents),
                          [s * array.itemsize for s in self.strides])


@dataclass(frozen=True)
class Case:
    """A linalg function of one contraction (fill and ReLU around it optional) or
    one copy-like op, and what it computes."""

    kind: str  # "generic", "matmul", "copy", "transpose", "broadcast"
    extents: tuple[int, ...]
    tensors: tuple[Tensor, ...]  # inputs, then the output
    dtype: type
    fill: bool = False
    relu: bool = False
    swap: tuple[bool, bool] = (False, False)  # mulf operands, addf operands

    def mlir(self) -> str:
        e = ELEMENT[self.dtype]
        types = [t.type(self.extents, e) for t in self.tensors]
        args = ", ".join(f"%{t.name}: {typ}" for t, typ in zip(self.tensors, types))
        *ins, out = self.tensors
        ins_types = ", ".join(types[:-1])
        ins_names = ", ".join(f"%{t.name}" for t in ins)
        lines = [f"func.func @case({args}) {{", f"  %zero = arith.constant 0.0 : {e}"]
        if self.fill:
            lines.append(f"  linalg.fill ins(%zero : {e}) outs(%{out.name} : {types[-1]})")
        maps = ", ".join(
            f"affine_map<({', '.join(f'd{d}' for d in range(len(self.extents)))}) -> "
            f"({', '.join(f'd{d}' for d in t.dims)})>"
            for t in self.tensors
        )
        iterators = ", ".join(
            '"parallel"' if d in out.dims else '"reduction"' for d in range(len(self.extents))
        )
        header = f"{{indexing_maps = [{maps}], iterator_types = [{iterators}]}}"
        operands = f"ins({ins_names} : {ins_types}) outs(%{out.name} : {types[-1]})"
        if self.kind == "generic":
            x, y = ("%y", "%x") if self.swap[0] else ("%x", "%y")
            p, z = ("%z", "%p") if self.swap[1] else ("%p", "%z")
            lines += [
                f"  linalg.generic {header} {operands} {{",
                f"  ^bb0(%x: {e}, %y: {e}, %z: {e}):",
                f"    %p = arith.mulf {x}, {y} : {e}",
                f"    %s = arith.addf {p}, {z} : {e}",
                f"    linalg.yield %s : {e}",
                "  }",
            ]
        elif self.kind == "matmul":
            lines.append(f"  linalg.matmul {{indexing_maps = [{maps}]}} {operands}")
        elif self.kind == "copy":
            lines += [
                f"  linalg.generic {header} {operands} {{",
                f"  ^bb0(%x: {e}, %y: {e}):",
                f"    linalg.yield %x : {e}",
                "  }",
            ]
        elif self.kind == "transpose":
            permutation = [ins[0].dims.index(d) for d in out.dims]
            lines.append(
                f"  linalg.transpose ins(%{ins[0].name} : {types[0]}) outs(%{out.name} : "
                f"{types[-1]}) permutation = {permutation}"
            )
        else:  # broadcast: out is indexed by every loop in order
            added = [d for d in out.dims if d not in ins[0].dims]
            lines.append(
                f"  linalg.broadcast ins(%{ins[0].name} : {types[0]}) outs(%{out.name} : "
                f"{types[-1]}) dimensions = {added}"
            )
        if self.relu:
            identity = ", ".join(f"d{i}" for i in range(len(out.dims)))
            relu_map = f"affine_map<({identity}) -> ({identity})>"
            parallel = ", ".join(['"parallel"'] * len(out.dims))
            lines += [
                f"  linalg.generic {{indexing_maps = [{relu_map}, {relu_map}], "
                + f"iterator_types = [{parallel}]}} ins(%{out.name} : {types[-1]}) "
                + f"outs(%{out.name} : {types[-1]}) {{",
                f"  ^bb0(%x: {e}, %y: {e}):",
                f"    %r = arith.maximumf %x, %zero : {e}",
                f"    linalg.yield %r : {e}",
                "  }",
            ]
        return "\n".join([*lines, "  func.return", "}"])

    def spread(self, view: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
        """An operand's view over the whole iteration space (broadcast along the
        loops that do not index it)."""
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        shape = [self.extents[d] if d in dims else 1 for d in range(len(self.extents))]
        return np.broadcast_to(view.transpose(order).reshape(shape), self.extents)

    def arrays(self, rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.standard_normal(t.size(self.extents)).astype(self.dtype)
                for t in self.tensors]

    def expected(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """numpy from the description: einsum over strided views, in float64."""
        result = [a.astype(np.float64) for a in arrays]
        *ins, out = [t.view(a, self.extents) for t, a in zip(self.tensors, result)]
        terms = ["".join(LETTERS[d] for d in t.dims) for t in self.tensors]
        if self.kind in ("generic", "matmul"):
            every = LETTERS[: len(self.extents)]
            full = [self.spread(view, t.dims) for view, t in zip(ins, self.tensors)]
            total = np.einsum(f"{every},{every}->{terms[2]}", *full)
            out[...] = total if self.fill else out + total
        elif self.kind == "broadcast":
            shape = [ins[0].shape[terms[0].index(c)] if c in terms[0] else 1 for c in terms[1]]
            out[...] = ins[0].reshape(shape)
        else:
            out[...] = np.einsum(f"{terms[0]}->{terms[1]}", ins[0])
        if self.relu:
            out[...] = np.where(out < 0, 0.0, out)
        return result


@st.composite
def layouts(draw, name: str, dims: tuple[int, ...], extents: tuple[int, ...],
            zero_ok: bool) -> Tensor:
    """A random dense order of the dimensions, padded, sometimes a zero stride on an
    input, and an offset."""
    strides = [0] * len(dims)
    step = 1
    for i in draw(st.permutations(range(len(dims)))):
        if zero_ok and draw(st.integers(0, 5)) == 0:
            continue  # broadcast along this dimension
        strides[i] = step
        step *= extents[dims[i]] + draw(st.sampled_from([0, 0, 1]))
    return Tensor(name, dims, tuple(strides), draw(st.integers(0, 3)))


@st.composite
def contractions(draw) -> Case:
    loops = draw(st.integers(1, 5))
    extents = tuple(draw(st.integers(1, 4)) for _ in range(loops))

    def subset() -> tuple[int, ...]:
        order = draw(st.permutations(range(loops)))
        return tuple(order[: draw(st.integers(0, loops))])

    a, b, c = subset(), subset(), subset()
    missing = [d for d in range(loops) if d not in a + b + c]
    a = a + tuple(missing)  # every loop indexes some operand
    kind = "matmul" if loops == 3 and draw(st.booleans()) else "generic"
    tensors = (
        draw(layouts("A", a, extents, True)),
        draw(layouts("B", b, extents, True)),
        draw(layouts("C", c, extents, False)),
    )
    return Case(kind, extents, tensors, draw(st.sampled_from([np.float32, np.float64])),
                fill=draw(st.booleans()), relu=draw(st.booleans()),
                swap=(draw(st.booleans()), draw(st.booleans())))


@st.composite
def copies(draw) -> Case:
    loops = draw(st.integers(1, 4))
    extents = tuple(draw(st.integers(1, 4)) for _ in range(loops))
    kind = draw(st.sampled_from(["copy", "transpose", "broadcast"]))
    out_dims = tuple(range(loops)) if kind == "broadcast" else tuple(
        draw(st.permutations(range(loops))))
    in_dims = tuple(draw(st.permutations(range(loops))))
    if kind == "broadcast":
        in_dims = tuple(sorted(in_dims[: draw(st.integers(0, loops))]))
    tensors = (
        draw(layouts("X", in_dims, extents, kind != "transpose")),
        draw(layouts("Y", out_dims, extents, False)),
    )
    return Case(kind, extents, tensors, draw(st.sampled_from([np.float32, np.float64])),
                relu=kind == "copy" and draw(st.booleans()))


def check(case: Case, interpret: bool, seed: int) -> None:
    program = prepare_linalg(case.mlir(), interpret=interpret)
    assert len(program.steps) == 1 + (case.relu and case.kind in ("copy", "transpose",
                                                                   "broadcast"))
    arrays = case.arrays(np.random.default_rng(seed))
    expected = case.expected(arrays)
    tolerance = 1e-5 if case.dtype == np.float32 else 1e-12
    reference = program.reference(arrays)  # the run API's own numpy evaluation
    program.run(arrays)
    for got, ref, want in zip(arrays, reference, expected):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(ref, want, rtol=tolerance, atol=tolerance)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=contractions(), seed=st.integers(0, 2**16))
def test_random_contractions_match_numpy(case: Case, seed: int) -> None:
    check(case, interpret=True, seed=seed)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=copies(), seed=st.integers(0, 2**16))
def test_random_copies_match_numpy(case: Case, seed: int) -> None:
    check(case, interpret=True, seed=seed)


def _tensor(name: str, dims: tuple[int, ...], strides: tuple[int, ...], offset: int = 0):
    return Tensor(name, dims, strides, offset)


COMPILED = [
    # fill + matmul + ReLU, padded rows and an offset: lifted to one GEMM
    Case("matmul", (8, 12, 5), (
        _tensor("A", (0, 2), (6, 1), 1), _tensor("B", (2, 1), (12, 1)),
        _tensor("C", (0, 1), (13, 1), 2)), np.float32, fill=True, relu=True),
    # a batched contraction with the batch index inside, FP64, accumulating
    Case("generic", (3, 4, 2, 5), (
        _tensor("A", (1, 0, 3), (15, 5, 1)), _tensor("B", (3, 0, 2), (6, 2, 1)),
        _tensor("C", (0, 2, 1), (1, 3, 6), 1)), np.float64, swap=(True, True)),
    # a transpose between padded layouts
    Case("transpose", (5, 3, 4), (
        _tensor("X", (0, 1, 2), (15, 4, 1)), _tensor("Y", (2, 0, 1), (1, 4, 20), 3)),
        np.float32),
]


@pytest.mark.parametrize("case", COMPILED, ids=["fill_matmul_relu", "batched", "transpose"])
def test_compiled_cases_match_numpy(case: Case) -> None:
    check(case, interpret=False, seed=0)


# --------------------------------------------------------------------------
# The run API
# --------------------------------------------------------------------------

MATMUL_RELU = """
func.func @matmul_relu(%A: memref<4x3xf32>, %B: memref<3x5xf32>, %C: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%C : memref<4x5xf32>)
  linalg.matmul ins(%A, %B : memref<4x3xf32>, memref<3x5xf32>) outs(%C : memref<4x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%C : memref<4x5xf32>) {
  ^bb0(%c: f32):
    %r = arith.maximumf %c, %zero : f32
    linalg.yield %r : f32
  }
  func.return
}
"""


def test_run_linalg_reports_and_leaves_inputs_alone() -> None:
    a = np.arange(12, dtype=np.float32).reshape(4, 3) - 6
    b = np.ones((3, 5), np.float32)
    c = np.full((4, 5), 9, np.float32)
    result = run_linalg(MATMUL_RELU, [a, b, c], interpret=True)
    assert result.ok, result.summary()
    np.testing.assert_array_equal(result.arrays[2], np.maximum(a @ b, 0))
    assert (c == 9).all()  # the caller's arrays are not modified
    assert "check against numpy passed" in result.summary()
    assert len(result.program.steps) == 1
    assert [p["operation"] for p in result.program.steps[0].record["primitives"]] == [
        "Zero", "Contraction", "ReLU"]


def test_run_linalg_through_a_subview() -> None:
    """The configuration reads the subview from the base of the buffer it views."""
    text = """
    func.func @sub(%A: memref<6x10xf64>, %B: memref<8x3xf64>, %C: memref<4x3xf64>) {
      %a = memref.subview %A[1, 2] [4, 8] [1, 1] : memref<6x10xf64> to memref<4x8xf64, strided<[10, 1], offset: 12>>
      linalg.matmul ins(%a, %B : memref<4x8xf64, strided<[10, 1], offset: 12>>, memref<8x3xf64>) outs(%C : memref<4x3xf64>)
      func.return
    }
    """
    result = run_linalg(text, interpret=True, seed=3)
    a, b, c = result.inputs
    np.testing.assert_allclose(result.arrays[2], c + a[1:5, 2:10] @ b, rtol=1e-12)
    assert result.ok


def test_run_linalg_detects_a_wrong_result() -> None:
    program = prepare_linalg(MATMUL_RELU, interpret=True)
    arrays = program.random_arrays(1)
    program.steps[0].record["axes"][2]["extent"] = 2  # a broken K loop
    program.steps[0].run = lambda tensors: run_reference(program.steps[0].record, tensors)
    expected = program.reference(arrays)
    program.run(arrays)
    assert not np.allclose(arrays[2], expected[2])


def test_run_linalg_names_an_op_left_behind() -> None:
    text = MATMUL_RELU.replace("arith.maximumf %c, %zero", "arith.maxnumf %c, %zero")
    with pytest.raises(TeirError, match="linalg.generic was not converted to TEIR: the body"):
        prepare_linalg(text)


def test_run_linalg_argument_errors() -> None:
    program = prepare_linalg(MATMUL_RELU, interpret=True)
    arrays = program.random_arrays()
    with pytest.raises(TypeError, match="takes 3 arrays"):
        program.run(arrays[:2])
    with pytest.raises(TypeError, match="needs float32 elements"):
        program.run([arrays[0].astype(np.float64), *arrays[1:]])
    with pytest.raises(ValueError, match="needs 12 elements"):
        program.run([arrays[0][:2], *arrays[1:]])
    with pytest.raises(TeirError, match="expected one function"):
        prepare_linalg(MATMUL_RELU, name="other")


def test_converted_module_has_one_config_per_merged_group() -> None:
    program = prepare_linalg(MATMUL_RELU, interpret=True)
    assert len(find_configs(program.converted)) == 1


def test_merging_does_not_depend_on_the_walk_order() -> None:
    """The pass walks bottom-up; top-down, the fill and the ReLU still join the matmul."""
    module = load_linalg_module(MATMUL_RELU)
    patterns = [ConvertContraction(), ConvertElementwise(), RemarkUnconverted()]
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(module)
    (config,) = find_configs(module)
    assert [p.kind for p in config.primitives] == ["Zero", "Contraction", "ReLU"]


def test_lowered_function_takes_base_pointers() -> None:
    """The whole converted function through teir-optimize and the LLVM lowering
    (several configurations, an offset layout, a subview), called with each
    argument's base pointer, computes what the linalg ops do."""
    import ctypes

    from teir_dialect import teir_context
    from teir_lowering.runtime.jit import JitModule
    from teir_lowering.runtime.kernel import lower_to_llvm
    from teir_passes.pipeline import OptimizePass

    text = """
    func.func @two(%A: memref<6x10xf32>, %B: memref<8x16xf32, strided<[20, 1], offset: 3>>,
                   %C: memref<4x16xf32>, %T: memref<16x4xf32>) {
      %zero = arith.constant 0.0 : f32
      %a = memref.subview %A[1, 2] [4, 8] [1, 1] : memref<6x10xf32> to memref<4x8xf32, strided<[10, 1], offset: 12>>
      linalg.fill ins(%zero : f32) outs(%C : memref<4x16xf32>)
      linalg.matmul ins(%a, %B : memref<4x8xf32, strided<[10, 1], offset: 12>>, memref<8x16xf32, strided<[20, 1], offset: 3>>) outs(%C : memref<4x16xf32>)
      linalg.transpose ins(%C : memref<4x16xf32>) outs(%T : memref<16x4xf32>) permutation = [1, 0]
      func.return
    }
    """
    program = prepare_linalg(text, interpret=True)
    assert len(program.steps) == 2
    module = program.converted.clone()
    ctx = teir_context()
    OptimizePass().apply(ctx, module)
    lower_to_llvm(module, ctx)
    jit = JitModule(module)
    function = jit.function("two", None, *[ctypes.c_void_p] * 4)
    arrays = program.random_arrays(2)
    expected = program.reference(arrays)
    function(*[array.ctypes.data for array in arrays])
    for got, want in zip(arrays, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _jit_linalg(text: str):
    """`text` through convert-linalg-to-teir, teir-optimize and the LLVM lowering, JIT
    compiled."""
    from teir_dialect import teir_context
    from teir_lowering.runtime.jit import JitModule
    from teir_lowering.runtime.kernel import lower_to_llvm
    from teir_passes.pipeline import OptimizePass

    module = load_linalg_module(text)
    ctx = teir_context()
    for rewrite in (ConvertContraction(), ConvertElementwise()):
        PatternRewriteWalker(GreedyRewritePatternApplier([rewrite])).rewrite_module(module)
    OptimizePass().apply(ctx, module)
    lower_to_llvm(module, ctx)
    return JitModule(module)


def test_a_view_passed_through_a_call_is_read_at_its_own_offset() -> None:
    """A subview at offset 36 passed to a function whose linalg.copy became a TEIR
    configuration: the callee adds the offset to the base pointer the call passes
    (the call passed the view's first element, and the copy read 36 elements on)."""
    import ctypes

    jit = _jit_linalg("""
    func.func @caller(%X: memref<8x16xf32>, %B: memref<4x8xf32>) {
      %s = memref.subview %X[2, 4] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 36>>
      func.call @cp(%s, %B) : (memref<4x8xf32, strided<[16, 1], offset: 36>>, memref<4x8xf32>) -> ()
      func.return
    }
    func.func @cp(%A: memref<4x8xf32, strided<[16, 1], offset: 36>>, %B: memref<4x8xf32>) {
      linalg.copy ins(%A : memref<4x8xf32, strided<[16, 1], offset: 36>>) outs(%B : memref<4x8xf32>)
      func.return
    }
    """)
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    for name in ("caller", "cp"):
        b = np.zeros((4, 8), np.float32)
        jit.function(name, None, ctypes.c_void_p, ctypes.c_void_p)(x.ctypes.data, b.ctypes.data)
        np.testing.assert_array_equal(b, x[2:6, 4:12], err_msg=name)


def test_a_matmul_inside_a_loop_is_scheduled_and_lowered() -> None:
    """linalg.matmul in an scf.for (accumulating three times): the auto-scheduler
    works on a copy of the function around the configuration, not of the loop
    (whose copy kept using the function's constants and left casts the LLVM
    lowering could not remove)."""
    import ctypes

    jit = _jit_linalg("""
    func.func @loop(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      scf.for %i = %c0 to %c3 step %c1 {
        linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
      }
      func.return
    }
    """)
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-3, 4, shape).astype(np.float32) for shape in ((4, 8), (8, 16)))
    c = np.ones((4, 16), np.float32)
    jit.function("loop", None, *[ctypes.c_void_p] * 3)(a.ctypes.data, b.ctypes.data,
                                                        c.ctypes.data)
    np.testing.assert_array_equal(c, 1 + 3 * (a @ b))
