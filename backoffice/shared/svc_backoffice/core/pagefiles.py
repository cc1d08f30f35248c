"""The files of a page layer (the backoffice's admin screens, the platform's workspace): its Jinja2 templates'
environment, and its folder of static files (a file by its name with its content type and ETag, and a version
of the whole folder for the files' URLs)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Found = tuple[bytes, str, str]


def template_environment(folder: Path, filters: Mapping[str, Callable[..., Any]]) -> Any:
    """Jinja2 over the templates of `folder`: HTML autoescaped, an undefined name an error, block tags trimmed,
    with the layer's own `filters`."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=select_autoescape(["html"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(filters)
    return env


def read_static(folder: Path, types: Mapping[str, str], name: str) -> Found | None:
    """(content, content type, etag) of the file `name` directly in `folder` whose suffix `types` serves, or
    None for anything else (a path, a hidden file, another suffix, no such file)."""
    if "/" in name or "\\" in name or name.startswith("."):
        return None
    path = folder / name
    kind = types.get(path.suffix)
    if kind is None or not path.is_file():
        return None
    content = path.read_bytes()
    return content, kind, '"' + hashlib.sha256(content).hexdigest()[:20] + '"'


def folder_version(folder: Path, static_file: Callable[[str], Found | None]) -> str:
    """A digest of the folder's served files' ETags: part of their URLs, so a new deployment's are fetched afresh."""
    digest = hashlib.sha256()
    for name in sorted(p.name for p in folder.iterdir()):
        if found := static_file(name):
            digest.update(found[2].encode())
    return digest.hexdigest()[:10]
