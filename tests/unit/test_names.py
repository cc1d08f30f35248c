"""The repository name rule of the spec, checked on examples and as properties over any slug."""

import re

from hypothesis import given
from hypothesis import strategies as st

from svc_shared.core.names import repo_name
from svc_shared.domain.integrations import is_env_file, valid_repo_segment

ALLOWED = re.compile(r"^svc-[a-z0-9._-]+$")


def test_examples_from_the_rule():
    assert repo_name("My Shop") == "svc-my-shop"
    assert repo_name("--Café & Co!--") == "svc-caf----co"
    assert repo_name("") == "svc-project"
    assert repo_name("///") == "svc-project"
    assert repo_name("a.b_c-d") == "svc-a.b_c-d"
    assert repo_name("x" * 200) == "svc-" + "x" * 90


@given(st.text())
def test_any_slug_gives_an_allowed_name_of_at_most_90_characters_after_the_prefix(slug):
    name = repo_name(slug)
    assert ALLOWED.match(name)
    assert len(name) <= len("svc-") + 90
    body = name.removeprefix("svc-")
    assert body == "project" or not body.startswith("-")


@given(st.text())
def test_the_rule_is_idempotent_on_its_own_output(slug):
    body = repo_name(slug).removeprefix("svc-")
    if body != "project" and len(body) < 90:  # at the cap a trailing dash can remain: the rule trims first
        assert repo_name(body) == repo_name(slug)


@given(st.from_regex(r"[a-z0-9][a-z0-9._]{0,80}", fullmatch=True))
def test_clean_slugs_are_kept_as_they_are(slug):
    assert repo_name(slug) == f"svc-{slug}"


@given(st.text(min_size=1, max_size=120))
def test_a_segment_never_contains_a_slash_and_is_not_dots_only(name):
    if valid_repo_segment(name):
        assert "/" not in name
        assert set(name) != {"."}
        assert len(name) <= 100


def test_env_files_are_recognised_by_their_name_anywhere():
    assert is_env_file(".env")
    assert is_env_file("config/.env.production")
    assert not is_env_file("docs/env.md")
    assert not is_env_file("src/notes.env")
