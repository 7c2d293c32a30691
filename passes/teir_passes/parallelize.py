"""`teir-parallelize{axis=ID}` and `teir-sequentialize{axis=ID}`: an iteration's policy.

Every iteration node over the axis takes the policy. Running in parallel is
legal when no two indices write a common out byte; the verifier's exact
parallel-race rule decides, and its diagnostic becomes the pass's refusal.
Making a node sequential is always legal (a parallel node gives the same
result in any order, in particular in increasing index order).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from teir_dialect.attributes import PolicyAttr
from teir_dialect.dialect import ConfigOp
from teir_dialect.vocabulary import Policy
from teir_passes.schedule_edit import (
    TransformError,
    configs_with_axis,
    iterations_over,
    refresh_epilogues,
)


def set_policy(config: ConfigOp, axis_id: str, policy: Policy, pass_name: str) -> None:
    nodes = iterations_over(config, axis_id)
    if not nodes:
        raise TransformError(pass_name, f"no iteration node iterates axis '{axis_id}'")
    for node in nodes:
        node.properties["policy"] = PolicyAttr(policy)
    refresh_epilogues(config)  # a parallel loop takes no epilogue
    try:
        config.verify()  # the race rule decides
    except VerifyException as err:
        raise TransformError(
            pass_name, f"making the loops over '{axis_id}' {policy}: {err}"
        ) from None


@dataclass(frozen=True)
class ParallelizePass(ModulePass):
    """Runs the iterations over an axis in parallel, if the race rule allows it."""

    name = "teir-parallelize"

    axis: str | int

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.axis), self.name):
            set_policy(config, str(self.axis), Policy.PARALLEL, self.name)


@dataclass(frozen=True)
class SequentializePass(ModulePass):
    """Runs the iterations over an axis one after another, in index order."""

    name = "teir-sequentialize"

    axis: str | int

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for config in configs_with_axis(op, str(self.axis), self.name):
            set_policy(config, str(self.axis), Policy.SEQUENTIAL, self.name)
