"""Run a linalg function through TEIR on numpy arrays, and check it against numpy.

    from teir_lowering.frontends.linalg_run import run_linalg
    result = run_linalg("matmul_relu.mlir")      # random data, seed 0
    assert result.ok, result.summary()

`prepare_linalg` parses the module, runs `convert-linalg-to-teir` on the
function and compiles each `teir.config` it produced (`compile_kernel`, or the
reference interpreter with `interpret=True`). The function must then hold only
configurations, their 1-D views of the memref arguments and side-effect-free
ops; an op left behind is reported with its `teir.not_converted` reason.
`LinalgProgram.run` executes the configurations in program order on one numpy
array per memref argument.

Arrays. The array of a memref argument holds the memref's storage from its
base (MLIR's aligned pointer): any C-contiguous array of the element type
(float32 for f32, float64 for f64; float16 for f16, interpreted only) with at
least `offset + 1 + sum((size - 1) * stride)` elements, e.g. an array of the
memref's shape when the layout is the identity.

The check (`LinalgProgram.reference`) does not go through TEIR: it evaluates
the original linalg ops in numpy from their own definition, the indexing maps
and the body's arith ops applied in the element type, reduction loops in
sequential order, and compares every argument's array. Contractions agree up
to rounding (TEIR may sum in another order); `arith.maximumf` gives +0.0 for
-0.0 where TEIR's ReLU keeps -0.0, equal values, so the comparison is by value.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import BroadcastOp, FillOp, YieldOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from teir_dialect import teir_context
from teir_dialect.arrays import plain_array
from teir_dialect.dialect import ConfigOp
from teir_dialect.interpreter import run_reference
from teir_dialect.limits import recursion_room
from teir_dialect.records import (
    TeirError,
    Unsupported,
    config_to_json,
    parse_mlir,
    read_text,
)
from teir_passes.convert_linalg_to_teir import (
    MEMREF_COPY,
    REMARK,
    ConvertLinalgToTeirPass,
    base_of,
)

NUMPY_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}

TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
             np.dtype(np.float64): 1e-10}
"""Relative tolerance of the check, scaled by the largest expected magnitude."""


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------


def load_linalg_module(source: object) -> ModuleOp:
    """A module from a ModuleOp (cloned), MLIR text, or a path to a .mlir file."""
    if isinstance(source, ModuleOp):
        return source.clone()
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and "{" not in source
    ):
        where = os.fspath(source)  # pyright: ignore[reportArgumentType]
        text = read_text(where)
    elif isinstance(source, str):
        where, text = "<text>", source
    else:
        raise TeirError(
            f"linalg run: expected a module, MLIR text or a path, got {type(source).__name__}"
        )
    try:
        module = parse_mlir(text, where)
        with recursion_room():
            module.verify()
    except (ParseError, DiagnosticException, VerifyException) as err:
        raise TeirError(str(err)) from None
    return module


def find_function(module: ModuleOp, name: str | None) -> func.FuncOp:
    functions = [
        op for op in module.walk()
        if isinstance(op, func.FuncOp) and not op.is_declaration
    ]
    if name is not None:
        functions = [f for f in functions if f.sym_name.data == name]
    if len(functions) != 1:
        listing = ", ".join("@" + f.sym_name.data for f in functions) or "none"
        raise TeirError(
            f"linalg run: expected one function{' @' + name if name else ''} with a "
            f"body, found {listing}; choose one with name= (teir-run --name)"
        )
    return functions[0]


# --------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Argument:
    """A memref argument: its type, numpy dtype and the elements its array needs."""

    name: str
    type: MemRefType
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    @property
    def elements(self) -> int:
        return self.offset + 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))

    @property
    def dense(self) -> bool:
        """Identity layout: the array may have the memref's shape."""
        return self.strides == _c_strides(self.shape) and self.offset == 0

    def view(self, array: np.ndarray) -> np.ndarray:
        """The memref's elements on the array (which holds its storage from the base)."""
        flat = array.reshape(-1)
        return as_strided(
            flat[self.offset:], self.shape, [s * flat.itemsize for s in self.strides]
        )

    def check(self, given: object) -> np.ndarray:
        """`given` as a plain ndarray (`plain_array`) if it can hold the memref."""
        array = plain_array(given, f"argument {self.name}")
        if array.dtype != self.dtype:
            raise TypeError(
                f"argument {self.name} ({self.type}) needs {self.dtype} elements, got "
                f"{array.dtype}"
            )
        if not array.flags.c_contiguous:
            raise ValueError(f"argument {self.name} must be C-contiguous (the memref's storage)")
        if array.size < self.elements:
            raise ValueError(
                f"argument {self.name} ({self.type}) needs {self.elements} elements from "
                f"its base, got {array.size}"
            )
        return array


