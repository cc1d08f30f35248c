"""Local API Gateway: serves every Api (REST API, proxy integration) and HttpApi (HTTP API on its `$default`
stage, payload format 1.0) route of a SAM template and runs the functions in-process with the events and
responses API Gateway would produce."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl, unquote, urlsplit

from svc_local.runtime import FunctionRegistry, LambdaContext
from svc_local.serving import BackgroundServer, DispatchingHandler
from svc_local.template import LOCAL_ACCOUNT_ID, Route, Template

DEFAULT_PORT = 3000
STAGE = "live"
HTTP_API_STAGE = "$default"  # an HTTP API's default stage: its URL has no stage path
DEFAULT_ROUTE = "$default"  # an HTTP API's catch-all route (a SAM HttpApi event with no Path or Method)
# The media types an HTTP API passes to the function as text; every other body (a form post included, or one
# without a Content-Type or with a Content-Encoding) arrives base64-encoded with isBase64Encoded true.
HTTP_API_TEXT_TYPES = ("application/json", "application/xml", "application/javascript")
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
_DRAIN_LIMIT = 64 * 1024 * 1024  # past this an oversized body is not read, the connection is just closed
_RESPONSE_KEYS = {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"}
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SEGMENT_EXACT, _SEGMENT_PARAM, _SEGMENT_PROXY = 2, 1, 0


class BadLambdaResponse(ValueError):
    """The handler's result is not a valid proxy response (API Gateway answers 502)."""


# ---- routing


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def match_resource(resource: str, path: str) -> tuple[tuple[int, ...], dict[str, str]] | None:
    """Match a decoded request path against a resource path: (precedence score, path parameters) or None.
    Scores compare segment by segment: exact beats {param} beats {proxy+}."""
    pattern, actual = _segments(resource), _segments(path)
    score: list[int] = []
    params: dict[str, str] = {}
    for index, part in enumerate(pattern):
        if part.startswith("{") and part.endswith("+}"):
            rest = actual[index:]
            if index != len(pattern) - 1 or not rest:
                return None
            params[part[1:-2]] = "/".join(rest)
            score.append(_SEGMENT_PROXY)
            return tuple(score), params
        if index >= len(actual):
            return None
        if part.startswith("{") and part.endswith("}"):
            params[part[1:-1]] = actual[index]
            score.append(_SEGMENT_PARAM)
        elif part == actual[index]:
            score.append(_SEGMENT_EXACT)
        else:
            return None
    if len(actual) != len(pattern):
        return None
    return tuple(score), params


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


# ---- events


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_binary(content_type: str | None, binary_media_types: Sequence[str]) -> bool:
    """Does a Content-Type match one of the Api's BinaryMediaTypes (wildcards allowed)?"""
    media = _media_type(content_type)
    if not media:
        return False
    kind, _, sub = media.partition("/")
    for pattern in binary_media_types:
        p_kind, _, p_sub = pattern.strip().lower().partition("/")
        if p_kind in ("*", kind) and p_sub in ("*", sub):
            return True
    return False


def http_api_encodes(content_type: str | None, content_encoding: str | None) -> bool:
    """Does an HTTP API base64-encode a request body of this Content-Type (and Content-Encoding)?"""
    media = _media_type(content_type)
    if content_encoding or not media:
        return True
    return not (media.startswith("text/") or media in HTTP_API_TEXT_TYPES)


