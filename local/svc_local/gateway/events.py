"""The event API Gateway gives a function for one request: a REST API's proxy event, or an HTTP API's (payload
format 1.0), bodies base64-encoded as each kind of API encodes them."""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from svc_local.serving import match_resource
from svc_local.template import LOCAL_ACCOUNT_ID

STAGE = "live"
HTTP_API_STAGE = "$default"  # an HTTP API's default stage: its URL has no stage path
DEFAULT_ROUTE = "$default"  # an HTTP API's catch-all route (a SAM HttpApi event with no Path or Method)
# The media types an HTTP API passes to the function as text; every other body (a form post included, or one
# without a Content-Type or with a Content-Encoding) arrives base64-encoded with isBase64Encoded true.
HTTP_API_TEXT_TYPES = ("application/json", "application/xml", "application/javascript")


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
