"""The one check of the numpy arrays a configuration runs on.

Both executors address each array by its raw bytes from its start, so both
need the same facts per tensor (`TensorSpec`: the bytes the configuration
touches, from `teir_dialect.analysis.footprint`, and whether it writes them)
and check the same things before they touch memory (`check_arrays`): one array
per tensor, numpy arrays, element type, C-contiguity, a writeable out, enough
bytes. The compiled kernel asks for the dtypes that hold each tensor's data
type (`DataType.numpy_dtypes`: float16, bfloat16 or its uint16 bit patterns,
float32, float64); the reference interpreter takes any plain numeric dtype (it
reinterprets the bytes).

Every fact comes from numpy's own record of the buffer, never from an
attribute a subclass can override: `plain_array` turns an ndarray subclass
(np.matrix, np.memmap, or one that lies about `nbytes`, `shape`, `flags` or
`ctypes`) into a plain ndarray over the same memory once, and both executors
check and address that. Masked arrays are refused: their mask would be
ignored.

Errors name the tensor and say what is wrong. A wrong number of arrays, a
non-array (or a masked one) or a wrong element type raises `ArrayTypeError`,
which is both a TypeError (what the kernel raised) and a ValueError (what the
interpreter raised), like numpy's AxisError; everything else a ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from teir_dialect.analysis import footprint
from teir_dialect.dialect import ConfigOp
from teir_dialect.host import CACHE_LINE
from teir_dialect.vocabulary import DataType


class ArrayTypeError(TypeError, ValueError):
    """The arrays passed do not have the types the configuration needs."""


@dataclass(frozen=True)
class TensorSpec:
    """What a call must pass for one tensor."""

    name: str
    dtype: np.dtype | None
    """The element type the array must have; None: any plain numeric dtype."""
    needed_bytes: int
    """The array must have at least this many bytes (the footprint's end)."""
    written: bool
    also: tuple[np.dtype, ...] = ()
    """Other element types the array may have (BF16: its uint16 bit patterns)."""

    def describe_dtype(self) -> str:
        """'float32', or 'bfloat16 or uint16': what the array must hold."""
        return " or ".join(str(dtype) for dtype in (self.dtype, *self.also))


def tensor_specs(
    config: ConfigOp, data_types: Mapping[str, DataType] | None = None
) -> tuple[TensorSpec, ...]:
    """One TensorSpec per tensor of `config`, in tensor order; the arrays hold the
    `data_types` by tensor name (None: any plain numeric dtype). A ValueError if the
    configuration touches a byte before a tensor's start."""
    specs: list[TensorSpec] = []
    for name, touched in footprint(config).items():
        if touched is not None and touched.start < 0:
            raise ValueError(
                f"the configuration touches byte {touched.start} of tensor {name}, "
                "before its start"
            )
        dtypes = (None,) if data_types is None else data_types[name].numpy_dtypes
        needed = 0 if touched is None else touched.stop
        specs.append(TensorSpec(name, dtypes[0], needed, name == "out", dtypes[1:]))
    return tuple(specs)


def plain_array(array: object, subject: str) -> np.ndarray:
    """`array` if it is a plain ndarray, a plain ndarray over the same memory if it is
    a subclass, else an ArrayTypeError starting with `subject` (e.g. "tensor in0").

    The view is numpy's (np.asarray reads the object's C fields: data pointer,
    shape, strides, dtype, flags), so nothing a subclass overrides in Python
    reaches it; `type`, not `isinstance`, because `__class__` can lie too.
    """
    kind = type(array)
    if kind is np.ndarray:
        return array
    if not issubclass(kind, np.ndarray):
        raise ArrayTypeError(f"{subject} must be a numpy array, got {kind.__name__}")
    if issubclass(kind, np.ma.MaskedArray):
        raise ArrayTypeError(
            f"{subject} is a masked array, whose mask TEIR would ignore: pass "
            "array.filled(value), or array.data to ignore the mask"
        )
    return np.asarray(array)


def check_arrays(
    who: str, specs: Sequence[TensorSpec], arrays: Sequence[object]
) -> list[np.ndarray]:
    """The arrays as plain ndarrays (`plain_array`) if they fit `specs` one by one,
    else an ArrayTypeError/ValueError. Use what it returns, not `arrays`.

    `who` starts each message (e.g. "run_reference"). This runs before every
    kernel call, so it reads only cheap attributes.
    """
    if len(arrays) != len(specs):
        names = ", ".join(spec.name for spec in specs)
        raise ArrayTypeError(
            f"{who}: the configuration has {len(specs)} tensors ({names}), "
            f"got {len(arrays)} arrays"
        )
    plain: list[np.ndarray] = []
    for spec, given in zip(specs, arrays):
        array = given if type(given) is np.ndarray else plain_array(
            given, f"{who}: tensor {spec.name}"
        )
        plain.append(array)
        dtype = array.dtype
        if dtype is not spec.dtype:  # numpy's builtin dtypes are singletons: the fast path
            if spec.dtype is None:
                if dtype.hasobject:
                    raise ArrayTypeError(
                        f"{who}: tensor {spec.name} must hold plain numbers, not objects"
                    )
            elif dtype != spec.dtype and dtype not in spec.also:
                raise ArrayTypeError(
                    f"{who}: tensor {spec.name} must hold {spec.describe_dtype()} "
                    f"elements, got {dtype}"
                )
        flags = array.flags
        if not flags.c_contiguous:
            raise ValueError(
                f"{who}: tensor {spec.name} must be a C-contiguous array (pass "
                "np.ascontiguousarray(...) and copy the result back)"
            )
        if spec.written and not flags.writeable:
            raise ValueError(
                f"{who}: tensor {spec.name} must be a writeable array: the "
                "configuration writes it"
            )
        if array.nbytes < spec.needed_bytes:
            raise ValueError(
                f"{who}: tensor {spec.name} has {array.nbytes} bytes but the configuration "
                f"touches it up to byte {spec.needed_bytes - 1}, so it needs at least "
                f"{spec.needed_bytes} bytes"
            )
    return plain


ALIGNED_MIN_BYTES = 1 << 20
"""Results from this size on are allocated on a cache-line boundary (`result_array`)."""


def result_array(shape: Sequence[int], dtype: np.dtype | type, order: str = "C") -> np.ndarray:
    """An empty array for a result, starting on a cache-line boundary when it holds
    `ALIGNED_MIN_BYTES` or more. numpy puts a large buffer 16 bytes past a line,
    so a kernel that streams whole lines of out peels the rows' partial lines
    (`teir_lowering.codegen.tile_primitives`); an aligned result has none. The
    array is then a view of a larger byte buffer (`.base`), as numpy's own
    results often are."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    if count * dtype.itemsize < ALIGNED_MIN_BYTES:
        return np.empty(shape, dtype, order=order)
    raw = np.empty(count * dtype.itemsize + CACHE_LINE, np.uint8)
    skip = -raw.ctypes.data % CACHE_LINE
    flat = raw[skip:skip + count * dtype.itemsize].view(dtype)
    return flat.reshape(shape, order=order)
