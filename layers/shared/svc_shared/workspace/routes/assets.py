"""The workspace's static files (style sheet, script, icon), served with an ETag; the icon also at /favicon.ico,
where browsers ask for it on every page of the platform."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core.catalogue import say
from svc_shared.workspace import render, site

router = Router()


@router.get("/favicon.ico")
def favicon() -> Response:
    return static("favicon.svg")


@router.get("/workspace/static/<name>")
def static(name: str) -> Response:
    found = render.static_file(name)
    if found is None:
        return site.error_page(
            router, 404, None, say("workspace.title_not_found"), say("workspace.no_file_here")
        )
    content, kind, etag = found
    if router.current_event.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    return Response(
        status_code=200,
        content_type=kind,
        body=content.decode(),
        headers={"ETag": etag, "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"},
    )
