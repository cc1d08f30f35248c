"""POST /mcp: JSON-RPC 2.0 transport, authentication, rate limit and the account tools."""

from __future__ import annotations

import json

import pytest

BASE = "http://127.0.0.1:3000"


def rpc(api, bearer, payload, **headers):
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return api.post("/mcp", body=body, headers={**bearer, **headers})


def call(method, id_=1, **params):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params:
        message["params"] = params
    return message


def test_missing_token_is_401_with_discovery_challenge(api):
    answer = api.post("/mcp", json_body=call("initialize"))
    assert answer.status == 401
    challenge = answer.header("www-authenticate")
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="mcp:all"' in challenge
    assert f'token_endpoint="{BASE}/oauth/token"' in challenge
    assert "invalid_token" not in challenge
    assert answer.json()["error"]["code"] == -32001


def test_bad_token_is_401_with_invalid_token(api):
    answer = api.post("/mcp", json_body=call("ping"), headers={"Authorization": "Bearer svcat_nope"})
    assert answer.status == 401
    assert 'error="invalid_token"' in answer.header("www-authenticate")


def test_get_and_delete_are_405_with_the_instruction(api):
    for method in ("GET", "DELETE"):
        answer = api.request(method, "/mcp")
        assert answer.status == 405
        assert "POST a JSON-RPC 2.0 request with a Bearer access token" in answer.json()["error"]["message"]
        assert answer.header("allow") == "POST, OPTIONS"


def test_initialize_advertises_version_server_and_tools(api, bearer):
    reply = rpc(
        api,
        bearer,
        call(
            "initialize",
            protocolVersion="2025-03-26",
            capabilities={},
            clientInfo={"name": "t", "version": "1"},
        ),
    ).json()
    assert reply["result"]["protocolVersion"] == "2025-03-26"
    assert reply["result"]["serverInfo"] == {"name": "svc-mcp", "version": "0.2.0"}
    assert "tools" in reply["result"]["capabilities"]


@pytest.mark.parametrize(
    ("asked", "answered"), [("2025-06-18", "2025-06-18"), ("2026-07-28", "2025-03-26"), (None, "2025-03-26")]
)
def test_initialize_answers_the_clients_version_when_supported(api, bearer, asked, answered):
    params = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if asked:
        params["protocolVersion"] = asked
    assert rpc(api, bearer, call("initialize", **params)).json()["result"]["protocolVersion"] == answered


