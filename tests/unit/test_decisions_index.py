"""docs/decisions.md opens with an index: every decision has its line, and every line names a decision."""

from __future__ import annotations

import re
from pathlib import Path

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"
ROW = re.compile(
    r"^\| (?:\d+|-) \| (?:\[(?P<linked>[^\]]+)\]\(#(?P<anchor>[^)]+)\)|(?P<plain>[^|]+?)) \| (?P<date>[^|]+) \|"
)


def _anchor(title: str) -> str:
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _index_and_headings() -> tuple[list[re.Match[str]], list[str], list[str]]:
    text = DECISIONS.read_text()
    index = text.split("## Index", 1)[1].split("\n## ", 1)[0]
    rows = [m for line in index.splitlines() if (m := ROW.match(line))]
    headings = [
        line[3:].strip() for line in text.splitlines() if line.startswith("## ") and line != "## Index"
    ]
    superseded = [
        line.split("): ", 1)[1].strip() for line in text.splitlines() if line.startswith("### Superseded (")
    ]
    return rows, headings, superseded


def test_every_decision_has_a_line_in_the_index_in_order() -> None:
    rows, headings, _ = _index_and_headings()
    assert [m["linked"] for m in rows if m["linked"]] == headings


def test_every_link_of_the_index_leads_to_a_heading() -> None:
    rows, headings, _ = _index_and_headings()
    anchors = {_anchor(h) for h in headings}
    assert all(m["anchor"] in anchors for m in rows if m["anchor"])


def test_every_date_is_a_day_and_every_superseded_text_is_kept_under_its_successor() -> None:
    rows, _, superseded = _index_and_headings()
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", m["date"].strip()) for m in rows)
    listed = [m["plain"].strip() for m in rows if m["plain"]]
    assert sorted(listed) == sorted(superseded)
    assert all("superseded by [" in m.string or m["linked"] for m in rows)
