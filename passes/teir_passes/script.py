"""`teir-apply-schedule{script=PATH}`: a saved list of transformation steps, applied in order.

A script is a JSON list of steps, each an object with `op` and that pass's
options, e.g.

    [{"op": "split", "axis": "k", "factor": 64},
     {"op": "reorder", "order": ["p", "r", "k"]},
     {"op": "parallelize", "axis": "p"}]

`op` is a transformation's short name (split, tile, reorder, fuse-axes,
parallelize, sequentialize, lift-elementwise, widen-tile, fold-guarded-reduction) or the
name of any teir pass (`teir-lift-gemm`, ...). A step is that pass's spec
(`teir-split{axis=k factor=64}`), which xDSL parses and type-checks as for
`-p`; lists may be given as JSON lists or as "a,b" strings. This is
tinygrad's list of OptOps applied left to
right, and the form the auto-scheduler prints and the tuner searches and
saves. A bad step fails with its index and the reason, and nothing after it
runs. From Python: `teir_passes.apply_schedule(module, steps)`.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ParameterListType, ParameterType
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from teir_dialect.records import TeirError, load_json
from teir_passes.schedule_edit import TransformError

NAME = "teir-apply-schedule"

SHORT_NAMES = (
    "split", "tile", "reorder", "fuse-axes", "parallelize", "sequentialize",
    "lift-elementwise", "widen-tile", "fold-guarded-reduction",
)


def _pass_class(op: object) -> type[ModulePass]:
    from teir_passes.registry import PASSES

    name = f"teir-{op}" if op in SHORT_NAMES else op
    if not isinstance(name, str) or name not in PASSES or name == NAME:
        raise ValueError(
            f"unknown op {op!r}; expected one of {', '.join(SHORT_NAMES)} or a teir pass name"
        )
    return PASSES[name]()


def _parameters(key: str, value: object) -> ParameterListType:
    """A step option's JSON value as pass-spec parameters, as `-p` would give them:
    a list or an "a,b" string is several, null none."""
    values = value.split(",") if isinstance(value, str) else value
    values = () if values is None else values if isinstance(values, list) else (values,)
    if not all(isinstance(v, ParameterType) for v in values):
        raise ValueError(f"{key} must be a string, a number, a boolean or a list of them, "
                         f"got {json.dumps(value)}")
    return tuple(values)


def _check_booleans(cls: type[ModulePass], spec: ArgSpec) -> None:
    """A boolean only where the option is one: to xDSL's type check a bool is an int."""
    hints = typing.get_type_hints(cls)
    for key, values in spec.normalize_parameter_names().parameters.items():
        hint = hints.get(key)
        if hint and any(isinstance(v, bool) for v in values) and bool not in (
            hint, *typing.get_args(hint)
        ):
            raise ValueError(f"{key.replace('_', '-')} must not be a boolean")


def step_spec(step: object) -> ArgSpec:
    """The pass spec of one script step: `{"op": "split", "axis": "k", "factor": 64}`
    is `teir-split{axis=k factor=64}`."""
    if not isinstance(step, dict) or "op" not in step:
        raise ValueError(f"a step is an object with an \"op\", got {step!r}")
    name = _pass_class(step["op"]).name
    return ArgSpec(name, {k: _parameters(k, v) for k, v in step.items() if k != "op"})


def make_step(step: object) -> ModulePass:
    """The pass one script step describes, built by xDSL from its pass spec."""
    spec = step_spec(step)
    cls = _pass_class(spec.name)
    try:
        _check_booleans(cls, spec)
        return cls.from_pass_spec(spec)
    except ValueError as err:
        raise ValueError(f"{spec}: {err}") from None


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
        except TeirError as err:  # (its message names the pass already)
            raise TransformError(NAME, str(err).removeprefix(f"{NAME}: ")) from None
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