def test_notification_gets_202_and_no_body(api, bearer):
    answer = rpc(api, bearer, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert answer.status == 202
    assert answer.body == b""


def test_unknown_method_and_server_discover_are_method_not_found(api, bearer):
    for method in ("server/discover", "resources/list"):
        reply = rpc(api, bearer, call(method)).json()
        assert reply["error"] == {"code": -32601, "message": "Method not implemented"}


def test_unknown_tool_is_method_not_found_naming_it(api, bearer):
    reply = rpc(api, bearer, call("tools/call", name="nope", arguments={})).json()
    assert reply["error"] == {"code": -32601, "message": "Unknown tool: nope"}


def test_parse_error_and_invalid_requests(api, bearer):
    parse = rpc(api, bearer, "{not json")
    assert parse.status == 400
    assert parse.json()["error"]["code"] == -32700
    assert rpc(api, bearer, "[]").json()["error"]["code"] == -32600
    assert rpc(api, bearer, {"jsonrpc": "1.0", "id": 1, "method": "ping"}).json()["error"]["code"] == -32600
    assert (
        rpc(api, bearer, {"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}).json()["error"]["code"]
        == -32600
    )
    assert rpc(api, bearer, {"jsonrpc": "2.0", "id": 1, "method": 5}).json()["error"]["code"] == -32600
    assert (
        rpc(api, bearer, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}).json()["error"][
            "code"
        ]
        == -32602
    )


@pytest.mark.parametrize("id_", [0, -1, 1.5, "abc", "", None])
def test_ids_of_every_valid_type_are_echoed(api, bearer, id_):
    assert rpc(api, bearer, call("ping", id_=id_)).json() == {"jsonrpc": "2.0", "id": id_, "result": {}}


def test_batch_answers_requests_in_order_and_skips_notifications(api, bearer):
    replies = rpc(
        api, bearer, [call("ping", 1), {"jsonrpc": "2.0", "method": "notifications/x"}, call("nope", 2)]
    ).json()
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["error"]["code"] == -32601


def test_tools_list_publishes_schemas_and_annotations(api, bearer):
    tools = rpc(api, bearer, call("tools/list")).json()["result"]["tools"]
    by_name = {t["name"]: t for t in tools}
    assert {"get_me", "list_workspaces", "get_workspace", "list_library_projects"} <= set(by_name)
    schema = by_name["get_workspace"]["inputSchema"]
    assert schema["type"] == "object"
    assert "workspace_id" in schema["properties"]
    assert by_name["get_me"]["annotations"]["readOnlyHint"] is True


def test_tools_list_in_a_batch_echoes_every_id_with_the_same_list(api, bearer):
    ids = ['a"b\\c\u00e9', 7, 2.5, None, "x" * 200]
    body = [call("tools/list", id_) for id_ in ids] + [call("ping", "p")]
    answer = rpc(api, bearer, body)
    assert answer.status == 200
    replies = answer.json()
    assert [r["id"] for r in replies] == [*ids, "p"]
    lists = [r["result"]["tools"] for r in replies[:-1]]
    assert len(lists[0]) == 26
    assert all(tools == lists[0] for tools in lists)
    assert replies[-1] == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_get_me_returns_the_token_owner(api, bearer):
    reply = rpc(api, bearer, call("tools/call", name="get_me", arguments={})).json()
    me = json.loads(reply["result"]["content"][0]["text"])
    assert reply["result"]["isError"] is False
    assert me["email"] == "demo@example.com"
    assert me["plan"] == "paid"


def test_invalid_arguments_are_an_error_result_naming_the_argument(api, bearer):
    reply = rpc(
        api, bearer, call("tools/call", name="get_workspace", arguments={"workspace_id": 5, "extra": 1})
    ).json()
    assert reply["result"]["isError"] is True
    text = reply["result"]["content"][0]["text"]
    assert "workspace_id" in text and "extra" in text


def test_business_failure_is_an_error_result(api, bearer):
    reply = rpc(
        api, bearer, call("tools/call", name="get_workspace", arguments={"workspace_id": "someone-else"})
    ).json()
    assert reply["result"] == {"content": [{"type": "text", "text": "workspace not found"}], "isError": True}


def test_untrusted_host_or_origin_is_refused(api, bearer):
    assert rpc(api, bearer, call("ping"), Host="evil.example").status == 403
    assert rpc(api, bearer, call("ping"), Origin="http://evil.example").status == 403
    assert rpc(api, bearer, call("ping"), Origin="http://localhost:3000").status == 200


def test_sixty_first_request_in_a_window_is_refused(clock, api, bearer):
    clock.advance(60 - clock.now() % 60)
    for i in range(60):
        assert rpc(api, bearer, call("ping", i)).status == 200
    limited = rpc(api, bearer, call("ping", 61))
    assert limited.status == 429
    assert limited.header("retry-after") == "60"
    assert (
        limited.json()["error"]["message"] == "Rate limit exceeded: 60 requests/min per user. Retry in 60s."
    )
    clock.advance(60)
    assert rpc(api, bearer, call("ping")).status == 200


def test_batch_counts_each_message_and_a_batch_that_does_not_fit_is_refused_whole(clock, api, bearer):
    clock.advance(60 - clock.now() % 60)
    assert rpc(api, bearer, [call("ping", i) for i in range(61)]).status == 429
    assert rpc(api, bearer, [call("ping", i) for i in range(60)]).status == 200
    assert rpc(api, bearer, call("ping")).status == 429


def test_rate_limit_is_per_user_not_per_token(clock, api, bearer):
    from apiclient import authorize_client

    clock.advance(60 - clock.now() % 60)
    second = authorize_client(api, "demo@example.com", "demo-password-1")
    other = {**bearer, "Authorization": f"Bearer {second['access_token']}"}
    assert rpc(api, bearer, [call("ping", i) for i in range(40)]).status == 200
    assert rpc(api, other, [call("ping", i) for i in range(20)]).status == 200
    assert rpc(api, other, call("ping")).status == 429


def test_batch_of_more_than_100_messages_is_an_invalid_request(api, bearer):
    reply = rpc(api, bearer, [call("ping", i) for i in range(101)])
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32600


def test_body_over_1_mb_is_refused_without_a_500(api, bearer):
    big = call("tools/call", name="set_workspace_knowledge", arguments={"text": "x" * (1024 * 1024)})
    reply = rpc(api, bearer, big)
    assert reply.status == 413
    assert reply.json()["error"]["code"] == -32600


def test_oversize_argument_under_the_body_limit_is_an_error_result(api, bearer):
    reply = rpc(
        api, bearer, call("tools/call", name="set_workspace_knowledge", arguments={"text": "x" * 20000})
    ).json()
    assert reply["result"]["isError"] is True
    assert "text" in reply["result"]["content"][0]["text"]


@pytest.mark.parametrize("arguments", [[1, 2], "text", 5])
def test_arguments_that_are_not_an_object_are_an_error_result(api, bearer, arguments):
    reply = rpc(
        api,
        bearer,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_me", "arguments": arguments},
        },
    ).json()
    assert reply["result"]["isError"] is True


def test_cors_preflight_and_headers_for_browser_clients(api, bearer):
    preflight = api.request(
        "OPTIONS",
        "/mcp",
        headers={"Origin": "https://inspector.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status == 204
    assert preflight.header("access-control-allow-origin") == "*"
    assert "Authorization" in preflight.header("access-control-allow-headers")
    assert "MCP-Protocol-Version" in preflight.header("access-control-allow-headers")
    unauthorized = api.post("/mcp", json_body=call("ping"), headers={"Origin": "http://127.0.0.1:3000"})
    assert unauthorized.status == 401
    assert "WWW-Authenticate" in unauthorized.header("access-control-expose-headers")


def test_base64_encoded_body_is_decoded(api, bearer):
    import base64

    from functions.mcp.app import handler
    from svc_local.gateway import build_event

    body = json.dumps(call("ping", 7)).encode()
    event = build_event("POST", "/mcp", "/mcp", [("Host", "127.0.0.1:3000"), *bearer.items()], body)
    event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True

    class Context:
        function_name, memory_limit_in_mb, aws_request_id = "McpFunction", 512, "r-1"
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"

    answer = handler(event, Context())
    assert json.loads(answer["body"]) == {"jsonrpc": "2.0", "id": 7, "result": {}}
