"""Paths and refs inside a project's repository: the one check every file tool, the manual push and the
publish's template push go through before a path or ref reaches repo_host.

A path names a file inside the repository and nothing else: relative, `/`-separated, no empty, `.` or `..`
segment, no backslash, no control or invisible formatting character, no `.git` segment (any case, as git
itself refuses, with the spellings Windows and macOS file systems fold into `.git`), and no percent-encoded
form of any of these (`%2e%2e/`). A ref is a branch, tag or commit SHA by git's own naming rules. Anything
else is refused with InvalidInput (`invalid_path` / `invalid_ref`) naming what is wrong; the value is shown
escaped, never as raw control characters.

`url_path` turns a checked path into URL text with every segment percent-encoded, so a provider URL never
gains a segment the path did not have."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote

from svc_shared.core.catalogue import say
from svc_shared.core.errors import InvalidInput

MAX_PATH = 1024
MAX_REF = 255
_GIT_ALIASES = {".git", "git~1"}  # git~1: the 8.3 short name NTFS gives .git
_REF_FORBIDDEN = re.compile(r"[\s~^:?*\[\\%]|\.\.|@\{|//")


def _shown(value: str) -> str:
    return ascii(value[:100])


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def _problem(path: str) -> str | None:
    """What makes `path` unusable as a repository path, or None."""
    if any(_invisible(ch) for ch in path):
        return say("repo_path.invisible")
    if "\\" in path:
        return say("repo_path.backslash")
    if path.startswith("/"):
        return say("repo_path.absolute")
    for segment in path.split("/"):
        if segment == "":
            return say("repo_path.empty_segment")
        if segment in (".", ".."):
            return say("repo_path.dot_segment")
        if segment.rstrip(". ").lower() in _GIT_ALIASES:
            return say("repo_path.git")
    return None


def repo_path(path: object, *, what: str = "path") -> str:
    """`path` checked as a file path inside the repository (returned unchanged), or InvalidInput."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH:
        raise InvalidInput(say("repo_path.length", what=what, max_length=MAX_PATH), code="invalid_path")
    problem = _problem(path)
    decoded = path
    for _ in range(3):  # %2e%2e%2f, and the same encoded twice or three times
        if problem is not None:
            break
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
        found = _problem(decoded)
        if found is not None:
            problem = say("repo_path.decoded", problem=found)
    if problem is not None:
        raise InvalidInput(
            say("repo_path.refused", what=what, path=_shown(path), problem=problem), code="invalid_path"
        )
    return path


def repo_ref(ref: object, *, what: str = "ref") -> str:
    """`ref` checked as a branch, tag or commit SHA (git check-ref-format's rules), or InvalidInput."""
    if not isinstance(ref, str) or not ref or len(ref) > MAX_REF:
        raise InvalidInput(say("repo_path.ref_length", what=what, max_length=MAX_REF), code="invalid_ref")
    bad = (
        any(_invisible(ch) for ch in ref)
        or _REF_FORBIDDEN.search(ref) is not None
        or ref.startswith(("/", "-", "."))
        or ref.endswith(("/", ".", ".lock"))
        or "/." in ref
        or ref == "@"
    )
    if bad:
        raise InvalidInput(
            say("repo_path.ref_invalid", what=what, ref=_shown(ref)),
            code="invalid_ref",
        )
    return ref


def url_path(path: str) -> str:
    """A checked repository path as URL text: each segment percent-encoded, the / between them kept."""
    return "/".join(quote(segment, safe="") for segment in repo_path(path).split("/"))
