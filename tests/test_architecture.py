"""The project's layering, checked on the import graph and by importing.

Layers, left to right: teir_dialect (vocabulary, dialect, analysis, gemm rule,
records, interpreter) <- teir_passes <- teir_lowering <- teir_tools. A module
imports only from its own layer or from layers to its left, and no modules
import each other in a cycle, however indirect.

grimp reads every import statement: at module level, inside functions (a
deferred import still couples the modules) and under `if TYPE_CHECKING:`
(grimp's default; the types couple the modules' interfaces). Each violation is
printed with the import chain, file line by file line.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import subprocess
import sys
from collections.abc import Iterable

import grimp
import pytest

LAYERS = ("teir_dialect", "teir_passes", "teir_lowering", "teir_tools")
"""Left to right: each may import the ones before it."""


@functools.cache
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*LAYERS, cache_dir=None)


@functools.cache
def runtime_graph() -> grimp.ImportGraph:
    """The same without the imports under `if TYPE_CHECKING:`."""
    return grimp.build_graph(*LAYERS, exclude_type_checking_imports=True, cache_dir=None)


def layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


@functools.cache
def _source_lines(module: str) -> list[str]:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return []
    with open(spec.origin, encoding="utf-8") as source:
        return source.read().splitlines()


def describe_import(importer: str, imported: str) -> str:
    """`importer:LINE  statement  (where)` for each line importing `imported`."""
    lines = []
    at_runtime = {
        detail["line_number"]
        for detail in runtime_graph().get_import_details(
            importer=importer, imported=imported
        )
    }
    for detail in graph().get_import_details(importer=importer, imported=imported):
        number = detail["line_number"]
        source = _source_lines(importer)
        text = source[number - 1] if 0 < number <= len(source) else ""
        if number not in at_runtime:
            where = "under TYPE_CHECKING"
        elif text[: len(text) - len(text.lstrip())]:
            where = "inside a function or block"
        else:
            where = "at module level"
        lines.append(f"{importer}:{number}  {detail['line_contents']}  ({where})")
    return "\n".join(lines) or f"{importer} imports {imported}"


def describe_chain(chain: Iterable[str]) -> str:
    modules = list(chain)
    steps = [
        f"  {importer} -> {imported}\n"
        + "\n".join(
            f"      {line}" for line in describe_import(importer, imported).splitlines()
        )
        for importer, imported in itertools.pairwise(modules)
    ]
    return "\n".join(steps)


def strongly_connected(import_graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's components of the import graph with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(root: str) -> None:
        # Iterative: a deep chain of imports must not hit the recursion limit.
        work = [
            (root, iter(sorted(import_graph.find_modules_directly_imported_by(root))))
        ]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    imported = import_graph.find_modules_directly_imported_by(successor)
                    work.append((successor, iter(sorted(imported))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for module in sorted(import_graph.modules):
        if module not in index:
            visit(module)
    return sorted(components)


def shortest_cycle(import_graph: grimp.ImportGraph, component: list[str]) -> list[str]:
    """A shortest import cycle through the component's first module."""
    start = component[0]
    best: tuple[str, ...] | None = None
    for imported in sorted(import_graph.find_modules_directly_imported_by(start)):
        if imported not in component:
            continue
        back = import_graph.find_shortest_chain(importer=imported, imported=start)
        if back is not None and (best is None or len(back) < len(best)):
            best = back
    assert best is not None
    return [start, *best]


