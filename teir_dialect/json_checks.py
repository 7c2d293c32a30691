"""Checks of JSON values shared by the tree-form and flat-form readers.

Every failure is a `TeirError` whose message names the rule and the ids.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from xdsl.utils.exceptions import VerifyException

JsonDict = dict[str, Any]


class TeirError(VerifyException, ValueError):
    """Bad input: an ill-formed configuration or call; the message names the rule
    and the ids."""


class Unsupported(TeirError):
    """Well-formed input that TEIR does not compile: the message names what is
    not supported. A TeirError, so callers that refuse bad input refuse it too;
    internal bugs are neither (the tools report them as internal errors)."""


# --------------------------------------------------------------------------
# Small JSON checks
# --------------------------------------------------------------------------


def fail(message: str) -> None:
    raise TeirError(message)


def is_int(value: object) -> bool:
    """A JSON integer that fits the IR's 64-bit fields."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def shown_int(value: int) -> str:
    """An integer for a message: its digits, or their count when there are many
    (Python refuses to print more than 4300)."""
    if -(10**40) < value < 10**40:
        return str(value)
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"


def is_id(value: object) -> bool:
    return isinstance(value, str) or is_int(value)


def quote(value: object) -> str:
    return f"'{value}'" if is_id(value) else repr(value)


def check_keys(
    where: str, record: object, required: Sequence[str], optional: Sequence[str] = ()
) -> JsonDict:
    if not isinstance(record, dict):
        raise TeirError(f"record form: {where} must be a JSON object, got {record!r}")
    missing = [key for key in required if key not in record]
    if missing:
        fail(f"record form: {where} lacks field(s) {', '.join(missing)}")
    unknown = [key for key in record if key not in required and key not in optional]
    if unknown:
        fail(
            f"record form: {where} has unknown field(s) {', '.join(map(str, unknown))}"
        )
    return record


def check_id(where: str, value: object) -> str | int:
    if not is_id(value):
        raise TeirError(
            f"record form: {where} must be a string or integer id, got {value!r}"
        )
    return value  # pyright: ignore[reportReturnType]


def check_list(where: str, value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TeirError(f"record form: {where} must be a list, got {value!r}")
    return value


def check_int_list(where: str, value: object) -> list[int]:
    values = check_list(where, value)
    for item in values:
        if not is_int(item):
            fail(f"record form: {where} must hold 64-bit integers, got {item!r}")
    return values


# --------------------------------------------------------------------------
# The whole record
# --------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_path(path: Sequence[str | int]) -> str:
    """`primitives[0].metadata.x` for ("primitives", 0, "metadata", "x")."""
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)
    return text.removeprefix(".") or "the record"


def check_text(where: Sequence[str | int], text: str) -> None:
    """Strings must be Unicode text: a lone surrogate (JSON's "\\ud800") cannot be
    written as UTF-8, so no IR printer, file or terminal could show it."""
    if (match := _SURROGATE.search(text)) is not None:
        fail(
            f"text rule: {json_path(where)} holds the lone surrogate "
            f"U+{ord(match.group()):04X}, which is not Unicode text; a record's "
            "strings (ids included) are Unicode"
        )


def check_json_value(value: object, max_depth: int) -> None:
    """What no record field can hold, refused before anything recursive reads the
    record: arrays and objects nested deeper than `max_depth`, integers beyond 64
    bits, strings that are not Unicode text. Iterative, one visit per value, in
    document order."""
    if not isinstance(value, (dict, list)):
        return
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        container, path = stack.pop()
        if len(path) >= max_depth:
            shown = json_path(path[:6]) + ("..." if len(path) > 6 else "")
            fail(
                f"record depth: {shown} nests arrays and objects more than "
                f"{max_depth} deep; a record nests at most {max_depth}"
            )
        items = (
            container.items() if isinstance(container, dict) else enumerate(container)  # pyright: ignore
        )
        nested: list[tuple[object, tuple[str | int, ...]]] = []
        for key, item in items:
            if isinstance(key, str) and not key.isascii():
                check_text(path, key)
            if isinstance(item, str):
                if not item.isascii():
                    check_text((*path, key), item)
            elif isinstance(item, int):
                if not -(2**63) <= item < 2**63:
                    fail(
                        f"integer range: {json_path((*path, key))} is "
                        f"{shown_int(item)}, beyond 64-bit integers; every integer "
                        "of a record fits in 64 bits"
                    )
            elif isinstance(item, (dict, list)):
                nested.append((item, (*path, key)))
        stack.extend(reversed(nested))  # the first problem in document order
