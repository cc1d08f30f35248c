"""Names the service derives: repository names (the spec's normalisation rule) and project slugs."""

from __future__ import annotations

import re

REPO_PREFIX = "svc-"
MAX_REPO_NAME = 90
_NOT_ALLOWED = re.compile(r"[^a-z0-9._-]")


def repo_name(slug: str) -> str:
    """`svc-` + the slug lowercased, every character other than a letter, digit, dot, dash or underscore
    turned into a dash, leading and trailing dashes trimmed, capped at 90 characters; `svc-project` when
    nothing is left."""
    name = _NOT_ALLOWED.sub("-", slug.lower()).strip("-")[:MAX_REPO_NAME]
    return f"{REPO_PREFIX}{name or 'project'}"


def slugify(text: str, max_length: int = 48) -> str:
    """A URL slug: lowercase ASCII letters and digits separated by single dashes."""
    import unicodedata

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:max_length].strip("-") or "project"
