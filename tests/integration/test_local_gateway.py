"""The local API Gateway: REST proxy events, route precedence and error answers, over real HTTP."""

from __future__ import annotations

import base64
import io
import json
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from svc_local.gateway import MAX_BODY_BYTES, Gateway, Router, build_event, convert_response, rest_answer
from svc_local.template import Template

PACKAGE = "gwtest_fns"

TEMPLATE = f"""
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage:
    Type: String
    Default: test
Globals:
  Function:
    Runtime: python3.11
    Timeout: 7
    MemorySize: 256
    Environment:
      Variables:
        STAGE_NAME: !Ref Stage
Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      Name: !Sub gw-${{Stage}}
      StageName: live
      BinaryMediaTypes: [image~1*, application/octet-stream]
      GatewayResponses:
        DEFAULT_4XX:
          ResponseParameters:
            Headers:
              Access-Control-Allow-Origin: "'*'"
          ResponseTemplates:
            application/json: '{{"error": $context.error.messageString, "type": "$context.error.responseType"}}'
  EchoFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {PACKAGE}/echo/
      Handler: app.handler
      Events:
        Item: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: "/items/{{id}}", Method: get}}}}
        ItemPut: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: "/items/{{id}}", Method: PUT}}}}
        Special: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /items/special, Method: GET}}}}
        Deep: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: "/items/{{proxy+}}", Method: GET}}}}
        Files: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: "/files/{{proxy+}}", Method: ANY}}}}
        Upload: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /upload, Method: POST}}}}
  ToolsFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {PACKAGE}/tools/
      Handler: app.handler
      MemorySize: 1024
      Events:
        Boom: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /boom, Method: GET}}}}
        Garbage: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: "/garbage/{{kind}}", Method: GET}}}}
        Cookies: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /cookies, Method: GET}}}}
        Image: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /image, Method: GET}}}}
        Size: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /size, Method: POST}}}}
        Together: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /together, Method: GET}}}}
        State: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /state, Method: POST}}}}
        Served: {{Type: Api, Properties: {{RestApiId: !Ref Api, Path: /served, Method: GET}}}}
"""

ECHO = """
import json

def handler(event, context):
    seen = {
        "function_name": context.function_name,
        "memory_limit_in_mb": context.memory_limit_in_mb,
        "invoked_function_arn": context.invoked_function_arn,
        "aws_request_id": context.aws_request_id,
        "remaining": context.get_remaining_time_in_millis(),
    }
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"},
            "body": json.dumps({"event": event, "context": seen})}
"""

TOOLS = """
import base64
import json
import time

from gwtest_fns.sync import SERVED, TOGETHER  # shared by every instance, as a resource outside the function

CURRENT = {}  # module state, like a Powertools resolver's current event
PNG = bytes(range(256))
GARBAGE = {
    "none": None,
    "text": "hello",
    "no-status": {"body": "x"},
    "bad-status": {"statusCode": "two hundred"},
    "dict-body": {"statusCode": 200, "body": {"a": 1}},
    "bad-base64": {"statusCode": 200, "body": "***", "isBase64Encoded": True},
    "extra-key": {"statusCode": 200, "body": "", "cookies": ["a=b"]},
    "header-injection": {"statusCode": 200, "headers": {"X-A": "1\\r\\nX-B: 2"}},
}

def handler(event, context):
    resource = event["resource"]
    if resource == "/boom":
        raise RuntimeError("kaboom")
    if resource == "/garbage/{kind}":
        return GARBAGE[event["pathParameters"]["kind"]]
    if resource == "/cookies":
        return {"statusCode": 201, "headers": {"X-One": "1", "Set-Cookie": "ignored=1"},
                "multiValueHeaders": {"Set-Cookie": ["a=1; Path=/", "b=2; HttpOnly"], "X-Many": ["x", "y"]},
                "body": ""}
    if resource == "/image":
        return {"statusCode": 200, "headers": {"Content-Type": "image/png"},
                "body": base64.b64encode(PNG).decode(), "isBase64Encoded": True}
    if resource == "/size":
        raw = base64.b64decode(event["body"]) if event["isBase64Encoded"] else (event["body"] or "").encode()
        return {"statusCode": 200, "body": json.dumps({"size": len(raw)})}
    if resource == "/together":
        TOGETHER.wait()
        return {"statusCode": 204}
    if resource == "/served":  # requests this instance's execution context has served
        SERVED.set(SERVED.get() + 1)
        return {"statusCode": 200, "body": str(SERVED.get())}
    if resource == "/state":
        CURRENT["body"] = event["body"]
        time.sleep(0.002)  # another request running now in this instance would overwrite it
        return {"statusCode": 200, "body": CURRENT["body"]}
    return {"statusCode": 500, "body": "unexpected"}
"""


