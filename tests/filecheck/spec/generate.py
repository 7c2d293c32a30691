"""Regenerates the spec-example lit tests from examples/spec/*.json.

Each test holds the example's IR as teir-opt prints it, and checks that the
JSON imports to exactly that IR, that the IR round-trips in custom and generic
syntax and through JSON, and that its schedule prints as a tree listing.
Run after changing an example or the printer: `python generate.py`.
"""

import subprocess
from pathlib import Path

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[2] / "examples" / "spec"


def run(*args: str) -> str:
    return subprocess.run(["teir-opt", *args], check=True, capture_output=True, text=True).stdout


def generate(form: str, path: Path) -> None:
    ir = run(str(path))
    tree = run(str(path), "--emit=tree")
    rel = f"%examples/spec/{form}/{path.name}"
    lines = [
        f"// RUN: teir-opt {rel} | filecheck %s",
        "// RUN: %roundtrip",
        "// RUN: %roundtrip-generic",
        "// RUN: teir-opt %s --emit=json | teir-opt -f json | filecheck %s",
        "// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE",
        "",
        f"// {form} form example {path.stem}, as imported from {path.name}.",
        "",
    ]
    body = ir.splitlines()
    lines += body
    lines.append("")
    checks = [line for line in body if line.strip() and line.strip() != "builtin.module {"]
    first, *rest = checks
    lines.append(f"// CHECK-LABEL: {first.strip()}")
    lines += [f"// CHECK-NEXT:  {line.strip()}" for line in rest[:-1]]
    lines.append("")
    tree_lines = tree.splitlines()
    lines.append(f"// TREE:      {tree_lines[0]}")
    lines += [f"// TREE-NEXT: {line}" for line in tree_lines[1:]]
    (HERE / f"{form}_{path.stem}.mlir").write_text("\n".join(lines) + "\n")


for form in ("tree", "flat"):
    for example in sorted((EXAMPLES / form).glob("*.json")):
        generate(form, example)
