"""The local API Gateway's server: routes a request to its function, reads the body within API Gateway's limit,
runs the function in-process and writes its answer."""

from __future__ import annotations

import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

from svc_local.gateway.answers import (
    HTTP_API_ANSWERS,
    Answer,
    BadLambdaResponse,
    convert_response,
    json_answer,
    rest_answer,
)
from svc_local.gateway.events import DEFAULT_ROUTE, build_event
from svc_local.runtime import FunctionRegistry, LambdaContext
from svc_local.serving import BackgroundServer, BodyTooLarge, DispatchingHandler, OwnedServer, match_resource
from svc_local.template import Route, Template

DEFAULT_PORT = 3000
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
_DRAIN_LIMIT = 64 * 1024 * 1024  # past this an oversized body is not read, the connection is just closed


class Router:
    """Routes grouped by resource path; a request picks the most specific resource, then its method."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.resources: dict[str, dict[str, Route]] = {}
        # An HTTP API's `$default` route: every request no other route serves (path or method).
        self.default: Route | None = None
        for route in routes:
            if route.path == DEFAULT_ROUTE:
                if self.default is not None:
                    raise ValueError(f"two functions serve {DEFAULT_ROUTE}")
                self.default = route
                continue
            methods = self.resources.setdefault(route.path, {})
            if route.method in methods:
                raise ValueError(f"two functions serve {route.method} {route.path}")
            methods[route.method] = route

    def resolve(self, method: str, path: str) -> tuple[Route | None, dict[str, str]]:
        """(route, path parameters); route is None when nothing serves the method on the path (API Gateway
        answers an unknown path and an unknown method alike)."""
        best: tuple[tuple[int, ...], str, dict[str, str]] | None = None
        for resource in self.resources:
            found = match_resource(resource, path)
            if found and (best is None or found[0] > best[0]):
                best = (found[0], resource, found[1])
        if best is None:
            return self.default, {}
        methods = self.resources[best[1]]
        route = methods.get(method.upper()) or methods.get("ANY")
        return (route, best[2]) if route else (self.default, {})


class _Handler(DispatchingHandler):
    server_version = "svc-local-gateway"
    server: OwnedServer[Gateway]

    def _dispatch(self) -> None:
        started = time.perf_counter()
        request_id = str(uuid.uuid4())
        split = urlsplit(self.path)
        try:
            answer = self.server.owner.serve(self, request_id)
        except Exception:  # noqa: BLE001 - nothing may crash the server
            self.server.owner.log(f"[gateway {request_id}] internal error\n{traceback.format_exc()}")
            answer = json_answer(500, {"error": "internal_error", "request_id": request_id})
            self.close_connection = True
        elapsed = (time.perf_counter() - started) * 1000
        # Logged before the answer is written, so a client that has its answer can already see the line.
        self.server.owner.log(
            f'{self.client_address[0]} "{self.command} {split.path}" {answer.status} {len(answer.body)} '
            f"{elapsed:.1f}ms {answer.function} {request_id}"
        )
        try:
            self._write(answer, request_id)
        except OSError:
            self.close_connection = True  # the client went away

    def _write(self, answer: Answer, request_id: str) -> None:
        headers = [
            (k, v) for k, v in answer.headers if k.lower() not in ("transfer-encoding", "date", "server")
        ]
        self.send_answer(answer.status, [*headers, ("x-amzn-RequestId", request_id)], answer.body)


class Gateway(BackgroundServer):
    """The local API Gateway for one template. Port 0 picks a free port (see `port` after start())."""

    thread_name = "svc-gateway"

    def __init__(
        self,
        template_path: str | Path | Template,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        registry: FunctionRegistry | None = None,
        log_stream: TextIO | None = None,
    ) -> None:
        self.template = template_path if isinstance(template_path, Template) else Template(template_path)
        # Served at the root, as an HTTP API's $default stage and a custom domain are.
        super().__init__(host, port)
        self.routes = self.template.routes()
        # An HTTP API answers every unmatched request (unknown path, or a method no route has) with this.
        self.http_api = bool(self.routes) and all(route.kind == "http" for route in self.routes)
        self.router = Router(self.routes)
        # Each REST API's gateway responses; an unrouted request meets the first REST API's
        self.gateway_responses = {
            route.api_id: self.template.gateway_responses(route.api_id)
            for route in self.routes
            if route.kind == "rest"
        }
        self._unrouted_api = next(iter(self.gateway_responses), "")
        self.registry = registry or FunctionRegistry()
        for route in self.routes:
            if self.registry.find(route.function.logical_id) is None:
                self.registry.add(route.function)
        self.log_stream = log_stream
        self._log_lock = threading.Lock()

    def make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return OwnedServer(address, _Handler, self)

    @property
    def authority(self) -> str:
        """host:port of the API as its events name it (requestContext.domainName of an HTTP API's routes)."""
        return urlsplit(self.url).netloc

    def log(self, line: str) -> None:
        stream = self.log_stream or sys.stderr
        with self._log_lock:
            print(line, file=stream, flush=True)

    def serve(self, request: _Handler, request_id: str) -> Answer:
        """Route one request, run its function and translate the result."""
        method = request.command
        split = urlsplit(request.path)
        path = unquote(split.path) or "/"
        raw_path = split.path
        route, _ = self.router.resolve(method, path)
        if route is None:
            if request.headers.get("Content-Length") or request.headers.get("Transfer-Encoding"):
                request.close_connection = True  # the body is not read: do not reuse the connection
            if self.http_api:
                return self.http_api_answer("NOT_FOUND")
            # A REST API answers a path it does not have, or a method a path does not have, alike
            responses = self.gateway_responses.get(self._unrouted_api, {})
            return rest_answer("MISSING_AUTHENTICATION_TOKEN", responses, request_id, raw_path)
        try:
            body = request.read_body(MAX_BODY_BYTES, drain_limit=_DRAIN_LIMIT)
        except BodyTooLarge:
            if route.kind == "http":
                return self.http_api_answer("REQUEST_TOO_LARGE")
            return rest_answer("REQUEST_TOO_LARGE", {}, request_id)
        except ValueError:
            request.close_connection = True
            return json_answer(400, {"error": "bad_request", "message": "Malformed request body framing"})
        client_ip = request.client_address[0]
        headers = list(request.headers.items())
        forwarded = request.headers.get("X-Forwarded-For")
        # As API Gateway does: the client address is appended to X-Forwarded-For, proto and port are set.
        headers = [(n, v) for n, v in headers if n.lower() != "x-forwarded-for"]
        headers.append(("X-Forwarded-For", f"{forwarded}, {client_ip}" if forwarded else client_ip))
        if request.headers.get("X-Forwarded-Proto") is None:
            headers.append(("X-Forwarded-Proto", "http"))
        if request.headers.get("X-Forwarded-Port") is None:
            headers.append(("X-Forwarded-Port", str(self.port)))
        event = build_event(
            method,
            raw_path + (f"?{split.query}" if split.query else ""),
            route.path,
            headers,
            body,
            source_ip=client_ip,
            binary_media_types=route.binary_media_types,
            request_id=request_id,
            kind=route.kind,
            # API Gateway names the domain the API is served on, never what the client wrote in Host.
            domain_name=self.authority if route.kind == "http" else None,
        )
        return self.invoke(route, event, request_id)

    def http_api_answer(self, kind: str) -> Answer:
        status, message = HTTP_API_ANSWERS[kind]
        return json_answer(status, {"message": message})

    def failed(self, route: Route, request_id: str) -> Answer:
        """A function that raised or gave no valid proxy response: the details are in the log only."""
        if route.kind == "http":
            return self.http_api_answer("INTERNAL")
        return rest_answer("DEFAULT_5XX", self.gateway_responses.get(route.api_id, {}), request_id)

    def invoke(self, route: Route, event: dict[str, Any], request_id: str) -> Answer:
        spec = route.function
        context = LambdaContext.for_function(spec, request_id)
        try:
            result = self.registry.invoke(spec, event, context)
        except Exception:  # noqa: BLE001 - a failing handler is API Gateway's own 5xx answer
            self.log(f"[{spec.logical_id} {request_id}] unhandled error\n{traceback.format_exc()}")
            answer = self.failed(route, request_id)
            answer.function = spec.logical_id
            return answer
        try:
            status, headers, body = convert_response(result)
        except BadLambdaResponse as exc:
            self.log(f"[{spec.logical_id} {request_id}] malformed Lambda proxy response: {exc}")
            answer = self.failed(route, request_id)
        else:
            answer = Answer(status, headers, body)
        answer.function = spec.logical_id
        return answer
