"""DynamoDB expressions are spelled by svc_shared.storage.dal alone: domain modules say which attributes to set, add
or remove and on which condition (dal.attr, item_exists, item_absent), never an expression string."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = {
    ROOT / "layers/shared/svc_shared/storage/dal.py",
    ROOT / "layers/shared/svc_shared/storage/keys.py",
}
SHIPPED = ("layers/shared/svc_shared", "functions")  # the backoffice keeps its data in PostgreSQL

# A string that is (part of) a DynamoDB expression: a function of the expression language, an update clause,
# a comparison with a placeholder, or a value placeholder standing alone (a key of ExpressionAttributeValues).
EXPRESSION = re.compile(
    r"(attribute_(not_)?exists|if_not_exists|begins_with|list_append|attribute_type)\("
    r"|^\s*(SET|ADD|REMOVE|DELETE)\s+#?\w+\s*(=|:|,|$)"
    r"|[#:][A-Za-z_]\w*\s*(=|<>|<=|>=|<|>|\bBETWEEN\b)"
    r"|(=|<>|<|>)\s*:[A-Za-z_]"
    r"|^:[A-Za-z_]\w*$"
)
# A name placeholder as the key of a dict (ExpressionAttributeNames); alone, "#top" is just an anchor.
NAME_PLACEHOLDER = re.compile(r"^#[A-Za-z_]\w*$")


def _offenders(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and EXPRESSION.search(node.value):
            found.append((node.lineno, node.value))
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and NAME_PLACEHOLDER.match(key.value)
                ):
                    found.append((key.lineno, key.value))
    return found


def test_no_domain_module_spells_a_dynamodb_expression() -> None:
    offenders = []
    for top in SHIPPED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path in ALLOWED:
                continue
            for line, text in _offenders(path.read_text()):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert offenders == []


def test_the_check_catches_each_way_of_spelling_one() -> None:
    spelled = [
        'table.put(item, condition="attribute_not_exists(pk)")',
        'table.update(pk, sk, "SET used = :t REMOVE expires_at")',
        'table.update(pk, sk, "ADD #n :one")',
        'condition = "#s = :active"',
        'condition = "current_rt = :from"',
        'values = {":now": now}',
        'names = {"#plan": "plan"}',
        'guard = f"(attribute_not_exists(t{i}) OR t{i} <= :cutoff)"',
    ]
    for source in spelled:
        assert _offenders(source), source


def test_the_check_leaves_ordinary_strings_alone() -> None:
    ordinary = [
        'anchor = "#top"',
        'label = "Issue #4"',
        'message = "Set the name: it is required"',
        'url = "https://example.com:443/path"',
        'time = "12:30"',
        'sql = "SELECT id FROM shops WHERE id = %s"',
        'sql = "DELETE FROM blog_comments WHERE id = ANY(%s::uuid[])"',
        'links = ["#top", "#end"]',
    ]
    for source in ordinary:
        assert not _offenders(source), source


def test_conditions_are_parenthesised_only_where_precedence_needs_it() -> None:
    from svc_shared.storage.dal import _Placeholders, attr, item_absent

    both = _Placeholders("pk").condition(attr("a").eq(1) & attr("b").eq(2) & attr("c").missing())
    assert both == "#n0 = :v0 AND #n1 = :v1 AND attribute_not_exists(#n2)"
    nested = _Placeholders("pk").condition(
        item_absent() | (attr("m").exists() & (attr("g").missing() | attr("g").lt("x")))
    )
    assert nested == (
        "attribute_not_exists(#n0) OR (attribute_exists(#n1) AND (attribute_not_exists(#n2) OR #n2 < :v0))"
    )
