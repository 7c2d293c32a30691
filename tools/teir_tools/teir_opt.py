"""`teir-opt`: xDSL's opt driver with TEIR's dialect, passes, JSON input and outputs.

It takes xdsl-opt's flags (`-p`, `-t`, `-o`, `--split-input-file`,
`--verify-diagnostics`, `--print-op-generic`, ...), reads `.mlir` and `.json`
(tree or flat records), and adds `--emit=mlir|json|tree`. It never prints a
traceback: bad input (file, record, IR, pass pipeline, target) gives
`teir-opt: error: ...` on stderr and exit code 1, a bad command line argparse's
usage message and exit code 2, an internal error `teir-opt: internal error: ...`
and exit code 3 (set TEIR_DEBUG=1 to see its traceback).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import fields
from io import BytesIO
from pathlib import Path
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.arg_spec import parse_pipeline, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from teir_dialect.records import (
    TeirError,
    bad_path_reason,
    from_json,
    parse_mlir,
    path_shown,
)
from teir_tools.cli import EXIT_BAD_INPUT, run_tool

EMIT_TARGETS = {"mlir": "mlir", "json": "teir-json", "tree": "teir-tree",
                "script": "teir-script", "upstream": "mlir-upstream"}

LLVM_PIPELINE = "teir-to-llvm"
"""The pass whose output `-t llvm` (xDSL's LLVM IR target) can translate."""


class OptError(Exception):
    """Bad input that teir-opt reports as one `teir-opt: error:` line."""


class TeirOptMain(xDSLOptMain):
    version_format = "teir-opt built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None) -> None:
        super().__init__(
            description="TEIR optimizer driver (xdsl-opt with TEIR)", args=args
        )
        if self.args.emit is not None:
            self.args.target = EMIT_TARGETS[self.args.emit]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        from teir_passes.pipeline import DEFAULT_PIPELINE

        arg_parser.epilog = (
            "default pipeline (what compile_kernel runs; -p teir-optimize): "
            + ", ".join(DEFAULT_PIPELINE)
            + ". Lowering: -p teir-to-scf (scf/arith/memref), -p teir-to-llvm "
            "(llvm dialect; add -t llvm for LLVM IR), which runs teir-to-scf, then "
            "-p teir-lower-to-llvm-dialect (scf/arith/memref -> llvm dialect)."
        )
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--emit",
            choices=sorted(EMIT_TARGETS),
            default=None,
            help="output form: mlir (default), json (tree-form records), "
            "tree (schedule listings like the spec's), upstream (MLIR for upstream "
            "mlir-opt: the lane ops as arith/llvm vector compares and selects)",
        )

    def register_all_dialects(self) -> None:
        """xDSL's, with linalg's named contractions that xDSL lacks and memref.copy's
        custom form (teir_dialect.linalg_ops)."""
        from xdsl.universe import Universe

        from teir_dialect.context import REPLACED_DIALECTS

        for name, factory in Universe.get_multiverse().all_dialects.items():
            self.ctx.register_dialect(name, REPLACED_DIALECTS.get(name, factory))

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_json(io: IO[bytes]) -> ModuleOp:
            return from_json(io.read())  # bytes: JSON text, never a path

        def parse_mlir_text(io: IO[bytes]) -> ModuleOp:
            return parse_mlir(
                io.read().decode("utf-8-sig"),
                self.get_input_name(),
                context=self.ctx,
                implicit_module=not self.args.no_implicit_module,
            )

        self.available_frontends["json"] = parse_json
        self.available_frontends["mlir"] = parse_mlir_text

    def setup_pipeline(self) -> None:
        """Checks `-p` pass by pass first, so that a diagnostic names the bad pass."""
        spec = self.args.passes
        try:
            passes = list(parse_pipeline(spec))
        except ArgSpecParseError as err:
            raise OptError(f"bad pass pipeline -p '{spec}': {_spec_error(err)}") from None
        for pass_spec in passes:
            factory = self.available_passes.get(pass_spec.name)
            if factory is None:
                raise OptError(
                    f"unknown pass '{pass_spec.name}' in -p '{spec}'"
                    + _did_you_mean(pass_spec.name, self.available_passes)
                    + " (teir-opt --help lists the passes)"
                )
            known = [field.name for field in fields(factory())]
            for option in pass_spec.normalize_parameter_names().parameters:
                if option not in known:
                    raise OptError(
                        f"unknown option '{option}' of pass '{pass_spec.name}'"
                        + _did_you_mean(option, known)
                        + f" (its options: {', '.join(known) or 'none'})"
                    )
            try:
                factory().from_pass_spec(pass_spec)
            except (ValueError, TypeError) as err:
                raise OptError(
                    f"bad options for pass '{pass_spec.name}': {err}"
                ) from None
        super().setup_pipeline()

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The whole input, checked: a file that cannot be read, an unknown
        extension, text that is not UTF-8 or an empty input is an OptError."""
        path = self.args.input_file
        if path is None:
            name, extension, data = "stdin", "mlir", sys.stdin.buffer.read()
        else:
            name, extension = path, os.path.splitext(path)[1].removeprefix(".")
            try:
                data = Path(path).read_bytes()
            except OSError as err:
                raise OptError(f"cannot read {path}: {_os_reason(err)}") from None
            except ValueError:  # a NUL or a lone surrogate in the path
                raise OptError(
                    f"cannot read {path_shown(path)}: {bad_path_reason(path)}"
                ) from None
            if self.args.frontend is None and extension not in self.available_frontends:
                raise OptError(
                    f"cannot tell the form of {path} from its extension "
                    f"'{extension}': name it .mlir or .json, or pass -f mlir|json"
                )
        form = self.args.frontend or extension
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise OptError(
                f"cannot read {name}: not UTF-8 text ({err.reason} at byte {err.start})"
            ) from None
        if not text.strip():
            expected = "a JSON record" if form == "json" else "MLIR"
            raise OptError(f"{name} is empty; expected {expected}")
        if path is None and self.args.frontend is None and text.lstrip()[:1] in ("{", "["):
            raise OptError(
                f"stdin starts with '{text.lstrip()[0]}', like a JSON record, but is read "
                "as MLIR: pass -f json to read a record from stdin"
            )
        return BytesIO(data), extension

    def prepare_output(self) -> IO[str]:
        path = self.args.output_file
        try:
            return super().prepare_output()
        except OSError as err:
            raise OptError(f"cannot write {path}: {_os_reason(err)}") from None
        except ValueError:  # a NUL or a lone surrogate in the path
            raise OptError(
                f"cannot write {path_shown(path)}: {bad_path_reason(path)}"
            ) from None

    def output_resulting_program(self, prog: ModuleOp) -> str:
        llvm_target = parse_spec(self.args.target).name == "llvm"
        if llvm_target:
            _check_llvm_dialect(prog)
        try:
            return super().output_resulting_program(prog)
        except NotImplementedError as err:
            if not llvm_target:
                raise
            raise OptError(
                f"-t llvm: xDSL cannot translate this module to LLVM IR: {err}"
            ) from None


def _check_llvm_dialect(module: ModuleOp) -> None:
    """xDSL's `-t llvm` translates only the llvm dialect; say which pass produces it."""
    from teir_lowering.lane import is_llvm_level

    others = sorted(
        {op.name for op in module.walk() if op is not module and not is_llvm_level(op)}
    )
    if others:
        shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        raise OptError(
            f"-t llvm prints LLVM IR from the llvm dialect, but the module still holds "
            f"{shown}; lower it first with -p {LLVM_PIPELINE} "
            f"(teir-opt FILE -p {LLVM_PIPELINE} -t llvm)"
        )


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f": did you mean '{close[0]}'?" if close else ""


def _os_reason(err: OSError) -> str:
    if isinstance(err, IsADirectoryError):
        return "it is a directory, not a file"
    return err.strerror or str(err)


def _spec_error(err: ArgSpecParseError) -> str:
    """xDSL's message without its 'Error parsing ...' heading line."""
    return str(err).removeprefix("Error parsing pass pipeline specification:\n").strip()


def main(args: Sequence[str] | None = None) -> int:
    def body() -> int:
        try:
            TeirOptMain(args=args).run()
        except SystemExit as exit_:  # argparse (2), --version, --shrink
            code = exit_.code
            return code if isinstance(code, int) else EXIT_BAD_INPUT if code else 0
        except ArgSpecParseError as err:  # a BaseException: -t's spec, parsed by xDSL
            raise OptError(f"bad target -t: {_spec_error(err)}") from None
        return 0

    # ValueError and OSError: xDSL reports bad input with them too.
    return run_tool(
        "teir-opt",
        body,
        (OptError, DiagnosticException, ParseError, TeirError, ValueError, OSError),
    )


if __name__ == "__main__":
    sys.exit(main())
