"""The message catalogues (svc_shared.core.catalogue): every message the platform writes is named by a key and
spelled once, in the catalogue of its language; the texts the spec fixes in French stand there word for word;
no key is named that no catalogue holds, and none is held that nothing names. Read with ast: nothing is run."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from svc_shared.core import catalogue
from svc_shared.core.catalogue import LANGUAGES, say

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "layers/shared/svc_shared"

# The texts the spec (service-spec.md, "Provider connection and publish") fixes in French, word for word.
SPEC_FRENCH = {
    "GitHub non connecte",
    "Aucun repo GitHub connecte",
    "name invalide",
    "existingRepo invalide",
}


def _sources() -> list[Path]:
    return [path for path in sorted(SHARED.rglob("*.py")) if "backoffice_template" not in path.parts]


def _named_keys() -> dict[str, list[str]]:
    """Every literal key passed to `say(...)` in the shared package, with where."""
    named: dict[str, list[str]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name | ast.Attribute)
                and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "say"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                named.setdefault(node.args[0].value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return named


def test_every_key_lives_in_one_catalogue() -> None:
    seen: dict[str, str] = {}
    for language in LANGUAGES:
        for key in catalogue.catalogue(language):
            assert key not in seen, f"{key} is in both {seen[key]} and {language}"
            seen[key] = language
    assert seen


def test_the_spec_french_texts_stand_word_for_word_in_the_french_catalogue() -> None:
    assert set(catalogue.catalogue("fr").values()) >= SPEC_FRENCH


@pytest.mark.parametrize("language", LANGUAGES)
def test_placeholders_are_plain_names(language: str) -> None:
    for key, text in catalogue.catalogue(language).items():
        for _, name, spec, conversion in string.Formatter().parse(text):
            if name is not None:
                assert re.fullmatch(r"[a-z_]+", name) and not spec and not conversion, (key, text)


def test_every_key_the_code_names_is_in_a_catalogue() -> None:
    known = {key for language in LANGUAGES for key in catalogue.catalogue(language)}
    assert {key: where for key, where in _named_keys().items() if key not in known} == {}


def test_every_key_in_a_catalogue_is_named_by_the_code() -> None:
    named = set(_named_keys())
    unused = {key for language in LANGUAGES for key in catalogue.catalogue(language) if key not in named}
    assert unused == set()


def test_say_fills_placeholders_and_refuses_an_unknown_key() -> None:
    assert say("integrations.no_repo") == "Aucun repo GitHub connecte"
    with pytest.raises(KeyError):
        say("no.such.key")
