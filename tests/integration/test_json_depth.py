"""Deeply nested JSON (`[[[[...]]]]` 30,000 deep) sent to every platform route that accepts a body, as read
from template.yaml: never a 500; the routes that read JSON answer 400 naming the nesting limit, in their own
error shape (OAuth's RFC errors, JSON-RPC -32700 on /mcp)."""

from __future__ import annotations

import json
import time

import pytest

from svc_shared.core import jsonlimit
from svc_shared.providers.checkout import sign_payload
from svc_shared.wiring import services

TOO_DEEP = f"JSON nested more than {jsonlimit.MAX_DEPTH} levels deep"

# Deep enough to overflow Python's decoder many times over, small enough for every route's size cap (OAuth's
# 64 KB is the smallest), so the nesting is what each route meets.
DEEP_ARRAY = "[" * 30_000 + "]" * 30_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000
UNCLOSED = "[" * 60_000
# Within the smallest cap of all (an analytics beacon's 4 KB), and still past what the decoder survives.
SMALL_DEEP = "[" * 1_500 + "]" * 1_500
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE", "ANY"}


def _body_routes(api) -> list[tuple[str, str]]:
    routes = {
        ("POST" if r.method == "ANY" else r.method, r.path)
        for r in api.template.routes()
        if r.method in BODY_METHODS
    }
    return sorted(routes)


def test_the_decoder_refuses_past_the_limit_and_reads_up_to_it():
    at_limit = "[" * jsonlimit.MAX_DEPTH + "]" * jsonlimit.MAX_DEPTH
    assert jsonlimit.loads(at_limit) == json.loads(at_limit)
    assert jsonlimit.loads('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')
    for text in (
        "[" * (jsonlimit.MAX_DEPTH + 1) + "]" * (jsonlimit.MAX_DEPTH + 1),
        DEEP_ARRAY,
        DEEP_OBJECT,
        UNCLOSED,
    ):
        with pytest.raises(jsonlimit.TooDeep):
            jsonlimit.loads(text)
    with pytest.raises(ValueError, match="Expecting"):
        jsonlimit.loads("[}")


@pytest.mark.parametrize(
    "body", [DEEP_ARRAY, DEEP_OBJECT, UNCLOSED, SMALL_DEEP], ids=["array", "object", "unclosed", "small"]
)
def test_every_route_that_takes_a_body_refuses_deep_json_without_a_500(api, app_env, demo_user, bearer, body):
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles, warm tone",
    )
    assert api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"}).status == 303
    routes = _body_routes(api)
    assert len(routes) >= 20  # the template's routes were read
    answers = {}
    for method, path in routes:
        concrete = path.replace("{projectId}", project.id).replace("{proxy+}", "api/products")
        headers = {**bearer, "Content-Type": "application/json"}
        if path == "/api/webhooks/checkout":  # a signed delivery, so the body is parsed
            headers["Stripe-Signature"] = sign_payload(
                body.encode(), app_env["checkout_webhook_secret"], int(time.time())
            )
        answer = api.request(method, concrete, headers=headers, body=body)
        assert answer.status < 500, (method, path, answer.status, answer.text[:300])
        assert "Traceback" not in answer.text
        answers[(method, path)] = answer

    def refused_for_depth(method: str, path: str) -> dict:
        answer = answers[(method, path)]
        assert answer.status == 400, (path, answer.status, answer.text[:300])
        return answer.json()

    for path in ("/oauth/token", "/token", "/oauth/revoke", "/revoke"):
        assert refused_for_depth("POST", path) == {
            "error": "invalid_request",
            "error_description": f"Request body is not accepted: {TOO_DEEP}.",
        }
    for path in ("/oauth/register", "/register"):
        assert refused_for_depth("POST", path)["error"] == "invalid_client_metadata"
        assert TOO_DEEP in refused_for_depth("POST", path)["error_description"]
    mcp = refused_for_depth("POST", "/mcp")
    assert mcp["error"]["code"] == -32700 and TOO_DEEP in mcp["error"]["message"]
    json_routes = [p for m, p in routes if p.startswith("/api/") and m == "POST"]
    assert len(json_routes) >= 7
    for path in json_routes:
        if answers[("POST", path)].status == 413 and body != SMALL_DEEP:
            continue  # a size cap below this body answered first; SMALL_DEEP reaches the parser
        refused = refused_for_depth("POST", path)
        assert TOO_DEEP in json.dumps(refused), (path, refused)
