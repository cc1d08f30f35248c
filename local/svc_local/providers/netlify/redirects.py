"""Redirect and rewrite rules as the real host reads them: the `_redirects` file of the publish directory,
then `[[redirects]]` of netlify.toml; `*` and `:name` in `from`, `:splat` and `:name` in `to`, a status
(301, 302, 200 rewrite or proxy, 404), `!` to force a rule over an existing file."""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Rule:
    source: str
    target: str
    status: int = 301
    force: bool = False

    @property
    def proxy(self) -> bool:
        return self.status == 200 and self.target.startswith(("http://", "https://"))

    def json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Rule:
        return cls(str(data["source"]), str(data["target"]), int(data["status"]), bool(data["force"]))

    def match(self, path: str) -> str | None:
        """The target for `path` (placeholders and splat filled in), or None when the rule does not apply."""
        exact, splat = _patterns(self.source)
        found = exact.fullmatch(path) or (splat.fullmatch(path.rstrip("/")) if splat else None)
        if found is None:
            return None
        target = self.target
        for name, value in sorted(found.groupdict().items(), key=lambda item: -len(item[0])):
            target = target.replace(f":{name}", value or "")
        return target


@functools.lru_cache(maxsize=1024)
def _patterns(source: str) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """A rule's `from` compiled once: the path with an optional trailing slash, and (for a splat rule) the path
    without it."""
    pattern = ""
    for part in re.split(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)", source.rstrip("/") or "/"):
        if part == "*":
            pattern += "(?P<splat>.*)"
        elif part.startswith(":"):
            pattern += f"(?P<{part[1:]}>[^/]+)"
        else:
            pattern += re.escape(part)
    splat = re.compile(pattern) if pattern.endswith("(?P<splat>.*)") else None
    return re.compile(pattern + "/?"), splat


def _status(text: str) -> tuple[int, bool] | None:
    force = text.endswith("!")
    digits = text.rstrip("!")
    return (int(digits), force) if digits.isdigit() else None


def parse_redirects_file(path: Path) -> list[Rule]:
    if not path.is_file():
        return []
    rules: list[Rule] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 2:
            continue
        status, force = (301, False)
        if len(words) > 2:
            parsed = _status(words[2])
            if parsed is not None:
                status, force = parsed
        rules.append(Rule(words[0], words[1], status, force))
    return rules


def parse_toml_redirects(raw: Any) -> list[Rule]:
    if not isinstance(raw, list):
        return []
    return [
        Rule(str(item["from"]), str(item["to"]), int(item.get("status", 301)), bool(item.get("force")))
        for item in raw
        if isinstance(item, dict) and item.get("from") and item.get("to")
    ]
