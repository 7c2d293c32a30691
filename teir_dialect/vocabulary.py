"""The words of the specification: policies, operations, roles, guard kinds, data types.

Each is a `StrEnum` whose values are the JSON spelling (records.md), so a member
compares equal to the string in a record and prints as it. `DataType` is the
one table of what each data type means to the IR (element width, memref
element type), to arithmetic (the type a Contraction accumulates in) and to
numpy (the dtypes that hold it); every layer reads it from here.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache, cached_property
from typing import TYPE_CHECKING, TypeVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
)
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import numpy as np


class Policy(StrEnum):
    SEQUENTIAL = "sequential"
    PARALLEL = "parallel"


class GuardKind(StrEnum):
    FIRST = "first"
    LAST = "last"


class Role(StrEnum):
    M = "M"
    N = "N"
    K = "K"


class OperationKind(StrEnum):
    ZERO = "Zero"
    COPY = "Copy"
    RELU = "ReLU"
    CONTRACTION = "Contraction"

    @property
    def roles(self) -> tuple[Role, ...]:
        """The role lists the operation requires (Table 10.3.2)."""
        if self is OperationKind.CONTRACTION:
            return (Role.M, Role.N, Role.K)
        return (Role.M, Role.N)

    def tensors_accessed(self, tensor_count: int) -> tuple[str, ...]:
        """The tensors the operation reads or writes (ReLU is in place with three)."""
        if self is OperationKind.ZERO or (self is OperationKind.RELU and tensor_count == 3):
            return ("out",)
        if self is OperationKind.CONTRACTION:
            return ("in0", "in1", "out")
        return ("in0", "out")


class KernelKind(StrEnum):
    """Table 10.6.1's rows: how a Contraction primitive maps onto a kernel."""

    SCALAR = "scalar"
    GEMM = "gemm"
    BRGEMM = "brgemm"
    SEGMENTED = "segmented"
    PERIODIC = "periodic"
    GENERAL = "general"

    @property
    def microkernel(self) -> bool:
        """A GEMM or BRGEMM: the kinds that get a register-blocked microkernel."""
        return self in (KernelKind.GEMM, KernelKind.BRGEMM)

    @property
    def transposes(self) -> bool:
        """Whether the kind carries BLAS's `trans` (A, B and C each N or T)."""
        return self.microkernel


class DataType(StrEnum):
    FP16 = "FP16"
    BF16 = "BF16"
    TF32 = "TF32"
    FP32 = "FP32"
    FP64 = "FP64"

    @property
    def width(self) -> int:
        """Bytes per stored element (TF32 is stored as FP32)."""
        return _WIDTH[self]

    @cached_property
    def storage_type(self) -> Attribute:
        """The memref element type that stores it."""
        return {
            DataType.FP16: Float16Type,
            DataType.BF16: BFloat16Type,
            DataType.TF32: Float32Type,
            DataType.FP32: Float32Type,
            DataType.FP64: Float64Type,
        }[self]()

    @cached_property
    def accumulator_type(self) -> Attribute:
        """The type a Contraction multiplies and accumulates in: FP32 for the 16-bit
        formats and TF32 (no host has FP16/BF16 FMAs we use; their products, and
        TF32's, are exact in FP32), else the storage type."""
        return Float64Type() if self is DataType.FP64 else Float32Type()

    @property
    def rounds_stores(self) -> bool:
        """Whether storing a Contraction's partial sum rounds it (FP16, BF16: the sum is
        FP32, memory 16-bit). Moving a K loop between a primitive and the schedule
        then changes how often a result is rounded, so transformations refuse to."""
        return self in (DataType.FP16, DataType.BF16)

    @property
    def mantissa_bits(self) -> int:
        """Explicit significand bits of the format (TF32: 10, although stored as FP32)."""
        return _MANTISSA[self]

    @property
    def rounds_inputs(self) -> bool:
        """Whether a Contraction rounds its inputs to the format first (TF32: 10
        explicit mantissa bits, to nearest even) although memory holds FP32."""
        return self is DataType.TF32

    @property
    def numpy_name(self) -> str:
        """The name of the numpy dtype that holds it (`numpy_dtypes[0]`)."""
        return self.numpy_dtypes[0].name

    @property
    def numpy_dtypes(self) -> tuple[np.dtype, ...]:
        """The numpy dtypes whose arrays hold it, the usual one first: BF16 is
        ml_dtypes.bfloat16 or its raw bit patterns as uint16; TF32 is float32."""
        return _numpy_dtypes()[self]


_WIDTH = {"FP16": 2, "BF16": 2, "TF32": 4, "FP32": 4, "FP64": 8}
_MANTISSA = {"FP16": 10, "BF16": 7, "TF32": 10, "FP32": 23, "FP64": 52}
@cache
def _numpy_dtypes() -> dict[str, tuple[np.dtype, ...]]:
    """The numpy dtypes per data type, built on first use: numpy and ml_dtypes take
    a tenth of a second to import, which every teir-opt run would pay."""
    import ml_dtypes
    import numpy as np

    return {
        "FP16": (np.dtype(np.float16),),
        "BF16": (np.dtype(ml_dtypes.bfloat16), np.dtype(np.uint16)),
        "TF32": (np.dtype(np.float32),),
        "FP32": (np.dtype(np.float32),),
        "FP64": (np.dtype(np.float64),),
    }

TENSOR_NAMES: dict[int, tuple[str, ...]] = {
    2: ("in0", "out"),
    3: ("in0", "in1", "out"),
}
"""Tensor names by tensor count; strides and offsets follow this order."""


E = TypeVar("E", bound=StrEnum)


def parse_enum(enum: type[E], value: object) -> E | None:
    """The member spelled `value`, or None (also for non-strings)."""
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            return None
    return None


def spelled(enum: type[StrEnum]) -> str:
    """'a, b or c': the spellings of an enum, for diagnostics."""
    names = [member.value for member in enum]
    return ", ".join(names[:-1]) + " or " + names[-1]