def build_event(
    method: str,
    raw_path: str,
    resource: str,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    source_ip: str = "127.0.0.1",
    binary_media_types: Sequence[str] = (),
    request_id: str | None = None,
    stage: str | None = None,
    time_epoch_ms: int | None = None,
    kind: str = "rest",
    domain_name: str | None = None,
) -> dict[str, Any]:
    """The proxy event for a request: a REST API's (`kind="rest"`, stage `live` unless told) or an HTTP
    API's in payload format 1.0 (`kind="http"`: `version` 1.0, stage `$default`, the body base64-encoded
    unless it is text). `raw_path` may carry a query string. `domain_name` is the host name API Gateway
    puts in requestContext.domainName (the one the API is served on); the Host header when not given."""
    if kind not in ("rest", "http"):
        raise ValueError(f"unknown API kind {kind!r}")
    stage = stage or (HTTP_API_STAGE if kind == "http" else STAGE)
    split = urlsplit(raw_path)
    path = unquote(split.path) or "/"
    request_id = request_id or str(uuid.uuid4())
    epoch_ms = int(time.time() * 1000) if time_epoch_ms is None else time_epoch_ms

    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        # Header names keep the case the client sent; a repeated header keeps its first spelling.
        key = next((k for k in multi if k.lower() == name.lower()), name)
        multi.setdefault(key, []).append(value)
        single[key] = value
    lookup = {k.lower(): v for k, v in single.items()}

    query_single: dict[str, str] = {}
    query_multi: dict[str, list[str]] = {}
    for name, value in parse_qsl(split.query, keep_blank_values=True):
        query_multi.setdefault(name, []).append(value)
        query_single[name] = value

    matched = match_resource(resource, path)
    path_parameters = matched[1] if matched else {}

    encoded = False
    text: str | None = None
    if body:
        if kind == "http":
            encoded = http_api_encodes(lookup.get("content-type"), lookup.get("content-encoding"))
        else:
            encoded = is_binary(lookup.get("content-type"), binary_media_types)
        if not encoded:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                encoded = True
        if encoded:
            text = base64.b64encode(body).decode("ascii")

    host = domain_name or lookup.get("host", "localhost")
    event: dict[str, Any] = {"version": "1.0"} if kind == "http" else {}
    return event | {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": single or None,
        "multiValueHeaders": multi or None,
        "queryStringParameters": query_single or None,
        "multiValueQueryStringParameters": query_multi or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "accountId": LOCAL_ACCOUNT_ID,
            "apiId": "local",
            "resourceId": hashlib.sha1(resource.encode()).hexdigest()[:6],  # noqa: S324 - an id, not security
            "resourcePath": resource,
            "httpMethod": method.upper(),
            "extendedRequestId": request_id,
            "requestId": request_id,
            "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(epoch_ms / 1000)),
            "requestTimeEpoch": epoch_ms,
            "path": path,
            "stage": stage,
            "domainName": host,
            "domainPrefix": host.split(".", 1)[0],
            "protocol": "HTTP/1.1",
            "identity": {
                "sourceIp": source_ip,
                "userAgent": lookup.get("user-agent"),
                "accountId": None,
                "apiKey": None,
                "apiKeyId": None,
                "caller": None,
                "cognitoAuthenticationProvider": None,
                "cognitoAuthenticationType": None,
                "cognitoIdentityId": None,
                "cognitoIdentityPoolId": None,
                "principalOrgId": None,
                "user": None,
                "userArn": None,
            },
        },
        "body": text,
        "isBase64Encoded": encoded,
    }


