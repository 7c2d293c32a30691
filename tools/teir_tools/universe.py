"""Registers the `teir` and `teir_lane` dialects, the passes and targets with xDSL tools.

`pyproject.toml` names `TEIR_UNIVERSE` under the `xdsl.universe` entry point,
so plain `xdsl-opt` parses teir IR and the lowering's lane ops, runs every
`teir-` pass and prints the `teir-json`/`teir-tree` targets, `mlir-upstream`
(the lowered IR as upstream mlir-opt reads it) and `teir-llvm-ir` (an scf-level
module as the LLVM IR compile_kernel compiles). It lives in teir_tools, the top layer,
because it names the passes of teir_passes and teir_lowering; the dialect
layer below must not import them.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

from teir_lowering import LOWERING_PASSES
from teir_passes import PASSES


def _dialect() -> Dialect:
    from teir_dialect.dialect import TEIR

    return TEIR


def _lane_dialect() -> Dialect:
    from teir_lowering.lane import TEIR_LANE

    return TEIR_LANE


def _json_target() -> type[Target]:
    from teir_dialect.targets import JsonTarget

    return JsonTarget


def _script_target() -> type[Target]:
    from teir_passes.script import ScriptTarget

    return ScriptTarget


def _upstream_target() -> type[Target]:
    from teir_lowering.llvm.upstream import UpstreamTarget

    return UpstreamTarget


def _llvm_ir_target() -> type[Target]:
    from teir_lowering.llvm.translate import LLVMIRTarget

    return LLVMIRTarget


def _tree_target() -> type[Target]:
    from teir_dialect.targets import TreeTarget

    return TreeTarget


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every `teir-` pass by name; each factory imports its pass on first use."""
    return {**PASSES, **LOWERING_PASSES}


TEIR_UNIVERSE = Universe(
    all_dialects={"teir": _dialect, "teir_lane": _lane_dialect},
    all_passes=all_passes(),
    all_targets={
        "teir-json": _json_target,
        "teir-tree": _tree_target,
        "teir-script": _script_target,
        "mlir-upstream": _upstream_target,
        "teir-llvm-ir": _llvm_ir_target,
    },
)
