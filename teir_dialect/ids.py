"""Ids of TEIR records and schedule nodes: kept as the user wrote them (a string or
an integer), compared by their text, printed and parsed in one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self

from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------
# Ids
# --------------------------------------------------------------------------

TeirId = StringAttr | IntegerAttr
"""A user id: string or integer, printed bare when it is an identifier."""


def make_id(value: str | int) -> StringAttr | IntegerAttr:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"an id is a string or an integer, got {value!r}")
    if isinstance(value, str) and not value.isascii() and not _is_unicode(value):
        raise ValueError(
            f"id rule: the id {value!a} holds a lone surrogate, which is not "
            "Unicode text; an id is a Unicode string or an integer"
        )
    return StringAttr(value) if isinstance(value, str) else IntegerAttr(value, i64)


def _is_unicode(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def id_text(attr: Attribute) -> str:
    """The text an id is compared and quoted by."""
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, IntegerAttr):
        return str(attr.value.data)
    raise VerifyException(f"an id must be a string or an integer, got {attr}")


def id_value(attr: Attribute) -> str | int:
    """The id as its JSON value."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return id_text(attr)


def fresh_id(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ...: the first not in `taken` (then taken)."""
    candidate, suffix = base, 1
    while candidate in taken:
        candidate, suffix = f"{base}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


def print_id(printer: Printer, attr: Attribute) -> None:
    """An integer, a bare identifier, or a string literal (xDSL escapes every byte
    outside printable ASCII: `"\\C3\\A9"` for "é")."""
    if isinstance(attr, IntegerAttr):
        printer.print_string(str(attr.value.data))
    else:
        printer.print_identifier_or_string_literal(id_text(attr))


def parse_id(parser: AttrParser) -> StringAttr | IntegerAttr:
    """What print_id prints. xDSL's lexer reads a literal with escaped non-ASCII
    bytes as a bytes literal; an id takes it when it is UTF-8 text."""
    start = parser.pos
    if (number := parser.parse_optional_integer(allow_boolean=False)) is not None:
        check_int64(parser, number, "an integer id", start)
        return IntegerAttr(number, i64)
    if (text := parser.parse_optional_identifier_or_str_literal()) is not None:
        return StringAttr(text)
    data = parser.expect(parser.parse_optional_bytes_literal, "expected an id")
    try:
        return StringAttr(data.decode())
    except UnicodeDecodeError:
        parser.raise_error(
            "id rule: an id is Unicode text, and this string literal's bytes are "
            "not UTF-8", start, parser.pos
        )


def check_int64(parser: AttrParser, value: int, what: str, start: int) -> None:
    if not -(2**63) <= value < 2**63:
        parser.raise_error(
            f"integer range: {what} must fit in 64 bits", start, parser.pos
        )


def parse_int64(parser: AttrParser, what: str) -> int:
    start = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    check_int64(parser, value, what, start)
    return value


def unescape_strings(attr: Attribute) -> Attribute:
    """`attr` with each BytesAttr that is UTF-8 text turned back into the StringAttr
    xDSL printed it from (its parser reads `"\\C3\\A9"` as bytes); `attr` itself
    when it holds none."""
    if isinstance(attr, BytesAttr):
        try:
            return StringAttr(attr.data.decode())
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, ArrayAttr):
        items = [unescape_strings(item) for item in attr.data]
        changed = any(new is not old for new, old in zip(items, attr.data))
        return ArrayAttr(items) if changed else attr
    if isinstance(attr, DictionaryAttr):
        entries = {key: unescape_strings(value) for key, value in attr.data.items()}
        changed = any(entries[key] is not value for key, value in attr.data.items())
        return DictionaryAttr(entries) if changed else attr
    return attr


class StringPropertiesOp(IRDLOperation):
    """A teir op whose string properties (ids, metadata) may be non-ASCII. xDSL's
    generic parser reads the `"\\C3\\A9"` it prints for "é" as a BytesAttr;
    `create`, which that parser calls, turns such properties back into strings."""

    @classmethod
    def create(cls, *, properties: Mapping[str, Attribute] = {}, **kwargs: Any) -> Self:
        properties = {key: unescape_strings(value) for key, value in properties.items()}
        return super().create(properties=properties, **kwargs)


def parse_id_list(parser: AttrParser) -> list[StringAttr | IntegerAttr]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_id(parser)
    )


def print_id_list(printer: Printer, ids: Sequence[Attribute]) -> None:
    with printer.in_square_brackets():
        printer.print_list(ids, lambda attr: print_id(printer, attr))
