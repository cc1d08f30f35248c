"""The import graph of the platform and the backoffice, read with ast (nothing is imported): each layer imports
only the layers docs/architecture.md allows, nothing shipped imports the local stack, and no modules import
each other in a circle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Where each top-level package's source lives (as pyproject.toml and backoffice/pyproject.toml install them).
SOURCES = {
    "svc_shared": ROOT / "layers/shared/svc_shared",
    "functions": ROOT / "functions",
    "svc_backoffice": ROOT / "backoffice/shared/svc_backoffice",
    "backoffice": ROOT / "backoffice",
    "svc_local": ROOT / "local/svc_local",
}

# Which layer may import which (besides itself); the table in docs/architecture.md.
ALLOWED = {
    "svc_shared": set(),
    "functions": {"svc_shared", "svc_backoffice"},
    "svc_backoffice": {"svc_shared"},
    "backoffice": {"svc_backoffice", "svc_shared"},
    "svc_local": {"svc_shared", "functions", "svc_backoffice", "backoffice"},
}

# Circles known and owned elsewhere; each entry goes when its circle is broken (the test then says so).
KNOWN_CYCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, root in SOURCES.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if package == "backoffice" and parts[0] != "functions" and len(parts) > 1:
                continue  # backoffice/shared is svc_backoffice; migrations are not a package
            if "egg-info" in str(path) or "backoffice_template" in path.parts:
                continue  # build output: `make build` copies the backoffice into the layer (gitignored)
            name = ".".join((package, *parts))
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of the tree that `name` imports (at any depth of the file, lazy imports included)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: set(_imports(name, path, known)) for name, path in known.items()}


def _layer(module: str) -> str:
    return module.split(".")[0]


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_layer_imports_only_the_layers_it_may() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) != _layer(module) and _layer(target) not in ALLOWED[_layer(module)]
    )
    assert wrong == []


def test_nothing_shipped_imports_the_local_stack() -> None:
    into_local = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if _layer(module) != "svc_local"
        for target in targets
        if _layer(target) == "svc_local"
    )
    assert into_local == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    cycles = set(_cycles(_graph()))
    assert cycles - KNOWN_CYCLES == set(), "new circle"
    assert KNOWN_CYCLES - cycles == set(), "a known circle is gone: delete its KNOWN_CYCLES entry"


def test_the_graph_sees_imports_and_circles() -> None:
    graph = _graph()
    assert "svc_shared.storage.keys" in graph["svc_shared.domain.accounts"]
    assert "svc_shared.wiring.cli" in graph["svc_local.ops"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _documented(table: str, imports_column: int) -> dict[str, set[str]]:
    """A table of docs/architecture.md (between its `<!-- table:start -->` and `<!-- table:end -->` marks):
    the first column's name -> the names its `imports_column` lists."""
    text = (ROOT / "docs/architecture.md").read_text()
    rows = text.split(f"<!-- {table}:start -->")[1].split(f"<!-- {table}:end -->")[0]
    documented = {}
    for row in rows.strip().splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        documented[cells[0].strip("`")] = {c.strip(" `") for c in cells[imports_column].split(",")} - {
            "(nothing of ours)"
        }
    return documented


def test_the_architecture_document_shows_the_same_layers() -> None:
    assert _documented("layers", 3) == ALLOWED


# Inside svc_shared: the sub-package of each module by concern, and which sub-packages each may import (besides
# itself); the table in docs/architecture.md. Arrows point down this list only.
SUBPACKAGES = {
    "core": set(),
    "storage": {"core"},
    "providers": {"core"},
    "oauth": {"core", "storage"},
    "domain": {"core", "storage", "providers", "oauth"},
    "wiring": {"core", "storage", "providers", "oauth", "domain"},
    "edge": {"core", "storage", "domain", "wiring"},
    "mcp": {"core", "storage", "providers", "oauth", "domain", "wiring", "edge"},
    "workspace": {"core", "storage", "providers", "oauth", "domain", "wiring", "edge"},
    "routes": {"core", "storage", "providers", "oauth", "domain", "wiring", "edge", "workspace"},
}


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "svc_shared" and len(parts) > 1 else None


def test_every_module_of_the_shared_package_lives_in_a_sub_package() -> None:
    flat = sorted(
        name
        for name, path in _modules().items()
        if _layer(name) == "svc_shared" and name != "svc_shared" and _subpackage(name) not in SUBPACKAGES
    )
    assert flat == []


def test_each_sub_package_imports_only_those_below_it() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if (inside := _subpackage(module)) is not None
        for target in targets
        if (other := _subpackage(target)) is not None and other != inside and other not in SUBPACKAGES[inside]
    )
    assert wrong == []


def test_the_architecture_document_shows_the_same_sub_packages() -> None:
    assert _documented("subpackages", 2) == SUBPACKAGES