def write_app(root: Path) -> Path:
    for name, source in (("echo", ECHO), ("tools", TOOLS)):
        folder = root / PACKAGE / name
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        (folder / "app.py").write_text(textwrap.dedent(source))
    (root / PACKAGE / "__init__.py").write_text("")
    (root / PACKAGE / "sync.py").write_text(
        "import contextvars\nimport threading\nTOGETHER = threading.Barrier(2, timeout=5)\n"
        "SERVED = contextvars.ContextVar('served', default=0)\n"
    )
    template = root / "template.yaml"
    template.write_text(TEMPLATE)
    return template


@pytest.fixture(scope="module")
def app_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("gateway-app")
    template = write_app(root)
    sys.path.insert(0, str(root))
    yield template
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def gateway_log() -> io.StringIO:
    return io.StringIO()


@pytest.fixture(scope="module")
def gateway(app_template: Path, gateway_log: io.StringIO) -> Iterator[Gateway]:
    with Gateway(app_template, "127.0.0.1", 0, log_stream=gateway_log) as running:
        yield running


@pytest.fixture
def client(gateway: Gateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway.url, timeout=10) as http:
        yield http


# ---- events, built directly


def test_event_has_path_parameters_from_the_matched_resource():
    event = build_event("GET", "/items/a%20b", "/items/{id}", [("Host", "example.test")])
    assert event["resource"] == "/items/{id}"
    assert event["path"] == "/items/a b"
    assert event["httpMethod"] == "GET"
    assert event["pathParameters"] == {"id": "a b"}
    assert event["stageVariables"] is None
    assert event["body"] is None
    assert event["isBase64Encoded"] is False


def test_greedy_proxy_parameter_takes_the_rest_of_the_path():
    event = build_event("DELETE", "/files/a/b/c.txt", "/files/{proxy+}")
    assert event["pathParameters"] == {"proxy": "a/b/c.txt"}


def test_query_string_keeps_last_value_and_every_value():
    event = build_event("GET", "/items/1?tag=a&tag=b&empty=&q=x%20y", "/items/{id}")
    assert event["queryStringParameters"] == {"tag": "b", "empty": "", "q": "x y"}
    assert event["multiValueQueryStringParameters"] == {"tag": ["a", "b"], "empty": [""], "q": ["x y"]}


def test_absent_query_and_headers_are_none_as_in_api_gateway():
    event = build_event("GET", "/items/1", "/items/{id}")
    assert event["queryStringParameters"] is None
    assert event["multiValueQueryStringParameters"] is None
    assert event["headers"] is None
    assert event["multiValueHeaders"] is None


def test_repeated_headers_and_cookies_are_all_kept():
    headers = [("Cookie", "a=1; b=2"), ("X-Tag", "one"), ("cookie", "c=3"), ("x-tag", "two")]
    event = build_event("GET", "/items/1", "/items/{id}", headers)
    assert event["multiValueHeaders"] == {"Cookie": ["a=1; b=2", "c=3"], "X-Tag": ["one", "two"]}
    assert event["headers"] == {"Cookie": "c=3", "X-Tag": "two"}


def test_request_context_describes_the_request():
    event = build_event(
        "PUT",
        "/items/9",
        "/items/{id}",
        [("Host", "127.0.0.1:3000"), ("User-Agent", "pytest")],
        source_ip="10.1.2.3",
        request_id="req-1",
        time_epoch_ms=1_700_000_000_000,
    )
    context = event["requestContext"]
    assert context["resourcePath"] == "/items/{id}"
    assert context["httpMethod"] == "PUT"
    assert context["path"] == "/items/9"
    assert context["stage"] == "live"
    assert context["requestId"] == "req-1"
    assert context["requestTimeEpoch"] == 1_700_000_000_000
    assert context["requestTime"] == "14/Nov/2023:22:13:20 +0000"
    assert context["identity"]["sourceIp"] == "10.1.2.3"
    assert context["identity"]["userAgent"] == "pytest"
    assert context["domainName"] == "127.0.0.1:3000"
    assert context["protocol"] == "HTTP/1.1"


@pytest.mark.parametrize(
    ("content_type", "body", "encoded"),
    [
        ("image/png", b"\x89PNG", True),
        ("image/png; charset=binary", b"abc", True),
        ("application/octet-stream", b"abc", True),
        ("application/json", b'{"a": "\xc3\xa9"}', False),
        ("text/plain", b"\xff\xfe not utf-8", True),
        (None, b"plain", False),
    ],
)
def test_body_is_base64_for_binary_media_types_or_non_utf8(content_type, body, encoded):
    headers = [("Content-Type", content_type)] if content_type else []
    event = build_event(
        "POST",
        "/upload",
        "/upload",
        headers,
        body,
        binary_media_types=["image/*", "application/octet-stream"],
    )
    assert event["isBase64Encoded"] is encoded
    assert event["body"] == (base64.b64encode(body).decode() if encoded else body.decode())


