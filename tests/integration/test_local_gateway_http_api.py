"""The local gateway serving HttpApi routes as an HTTP API on its $default stage with payload format 1.0 does:
the event's version and stage, which bodies arrive base64-encoded, the domain API Gateway names, and the HTTP
API's own answer to unmatched requests. Over real HTTP."""

from __future__ import annotations

import base64
import io
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svc_local.gateway import Gateway, Router
from svc_local.template import Template, TemplateError

PACKAGE = "gwhttp_fns"

TEMPLATE = f"""
Transform: AWS::Serverless-2016-10-31
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
  EchoFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {PACKAGE}/echo/
      Handler: app.handler
      Events:
        Item:
          Type: HttpApi
          Properties: {{ApiId: !Ref Api, Path: "/items/{{id}}", Method: GET, PayloadFormatVersion: "1.0"}}
        Submit:
          Type: HttpApi
          Properties: {{ApiId: !Ref Api, Path: /submit, Method: POST, PayloadFormatVersion: "1.0"}}
        Files:
          Type: HttpApi
          Properties: {{ApiId: !Ref Api, Path: "/files/{{proxy+}}", Method: ANY, PayloadFormatVersion: "1.0"}}
"""

ECHO = """
import json

def handler(event, context):
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": json.dumps(event)}
"""


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    root = tmp_path_factory.mktemp("gateway-http-api")
    folder = root / PACKAGE / "echo"
    folder.mkdir(parents=True)
    (root / PACKAGE / "__init__.py").write_text("")
    (folder / "__init__.py").write_text("")
    (folder / "app.py").write_text(textwrap.dedent(ECHO))
    (root / "template.yaml").write_text(TEMPLATE)
    sys.path.insert(0, str(root))
    try:
        with Gateway(root / "template.yaml", "127.0.0.1", 0, log_stream=io.StringIO()) as running:
            yield running
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_an_http_api_route_gets_a_payload_1_0_event_of_the_default_stage(gateway):
    event = httpx.get(f"{gateway.url}/items/a%20b?tag=x", headers={"Host": "evil.example"}, timeout=10).json()
    assert event["version"] == "1.0"
    assert (event["resource"], event["path"], event["pathParameters"]) == (
        "/items/{id}",
        "/items/a b",
        {"id": "a b"},
    )
    context = event["requestContext"]
    assert (context["stage"], context["path"]) == ("$default", "/items/a b")
    # The domain the API is served on, not the client's Host header.
    assert context["domainName"] == gateway.authority == gateway.url.removeprefix("http://")
    assert event["headers"]["Host"] == "evil.example"


@pytest.mark.parametrize(
    ("content_type", "encoded"),
    [
        ("application/json", False),
        ("application/json; charset=utf-8", False),
        ("text/plain", False),
        ("application/xml", False),
        ("application/x-www-form-urlencoded", True),  # a form post arrives base64-encoded on an HTTP API
        ("application/octet-stream", True),
        ("image/png", True),
        (None, True),
    ],
)
def test_bodies_are_text_only_for_text_types(gateway, content_type, encoded):
    body = b'{"a": "\xc3\xa9"}'
    headers = {"Content-Type": content_type} if content_type else {}
    event = httpx.post(f"{gateway.url}/submit", content=body, headers=headers, timeout=10).json()
    assert event["isBase64Encoded"] is encoded
    assert (base64.b64decode(event["body"]) if encoded else event["body"].encode()) == body


def test_a_content_encoding_makes_even_json_base64(gateway):
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    event = httpx.post(f"{gateway.url}/submit", content=b"xx", headers=headers, timeout=10).json()
    assert event["isBase64Encoded"] is True


def test_unmatched_requests_get_the_http_api_not_found(gateway):
    for method, path in [("GET", "/nope"), ("DELETE", "/items/1"), ("GET", "/submit")]:
        answer = httpx.request(method, f"{gateway.url}{path}", timeout=10)
        assert (answer.status_code, answer.json()) == (404, {"message": "Not Found"}), (method, path)
    assert httpx.delete(f"{gateway.url}/files/a/b", timeout=10).json()["pathParameters"] == {"proxy": "a/b"}


def test_payload_format_2_0_is_refused_by_name(tmp_path: Path):
    template = tmp_path / "template.yaml"
    without_version = TEMPLATE.replace(', PayloadFormatVersion: "1.0"}\n        Files', "}\n        Files")
    assert without_version != TEMPLATE
    template.write_text(without_version)
    with pytest.raises(TemplateError, match=r"EchoFunction.Submit: .*payload format 1.0 only"):
        Template(template).routes()


def test_a_default_route_serves_every_request_no_other_route_serves(tmp_path: Path):
    # A SAM HttpApi event with no Path and no Method is the API's $default route, as on API Gateway.
    catch_all = TEMPLATE + textwrap.indent(
        textwrap.dedent("""
        Unrouted:
          Type: HttpApi
          Properties: {ApiId: !Ref Api, PayloadFormatVersion: "1.0"}
        """),
        "        ",
    )
    template = tmp_path / "template.yaml"
    template.write_text(catch_all)
    router = Router(Template(template).routes())
    for method, path in [("GET", "/nope"), ("DELETE", "/items/1"), ("GET", "/submit")]:
        route, params = router.resolve(method, path)
        assert route is not None and (route.path, route.event_name, params) == ("$default", "Unrouted", {})
    assert router.resolve("GET", "/items/1")[0].event_name == "Item"
    assert router.resolve("DELETE", "/files/a")[1] == {"proxy": "a"}
