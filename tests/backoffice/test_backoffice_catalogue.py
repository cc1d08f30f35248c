"""The backoffice's message catalogue (svc_backoffice.core.catalogue, texts/en.json): every key the code names is in
it, every key in it is named, no message is spelled in the code (errors, error bodies, validators), and the
catalogue ships wherever the backoffice goes. Read with ast: nothing is run, no database is needed."""

from __future__ import annotations

import ast
import fnmatch
import re
import string
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_backoffice.core.catalogue import Group, say, texts
from svc_shared.domain.publish_template import template_files

ROOT = Path(__file__).resolve().parents[2]
BACKOFFICE = ROOT / "backoffice"
PACKAGE = BACKOFFICE / "shared" / "svc_backoffice"
CATALOGUE = "shared/svc_backoffice/core/texts/en.json"
KEY = re.compile(r"[a-z_]+(\.[a-z0-9_]+)+")


def _trees() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(ROOT), ast.parse(path.read_text(), str(path))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _group_prefixes() -> dict[str, str]:
    """`Group("prefix")` in the code, with where."""
    return {
        node.args[0].value: f"{path}:{node.lineno}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and _name(node.func) == "Group"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def _named_keys() -> dict[str, str]:
    """Every string in the code shaped like a key of one of the catalogue's groups (`request.not_found`, as
    `say` is given it or a helper is passed it to say later), with where."""
    groups = {key.split(".", 1)[0] for key in texts()}
    return {
        node.value: f"{path}:{node.lineno}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and KEY.fullmatch(node.value)
        and node.value.split(".", 1)[0] in groups
    }


def test_every_key_the_code_names_is_in_the_catalogue() -> None:
    prefixes = _group_prefixes()
    assert {
        key: where for key, where in _named_keys().items() if key not in texts() and key not in prefixes
    } == {}
    assert {prefix: where for prefix, where in prefixes.items() if not Group(prefix)} == {}


def test_every_key_in_the_catalogue_is_named_by_the_code() -> None:
    named = set(_named_keys())
    grouped = {key for prefix in _group_prefixes() for key in texts() if key.startswith(prefix + ".")}
    assert sorted(set(texts()) - named - grouped) == []


def test_every_say_names_its_key_or_passes_one_through() -> None:
    """A key is a literal where it is chosen; `say` given anything else is a helper passing a key through."""
    computed = [
        f"{path}:{node.lineno}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and _name(node.func) == "say"
        and not (node.args and isinstance(node.args[0], ast.Constant | ast.Name))
    ]
    assert computed == []


def test_placeholders_are_plain_names() -> None:
    for key, text in texts().items():
        for _, name, spec, conversion in string.Formatter().parse(text):
            if name is not None:
                assert re.fullmatch(r"[a-z_]+", name) and not spec and not conversion, (key, text)


def test_say_fills_placeholders_and_refuses_an_unknown_key() -> None:
    assert say("request.too_large", kilobytes=1024) == "The body is larger than 1024 KB."
    assert Group("database.noun")["blog_posts.category_id"] == "blog category"
    assert Group("database.duplicate").get("no_such_table") is None
    with pytest.raises(KeyError):
        say("no.such.key")


# -- no message spelled in the code ----------------------------------------------------------------------------
def _spelled(node: ast.expr | None) -> bool:
    """A text written in place: a literal, an f-string, a literal formatted or concatenated."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _spelled(node.left) or _spelled(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _spelled(node.func.value)
    return False


def _message(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "message"), None)


def _domain_errors() -> set[str]:
    """The DomainError subclasses of errors.py, and any class of the package deriving from one of them."""
    errors = {"DomainError"}
    classes = [node for _, tree in _trees() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    while True:
        more = {c.name for c in classes if any(_name(base) in errors for base in c.bases)} - errors
        if not more:
            return errors
        errors |= more


def _error_key(node: ast.expr | None) -> bool:
    """A key naming an error in a response body: `error`, `provider_error` (not the provider's own codes a
    connection keeps, `last_error`)."""
    return isinstance(node, ast.Constant) and node.value in ("error", "provider_error")


def _spelled_message(node: ast.AST, errors: set[str], validators: bool) -> str | None:
    """What `node` is when it spells a message in place, else None."""
    if isinstance(node, ast.Call) and _name(node.func) in errors and _spelled(_message(node)):
        return f"{_name(node.func)}(...)"
    if (
        isinstance(node, ast.Call)
        and validators
        and _name(node.func) == "ValueError"
        and _spelled(_message(node))
    ):
        return "ValueError(...)"  # a validator's message, returned to the client in a 400
    if isinstance(node, ast.Dict):  # an error body: {"error": ...}
        keys = [
            key
            for key, value in zip(node.keys, node.values, strict=True)
            if _error_key(key) and _spelled(value)
        ]
        return f"{{{keys[0].value!r}: ...}}" if keys else None  # type: ignore[union-attr]
    if isinstance(node, ast.Assign) and _spelled(node.value):  # result["provider_error"] = "..."
        targets = [t for t in node.targets if isinstance(t, ast.Subscript) and _error_key(t.slice)]
        return "[...error] = ..." if targets else None
    return None


def _messages_spelled_in_place() -> Iterator[str]:
    errors = _domain_errors()
    for path, tree in _trees():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name in errors):
            for node in ast.walk(cls):  # super().__init__("...") in an error's own constructor
                if isinstance(node, ast.Call) and _name(node.func) == "__init__" and _spelled(_message(node)):
                    yield f"{path}:{node.lineno} {cls.name}.__init__"
        for node in ast.walk(tree):
            if (what := _spelled_message(node, errors, path.parent.name == "models")) is not None:
                yield f"{path}:{getattr(node, 'lineno', 0)} {what}"


def test_no_error_message_is_spelled_in_the_code() -> None:
    assert list(_messages_spelled_in_place()) == []


def test_the_scan_finds_a_message_spelled_in_place() -> None:
    """The scan above sees the forms it forbids (so it cannot pass by looking at nothing)."""
    assert _spelled(ast.parse('f"x {y}"', mode="eval").body)
    assert _spelled(ast.parse('"x {y}".format(y=1)', mode="eval").body)
    assert not _spelled(ast.parse('say("request.invalid_json")', mode="eval").body)
    assert {"NotFound", "WebhookRejected", "GscNotConfigured"} <= _domain_errors()


# -- the catalogue ships with the backoffice -----------------------------------------------------------------------
def test_the_published_tree_holds_the_catalogue() -> None:
    assert CATALOGUE in template_files(BACKOFFICE)


def test_the_package_data_holds_the_catalogue() -> None:
    setuptools = tomllib.loads((BACKOFFICE / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["svc_backoffice"]
    assert any(fnmatch.fnmatch("core/texts/en.json", pattern) for pattern in patterns)
