"""`teir-apply-schedule{script=PATH}`: a saved list of transformation steps, applied in order.

A script is a JSON list of steps, each an object with `op` and that pass's
options, e.g.

    [{"op": "split", "axis": "k", "factor": 64},
     {"op": "reorder", "order": ["p", "r", "k"]},
     {"op": "parallelize", "axis": "p"}]

`op` is a transformation's short name (split, tile, reorder, fuse-axes,
parallelize, sequentialize, lift-elementwise, fold-guarded-reduction) or the
name of any teir pass (`teir-lift-gemm`, ...). Lists may be given as JSON
lists or as "a,b" strings. This is tinygrad's list of OptOps applied left to
right, and the form the auto-scheduler prints and the tuner searches and
saves. A bad step fails with its index and the reason, and nothing after it
runs. From Python: `teir_passes.apply_schedule(module, steps)`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from teir_dialect.records import TeirError, load_json
from teir_passes.schedule_edit import TransformError

NAME = "teir-apply-schedule"

SHORT_NAMES = (
    "split", "tile", "reorder", "fuse-axes", "parallelize", "sequentialize",
    "lift-elementwise", "fold-guarded-reduction",
)


def _pass_class(op: object) -> type[ModulePass]:
    from teir_passes.registry import PASSES

    name = f"teir-{op}" if op in SHORT_NAMES else op
    if not isinstance(name, str) or name not in PASSES or name == NAME:
        raise ValueError(
            f"unknown op {op!r}; expected one of {', '.join(SHORT_NAMES)} or a teir pass name"
        )
    return PASSES[name]()


def _option(field: dataclasses.Field[Any], value: object) -> object:
    """`value` converted to what `field` holds, or a ValueError saying what is wrong."""
    hint = typing.get_type_hints(_owner(field))[field.name]
    allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if any(typing.get_origin(a) is tuple for a in allowed):
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not items:
            raise ValueError(f"{field.name} must be a non-empty list, got {value!r}")
        return tuple(items)
    if isinstance(value, bool) or not isinstance(value, (int, str)) and value is not None:
        raise ValueError(f"{field.name} must be a string or an integer, got {value!r}")
    if int in allowed and str not in allowed and not isinstance(value, int):
        raise ValueError(f"{field.name} must be an integer, got {value!r}")
    return value


_OWNERS: dict[int, type] = {}


def _owner(field: dataclasses.Field[Any]) -> type:
    return _OWNERS[id(field)]


def make_step(step: object) -> ModulePass:
    """The pass one script step describes."""
    if not isinstance(step, dict) or "op" not in step:
        raise ValueError(f"a step is an object with an \"op\", got {step!r}")
    cls = _pass_class(step["op"])
    fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}
    for field in fields.values():
        _OWNERS[id(field)] = cls
    unknown = [key for key in step if key != "op" and key not in fields]
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)}; {step['op']} takes "
            f"{', '.join(fields) or 'none'}"
        )
    options = {fields[k].name: _option(fields[k], v) for k, v in step.items() if k != "op"}
    missing = [
        name for name, f in fields.items()
        if f.name not in options and f.default is dataclasses.MISSING
    ]
    if missing:
        raise ValueError(f"missing option(s) {', '.join(missing)}")
    return cls(**options)


def load_script(script: object) -> list[object]:
    """Steps from a list, JSON text or a path to a JSON file."""
    steps = load_json(script)
    if not isinstance(steps, list):
        raise TeirError(f"{NAME}: a script is a JSON list of steps, got {type(steps).__name__}")
    return steps


def apply_schedule(module: builtin.ModuleOp, steps: Sequence[object] | str,
                   ctx: Context | None = None) -> None:
    """Applies each step of `steps` (or of the script they name) to `module`, in order."""
    from teir_dialect.context import teir_context

    ctx = ctx or teir_context()
    for index, step in enumerate(load_script(steps) if isinstance(steps, str) else steps):
        label = step.get("op", "?") if isinstance(step, dict) else "?"
        try:
            transformation = make_step(step)
        except ValueError as err:
            raise TransformError(NAME, f"step {index} ({label}): {err}") from None
        try:
            transformation.apply(ctx, module)
        except DiagnosticException as err:
            raise TransformError(NAME, f"step {index} ({label}): {err}") from None


@dataclass(frozen=True)
class ApplySchedulePass(ModulePass):
    """Applies the transformation steps of a JSON script, in order."""

    name = NAME

    script: str

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        try:
            steps = load_script(self.script)
        except TeirError as err:
            raise TransformError(NAME, str(err)) from None
        apply_schedule(op, steps, ctx)


@dataclass(frozen=True)
class ScriptTarget(Target):
    """`-t teir-script` / `teir-opt --emit=script`: the script the auto-scheduler
    recorded on each configuration (`[]` where none), ready for teir-apply-schedule."""

    name: ClassVar[str] = "teir-script"

    def emit(self, ctx: Context, module: builtin.ModuleOp, output: IO[str]) -> None:
        from teir_dialect.dialect import ConfigOp

        scripts: list[list[Any]] = []
        for config in (op for op in module.walk() if isinstance(op, ConfigOp)):
            recorded = config.attributes.get("script")
            scripts.append(json.loads(recorded.data) if isinstance(recorded, StringAttr) else [])
        chosen = scripts[0] if len(scripts) == 1 else scripts
        output.write("[\n" + ",\n".join(f"  {json.dumps(step)}" for step in chosen) + "\n]\n"
                     if chosen else "[]\n")
