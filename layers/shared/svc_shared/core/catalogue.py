"""Every message the platform writes, by key, in one catalogue per language.

`core/texts/en.json` holds the product's English texts; `core/texts/fr.json` the texts the spec fixes in
French, word for word (the platform says those in French whatever else it says in English). Both are grouped
by concern: `{"connections": {"state_expired": "..."}}` is the key `connections.state_expired`. A page, a tool
or an error never spells a message of its own: it names the key and `say` finds the text, with its
`{placeholders}` filled (tests/unit/test_catalogue.py keeps it so). A key lives in one catalogue; adding a
language is adding a catalogue with the keys it translates, looked up first when asked for.

The catalogues are read on the first message, not on import: most requests write none."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "fr")
_TEXTS = Path(__file__).with_name("texts")


def _flatten(tree: dict[str, object], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for name, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{name}."))
        else:
            flat[prefix + name] = str(value)
    return flat


@cache
def catalogue(language: str) -> dict[str, str]:
    """The flat catalogue of one language (key -> text); empty for a language with none."""
    path = _TEXTS / f"{language}.json"
    if not path.is_file():
        return {}
    return _flatten(json.loads(path.read_text(encoding="utf-8")))


def say(key: str, /, language: str | None = None, **params: object) -> str:
    """The text of `key` with its placeholders filled: from `language`'s catalogue when it has the key,
    else from the catalogue that holds it. KeyError for a key no catalogue holds (a test finds every key
    the code names, so this is a programming error, never a client's)."""
    for name in ((language,) if language else ()) + LANGUAGES:
        text = catalogue(name).get(key)
        if text is not None:
            return text.format_map(params)
    raise KeyError(key)
