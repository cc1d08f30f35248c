"""A resource's actions on one of its rows (POST `prefix/<id>/<action>`: publish a post, move an order), each
declared by one call as the router's standard operations are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.edge.api_router import ApiRouter, _late
from svc_backoffice.edge.requests import body as read_body
from svc_backoffice.edge.requests import path_id
from svc_backoffice.edge.web import json_response


def acts(
    router: ApiRouter,
    action: str,
    operation: Callable[..., Any],
    *,
    body: str | None = None,
    staff: bool = False,
    status: int = 200,
    also: str = "",
    summary: str,
) -> None:
    """POST `prefix/<id>/<action>` behind the router's writer role: `status` with `operation(db, id)`, given
    the request's `body` model after the id when the action has one and the acting staff member last with
    `staff`. Its answers are those of the standard operations (302 behind the role gate, 400 for a body, 404
    for the id, 500) plus `also`."""
    operation = _late(operation)

    def handler(id: str) -> Response:
        row_id = path_id(id)
        given = [read_body(router)] if body else []
        acting = [router.staff()] if staff else []
        return json_response(status, operation(database(), row_id, *given, *acting))

    codes = {status, 302, 404, 500, *(int(code) for code in also.split())} | ({400} if body else set())
    answers = " ".join(str(code) for code in sorted(codes))
    rule = f"/<id>/{action}"
    router.api("POST", rule, role=router.writer, body=body, answers=answers, summary=summary)(handler)
