"""`teir_lowering.einsum`: `np.einsum` for the contractions and permutations TEIR covers.

    c = teir_lowering.einsum("trus,pqtu->pqrs", a, b)            # a new array
    teir_lowering.einsum("abcd->dcba", x, out=y)                   # into y
    teir_lowering.einsum("ij,jk->ik", a, b, relu=True, threads=1)  # relu(a @ b)

The record comes from `teir_dialect.einsum_config` (any strides numpy views
have, non-contiguous included), teir-optimize schedules it (the
auto-scheduler, or a schedule `teir-tune` stored for it), and the kernel runs
on the arrays' memory in place. Kernels are cached per subscripts, shapes,
strides, data types, ReLU flag and output layout, so a repeated call costs a
dictionary lookup and the kernel's argument checks. What TEIR does not cover
(more than two operands, repeated indices, broadcasting, ellipses, negative
strides, implicit output) raises `TeirError` saying why; there is no silent
fallback to numpy.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from teir_dialect import einsum_config
from teir_dialect.records import TeirError
from teir_lowering.kernel import Kernel, compile_kernel

_KERNELS: dict[tuple, Kernel] = {}
_LOCK = threading.Lock()


def _layout(array: np.ndarray) -> tuple:
    return (array.shape, array.strides, array.dtype.str)


def _memory(array: np.ndarray) -> np.ndarray:
    """A 1-D C-contiguous view from `array`'s first element over every element it
    reaches (its strides are non-negative: einsum_config refuses others)."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    span = sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // array.itemsize + 1
    return np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))


def output_shape(subscripts: str, operands: Sequence[np.ndarray]) -> tuple[int, ...]:
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    extents = {i: n for term, op in zip(inputs.split(","), operands)
               for i, n in zip(term, np.shape(op))}
    return tuple(extents.get(i, 0) for i in output)


def einsum(subscripts: str, *operands: np.ndarray, out: np.ndarray | None = None,
           relu: bool = False, threads: int | None = None, tune: bool = False,
           dtype: str | None = None) -> np.ndarray:
    """`np.einsum(subscripts, *operands)` (with `relu`: relu of it), computed by a
    compiled TEIR kernel into `out` (a new C-contiguous array by default).

    `tune=True` searches a schedule on this host first (teir-tune, a minute at
    most) unless one is stored. `dtype` ("TF32", "BF16", ...) overrides the data
    type the arrays' dtype implies.
    """
    for index, operand in enumerate(operands):
        if not isinstance(operand, np.ndarray):
            raise TypeError(f"einsum: operand {index} must be a numpy array, "
                            f"got {type(operand).__name__}")
    if out is None:
        if not operands:
            raise TeirError("einsum: give one operand (a permutation) or two (a contraction)")
        out = np.empty(output_shape(subscripts, operands), dtype=operands[0].dtype)
    elif not isinstance(out, np.ndarray):
        raise TypeError(f"einsum: out must be a numpy array, got {type(out).__name__}")
    key = (subscripts, tuple(_layout(op) for op in operands), _layout(out), relu, dtype)
    with _LOCK:
        kernel = _KERNELS.get(key)
    if kernel is None:
        record = einsum_config(subscripts, *operands, out=out, dtype=dtype, relu=relu)
        if tune:
            _tune(record, subscripts, threads)
        kernel = compile_kernel(record, threads=threads)
        with _LOCK:
            _KERNELS[key] = kernel
    kernel(*(_memory(op) for op in operands), _memory(out), threads=threads)
    return out


def _tune(record: dict, subscripts: str, threads: int | None) -> None:
    from teir_dialect.records import find_configs, load_module
    from teir_lowering.kernel import default_threads
    from teir_lowering.tune import tune
    from teir_passes import schedule_cache

    count = threads or default_threads()
    function = find_configs(load_module(record))[0].parent_op()
    if schedule_cache.lookup(str(function), count) is None:
        tune(record, threads=count, budget=60.0, label=subscripts)
