"""The example records that ship with TEIR, by name.

In the repository they are examples/ (every worked example of both spec files
under spec/tree and spec/flat, and the main job's brgemm_large.json);
pyproject.toml installs that folder as the data package `teir_examples`, so
`teir-run --example NAME` works from any installed copy, without the
repository or the spec.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from teir_dialect.records import TeirError, is_flat_form, load_json

PACKAGE = "teir_examples"


@dataclass(frozen=True)
class Example:
    name: str
    """The file name without .json; where two files share it, their path."""
    path: str
    """Relative to the examples folder, e.g. spec/tree/10_7_7_parallel_brgemm.json."""
    resource: Traversable

    @property
    def form(self) -> str:
        """tree or flat: the record's own fields say, as they do for the loader."""
        return "flat" if is_flat_form(load_json(self.resource.read_text())) else "tree"


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += _walk(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(".json"):
            found.append((f"{prefix}{entry.name}", entry))
    return found


def examples() -> list[Example]:
    """Every shipped record, sorted by path."""
    try:
        root = resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise TeirError(
            f"the examples are not installed (no package {PACKAGE}); reinstall teir"
        ) from None
    files = sorted(_walk(root, ""), key=lambda item: item[0])
    stems = Counter(path.rsplit("/", 1)[-1].removesuffix(".json") for path, _ in files)
    result = []
    for path, resource in files:
        stem = path.rsplit("/", 1)[-1].removesuffix(".json")
        name = stem if stems[stem] == 1 else path.removesuffix(".json")
        result.append(Example(name, path, resource))
    return result


def find_example(name: str) -> Example:
    """The example called `name` (or with that relative path, .json optional)."""
    shipped = examples()
    wanted = name.removesuffix(".json")
    for example in shipped:
        if wanted in (example.name, example.path.removesuffix(".json")):
            return example
    close = [e.name for e in shipped if wanted.lower() in e.name.lower()]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise TeirError(
        f"no example named '{name}'{hint} (teir-run --list-examples lists the "
        f"{len(shipped)} examples)"
    )