# ---- routing


def test_exact_segment_beats_parameter_beats_proxy(app_template: Path):
    router = Router(Template(app_template).routes())
    assert router.resolve("GET", "/items/special")[0].path == "/items/special"
    route, params = router.resolve("GET", "/items/42")
    assert (route.path, params) == ("/items/{id}", {"id": "42"})
    route, params = router.resolve("GET", "/items/42/parts/7")
    assert (route.path, params) == ("/items/{proxy+}", {"proxy": "42/parts/7"})


def test_proxy_needs_at_least_one_segment(app_template: Path):
    router = Router(Template(app_template).routes())
    assert router.resolve("GET", "/files") == (None, {})
    assert router.resolve("PATCH", "/files/x")[0].method == "ANY"


def test_template_routes_carry_module_and_binary_types(app_template: Path):
    routes = {(r.method, r.path): r for r in Template(app_template).routes()}
    echo = routes[("GET", "/items/{id}")]
    assert (echo.logical_id, echo.module, echo.attribute) == (
        "EchoFunction",
        f"{PACKAGE}.echo.app",
        "handler",
    )
    assert echo.binary_media_types == ("image/*", "application/octet-stream")
    assert echo.function.timeout == 7
    assert routes[("POST", "/size")].function.memory_size == 1024


# ---- over HTTP


def test_request_reaches_the_handler_as_a_proxy_event(client: httpx.Client, gateway: Gateway):
    response = client.get("/items/42?x=1&x=2", headers={"X-Trace": "t1", "Cookie": "sid=abc"})
    assert response.status_code == 200
    seen = response.json()
    event, context = seen["event"], seen["context"]
    assert event["resource"] == "/items/{id}"
    assert event["pathParameters"] == {"id": "42"}
    assert event["multiValueQueryStringParameters"] == {"x": ["1", "2"]}
    headers = {k.lower(): v for k, v in event["headers"].items()}
    assert headers["x-trace"] == "t1"
    assert headers["cookie"] == "sid=abc"
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"
    assert event["requestContext"]["identity"]["sourceIp"] == "127.0.0.1"
    assert event["requestContext"]["requestId"] == response.headers["x-amzn-requestid"]
    assert context["function_name"] == "EchoFunction"
    assert context["memory_limit_in_mb"] == 256
    assert context["invoked_function_arn"].endswith(":function:EchoFunction")
    assert context["aws_request_id"] == event["requestContext"]["requestId"]
    assert 0 < context["remaining"] <= 7000


def test_most_specific_route_wins_over_http(client: httpx.Client):
    assert client.get("/items/special").json()["event"]["resource"] == "/items/special"
    assert client.get("/items/1/2").json()["event"]["pathParameters"] == {"proxy": "1/2"}
    assert client.put("/items/1", content=b"{}").json()["event"]["httpMethod"] == "PUT"


def test_binary_upload_arrives_base64_encoded(client: httpx.Client):
    body = bytes(range(256)) * 4
    response = client.post("/files/logo.png", content=body, headers={"Content-Type": "image/png"})
    event = response.json()["event"]
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == body


def test_binary_response_is_decoded(client: httpx.Client):
    response = client.get("/image")
    assert response.headers["content-type"] == "image/png"
    assert response.content == bytes(range(256))


def test_multi_value_headers_repeat_set_cookie(client: httpx.Client):
    response = client.get("/cookies")
    assert response.status_code == 201
    assert response.headers.get_list("set-cookie") == ["a=1; Path=/", "b=2; HttpOnly"]
    assert response.headers.get_list("x-many") == ["x", "y"]
    assert response.headers["x-one"] == "1"
    assert response.headers["content-type"] == "application/json"


def test_an_unknown_path_or_method_is_the_rest_apis_missing_token_answer_as_the_template_shapes_it(
    client: httpx.Client,
):
    # A REST API answers both as MISSING_AUTHENTICATION_TOKEN (403), here through the API's DEFAULT_4XX
    for response in (client.get("/nowhere"), client.delete("/items/42")):
        assert response.status_code == 403
        assert response.json() == {
            "error": "Missing Authentication Token",
            "type": "MISSING_AUTHENTICATION_TOKEN",
        }
        assert response.headers["x-amzn-errortype"] == "MissingAuthenticationTokenException"
        assert response.headers["access-control-allow-origin"] == "*"


