"""What a tensor's memref stores, for the kernel's argument checks and teir-to-scf.

A module of its own so that `compile_kernel` can describe a cached kernel's
tensors without importing the code generators."""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute

from teir_dialect.records import TeirError, Unsupported
from teir_dialect.vocabulary import DataType

STORED_DATA_TYPES: tuple[DataType, ...] = (
    DataType.FP32, DataType.FP64, DataType.FP16, DataType.BF16
)
"""The data type each memref element type holds (TF32 is stored as FP32)."""


def stored_data_type(tensor: str, tensor_type: Attribute) -> DataType:
    """The data type a tensor's memref stores (f32: FP32, which TF32 shares); a
    TeirError for any other memref."""
    if not isinstance(tensor_type, MemRefType) or tensor_type.get_num_dims() != 1:
        raise Unsupported(
            f"lowering: tensor {tensor} must be a 1-D memref of its element type, got "
            f"{tensor_type}; other memref shapes are not supported yet"
        )
    element = tensor_type.element_type
    for data_type in STORED_DATA_TYPES:
        if data_type.storage_type == element:
            return data_type
    stored = ", ".join(str(d.storage_type) for d in STORED_DATA_TYPES)
    raise TeirError(
        f"lowering: tensor {tensor} holds {element}; only {stored} tensors are "
        "supported yet"
    )


def element_count(tensor: str, width: int, byte_count: int, what: str) -> int:
    """`byte_count` bytes of `tensor` as a count of its `width`-byte elements; an
    Unsupported naming `what` when they split an element."""
    if byte_count % width:
        raise Unsupported(
            f"lowering: {what} is {byte_count} bytes on {tensor}, not a multiple of "
            f"its {width}-byte elements; byte-misaligned tiles are not supported yet"
        )
    return byte_count // width
