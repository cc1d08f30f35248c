"""The Router that declares each backoffice route once: its method and rule, minimum role, body and query
models, answers and summary; the route table, docs/routes.md and the OpenAPI document are read from these
declarations."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.router import Router

from svc_backoffice.access import auth
from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.data.db import database
from svc_backoffice.edge.gate import role_gate
from svc_backoffice.edge.requests import body as _body
from svc_backoffice.edge.requests import path_id, request_models
from svc_backoffice.edge.requests import query as _query
from svc_backoffice.edge.routes import Route, resource_of
from svc_backoffice.edge.web import OK, json_response, redirect


class ApiRouter(Router):
    """A Router for one resource under `prefix`. `api(...)` is where a route is declared, once: its method and
    rule, minimum role (None: no role gate), body and query models (by name in svc_backoffice.domain.models),
    answers and summary. The route table (edge.routes.RouteTable), docs/routes.md, the OpenAPI document and the
    template check are all read from these declarations. A resource's standard operations (`lists`, `reads`: the
    `reader` role at least; `creates`, `updates`, `deletes`, `reorders`: the `writer` role) are declared by
    one call each, served by the one handler of their kind."""

    def __init__(self, prefix: str, *, reader: str | None = None, writer: str | None = None) -> None:
        super().__init__()
        self.prefix = prefix
        self.reader, self.writer = reader, writer
        self.declared: list[Route] = []

    def api(
        self,
        method: str,
        rule: str = "/",
        *,
        role: str | None,
        body: str | None = None,
        query: str | None = None,
        answers: str = "200",
        summary: str = "",
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        path = (self.prefix if rule == "/" else f"{self.prefix}{rule}").replace("<", "[").replace(">", "]")
        for name in (body, query):
            if name is not None and name not in request_models():
                raise LookupError(f"{method} {path}: no request model named {name}")
        if role is not None and role not in ROLE_RANK:
            raise LookupError(f"{method} {path}: no role named {role}")
        route = Route(method, path, role, resource_of(path), body, query, answers, summary)
        self.declared.append(route)
        middlewares = [_declare(route)] + ([role_gate(role)] if role else [])
        return self.route(rule, method, middlewares=middlewares)

    def staff(self) -> auth.Staff:
        return self.context["staff"]

    # -- a resource's standard operations ------------------------------------------------------------------
    # Each declares its route as api() does, behind the router's reader or writer role, with the answers every
    # such route gives (its status, 302 behind the role gate, 400 for a body or query, 404 for an id, 500)
    # plus `also`, and serves it with the one handler of its kind, which calls the domain `operation` with the
    # database and what the route reads.
    def lists(self, operation: Callable[..., Any], *, query: str | None = None, summary: str) -> None:
        """GET `prefix`: `operation(db, query)` when the route has a query model (a page), else
        `{"items": operation(db)}`."""
        operation = late(operation)

        def handler() -> Response:
            if query is None:
                return json_response(200, {"items": operation(database())})
            return json_response(200, operation(database(), _query(self)))

        self._standard("GET", "/", handler, 200, role=self.reader, query=query, summary=summary)

    def creates(self, operation: Callable[..., Any], *, body: str, also: str = "", summary: str) -> None:
        """POST `prefix`: 201 with `operation(db, body)`."""
        operation = late(operation)

        def handler() -> Response:
            return json_response(201, operation(database(), _body(self)))

        self._standard("POST", "/", handler, 201, role=self.writer, body=body, also=also, summary=summary)

    def reads(self, operation: Callable[..., Any], *, summary: str) -> None:
        """GET `prefix/<id>`: `operation(db, id)`."""
        operation = late(operation)

        def handler(id: str) -> Response:
            return json_response(200, operation(database(), path_id(id)))

        self._standard("GET", "/<id>", handler, 200, role=self.reader, summary=summary)

    def updates(self, operation: Callable[..., Any], *, body: str, also: str = "", summary: str) -> None:
        """PATCH `prefix/<id>`: `operation(db, id, body)`."""
        operation = late(operation)

        def handler(id: str) -> Response:
            row_id = path_id(id)
            return json_response(200, operation(database(), row_id, _body(self)))

        self._standard(
            "PATCH", "/<id>", handler, 200, role=self.writer, body=body, also=also, summary=summary
        )

    def deletes(self, operation: Callable[..., Any], *, also: str = "", summary: str) -> None:
        """DELETE `prefix/<id>`: `operation(db, id)`, answered `{"ok": true}`."""
        operation = late(operation)

        def handler(id: str) -> Response:
            operation(database(), path_id(id))
            return json_response(200, OK)

        self._standard("DELETE", "/<id>", handler, 200, role=self.writer, also=also, summary=summary)

    def reorders(self, operation: Callable[..., Any], *, summary: str) -> None:
        """POST `prefix/reorder` with the ordered ids (ReorderBody): `operation(db, ids)`; 422 for an unknown
        id."""
        operation = late(operation)

        def handler() -> Response:
            operation(database(), _body(self).ids)
            return json_response(200, OK)

        self._standard(
            "POST",
            "/reorder",
            handler,
            200,
            role=self.writer,
            body="ReorderBody",
            also="422",
            summary=summary,
        )

    def acts(
        self,
        action: str,
        operation: Callable[..., Any],
        *,
        body: str | None = None,
        staff: bool = False,
        status: int = 200,
        also: str = "",
        summary: str,
    ) -> None:
        """POST `prefix/<id>/<action>` (publish a post, move an order): `status` with `operation(db, id)`, given
        the request's `body` model after the id when the action has one, and the acting staff member last with
        `staff`."""
        operation = late(operation)

        def handler(id: str) -> Response:
            row_id = path_id(id)
            given = [_body(self)] if body else []
            acting = [self.staff()] if staff else []
            return json_response(status, operation(database(), row_id, *given, *acting))

        rule = f"/<id>/{action}"
        self._standard("POST", rule, handler, status, role=self.writer, body=body, also=also, summary=summary)

    def serves(
        self, method: str, rule: str, operation: Callable[..., Any], *, role: str, answers: str, summary: str
    ) -> None:
        """`method` `prefix+rule` behind `role`: 200 with `operation(db)`."""
        operation = late(operation)

        def handler() -> Response:
            return json_response(200, operation(database()))

        self.api(method, rule, role=role, answers=answers, summary=summary)(handler)

    def connects(
        self,
        start: Callable[..., Any],
        finish: Callable[..., str],
        *,
        start_summary: str,
        callback_summary: str,
    ) -> None:
        """An OAuth client's two routes, admin only: POST `prefix/connect` answers `start(db, staff)` (the
        authorization URL, 422 where the provider is not configured), and the provider's redirect back,
        GET `prefix/callback`, sends the browser where `finish(db, staff, code=, state=, error=)` says (400 for
        a bad or expired state)."""
        start, finish = late(start), late(finish)

        def connect() -> Response:
            return json_response(200, start(database(), self.staff()))

        def callback() -> Response:
            event = self.current_event
            answer = {name: event.get_query_string_value(name) for name in ("code", "state", "error")}
            return redirect(finish(database(), self.staff(), **answer))

        self.api("POST", "/connect", role="admin", answers="200 302 422 500", summary=start_summary)(connect)
        self.api("GET", "/callback", role="admin", answers="302 400 500", summary=callback_summary)(callback)

    def _standard(
        self,
        method: str,
        rule: str,
        handler: Callable[..., Response],
        status: int,
        *,
        role: str | None,
        body: str | None = None,
        query: str | None = None,
        also: str = "",
        summary: str,
    ) -> None:
        if role is None:
            raise LookupError(f"{method} {self.prefix}{rule}: the router names no role for this operation")
        codes = {status, 302, 500, *(int(code) for code in also.split())}
        codes |= {400} if body or query else set()
        codes |= {404} if "<id>" in rule else set()
        answers = " ".join(str(code) for code in sorted(codes))
        self.api(method, rule, role=role, body=body, query=query, answers=answers, summary=summary)(handler)


def late(operation: Callable[..., Any]) -> Callable[..., Any]:
    """`operation` looked up in its module on each call, as a handler naming `module.function` would: the
    function a test puts in its place is the one called. A table's own operation (`rows.Table.create`, a bound
    method its module names) is called as it is."""
    module, name = sys.modules[operation.__module__], operation.__name__
    if getattr(module, name, None) is not operation:
        return operation
    return lambda *args, **kwargs: getattr(module, name)(*args, **kwargs)


def _declare(route: Route) -> Callable[[APIGatewayRestResolver, NextMiddleware], Response]:
    """Makes the serving route's declaration available to the handler (its body and query models)."""

    def declare(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        app.append_context(route=route)
        return next_middleware(app)

    return declare