def _c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _argument(arg: BlockArgument) -> Argument:
    return _memref_spec(arg.name_hint or f"arg{arg.index}", arg.type)


def _memref_spec(name: str, typ: object) -> Argument:
    if not isinstance(typ, MemRefType):
        raise TeirError(f"linalg run: argument {name} is a {typ}; only memref arguments")
    dtype = NUMPY_TYPES.get(str(typ.element_type))
    strides, offset = typ.get_strides(), typ.get_offset()
    if (
        dtype is None
        or any(n < 0 for n in typ.get_shape())
        or strides is None
        or None in strides
        or offset is None
    ):
        raise TeirError(
            f"linalg run: argument {name} is {typ}; runs take static f16/f32/f64 memrefs "
            "with static strides"
        )
    return Argument(name, typ, np.dtype(dtype), typ.get_shape(), tuple(strides), offset)  # pyright: ignore


# --------------------------------------------------------------------------
# The converted program
# --------------------------------------------------------------------------


@dataclass
class Step:
    """One configuration: its record, the argument of each tensor, its runner."""

    record: dict[str, Any]
    arguments: tuple[int, ...]
    run: Callable[[Sequence[np.ndarray]], object]


@dataclass
class LinalgProgram:
    """A linalg function as TEIR configurations run in program order."""

    name: str
    arguments: tuple[Argument, ...]
    steps: tuple[Step, ...]
    original: func.FuncOp  # the linalg function, for the reference
    converted: ModuleOp = field(repr=False)
    temporaries: tuple[Argument, ...] = ()  # memref.alloc's, numbered after the arguments

    def random_arrays(self, seed: int = 0) -> list[np.ndarray]:
        """Normal random data: the memref's shape when dense, else a flat buffer."""
        rng = np.random.default_rng(seed)
        arrays = []
        for arg in self.arguments:
            shape = arg.shape if arg.dense else (arg.elements,)
            arrays.append(rng.standard_normal(shape).astype(arg.dtype))
        return arrays

    def run(self, arrays: Sequence[np.ndarray]) -> None:
        """Execute the configurations in place on the arrays (one per argument)."""
        checked = self._check(arrays)
        checked += [np.zeros(t.elements, t.dtype) for t in self.temporaries]
        for step in self.steps:
            step.run([checked[i].reshape(-1) for i in step.arguments])

    def reference(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The original linalg function evaluated in numpy on copies of the arrays."""
        copies = [array.copy() for array in self._check(arrays)]
        evaluate_linalg(self.original, copies)
        return copies

    def _check(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self.arguments):
            raise TypeError(
                f"@{self.name} takes {len(self.arguments)} arrays, got {len(arrays)}"
            )
        return [arg.check(array) for arg, array in zip(self.arguments, arrays)]


def prepare_linalg(
    source: object,
    *,
    name: str | None = None,
    interpret: bool = False,
    threads: int | None = None,
) -> LinalgProgram:
    """Convert and compile the linalg function (see the module docstring)."""
    module = load_linalg_module(source)
    original = find_function(module, name)
    for op in original.walk():
        if isinstance(op, func.CallOp):  # the run takes the function alone
            raise TeirError(
                f"linalg run: @{original.sym_name.data} calls @{op.callee.string_value()}"
                " (func.call); a run takes one function of linalg ops (teir-opt "
                "-p convert-linalg-to-teir,teir-to-llvm lowers a module with calls)")
    converted = ModuleOp([original.clone()])
    ConvertLinalgToTeirPass().apply(teir_context(), converted)
    try:
        converted.verify()
    except VerifyException as err:
        raise TeirError(f"convert-linalg-to-teir made an invalid configuration: {err}") from None
    function = find_function(converted, None)
    entry = function.body.block
    arguments = tuple(_argument(arg) for arg in entry.args)
    allocations = [op for op in entry.ops if isinstance(op, ALLOCATIONS)]
    temporaries = tuple(_memref_spec(f"memref.alloc #{i}", op.memref.type)
                        for i, op in enumerate(allocations))
    for op in entry.ops:
        if isinstance(op, func.ReturnOp) and op.operands:
            raise TeirError(
                "linalg run: the function returns values; runs take results as "
                "out-parameters (after one-shot bufferization: mlir-opt "
                "--buffer-results-to-out-params)"
            )
        if isinstance(op, (*ALLOCATIONS, memref.DeallocOp)):
            continue
        if not (isinstance(op, ConfigOp | func.ReturnOp) or is_side_effect_free(op)):
            reason = op.attributes.get(REMARK)
            raise TeirError(
                f"linalg run: {op.name} was not converted to TEIR"
                + (f": {reason.data}" if reason is not None else "")  # pyright: ignore
            )
    buffers: dict[SSAValue, int] = {arg: arg.index for arg in entry.args}
    buffers |= {op.memref: len(arguments) + i for i, op in enumerate(allocations)}
    steps = tuple(
        _step(op, buffers, interpret, threads) for op in entry.ops if isinstance(op, ConfigOp)
    )
    return LinalgProgram(function.sym_name.data, arguments, steps, original, converted,
                         temporaries)


ALLOCATIONS = (memref.AllocOp, memref.AllocaOp)
"""Temporaries a run allocates (zeroed) for each call, as one-shot bufferization
leaves them; their deallocations are no-ops."""


def _step(config: ConfigOp, buffers: dict[SSAValue, int], interpret: bool,
          threads: int | None) -> Step:
    indices = []
    for tensor in config.tensors:
        value: SSAValue = tensor
        if isinstance(value.owner, memref.ReinterpretCastOp):
            value = value.owner.source
        if value not in buffers:
            raise TeirError(
                "linalg run: a configuration's tensor is not a function argument or a "
                "memref.alloc of the function's body (or its 1-D view)"
            )
        indices.append(buffers[value])
    record = config_to_json(config)
    if interpret:
        def runner(arrays: Sequence[np.ndarray]) -> None:
            run_reference(record, arrays)
    else:
        from teir_lowering.runtime.kernel import compile_kernel

        kernel = compile_kernel(record, threads=threads)

        def runner(arrays: Sequence[np.ndarray]) -> None:
            kernel(*arrays)
    return Step(record, tuple(indices), runner)


@dataclass
class LinalgResult:
    """What run_linalg did: TEIR's arrays, numpy's, and the largest differences."""

    program: LinalgProgram
    inputs: list[np.ndarray]
    arrays: list[np.ndarray]
    expected: list[np.ndarray]
    errors: dict[str, float]
    ok: bool

    def summary(self) -> str:
        verdict = "passed" if self.ok else "FAILED"
        head = f"@{self.program.name}: {len(self.program.steps)} TEIR configuration(s)"
        lines = [f"{head}, check against numpy {verdict}"]
        for arg in self.program.arguments:
            lines.append(f"  {arg.name}: {arg.type}  max |teir - numpy| = {self.errors[arg.name]:.3g}")
        return "\n".join(lines)


def run_linalg(
    source: object,
    arrays: Sequence[np.ndarray] | None = None,
    *,
    name: str | None = None,
    seed: int = 0,
    interpret: bool = False,
    threads: int | None = None,
) -> LinalgResult:
    """Convert, compile and run the linalg function on `arrays` (default: random,
    from `seed`; they are not modified) and compare with numpy."""
    program = prepare_linalg(source, name=name, interpret=interpret, threads=threads)
    inputs = program.random_arrays(seed) if arrays is None else list(arrays)
    expected = program.reference(inputs)
    results = [array.copy() for array in inputs]
    program.run(results)
    errors, ok = {}, True
    for arg, got, want in zip(program.arguments, results, expected):
        errors[arg.name], scale = _difference(got, want)
        ok = ok and errors[arg.name] <= TOLERANCE[arg.dtype] * scale
    return LinalgResult(program, inputs, results, expected, errors, ok)


def _difference(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    """The largest |got - want| (NaN against NaN and equal infinities count 0, NaN
    against a number infinity) and the scale of want (its largest finite magnitude, >= 1)."""
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    same = (got64 == want64) | (np.isnan(got64) & np.isnan(want64))
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.abs(got64 - want64))
    diff[np.isnan(diff)] = np.inf
    finite = np.abs(want64[np.isfinite(want64)])
    return float(diff.max(initial=0.0)), max(1.0, float(finite.max(initial=0.0)))


# --------------------------------------------------------------------------
# The reference: linalg semantics in numpy
# --------------------------------------------------------------------------


def evaluate_linalg(function: func.FuncOp, arrays: Sequence[np.ndarray]) -> None:
    """Run the function's linalg ops in numpy, in place on the arrays (one per memref
    argument, holding its storage from the base)."""
    entry = function.body.block
    storage: dict[SSAValue, np.ndarray] = dict(zip(entry.args, arrays))
    scalars: dict[SSAValue, np.ndarray] = {}
    for op in entry.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
            dtype = NUMPY_TYPES.get(str(op.result.type), np.float64)
            scalars[op.result] = np.asarray(op.value.value.data, dtype=dtype)
        elif isinstance(op, FillOp):
            out = _memref(storage, op.outputs[0])
            out[...] = _scalar(scalars, op.inputs[0]).astype(out.dtype)
        elif isinstance(op, ALLOCATIONS):
            spec = _memref_spec("memref.alloc", op.memref.type)
            storage[op.memref] = np.zeros(spec.elements, spec.dtype)
        elif isinstance(op, MEMREF_COPY):
            np.copyto(_memref(storage, op.destination), _memref(storage, op.source))
        elif isinstance(op, memref.DeallocOp):
            continue
        elif isinstance(op, LinalgStructuredOperation | BroadcastOp):
            _evaluate_structured(op, storage, scalars)
        elif isinstance(op, func.ReturnOp) or is_side_effect_free(op):
            continue
        else:
            raise Unsupported(f"linalg reference: {op.name} is not supported")


def _memref(storage: dict[SSAValue, np.ndarray], value: SSAValue) -> np.ndarray:
    """The numpy view of a memref argument, or of a view (subview, ...) of one: a
    static layout counts from the argument's base, where its array starts."""
    base = base_of(value)
    if base not in storage:
        owner = value.owner.name if isinstance(value.owner, Operation) else "a block"
        raise TeirError(
            "linalg reference: operands must be function arguments or views of them, "
            f"got a value of {owner}"
        )
    return _memref_spec(value.name_hint or "view", value.type).view(storage[base])


