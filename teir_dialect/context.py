"""An xDSL context that knows every xDSL dialect and `teir` (for parsing .mlir)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.ir import Dialect

from teir_dialect.dialect import TEIR


def _linalg() -> Dialect:
    from teir_dialect.linalg_ops import linalg_dialect

    return linalg_dialect()


def _memref() -> Dialect:
    from teir_dialect.linalg_ops import memref_dialect

    return memref_dialect()


REPLACED_DIALECTS = {"linalg": _linalg, "memref": _memref}
"""Factories of the dialects TEIR's tools register in place of xDSL's of the same
name (teir_dialect.linalg_ops, imported when IR first names either dialect: xDSL's
linalg takes a while to import)."""


def teir_context() -> Context:
    """A Context with every xDSL dialect registered and teir loaded; linalg with the
    named contractions xDSL lacks and memref.copy's custom form (REPLACED_DIALECTS)."""
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, REPLACED_DIALECTS.get(name, factory))
    ctx.load_dialect(TEIR)
    return ctx
