"""The import graph of the platform, the backoffice and the local stack, read with ast (nothing is imported; a load
by name through importlib counts as an import, and a load whose name the graph cannot read is declared in
DYNAMIC_LOADS with what it loads): each layer imports only the layers docs/architecture.md allows, each
sub-package of the shared package, of the backoffice's and of the local stack (and of its sandbox providers)
only those above it, nothing shipped imports the local stack, and no modules import each other in a circle."""

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


# Loads through importlib whose module the graph cannot read from the call (a name made at run time, a file
# path): the module that loads -> (the modules or layers it loads, why).
DYNAMIC_LOADS: dict[str, tuple[set[str], str]] = {
    "svc_local.runtime": (
        {"functions"},
        "each function's handler module, by the name template.yaml gives it (functions.<name>.app), and again "
        "by its file for each further instance of the function",
    ),
    "svc_shared.domain.publish_template": (
        set(),
        "the migration runner of the backoffice template a shop is published from (a data tree shipped in the "
        "layer by `make build`), by its file path: no module of the graph",
    ),
}


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of the tree that `name` imports (at any depth of the file, lazy imports and loads through
    importlib included); "?" for a load it cannot read that DYNAMIC_LOADS does not declare."""
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
            if loaded:
                targets = [loaded]
            elif name in DYNAMIC_LOADS:
                targets = sorted(DYNAMIC_LOADS[name][0])
            else:
                yield "?"  # a load the graph cannot read, declared nowhere
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _loaded_by_name(call: ast.Call) -> str | None:
    """The module `importlib.import_module(...)` or `__import__(...)` loads: its name when written whole, the
    written start of it when formatted (`f"svc_backoffice.routers.{name}"` loads a module of that package); ""
    when the call does not say (a name made at run time, or a load by file path: `spec_from_file_location`);
    None when the call loads nothing."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if called not in ("import_module", "__import__", "spec_from_file_location"):
        return None
    name = call.args[0] if call.args else None
    if called == "spec_from_file_location" or name is None:
        return ""
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return name.value
    if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
        return str(name.values[0].value).rstrip(".")
    return ""


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
    assert "svc_shared.core.logs imports svc_backoffice.core.logs" in used
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


def test_every_load_through_importlib_is_read_or_declared(tmp_path: Path) -> None:
    unread = sorted(module for module, targets in _graph().items() if "?" in targets)
    assert unread == []
    assert {module for module in DYNAMIC_LOADS if module not in _modules()} == set(), (
        "a declared load is gone"
    )
    assert "functions" in _graph()["svc_local.runtime"]  # the runtime's loads of the handlers, as declared
    source = tmp_path / "loader.py"
    source.write_text("import importlib\ndef load(name, path):\n    return importlib.import_module(name)\n")
    assert set(_imports("svc_local.loader", source, _modules())) == {"?"}


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

# Inside svc_local: each part of the local stack (a module or a package) and the parts it may import (besides
# itself); the table in docs/architecture.md. The stack assembles everything, nothing imports the stack.
LOCAL_PARTS = {
    "state": set(),
    "serving": set(),
    "postgres": set(),
    "botodata": set(),
    "template": set(),
    "bundle": {"state"},
    "kmskeys": {"state"},
    "runtime": {"template"},
    "ops": {"template"},
    "iam": {"state", "serving", "template", "runtime"},
    "gateway": {"serving", "template", "runtime"},
    "eventsource": {"template", "runtime"},
    "aws": {"state", "serving", "template", "runtime", "iam", "kmskeys"},
    "rehearsal": {"state", "template"},
    "sandbox": {"serving"},
    "providers": {"state", "postgres", "sandbox"},
    "stack": {
        "state",
        "serving",
        "postgres",
        "template",
        "runtime",
        "iam",
        "gateway",
        "eventsource",
        "aws",
        "rehearsal",
        "sandbox",
        "providers",
    },
    "__main__": {"stack"},
}

# Inside svc_local.providers: each provider of the sandbox (a package) and what it may import of the others;
# providers stand on their common helpers, the GitHub sandbox's repositories are what Netlify and the builder
# deploy. The package itself (svc_local.providers) assembles them; none imports it (a circle if one did).
PROVIDER_PARTS = {
    "common": set(),
    "gitstore": set(),
    "github": {"common", "gitstore"},
    "supabase": {"common"},
    "gsc": {"common"},
    "stripe": {"common"},
    "netlify": {"common", "gitstore", "github"},
    "builder": {"common", "gitstore", "github"},
}

# Each package kept in sub-packages: its rules and the mark of its table in docs/architecture.md.
RULES = {
    "svc_shared": SUBPACKAGES,
    "svc_backoffice": BACKOFFICE_SUBPACKAGES,
    "svc_local": LOCAL_PARTS,
    "svc_local.providers": PROVIDER_PARTS,
}
TABLES = {
    "svc_shared": "subpackages",
    "svc_backoffice": "backoffice",
    "svc_local": "local-parts",
    "svc_local.providers": "provider-parts",
}


def _subpackage(module: str, package: str) -> str | None:
    """The sub-package of `package` that `module` lives in (None: the module is not inside one)."""
    prefix = f"{package}."
    return module.removeprefix(prefix).split(".")[0] if module.startswith(prefix) else None


@pytest.mark.parametrize("package", sorted(RULES))
def test_every_module_lives_in_a_sub_package(package: str) -> None:
    names = [name for name in _modules() if _subpackage(name, package) is not None]
    assert len(names) > 10
    flat = sorted(name for name in names if _subpackage(name, package) not in RULES[package])
    assert flat == []


@pytest.mark.parametrize("package", sorted(RULES))
def test_each_sub_package_imports_only_those_below_it(package: str) -> None:
    rules = RULES[package]
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if (inside := _subpackage(module, package)) is not None
        for target in targets
        if (other := _subpackage(target, package)) is not None
        and other != inside
        and other not in rules[inside]
    )
    assert wrong == []


def test_the_sub_package_rules_point_down_only() -> None:
    """Each table is an order: a sub-package may import only those listed before it."""
    for rules in RULES.values():
        order = list(rules)
        assert all(allowed <= set(order[: order.index(name)]) for name, allowed in rules.items())


@pytest.mark.parametrize("package", sorted(RULES))
def test_the_architecture_document_shows_the_same_sub_packages(package: str) -> None:
    assert _documented(TABLES[package], 2) == RULES[package]