def _scalar(scalars: dict[SSAValue, np.ndarray], value: SSAValue) -> np.ndarray:
    if value not in scalars:
        raise TeirError("linalg reference: a scalar operand that is not an arith.constant")
    return scalars[value]


def _maps(op: Operation) -> tuple[list[SSAValue], int, list[tuple[int, ...]], Block]:
    if isinstance(op, BroadcastOp):
        rank = len(op.init.type.get_shape())  # pyright: ignore
        kept = tuple(d for d in range(rank) if d not in set(op.dimensions.get_values()))
        return [op.input, op.init], rank, [kept, tuple(range(rank))], op.hidden_region.block
    assert isinstance(op, LinalgStructuredOperation)
    dims = []
    for attr in op.get_indexing_maps():
        if not all(isinstance(e, AffineDimExpr) for e in attr.data.results):
            raise Unsupported(f"linalg reference: map {attr.data} is not supported")
        dims.append(tuple(e.position for e in attr.data.results))  # pyright: ignore
    return list(op.operands), op.get_num_loops(), dims, op.body.block


def _evaluate_structured(
    op: Operation, storage: dict[SSAValue, np.ndarray], scalars: dict[SSAValue, np.ndarray]
) -> None:
    """out[map(i)] = body(ins[map(i)], out[map(i)]) over the loops in lexicographic
    order: the loops of the output at once, the others (reductions) one index
    tuple at a time in order, which is the sequential loop for each out element."""
    operands, loops, dims, block = _maps(op)
    arrays = [_memref(storage, v) if isinstance(v.type, MemRefType) else _scalar(scalars, v)
              for v in operands]
    extents = [0] * loops
    for array, mapped in zip(arrays, dims):
        for dim, extent in zip(mapped, array.shape):
            extents[dim] = extent
    out, out_dims = arrays[-1], dims[-1]
    if len(set(out_dims)) != len(out_dims):
        raise TeirError("linalg reference: an output map that repeats a loop")
    reduced = [d for d in range(loops) if d not in out_dims]
    for index in product(*(range(extents[d]) for d in reduced)):
        fixed = dict(zip(reduced, index))
        values = [_spread(a, m, out_dims, fixed) for a, m in zip(arrays, dims)]
        out[...] = _apply(block, values, scalars).astype(out.dtype)


