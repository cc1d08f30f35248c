"""The import graph of the platform and the backoffice, read with ast (nothing is imported; a load by name
through importlib counts as an import): each layer imports only the layers docs/architecture.md allows, each
sub-package of the shared package and of the backoffice's only those above it, nothing shipped imports the
local stack, and no modules import each other in a circle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

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
    "svc_shared": {"svc_backoffice"},
    "functions": {"svc_shared", "svc_backoffice"},
    "svc_backoffice": set(),
    "backoffice": {"svc_backoffice"},
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
        elif isinstance(node, ast.Call) and (loaded := _loaded_by_name(node)) is not None:
            targets = [loaded]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _loaded_by_name(call: ast.Call) -> str | None:
    """The module `importlib.import_module(...)` or `__import__(...)` loads: its name when written whole, the
    written start of it when formatted (`f"svc_backoffice.routers.{name}"` loads a module of that package)."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if called not in ("import_module", "__import__") or not call.args:
        return None
    name = call.args[0]
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return name.value
    if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
        return str(name.values[0].value).rstrip(".")
    return None


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


# The backoffice ships alone into merchants' repositories, so it imports nothing of the platform's; the
# platform may use the pieces of the backoffice's lowest floor (`core`: the request-log formatter, the cookie
# reader, the hosted Shop), which import nothing of ours, so the product has one of each.


def test_the_platform_uses_only_the_backoffices_lowest_floor() -> None:
    graph = _graph()
    used = {
        f"{module} imports {target}"
        for module, targets in graph.items()
        if _layer(module) == "svc_shared"
        for target in targets
        if _layer(target) == "svc_backoffice"
    }
    assert "svc_shared.core.logs imports svc_backoffice.core.logformat" in used
    wrong = sorted(edge for edge in used if [*edge.split(" imports ")[1].split("."), ""][1] != "core")
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


def test_a_load_by_name_counts_as_an_import(tmp_path: Path) -> None:
    source = tmp_path / "loader.py"
    source.write_text(
        "import importlib\n"
        "def load(group):\n"
        "    importlib.import_module(f'svc_backoffice.routers.{group}')\n"
        "    return importlib.import_module('svc_backoffice.domain.catalog')\n"
    )
    found = set(_imports("svc_backoffice.edge.loader", source, _modules()))
    assert found == {"svc_backoffice.routers", "svc_backoffice.domain.catalog"}


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

# Inside svc_backoffice, the same (its table in docs/architecture.md). `admin` (the staff's HTML screens) stands
# on the floor of `routers`; `storefront` (the shop's public API) serves through the edge and never reads a
# staff session (`access`); `hosting` serves them all.
_BELOW_ROUTERS = {"core", "data", "access", "domain", "edge"}
BACKOFFICE_SUBPACKAGES = {
    "core": set(),
    "data": {"core"},
    "access": {"core", "data"},
    "domain": {"core", "data", "access"},
    "edge": {"core", "data", "access", "domain"},
    "routers": _BELOW_ROUTERS,
    "admin": _BELOW_ROUTERS,
    "storefront": {"core", "data", "domain", "edge"},
    "hosting": _BELOW_ROUTERS | {"routers", "admin", "storefront"},
}

RULES = {"svc_shared": SUBPACKAGES, "svc_backoffice": BACKOFFICE_SUBPACKAGES}


def _subpackage(module: str) -> tuple[str, str] | None:
    """(package, sub-package) of a module of a package kept in sub-packages."""
    parts = module.split(".")
    return (parts[0], parts[1]) if parts[0] in RULES and len(parts) > 1 else None


@pytest.mark.parametrize("package", sorted(RULES))
def test_every_module_lives_in_a_sub_package(package: str) -> None:
    names = [name for name in _modules() if _layer(name) == package and name != package]
    assert len(names) > 20
    flat = sorted(name for name in names if name.split(".")[1] not in RULES[package])
    assert flat == []


@pytest.mark.parametrize("package", sorted(RULES))
def test_each_sub_package_imports_only_those_below_it(package: str) -> None:
    rules = RULES[package]
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if (inside := _subpackage(module)) is not None and inside[0] == package
        for target in targets
        if (other := _subpackage(target)) is not None
        and other[0] == package
        and other != inside
        and other[1] not in rules[inside[1]]
    )
    assert wrong == []


def test_the_sub_package_rules_point_down_only() -> None:
    """Each table is an order: a sub-package may import only those listed before it."""
    for rules in RULES.values():
        order = list(rules)
        assert all(allowed <= set(order[: order.index(name)]) for name, allowed in rules.items())


def test_the_architecture_document_shows_the_same_sub_packages() -> None:
    assert _documented("subpackages", 2) == SUBPACKAGES
    assert _documented("backoffice", 2) == BACKOFFICE_SUBPACKAGES
