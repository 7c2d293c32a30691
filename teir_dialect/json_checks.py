"""Checks of JSON values shared by the tree-form and flat-form readers.

Every failure is a `TeirError` whose message names the rule and the ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.utils.exceptions import VerifyException

JsonDict = dict[str, Any]


class TeirError(VerifyException, ValueError):
    """An ill-formed configuration; the message names the rule and the ids."""


# --------------------------------------------------------------------------
# Small JSON checks
# --------------------------------------------------------------------------


def fail(message: str) -> None:
    raise TeirError(message)


def is_int(value: object) -> bool:
    """A JSON integer that fits the IR's 64-bit fields."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


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