def _spread(array: np.ndarray, dims: tuple[int, ...], out_dims: tuple[int, ...],
            fixed: dict[int, int]) -> np.ndarray:
    """The operand's values indexed by the output's loops (reductions fixed)."""
    if array.ndim == 0 or not dims:
        return array
    index = tuple(fixed.get(d, slice(None)) for d in dims)
    part = array[index]
    free = [d for d in dims if d not in fixed]
    strides = [0] * len(out_dims)
    shape = [1] * len(out_dims)
    for axis, d in enumerate(free):
        position = out_dims.index(d)
        strides[position] = part.strides[axis]
        shape[position] = part.shape[axis]
    return as_strided(part, shape, strides) if part.ndim else part


def _apply(block: Block, values: Sequence[np.ndarray], scalars: dict[SSAValue, np.ndarray]) -> np.ndarray:
    env: dict[SSAValue, np.ndarray] = dict(scalars)
    env.update(zip(block.args, values))
    for op in block.ops:
        if isinstance(op, YieldOp):
            return env[op.operands[0]]
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
            env[op.result] = np.asarray(op.value.value.data,
                                        dtype=NUMPY_TYPES[str(op.result.type)])
            continue
        evaluate = ARITH.get(type(op))
        if evaluate is None:
            raise Unsupported(f"linalg reference: {op.name} in a body is not supported")
        env[op.results[0]] = evaluate(*(env[operand] for operand in op.operands))
    raise TeirError("linalg reference: a body without linalg.yield")


def maximumf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """arith.maximumf: NaN propagates, -0.0 < +0.0."""
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a), b, a), np.maximum(a, b))


def minimumf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """arith.minimumf: NaN propagates, -0.0 < +0.0."""
    both_zero = (a == 0) & (b == 0)
    return np.where(both_zero, np.where(np.signbit(a), a, b), np.minimum(a, b))


ARITH: dict[type[Operation], Callable[..., np.ndarray]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: maximumf,
    arith.MinimumfOp: minimumf,
    arith.NegfOp: np.negative,
}
"""The body ops the reference evaluates, elementwise in the element type."""


__all__ = [
    "Argument",
    "LinalgProgram",
    "LinalgResult",
    "evaluate_linalg",
    "load_linalg_module",
    "prepare_linalg",
    "run_linalg",
]
