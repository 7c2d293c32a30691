"""The `teir` dialect: TEIR configurations (axes, primitives, schedule) as xDSL IR.

A configuration is a `teir.config` op whose memref operands are the tensors
(`in0`, [`in1`,] `out`). Its body holds `teir.axis` and `teir.primitive`
records and one `teir.schedule`, whose region lists the schedule's roots in
order. A `teir.iter` region lists that iteration node's children in order, so
the tree shape of TEIR-Schedule is the nesting of the IR itself.

Ids are kept exactly as the user wrote them: a string or an integer. They are
compared by their text, so `0` and `"0"` name the same thing (and may not both
be defined). Every verifier message starts with the name of the rule it
enforces and quotes the offending ids.

The dialect is split like xDSL's larger ones: `teir_dialect.ids` (id helpers),
`teir_dialect.attributes` (guards, kernels, epilogues), `teir_dialect.ops` (the
ops) and `teir_dialect.verifier` (the rules between records). This module
defines the `Dialect` and re-exports the names other packages import.
"""


from xdsl.ir import Dialect

from teir_dialect.attributes import (
    EPILOGUE_ATTR,
    EpilogueAttr,
    GuardAttr,
    GuardKindAttr,
    GuardTermAttr,
    KernelAttr,
    KernelKindAttr,
    PolicyAttr,
)
from teir_dialect.ids import fresh_id, id_text, id_value, make_id
from teir_dialect.ops import (
    MAX_SCHEDULE_DEPTH,
    AxisOp,
    ConfigOp,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
    ScheduleOp,
    enclosing_config,
)
from teir_dialect.verifier import ConfigVerifier

__all__ = [
    "EPILOGUE_ATTR",
    "MAX_SCHEDULE_DEPTH",
    "TEIR",
    "AxisOp",
    "ConfigOp",
    "ConfigVerifier",
    "EpilogueAttr",
    "GuardAttr",
    "GuardKindAttr",
    "GuardTermAttr",
    "InvokeOp",
    "IterOp",
    "KernelAttr",
    "KernelKindAttr",
    "PolicyAttr",
    "PrimitiveOp",
    "ScheduleNode",
    "ScheduleOp",
    "enclosing_config",
    "fresh_id",
    "id_text",
    "id_value",
    "make_id",
]


TEIR = Dialect(
    "teir",
    [ConfigOp, AxisOp, PrimitiveOp, ScheduleOp, IterOp, InvokeOp],
    [GuardAttr, GuardKindAttr, GuardTermAttr, KernelAttr, KernelKindAttr, EpilogueAttr,
     PolicyAttr],
)
