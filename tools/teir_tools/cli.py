"""How TEIR's command-line tools end: one diagnostic line and an exit code, never
a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from itertools import pairwise

from teir_dialect.limits import recursion_room

EXIT_BAD_INPUT = 1
EXIT_INTERNAL_ERROR = 3
"""argparse exits with 2 for a bad command line."""
EXIT_BROKEN_PIPE = 128 + 13
"""As if SIGPIPE had ended the process, as it ends C tools."""


def run_tool(
    prog: str, body: Callable[[], int], user_errors: tuple[type[Exception], ...]
) -> int:
    """body()'s exit code, or the code of how it failed.

    The body runs with room for the deepest input the tools accept
    (`recursion_room`). A user error (bad input) prints `PROG: error: MESSAGE` and gives 1; any
    other exception is an internal error, `PROG: internal error: TYPE: MESSAGE`
    and 3; TEIR_DEBUG=1 re-raises both to show the traceback. A reader that
    went away (`| head`) ends the run quietly with 141, Ctrl-C with 130.
    """
    try:
        with recursion_room():
            return body()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that
        # this does not print "Exception ignored ... BrokenPipeError".
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except user_errors as err:
        if os.environ.get("TEIR_DEBUG"):
            raise
        print(f"{prog}: error: {err}{_failing_op(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # an internal error must still not print a traceback
        if os.environ.get("TEIR_DEBUG"):
            raise
        print(
            f"{prog}: internal error: {type(err).__name__}: {err} "
            "(set TEIR_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL_ERROR


def _failing_op(err: Exception) -> str:
    """The op a verifier error is about, from xDSL's note (the module printed with
    that op underlined), as a line to add: the message alone names no op."""
    for note in getattr(err, "__notes__", ()):
        lines = note.splitlines()
        for above, line in pairwise(lines):
            if line.lstrip().startswith("^^^"):
                op = above.strip()
                return f"\n  in: {op[:157] + '...' if len(op) > 160 else op}"
    return ""