def convert_response(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """A proxy integration result as (status, headers, body), with API Gateway's strictness."""
    if not isinstance(result, dict):
        raise BadLambdaResponse(f"result is {type(result).__name__}, not an object")
    unknown = set(result) - _RESPONSE_KEYS
    if unknown:
        raise BadLambdaResponse(f"unexpected field(s) {sorted(unknown)}")
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int | str):
        raise BadLambdaResponse("statusCode missing or not an integer")
    try:
        code = int(status)
    except ValueError:
        raise BadLambdaResponse("statusCode is not an integer") from None
    if not 100 <= code <= 599:
        raise BadLambdaResponse(f"statusCode {code} out of range")

    single = result.get("headers") or {}
    multi = result.get("multiValueHeaders") or {}
    if not isinstance(single, dict) or not isinstance(multi, dict):
        raise BadLambdaResponse("headers and multiValueHeaders must be objects")
    # API Gateway merges the two; for a name present in both, multiValueHeaders wins.
    multi_names = {str(k).lower() for k in multi}
    pairs = [(str(k), v) for k, v in single.items() if str(k).lower() not in multi_names]
    for name, values in multi.items():
        if not isinstance(values, list):
            raise BadLambdaResponse(f"multiValueHeaders[{name!r}] must be a list")
        pairs.extend((str(name), v) for v in values)
    headers = []
    for name, value in pairs:
        if isinstance(value, dict | list) or value is None:
            raise BadLambdaResponse(f"header {name!r} has a non-scalar value")
        text = json.dumps(value) if isinstance(value, bool) else str(value)
        if not _HEADER_NAME.match(name) or "\r" in text or "\n" in text:
            raise BadLambdaResponse(f"header {name!r} is not a valid header")
        headers.append((name, text))

    body = result.get("body")
    if body is None:
        payload = b""
    elif not isinstance(body, str):
        raise BadLambdaResponse("body must be a string")
    elif result.get("isBase64Encoded"):
        try:
            payload = base64.b64decode(body, validate=True)
        except ValueError:
            raise BadLambdaResponse("body is not valid base64") from None
    else:
        payload = body.encode("utf-8")
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("Content-Type", "application/json"))
    return code, headers, payload


# ---- the server


@dataclass
class _Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    function: str = "-"


def _json_answer(status: int, body: Mapping[str, Any], extra: Sequence[tuple[str, str]] = ()) -> _Answer:
    return _Answer(status, [("Content-Type", "application/json"), *extra], json.dumps(body).encode())


# What API Gateway answers itself, instead of a function: response type -> (status, message, x-amzn-ErrorType).
# A REST API answers an unknown path or method as a missing token (403), whatever the path; a function
# that raises or returns no valid proxy response is a 502. An HTTP API has its own fixed answers.
REST_ANSWERS = {
    "MISSING_AUTHENTICATION_TOKEN": (
        403,
        "Missing Authentication Token",
        "MissingAuthenticationTokenException",
    ),
    "REQUEST_TOO_LARGE": (413, "Request Too Long", ""),
    "DEFAULT_5XX": (502, "Internal server error", ""),
}
HTTP_API_ANSWERS = {
    "NOT_FOUND": (404, "Not Found"),
    "REQUEST_TOO_LARGE": (413, "Request Entity Too Large"),
    "INTERNAL": (500, "Internal Server Error"),
}


def rest_answer(
    kind: str, responses: Mapping[str, Mapping[str, Any]], request_id: str, path: str = ""
) -> _Answer:
    """API Gateway's own answer of type `kind` for a REST API whose GatewayResponses are `responses`: the
    response of that type, else DEFAULT_4XX or DEFAULT_5XX, customises the status, the JSON body (a template
    with simple `$context` substitution, no VTL) and headers (static `'value'`s). REQUEST_TOO_LARGE cannot be
    customised."""
    status, message, error_type = REST_ANSWERS[kind]
    configured: Mapping[str, Any] = {}
    if kind != "REQUEST_TOO_LARGE":
        configured = (
            responses.get(kind) or responses.get("DEFAULT_5XX" if status >= 500 else "DEFAULT_4XX") or {}
        )
    status = int(configured.get("StatusCode") or status)
    headers = [("Content-Type", "application/json")]
    if error_type:
        headers.append(("x-amzn-ErrorType", error_type))
    template = (configured.get("ResponseTemplates") or {}).get("application/json")
    if template is None:
        body = json.dumps({"message": message}).encode()
    else:
        values = {
            "$context.error.messageString": json.dumps(message),  # the message quoted
            "$context.error.message": message,
            "$context.error.responseType": kind,
            "$context.requestId": request_id,
            "$context.path": path,
        }
        body = re.sub(
            "|".join(re.escape(name) for name in values), lambda m: values[m.group(0)], str(template)
        ).encode()
    for name, value in ((configured.get("ResponseParameters") or {}).get("Headers") or {}).items():
        text = str(value)
        if len(text) >= 2 and text[0] == text[-1] == "'":  # static values only; mapped ones are not local
            headers.append((str(name), text[1:-1]))
    return _Answer(status, headers, body)