def test_the_cycle_finder_on_a_small_graph() -> None:
    """The detector itself, on cycles of 3 and 2 modules, a tail and a loner."""
    small = grimp.ImportGraph()
    for importer, imported in [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("a", "x"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
        ("e", "y"),
    ]:
        small.add_import(importer=importer, imported=imported)
    small.add_module("z")
    assert strongly_connected(small) == [["a", "b", "c"], ["d", "e"]]
    assert shortest_cycle(small, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert shortest_cycle(small, ["d", "e"]) == ["d", "e", "d"]


def test_the_graph_holds_every_layer() -> None:
    """Guards the checks below against an empty graph (a package not found)."""
    packages = {module.split(".")[0] for module in graph().modules}
    assert packages == set(LAYERS)
    assert len(graph().modules) > 30


def test_no_import_cycles() -> None:
    components = strongly_connected(graph())
    report = []
    for component in components:
        internal = [
            (importer, imported)
            for importer in component
            for imported in sorted(graph().find_modules_directly_imported_by(importer))
            if imported in component
        ]
        report.append(
            f"import cycle among {', '.join(component)}\n"
            f"  a shortest cycle:\n{describe_chain(shortest_cycle(graph(), component))}\n"
            "  every import inside it:\n"
            + "\n".join(
                f"    {line}"
                for edge in internal
                for line in describe_import(*edge).splitlines()
            )
        )
    if report:
        pytest.fail(
            f"{len(report)} import cycle(s):\n\n" + "\n\n".join(report), pytrace=False
        )


def test_no_import_from_a_layer_to_the_right() -> None:
    report = []
    for importer in sorted(graph().modules):
        for imported in sorted(graph().find_modules_directly_imported_by(importer)):
            if layer(imported) > layer(importer):
                report.append(
                    f"layering: {importer} ({LAYERS[layer(importer)]}) imports "
                    f"{imported} ({LAYERS[layer(imported)]}), a layer to its right:\n"
                    f"  {describe_import(importer, imported)}"
                )
    if report:
        pytest.fail(
            f"{len(report)} import(s) against the layering "
            f"({' <- '.join(LAYERS)}):\n" + "\n".join(report),
            pytrace=False,
        )


def test_the_gemm_planner_is_a_pure_cost_model() -> None:
    """The GEMM planner takes data (a tile, a Host) and returns a plan: it imports
    neither its emitter, the emitter toolkit nor xDSL (it builds no IR); the
    emitter reads the host only through the plan."""
    planner, emitter = "teir_lowering.codegen.gemm_plan", "teir_lowering.codegen.gemm_emitter"
    with_xdsl = grimp.build_graph(*LAYERS, include_external_packages=True,
                                  exclude_type_checking_imports=True, cache_dir=None)
    imported = with_xdsl.find_modules_directly_imported_by(planner)
    assert "xdsl" not in imported
    assert {module for module in imported if module.split(".")[0] in LAYERS} <= {
        "teir_dialect.host", "teir_dialect.vocabulary"  # the machine model; plain enums
    }
    assert graph().find_modules_directly_imported_by(planner) <= {
        "teir_dialect.host", "teir_dialect.vocabulary",
        "teir_dialect.dialect",  # KernelAttr, a type only
    }
    emitter_imports = graph().find_modules_directly_imported_by(emitter)
    assert planner in emitter_imports
    assert "teir_dialect.host" not in emitter_imports


def test_the_dialect_layer_holds_no_xdsl_universe() -> None:
    """The registration names every pass: it belongs to the top layer."""
    assert "teir_dialect.universe" not in graph().modules, (
        "teir_dialect.universe is back: the xDSL registration lives in "
        "teir_tools.universe"
    )
    from importlib.metadata import entry_points

    (teir,) = [e for e in entry_points(group="xdsl.universe") if e.name == "teir"]
    assert teir.value == "teir_tools.universe:TEIR_UNIVERSE"


def test_xdsl_universe_registers_every_teir_pass_and_target() -> None:
    from xdsl.universe import Universe

    from teir_lowering import LOWERING_PASSES
    from teir_passes import PASSES

    multiverse = Universe.get_multiverse()
    assert "teir" in multiverse.all_dialects
    for name in [*PASSES, *LOWERING_PASSES]:
        assert multiverse.all_passes[name]().name == name
    assert {"teir-json", "teir-tree"} <= set(multiverse.all_targets)


# --------------------------------------------------------------------------
# Importing, each in a fresh interpreter

_IMPORT_ALONE = """
import importlib, sys
importlib.import_module({module!r})
right = {right!r}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in right)
if loaded:
    sys.exit("importing {module} loaded modules of layers to its right: "
             + ", ".join(loaded))
"""


def _import_alone(module: str) -> subprocess.CompletedProcess[str]:
    right = LAYERS[layer(module) + 1 :]
    return subprocess.run(
        [sys.executable, "-c", _IMPORT_ALONE.format(module=module, right=right)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("package", LAYERS)
def test_each_package_imports_alone(package: str) -> None:
    """A fresh interpreter imports the package, and nothing of a layer to its right."""
    run = _import_alone(package)
    assert run.returncode == 0, run.stderr


def _all_modules() -> list[str]:
    return sorted(graph().modules)


@pytest.mark.slow  # a fresh interpreter per module: ~1 s each; the packages run by default
@pytest.mark.parametrize("module", _all_modules())
def test_each_module_imports_alone(module: str) -> None:
    """Whatever module a program imports first, it imports (no half-initialized
    module from an import cycle), and it loads nothing of a layer to its right."""
    run = _import_alone(module)
    assert run.returncode == 0, run.stderr


def test_no_submodule_shadows_a_function_of_its_package() -> None:
    """`teir_lowering.einsum(...)` and `teir_passes.apply_schedule(...)` stay functions
    after their implementations are imported: a submodule of the same name would
    replace the package attribute on first import (Python binds submodules there)."""
    code = (
        "import importlib, inspect, pkgutil, sys\n"
        f"for name in {LAYERS!r}:\n"
        "    package = importlib.import_module(name)\n"
        "    before = {k: v for k, v in vars(package).items() if inspect.isfunction(v)}\n"
        "    for info in pkgutil.iter_modules(package.__path__):\n"
        "        importlib.import_module(f'{name}.{info.name}')\n"
        "    for key, function in before.items():\n"
        "        if getattr(package, key) is not function:\n"
        "            sys.exit(f'{name}.{key}: a submodule replaced the function')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr


LOWERING_LAYERS = (
    ("teir_lowering.codegen", "teir_lowering.llvm"),
    ("teir_lowering.runtime",),
    ("teir_lowering.measure",),
    ("teir_lowering.frontends",),
)
"""Inside teir_lowering, bottom to top: the two code generators (scf level, llvm
level; neither imports the other), the runtime that runs their output,
measuring on the host, the frontends users call. Modules at the package's root
(the `teir_lane` dialect, the stage log) are shared by all of them."""


def test_lowering_subpackages_are_layered() -> None:
    """A subpackage imports only from its own level or those below it; the two code
    generators do not import each other."""
    g = graph()
    rank = {package: level for level, packages in enumerate(LOWERING_LAYERS)
            for package in packages}
    wrong = [
        f"{importer} imports {imported}"
        for importer in rank for imported in rank
        if importer != imported and rank[imported] >= rank[importer]
        and g.direct_import_exists(importer=importer, imported=imported, as_packages=True)
    ]
    assert not wrong, "\n".join(wrong)
    # A module at the root that the subpackages share imports none of them (a
    # public name at the root, like teir_lowering.dask, may re-export one).
    root = {m for m in g.find_children("teir_lowering") if m not in rank}
    shared = {m for m in root if any(
        g.direct_import_exists(importer=package, imported=m, as_packages=True)
        for package in rank)}
    assert {"teir_lowering.lane", "teir_lowering.stages"} <= shared
    for module in shared:
        for package in rank:
            assert not g.direct_import_exists(importer=module, imported=package,
                                              as_packages=True), (module, package)
