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

from teir_dialect.records import TeirError, from_json, to_json  # noqa: E402

__all__ += ["TeirError", "from_json", "to_json"]


def teir_context():  # noqa: ANN201
    """An xDSL Context with every xDSL dialect and teir loaded (for parsing .mlir)."""
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    ctx.load_dialect(TEIR)
    return ctx


__all__ += ["teir_context"]
