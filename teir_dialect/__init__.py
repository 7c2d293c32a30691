"""TEIR as an xDSL dialect, with its JSON record form."""

from teir_dialect.dialect import (
    TEIR,
    AxisOp,
    ConfigOp,
    GuardAttr,
    GuardTermAttr,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleOp,
)

__all__ = [
    "TEIR",
    "AxisOp",
    "ConfigOp",
    "GuardAttr",
    "GuardTermAttr",
    "InvokeOp",
    "IterOp",
    "PrimitiveOp",
    "ScheduleOp",
]

from teir_dialect.records import TeirError, Unsupported, from_json, to_json

__all__ += ["TeirError", "Unsupported", "from_json", "to_json"]

from teir_dialect.context import teir_context

__all__ += ["teir_context"]

from teir_dialect.builders import Dimension, build_record, einsum_config

__all__ += ["Dimension", "build_record", "einsum_config"]
