"""The backoffice's messages, spelled once in `texts/en.json` and named by key everywhere else.

The file groups them by concern: `{"store": {"only_owner_grants": "..."}}` holds the key
`store.only_owner_grants`. `say(key, **params)` is that text with its `{placeholders}` filled; `Group(prefix)`
is the texts under one prefix by the rest of their key (the database's refusals, by table or constraint).
tests/backoffice/test_backoffice_catalogue.py keeps every key named and every name a key. The file is read on
the first message, not on import (this package ships to merchants on its own: nothing from the platform)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

TEXTS = Path(__file__).parent / "texts" / "en.json"


def _pairs(tree: Mapping[str, object], prefix: str) -> Iterator[tuple[str, str]]:
    for name, value in tree.items():
        if isinstance(value, Mapping):
            yield from _pairs(value, f"{prefix}{name}.")
        else:
            yield prefix + name, str(value)


@cache
def texts() -> dict[str, str]:
    """Every text by its dotted key."""
    return dict(_pairs(json.loads(TEXTS.read_text(encoding="utf-8")), ""))


def say(key: str, /, **params: object) -> str:
    """The text of `key` with `params` in its placeholders; KeyError for a key the catalogue lacks (the code
    named a key that is not there: a programming error, which the catalogue test rules out)."""
    return texts()[key].format_map(params)


class Group(Mapping[str, str]):
    """The texts whose key starts with `prefix.`, by the rest of their key: `Group("database.duplicate")`
    maps `products` to the text of `database.duplicate.products`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix + "."

    def __getitem__(self, name: str) -> str:
        return texts()[self.prefix + name]

    def __iter__(self) -> Iterator[str]:
        return (key[len(self.prefix) :] for key in texts() if key.startswith(self.prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)