class _RequestTooLarge(Exception):
    pass


class _Handler(DispatchingHandler):
    server_version = "svc-local-gateway"
    # Headers and body go out in separate writes; with Nagle's algorithm on, the body waits for the
    # client's delayed ACK (~40 ms on Linux) on every keep-alive request.
    disable_nagle_algorithm = True
    server: _Server

    def log_line(self, line: str) -> None:
        self.server.gateway.log(line)

    def _dispatch(self) -> None:
        started = time.perf_counter()
        request_id = str(uuid.uuid4())
        split = urlsplit(self.path)
        try:
            answer = self.server.gateway.serve(self, request_id)
        except Exception:  # noqa: BLE001 - nothing may crash the server
            self.server.gateway.log(f"[gateway {request_id}] internal error\n{traceback.format_exc()}")
            answer = _json_answer(500, {"error": "internal_error", "request_id": request_id})
            self.close_connection = True
        elapsed = (time.perf_counter() - started) * 1000
        # Logged before the answer is written, so a client that has its answer can already see the line.
        self.server.gateway.log(
            f'{self.client_address[0]} "{self.command} {split.path}" {answer.status} {len(answer.body)} '
            f"{elapsed:.1f}ms {answer.function} {request_id}"
        )
        try:
            self._write(answer, request_id)
        except OSError:
            self.close_connection = True  # the client went away

    def _write(self, answer: _Answer, request_id: str) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                self.send_header(name, value)
        self.send_header("x-amzn-RequestId", request_id)
        self.send_header("Content-Length", str(len(answer.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    def read_body(self) -> bytes:
        """The request body; raises _RequestTooLarge past MAX_BODY_BYTES (after draining what is cheap)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length > MAX_BODY_BYTES:
            if length <= _DRAIN_LIMIT:
                self._discard(length)
            self.close_connection = True
            raise _RequestTooLarge
        return self.rfile.read(length) if length else b""

    def _discard(self, length: int) -> None:
        while length > 0:
            got = self.rfile.read(min(length, 1 << 20))
            if not got:
                break
            length -= len(got)

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return bytes(body)
            if len(body) + size > MAX_BODY_BYTES:
                self.close_connection = True
                raise _RequestTooLarge
            body += self.rfile.read(size)
            self.rfile.readline()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The listen backlog (socketserver's default is 5): past it, parallel clients' connections are refused
    # or reset before a thread can accept them.
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], gateway: Gateway) -> None:
        self.gateway = gateway
        super().__init__(address, _Handler)


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
        return _Server(address, self)

    @property
    def authority(self) -> str:
        """host:port of the API as its events name it (requestContext.domainName of an HTTP API's routes)."""
        return urlsplit(self.url).netloc

    def log(self, line: str) -> None:
        stream = self.log_stream or sys.stderr
        with self._log_lock:
            print(line, file=stream, flush=True)

    def serve(self, request: _Handler, request_id: str) -> _Answer:
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
            body = request.read_body()
        except _RequestTooLarge:
            if route.kind == "http":
                return self.http_api_answer("REQUEST_TOO_LARGE")
            return rest_answer("REQUEST_TOO_LARGE", {}, request_id)
        except ValueError:
            request.close_connection = True
            return _json_answer(400, {"error": "bad_request", "message": "Malformed request body framing"})
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

    def http_api_answer(self, kind: str) -> _Answer:
        status, message = HTTP_API_ANSWERS[kind]
        return _json_answer(status, {"message": message})

    def failed(self, route: Route, request_id: str) -> _Answer:
        """A function that raised or gave no valid proxy response: the details are in the log only."""
        if route.kind == "http":
            return self.http_api_answer("INTERNAL")
        return rest_answer("DEFAULT_5XX", self.gateway_responses.get(route.api_id, {}), request_id)

    def invoke(self, route: Route, event: dict[str, Any], request_id: str) -> _Answer:
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
            answer = _Answer(status, headers, body)
        answer.function = spec.logical_id
        return answer
