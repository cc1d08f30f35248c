"""Every route with a body, walked with bodies a careless or hostile client sends: bytes that are not UTF-8,
text that is not JSON, JSON of the wrong type, JSON nested beyond reason, and a body over the size limit.
Each gets a 4xx with `{error}`, never a 5xx or Python's own message."""

from __future__ import annotations

import base64
import importlib
import json
import uuid

import pytest
from bohelpers import LambdaContext, build_event, function_for

from svc_backoffice.edge.requests import MAX_BODY_BYTES
from svc_backoffice.routers import table as route_table

WITH_BODIES = [r for r in route_table.ROUTES if r.body and r.role]  # routes that read a JSON body


def call(route: route_table.Route, cookie: str, *, raw: bytes) -> tuple[int, dict]:
    path = route.path.replace("[id]", str(uuid.uuid4())).replace("[slug]", "some-slug")
    event = build_event(route.method, path, raw_body="x", headers={"Cookie": cookie})
    event["body"] = base64.b64encode(raw).decode()
    event["isBase64Encoded"] = True
    module = importlib.import_module(f"backoffice.functions.{function_for(route.method, path)}.app")
    result = module.handler(event, LambdaContext())
    return result["statusCode"], json.loads(result.get("body") or "{}")


BAD_BODIES = {
    "not-utf8": b'{"name": "\xff\xfe"}',
    "malformed": b'{"name": ',
    "array": b"[1, 2, 3]",
    "string": b'"text"',
    "number": b"42",
    "null": b"null",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "oversized": b'{"name": "' + b"x" * MAX_BODY_BYTES + b'"}',
}


@pytest.mark.parametrize(("kind", "raw"), BAD_BODIES.items(), ids=list(BAD_BODIES))
@pytest.mark.parametrize("route", WITH_BODIES, ids=lambda r: f"{r.method} {r.path}")
def test_a_bad_body_is_a_4xx_with_an_error_on_every_route(staff, route, kind, raw):
    status, body = call(route, staff["owner"]["cookie"], raw=raw)
    assert 400 <= status < 500, (status, body)
    assert "error" in body
    assert "codec" not in json.dumps(body) and "Traceback" not in json.dumps(body)
    if kind == "oversized" and route.method != "DELETE":
        assert (status, body) == (413, {"error": "The body is larger than 1024 KB."})
