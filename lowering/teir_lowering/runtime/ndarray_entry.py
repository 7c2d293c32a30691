"""A native entry point that takes numpy arrays themselves, for cheap kernel calls.

From Python the costly part of a call is not the call but taking each array's
data address: `ndarray.ctypes.data` costs ~0.8 us, more than a 32^3 GEMM. The
entry `NAME__ndarray(obj0, ..., objN) -> i32` receives the array objects (their
addresses, `id(array)` in CPython), reads each data pointer from the object as
numpy's own `PyArray_DATA` does (a fixed field that extensions compile in, so
numpy keeps its offset), refuses with 1 when the bytes the kernel writes on
`out` overlap the bytes it reads on an input, and otherwise calls the kernel
and returns 0. Every argument costs ctypes ~0.1 us to convert, so the byte
counts are the configuration's footprints, constants of the entry.

The Python side (`teir_lowering.runtime.kernel.Kernel`) still checks type, dtype,
contiguity, writeability and size before it calls, and passes the plain
ndarrays that check returns (`teir_dialect.arrays.plain_array`: never an
object only claiming to be an array); the entry only replaces the address
lookup and the overlap test. The field offset is found once by probing
arrays against `ndarray.ctypes.data`; when the probe finds no consistent offset
(an unusual Python or numpy build) `data_offset()` is None and kernels take the
slower Python path.
"""

from __future__ import annotations

import ctypes
from functools import cache

import numpy as np
from llvmlite import ir

ENTRY_SUFFIX = "__ndarray"


@cache
def data_offset() -> int | None:
    """The byte offset of the data pointer in a numpy array object, or None."""
    probes = [np.empty(n) for n in (1, 7, 4096)]
    for offset in range(8, 8 * 8, 8):
        if all(
            ctypes.c_void_p.from_address(id(a) + offset).value == a.ctypes.data for a in probes
        ):
            return offset
    return None


def add_ndarray_entry(module: ir.Module, kernel: str, footprints: list[int], offset: int) -> str:
    """Defines `kernel + ENTRY_SUFFIX` in `module`: `kernel` on arrays with these
    footprints (declared in `module` unless it is there: a module of its own is
    linked to the kernel's)."""
    pointer, i64, i32 = ir.PointerType(), ir.IntType(64), ir.IntType(32)
    target = module.globals.get(kernel) or ir.Function(
        module, ir.FunctionType(ir.VoidType(), [pointer] * len(footprints)), kernel)
    entry = ir.Function(
        module, ir.FunctionType(i32, [pointer] * len(footprints)), kernel + ENTRY_SUFFIX
    )
    builder = ir.IRBuilder(entry.append_basic_block("entry"))
    data: list[ir.Value] = []
    for obj in entry.args:
        field = builder.gep(obj, [ir.Constant(i64, offset)], source_etype=ir.IntType(8))
        data.append(builder.load(field, typ=pointer))
    out_start = builder.ptrtoint(data[-1], i64)
    out_stop = builder.add(out_start, ir.Constant(i64, footprints[-1]))
    overlap = ir.Constant(ir.IntType(1), 0)
    for pointer_value, size in zip(data[:-1], footprints[:-1]):
        if not (size and footprints[-1]):
            continue
        start = builder.ptrtoint(pointer_value, i64)
        stop = builder.add(start, ir.Constant(i64, size))
        overlap = builder.or_(overlap, builder.and_(
            builder.icmp_unsigned("<", start, out_stop), builder.icmp_unsigned("<", out_start, stop)
        ))
    with builder.if_then(overlap, likely=False):
        builder.ret(ir.Constant(i32, 1))
    builder.call(target, data)
    builder.ret(ir.Constant(i32, 0))
    return entry.name
