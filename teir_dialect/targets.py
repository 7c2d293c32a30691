"""Output targets for `xdsl-opt -t ...` and `teir-opt --emit ...`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from teir_dialect.records import config_to_json, dumps, find_configs
from teir_dialect.tree_view import schedule_tree


@dataclass(frozen=True)
class JsonTarget(Target):
    """Tree-form records: one object, or a list when the module holds several."""

    name: ClassVar[str] = "teir-json"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        records = [config_to_json(config) for config in find_configs(module)]
        output.write(dumps(records[0] if len(records) == 1 else records))
        output.write("\n")


@dataclass(frozen=True)
class TreeTarget(Target):
    """Each schedule as a tree listing, headed by its function when there are several."""

    name: ClassVar[str] = "teir-tree"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        configs = find_configs(module)
        for config in configs:
            if len(configs) > 1:
                parent = config.parent_op()
                label = parent.sym_name.data if isinstance(parent, func.FuncOp) else "?"
                output.write(f"// @{label}\n")
            output.write(schedule_tree(config, show_primitives=True))
