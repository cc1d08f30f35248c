"""No message is spelled outside the catalogue (svc_shared.core.catalogue): in the sub-packages `CHECKED` names,
the message a domain error carries, a tool error's text, a JSON-RPC error's message, an OAuth error's
description, an error page's words, the `message` of an error body and the notice or error a route hands a
page are each `say("concern.name", ...)` or a value passed along, never a string literal, an f-string, a
formatted literal, or a name bound to one (a module constant, anywhere in the package, or a local). Read with
ast: nothing is run."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "layers/shared/svc_shared"

# The sub-packages whose messages come from the catalogue: every one of the shared package.
CHECKED = ("core", "storage", "providers", "oauth", "domain", "wiring", "edge", "mcp", "workspace", "routes")
ERROR_BASES = frozenset({"DomainError"})
# OAuth errors take the wire code first, then the message (svc_shared.oauth.errors.OAuthError).
CODE_FIRST = frozenset({"OAuthError"})
# Other callables that take a message, by name -> the index of their message argument.
MESSAGE_HELPERS = {
    "tool_error": 0,  # svc_shared.mcp.failures
    "error": 2,  # svc_shared.mcp.messages: a JSON-RPC error reply
    "refusal": 2,  # svc_shared.mcp.admission
    "DocumentError": 1,  # svc_shared.oauth.documents: why a client metadata document cannot be used
    "refuse": 0,
    "BadForm": 0,  # svc_shared.workspace.site
    "error_page": 4,  # svc_shared.workspace.site: (request, status, user, title, message)
    "_refused": 3,  # svc_shared.workspace.routes.account: (user, status, form, message)
}
# Keyword arguments that carry a message the client reads (a page's notice or error, an error's message).
MESSAGE_KEYWORDS = frozenset({"message", "notice", "error", "amount_error", "builder_error"})
# Keys of a body or a page's context whose value is a message the client reads.
MESSAGE_KEYS = frozenset({"message", "error_description", "message_error"})


def _sources(where: Path) -> list[Path]:
    return [where] if where.is_file() else sorted(where.rglob("*.py"))


def _all_sources() -> list[Path]:
    return [p for p in SHARED.rglob("*.py") if "backoffice_template" not in p.parts]


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _error_classes() -> tuple[set[str], set[str]]:
    """(every DomainError subclass by name, those that take the code before the message), across the package."""
    bases_of: dict[str, set[str]] = {}
    for path in _all_sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases_of.setdefault(node.name, set()).update(filter(None, map(_name, node.bases)))

    def closure(seeds: frozenset[str]) -> set[str]:
        found = set(seeds)
        while grown := {c for c, bases in bases_of.items() if c not in found and bases & found}:
            found |= grown
        return found

    return closure(ERROR_BASES), closure(CODE_FIRST)


def _bound_to_text(body: list[ast.stmt] | list[ast.AST]) -> set[str]:
    """Names these statements (or nodes) bind to a spelled text."""
    names: set[str] = set()
    for node in body:
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and node.value is not None
            and _spelled(node.value, set())
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _package_constants() -> set[str]:
    """Module-level names bound to a spelled text, in any module of the package (a constant imported or read
    as `module.NAME` elsewhere)."""
    return {name for path in _all_sources() for name in _bound_to_text(ast.parse(path.read_text()).body)}


def _worded(text: str) -> bool:
    """Words a person reads: letters, and not a code (`invalid_message`, `UPGRADE_REQUIRED`)."""
    return any(ch.isalpha() for ch in text) and not re.fullmatch(
        r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+", text
    )


def _spelled(node: ast.expr, names: set[str]) -> bool:
    """A text written here: a literal, an f-string, a concatenation or `.format` of one, or a name bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and _worded(node.value)
    if isinstance(node, ast.JoinedStr):  # its own words, not only punctuation around a value
        return any(isinstance(v, ast.Constant) and _worded(str(v.value)) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _spelled(node.left, names) or _spelled(node.right, names)
    if isinstance(node, ast.IfExp):
        return _spelled(node.body, names) or _spelled(node.orelse, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _spelled(node.func.value, names)
    if isinstance(node, ast.Name | ast.Attribute):
        return _name(node) in names
    return False


def _messages(node: ast.AST, errors: set[str], code_first: set[str]) -> list[ast.expr]:
    """The expressions `node` hands a client as a message."""
    if isinstance(node, ast.Call):
        name = _name(node.func) or ""
        found = [kw.value for kw in node.keywords if kw.arg in MESSAGE_KEYWORDS]
        index = 1 if name in code_first else 0 if name in errors else MESSAGE_HELPERS.get(name)
        if index is not None and len(node.args) > index:
            found.append(node.args[index])
        return found
    if isinstance(node, ast.Dict):
        return [
            v
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and k.value in MESSAGE_KEYS
        ]
    if isinstance(node, ast.Assign):
        return [
            node.value
            for target in node.targets
            if isinstance(target, ast.Subscript)
            and isinstance(target.slice, ast.Constant)
            and target.slice.value in MESSAGE_KEYS
        ]
    return []


def _hits(
    tree: ast.Module, errors: set[str], code_first: set[str], constants: set[str]
) -> Iterator[ast.expr]:
    """Every message spelled in `tree`: names bound to a text count at module level and in their function."""
    module_names = constants | _bound_to_text(tree.body)
    scopes: list[tuple[ast.AST, set[str]]] = [(tree, module_names)]
    while scopes:
        scope, names = scopes.pop()
        for node in ast.iter_child_nodes(scope):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                scopes.append((node, names | _bound_to_text(list(ast.walk(node)))))
                continue
            yield from (v for v in _messages(node, errors, code_first) if _spelled(v, names))
            scopes.append((node, names))


def _spelled_messages(path: Path, errors: set[str], code_first: set[str], constants: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(ROOT)}:{v.lineno}: {ast.unparse(v)[:80]}"
        for v in _hits(tree, errors, code_first, constants)
    ]


@pytest.mark.parametrize("where", CHECKED)
def test_no_message_is_spelled_outside_the_catalogue(where: str) -> None:
    errors, code_first = _error_classes()
    constants = _package_constants()
    found = [
        hit
        for path in _sources(SHARED / where)
        for hit in _spelled_messages(path, errors, code_first, constants)
    ]
    assert found == []


def test_the_check_sees_a_spelled_message() -> None:
    errors, code_first = _error_classes()
    assert {"InvalidInput", "RateLimited", "OAuthError", "AuthorizeRequestError", "UpstreamError"} <= errors
    source = (
        'X = "gone"\n'
        'raise errors.NotFound(f"No project {p}")\n'
        "raise OAuthError('invalid_grant', X)\n"
        'tool_error("Unknown tool: " + name)\n'
        'error(None, -32600, "Invalid Request.")\n'
        'body = {"error": "not_found", "message": "Nope"}\n'
        "def page():\n"
        '    words = "Saved." if ok else say("workspace.x")\n'
        "    return render(notice=words)\n"
        'raise errors.NotFound(say("projects.not_found", project=p))\n'
        "tool_error(exc.message)\n"
        'context["error"] = exc.message\n'
        'panel["message_error"] = "Not found."\n'
        'raise errors.Forbidden(module.ELSEWHERE, code="owner_only")\n'
    )
    hits = _hits(ast.parse(source), errors, code_first, {"ELSEWHERE"})
    assert sorted(v.lineno for v in hits) == [2, 3, 4, 5, 6, 9, 13, 14]
