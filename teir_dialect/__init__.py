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
