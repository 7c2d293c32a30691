"""`teir-opt`: xDSL's opt driver with TEIR's dialect, passes, JSON input and outputs.

It takes xdsl-opt's flags (`-p`, `-o`, `--split-input-file`,
`--verify-diagnostics`, `--print-op-generic`, ...), reads `.mlir` and `.json`
(tree or flat records), and adds `--emit=mlir|json|tree`. Bad input gives
`teir-opt: error: ...` on stderr and exit code 1, never a traceback (set
TEIR_DEBUG=1 to see one for an internal error).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from teir_dialect.records import TeirError, from_json

EMIT_TARGETS = {"mlir": "mlir", "json": "teir-json", "tree": "teir-tree"}


class TeirOptMain(xDSLOptMain):
    version_format = "teir-opt built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="TEIR optimizer driver (xdsl-opt with TEIR)", args=args)
        if self.args.emit is not None:
            self.args.target = EMIT_TARGETS[self.args.emit]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        from teir_passes.pipeline import DEFAULT_PIPELINE

        arg_parser.epilog = (
            "default pipeline (what compile_kernel runs; -p teir-optimize): "
            + ", ".join(DEFAULT_PIPELINE)
            + ". Lowering: -p teir-to-scf (scf/arith/memref), -p teir-to-llvm (llvm dialect)."
        )
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--emit",
            choices=sorted(EMIT_TARGETS),
            default=None,
            help="output form: mlir (default), json (tree-form records), "
            "tree (schedule listings like the spec's)",
        )

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_json(io: IO[bytes]) -> ModuleOp:
            return from_json(io.read().decode())

        self.available_frontends["json"] = parse_json


def main(args: Sequence[str] | None = None) -> int:
    try:
        TeirOptMain(args=args).run()
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
    except (DiagnosticException, ParseError, TeirError) as err:
        print(f"teir-opt: error: {err}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as err:
        if os.environ.get("TEIR_DEBUG"):
            raise
        print(f"teir-opt: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # an internal error must still not print a traceback
        if os.environ.get("TEIR_DEBUG"):
            raise
        print(
            f"teir-opt: internal error: {type(err).__name__}: {err} "
            "(set TEIR_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
