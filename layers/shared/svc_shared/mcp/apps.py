"""MCP Apps (the `io.modelcontextprotocol/ui` extension, specification 2026-01-26): the views this server
offers as `ui://` resources, and which clients get them.

A client renders views when it declares the extension with the `text/html;profile=mcp-app` MIME type in its
capabilities: per request in the stateless era (`params._meta`), at `initialize` in the handshake era (its
`Mcp-Session-Id` then says so: svc_shared.mcp.session). Only such clients get the extension advertised, each
tool's `_meta.ui` and the app-only tools; every other client gets the tools and results it always had.

Each view is one HTML document with its side of the protocol (ui/bridge.js: the ui/* JSON-RPC messages it needs,
over postMessage with the host) and its own code inlined: no request leaves the sandbox except the tool calls the
host relays, so each declares an empty CSP (the host's restrictive default: no connection, no outside resource).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path
from typing import Any

from svc_shared.mcp.messages import META_CAPABILITIES

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
UI_DIR = Path(__file__).resolve().parent / "ui"


@dataclass(frozen=True)
class View:
    uri: str
    name: str
    title: str
    description: str
    file: str

    def listing(self) -> dict[str, Any]:
        """The view in resources/list: its fields but the file it is read from, with its MIME type."""
        shown = {name: value for name, value in asdict(self).items() if name != "file"}
        return {**shown, "mimeType": MIME_TYPE, "_meta": {"ui": meta()}}


PROJECT_CARD = "ui://svc/project-card.html"
PUBLISH = "ui://svc/publish-progress.html"
TRAFFIC = "ui://svc/traffic.html"
VIEWS = {
    view.uri: view
    for view in (
        View(
            PROJECT_CARD,
            "project-card",
            "Project card",
            "A project's name, publish state, live URL and repository, with a link to open it in the workspace.",
            "project-card.html",
        ),
        View(
            PUBLISH,
            "publish-progress",
            "Publish progress",
            "The publish stages of a project as a step list that follows the run, the failure in words with a "
            "Retry, and the live URL once ready.",
            "publish-progress.html",
        ),
        View(
            TRAFFIC,
            "traffic",
            "Traffic",
            "Pageviews and visitors per day as a chart, with the top pages, referrers and countries.",
            "traffic.html",
        ),
    )
}


def meta() -> dict[str, Any]:
    """What every view declares: no outside origin at all (the host's restrictive default CSP), a border."""
    return {"csp": {}, "prefersBorder": True}


def offers_ui(capabilities: Any) -> bool:
    """Whether client capabilities declare the extension with the MIME type of our views."""
    if not isinstance(capabilities, dict):
        return False
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


def request_offers_ui(params: dict[str, Any]) -> bool:
    """A stateless-era request: its `params._meta` carries the client's capabilities."""
    meta_ = params.get("_meta")
    return isinstance(meta_, dict) and offers_ui(meta_.get(META_CAPABILITIES))


def server_extensions() -> dict[str, Any]:
    return {EXTENSION: {"mimeTypes": [MIME_TYPE]}}


# -- resources -----------------------------------------------------------------------------------------------
def listing() -> list[dict[str, Any]]:
    return [view.listing() for view in VIEWS.values()]


@functools.cache
def html(uri: str) -> str:
    """A view's document: its HTML opened by the shared head (head.html, with the view's title), with the
    shared style, the bridge and the shared code inlined where it marks (read once per container)."""
    view = VIEWS[uri]
    head = (UI_DIR / "head.html").read_text().replace("<!--VIEW_TITLE-->", escape(view.title))
    page = (UI_DIR / view.file).read_text().replace("<!--VIEW_HEAD-->\n", head, 1)
    for mark, part in (
        ("/*VIEW_COMMON_CSS*/", "common.css"),
        ("/*VIEW_BRIDGE_JS*/", "bridge.js"),
        ("/*VIEW_COMMON_JS*/", "common.js"),
    ):
        page = page.replace(mark, (UI_DIR / part).read_text().replace("</script", "<\\/script"), 1)
    return page


def read(uri: str) -> dict[str, Any] | None:
    """The resources/read result of a view, or None for a URI this server does not have."""
    if uri not in VIEWS:
        return None
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": html(uri), "_meta": {"ui": meta()}}]}