def test_body_over_ten_megabytes_is_413_whatever_the_gateway_responses(client: httpx.Client):
    response = client.post("/size", content=b"x" * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413
    assert response.json() == {"message": "Request Too Long"}  # REQUEST_TOO_LARGE cannot be customised
    assert client.get("/items/1").status_code == 200


def test_body_of_exactly_ten_megabytes_is_accepted(client: httpx.Client):
    response = client.post(
        "/size", content=b"\0" * MAX_BODY_BYTES, headers={"Content-Type": "application/octet-stream"}
    )
    assert response.status_code == 200
    assert response.json() == {"size": MAX_BODY_BYTES}


def test_handler_exception_is_api_gateways_502_and_logged(client: httpx.Client, gateway_log: io.StringIO):
    response = client.get("/boom")
    assert response.status_code == 502
    request_id = response.headers["x-amzn-requestid"]
    assert response.json() == {"message": "Internal server error"}  # no DEFAULT_5XX in this template
    log = gateway_log.getvalue()
    assert f"[ToolsFunction {request_id}] unhandled error" in log
    assert "RuntimeError: kaboom" in log
    assert client.get("/items/1").status_code == 200


@pytest.mark.parametrize(
    "kind",
    ["none", "text", "no-status", "bad-status", "dict-body", "bad-base64", "extra-key", "header-injection"],
)
def test_malformed_handler_result_is_502(client: httpx.Client, kind: str):
    response = client.get(f"/garbage/{kind}")
    assert response.status_code == 502
    assert response.json() == {"message": "Internal server error"}


def test_handlers_run_concurrently(gateway: Gateway):
    # The handler waits on a two-party barrier: it only returns if both requests are in flight at once.
    def call() -> int:
        return httpx.get(f"{gateway.url}/together", timeout=10).status_code

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(lambda _: call(), range(2))) == [204, 204]


def test_concurrent_requests_never_share_handler_state(gateway: Gateway):
    # As on Lambda, an instance serves one request at a time: module state set by one request is never
    # overwritten by another running at the same moment, and parallel requests get instances of their own.
    def client(number: int) -> list[tuple[str, str]]:
        with httpx.Client(base_url=gateway.url, timeout=10) as http:
            sent = [f"{number}-{i}" for i in range(6)]
            return [(body, http.post("/state", content=body).text) for body in sent]

    with ThreadPoolExecutor(32) as pool:
        outcomes = [pair for result in pool.map(client, range(32)) for pair in result]
    assert len(outcomes) == 32 * 6
    assert [sent for sent, got in outcomes if sent != got] == []
    tools = next(route.function for route in gateway.routes if route.path == "/state")
    assert gateway.registry.instance_count(tools) > 1


def test_an_instance_keeps_its_context_across_its_requests(client: httpx.Client):
    # As a Lambda instance keeps its process: what one request leaves in the context (a database connection,
    # log keys) the instance's next request finds. Sequential requests reuse the one idle instance.
    counts = [int(client.get("/served").text) for _ in range(3)]
    assert counts[1:] == [counts[0] + 1, counts[0] + 2]


def test_every_request_is_logged_on_one_line(client: httpx.Client, gateway_log: io.StringIO):
    response = client.get("/items/77")
    request_id = response.headers["x-amzn-requestid"]
    lines = [line for line in gateway_log.getvalue().splitlines() if request_id in line]
    assert len(lines) == 1
    assert '"GET /items/77" 200' in lines[0]
    assert "EchoFunction" in lines[0]


def test_convert_response_merges_headers_with_multi_value_winning():
    status, headers, body = convert_response(
        {
            "statusCode": "302",
            "headers": {"Location": "/x", "X-A": "1"},
            "multiValueHeaders": {"x-a": ["2", "3"]},
        }
    )
    assert status == 302
    assert headers == [("Location", "/x"), ("x-a", "2"), ("x-a", "3"), ("Content-Type", "application/json")]
    assert body == b""


def test_port_zero_picks_a_free_port(app_template: Path):
    with (
        Gateway(app_template, "127.0.0.1", 0, log_stream=io.StringIO()) as one,
        Gateway(app_template, "127.0.0.1", 0, log_stream=io.StringIO()) as two,
    ):
        assert one.port != two.port
        assert httpx.get(f"{two.url}/items/special").json()["event"]["resource"] == "/items/special"


@pytest.mark.parametrize(
    ("kind", "status", "message"),
    [
        ("MISSING_AUTHENTICATION_TOKEN", 403, "Missing Authentication Token"),
        ("DEFAULT_5XX", 502, "Internal server error"),
    ],
)
def test_the_merchant_backoffice_apis_own_answers_are_json_in_its_error_shape(kind, status, message):
    """backoffice/template.yaml's gateway responses, rendered as API Gateway renders them: valid JSON in the
    functions' {"error": ...} shape (a template that quotes $context.error.messageString again is not)."""
    template = Template(Path(__file__).resolve().parents[2] / "backoffice" / "template.yaml")
    answer = rest_answer(kind, template.gateway_responses("BackofficeApi"), "req-1")
    assert answer.status == status
    assert json.loads(answer.body) == {"error": message}
