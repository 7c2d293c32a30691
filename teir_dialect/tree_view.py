"""Schedule listings in the style of the specification's figures.

    p  (parallel)
    └── r  (parallel)
        ├── zero  [first(k)]
        └── brgemm
"""

from __future__ import annotations

from teir_dialect.dialect import ConfigOp, InvokeOp, IterOp, ScheduleNode


def _label(node: ScheduleNode, show_primitives: bool) -> str:
    label = node.node_id
    if isinstance(node, IterOp):
        notes = [f"axis {node.axis_id}"] if node.axis_id != node.node_id else []
        if node.parallel:
            notes.append("parallel")
        if notes:
            label += f"  ({', '.join(notes)})"
    elif show_primitives and isinstance(node, InvokeOp):
        label += f" -> {node.primitive_id}"
    if node.guard is not None:
        label += f"  [{node.guard}]"
    return label


def schedule_tree(config: ConfigOp, *, show_primitives: bool = False) -> str:
    """The schedule forest, one line per node, roots in order."""
    lines: list[str] = []

    def visit(node: ScheduleNode, prefix: str) -> None:
        if isinstance(node, IterOp):
            children = node.children
            for index, child in enumerate(children):
                last = index == len(children) - 1
                lines.append(prefix + ("└── " if last else "├── ") + _label(child, show_primitives))
                visit(child, prefix + ("    " if last else "│   "))

    for root in config.schedule.roots:
        lines.append(_label(root, show_primitives))
        visit(root, "")
    return "\n".join(lines) + "\n"
