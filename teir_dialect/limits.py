"""How deeply input may nest, checked without recursion before a recursive reader sees it.

Python's `json` and xDSL's parser, verifier and printer recurse once (xDSL: about
seven calls) per level of nesting, so text nested thousands deep ends in a
RecursionError instead of a diagnostic. The tools refuse JSON records nested
deeper than MAX_RECORD_DEPTH and MLIR text nested deeper than MAX_TEXT_NESTING
(brackets of any kind) by scanning the text, and give xDSL's recursion the room
that depth needs whatever the caller's stack (`recursion_room`).
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from teir_dialect.dialect import MAX_SCHEDULE_DEPTH

MAX_RECORD_DEPTH = 64
"""Deepest nesting of JSON arrays and objects in a record (its metadata included;
the record's own fields nest four deep)."""

MAX_TEXT_NESTING = 2 * MAX_SCHEDULE_DEPTH
"""Deepest nesting of brackets ({, [, (, <) in MLIR text the tools read: the
deepest schedule's IR, lowered with a guard on every level, fits."""

FRAMES_PER_LEVEL = 10
"""Python frames xDSL's parser spends per nesting level (seven, measured), rounded up."""

_MLIR_SKIPPED = r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|->'
"""What the nesting scan of MLIR skips: string literals and comments (with their
brackets) and `->` (not a closing `>`)."""

_JSON_SKIPPED = r'"(?:[^"\\]|\\.)*"?'

_SKIP = {False: re.compile(_MLIR_SKIPPED), True: re.compile(_JSON_SKIPPED)}
_TOKENS = {
    False: re.compile(_MLIR_SKIPPED + r"|[{}\[\]()<>]"),
    True: re.compile(_JSON_SKIPPED + r"|[{}\[\]]"),
}
_NOT_BRACKET = re.compile(r"[^{}\[\]()<>]+")

_OPENING = frozenset("{[(<")
_CLOSING = frozenset("}])>")


def too_deep(text: str, limit: int, *, json: bool = False) -> int | None:
    """The offset of the first bracket that opens level `limit + 1` of `text`
    (MLIR, or JSON with json=True), or None when the text nests at most `limit` deep."""
    openers = "{[" if json else "{[(<"
    if sum(text.count(bracket) for bracket in openers) <= limit:
        return None
    # The brackets alone (regular expressions, in C) first; the offset only when
    # some bracket is too deep.
    if _deepest(_NOT_BRACKET.sub("", _SKIP[json].sub("", text)), limit) is None:
        return None
    depth = 0
    for match in _TOKENS[json].finditer(text):
        token = match.group()
        if token in _OPENING:
            depth += 1
            if depth > limit:
                return match.start()
        elif token in _CLOSING and depth:
            depth -= 1
    return None


def _deepest(brackets: str, limit: int) -> int | None:
    """The index in `brackets` (bracket characters only) of the first one opening
    level `limit + 1`; a closing bracket without an opening one is ignored."""
    depth = 0
    for index, bracket in enumerate(brackets):
        if bracket in _OPENING:
            depth += 1
            if depth > limit:
                return index
        elif depth:
            depth -= 1
    return None


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset` in `text`."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _stack_depth() -> int:
    depth, frame = 0, sys._getframe()  # pyright: ignore[reportPrivateUsage]
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


_room_lock = threading.Lock()
_room_users = 0
_saved_limit = 0


@contextmanager
def recursion_room(levels: int = MAX_TEXT_NESTING) -> Iterator[None]:
    """Inside, Python's recursion limit leaves room for `levels` nesting levels of
    xDSL's recursion on top of the current stack (a caller deep in a test runner
    or a notebook must not turn the deepest accepted input into a RecursionError).
    The limit is process-wide: the last thread to leave restores it."""
    global _room_users, _saved_limit
    needed = _stack_depth() + levels * FRAMES_PER_LEVEL + 200
    with _room_lock:
        if _room_users == 0:
            _saved_limit = sys.getrecursionlimit()
        _room_users += 1
        if sys.getrecursionlimit() < needed:
            sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        with _room_lock:
            _room_users -= 1
            if _room_users == 0:
                sys.setrecursionlimit(_saved_limit)
