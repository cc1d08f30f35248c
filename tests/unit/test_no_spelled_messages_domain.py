"""The domain, the provider adapters and the MCP tools spell no message of their own: what a domain error (or a
tool error) says comes from the message catalogue (`say("concern.name", ...)`), never from a literal, an
f-string, or a module constant spelled in these packages. Read with ast: nothing is run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "layers/shared/svc_shared"
DIRECTORIES = ("domain", "providers", "mcp/tools")


def _error_classes() -> set[str]:
    """The domain errors: core.errors' classes and every class of the package that derives from one."""
    errors = {
        node.name
        for node in ast.parse((SHARED / "core/errors.py").read_text()).body
        if isinstance(node, ast.ClassDef)
    }
    bases = {
        node.name: {
            b.id if isinstance(b, ast.Name) else b.attr
            for b in node.bases
            if isinstance(b, ast.Name | ast.Attribute)
        }
        for path in SHARED.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }
    while more := {name for name, named in bases.items() if named & errors} - errors:
        errors |= more
    return errors


def _constants(tree: ast.Module) -> set[str]:
    """The module's top-level names bound to spelled text (a message spelled once, then named)."""
    return {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign) and _spelled(node.value, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _spelled(node: ast.expr, constants: set[str]) -> bool:
    """Whether an expression is text spelled in the code: a literal, an f-string, a concatenation or a
    `.format` of one, or a constant holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _spelled(node.left, constants) or _spelled(node.right, constants)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _spelled(node.func.value, constants)
    return isinstance(node, ast.Name) and node.id in constants


def _message(call: ast.Call) -> ast.expr | None:
    """What a call passes as the message: `message=`, else its first positional argument."""
    for keyword in call.keywords:
        if keyword.arg == "message":
            return keyword.value
    return call.args[0] if call.args else None


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _is_super_init(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and _name(func.value.func) == "super"
    )


def _scan(tree: ast.Module, errors: set[str], constants: set[str]) -> list[int]:
    """The lines where a message is spelled: given to an error class or tool_error, or to the base's
    __init__ inside an error class."""
    inits = {
        id(node)
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef) and cls.name in errors
        for node in ast.walk(cls)
        if isinstance(node, ast.Call) and _is_super_init(node.func)
    }
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (_name(node.func) in errors or _name(node.func) == "tool_error" or id(node) in inits)
        and (message := _message(node)) is not None
        and _spelled(message, constants)
    )


def test_the_domain_errors_are_known() -> None:
    assert {
        "InvalidInput",
        "RateLimited",
        "PublishFailed",
        "ProviderError",
        "ConnectionFailed",
    } <= _error_classes()


def test_no_message_is_spelled_in_the_domain_providers_or_tools() -> None:
    errors = _error_classes()
    trees = {
        path: ast.parse(path.read_text(), str(path))
        for directory in DIRECTORIES
        for path in sorted((SHARED / directory).rglob("*.py"))
    }
    shared = set().union(*(_constants(tree) for tree in trees.values()))
    spelled = [
        f"{path.relative_to(ROOT)}:{line}"
        for path, tree in trees.items()
        for line in _scan(tree, errors, shared)
    ]
    assert spelled == []


def test_the_scan_finds_a_spelled_message() -> None:
    tree = ast.parse(
        "NAME = 'spelled once'\n"
        "def f(x):\n"
        "    raise InvalidInput(f'bad {x}')\n"
        "def g():\n"
        "    raise NotFound(message=NAME)\n"
        "def h():\n"
        "    raise NotFound(say('projects.not_found'))\n"
        "class Gone(NotFound):\n"
        "    def __init__(self):\n"
        "        super().__init__('gone ' + 'away')\n"
        "def t():\n"
        "    return tool_error('no'.format())\n"
    )
    assert _scan(tree, {"InvalidInput", "NotFound", "Gone"}, _constants(tree)) == [3, 5, 10, 12]
