"""An xDSL context that knows every xDSL dialect and `teir` (for parsing .mlir)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects

from teir_dialect.dialect import TEIR
from teir_dialect.linalg_ops import DIALECTS


def teir_context() -> Context:
    """A Context with every xDSL dialect registered and teir loaded; linalg with the
    named contractions xDSL lacks and memref.copy's custom form (linalg_ops)."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, DIALECTS.get(name, factory))
    ctx.load_dialect(TEIR)
    return ctx
