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
    for method in ("server/discover", "prompts/list"):
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


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        (
            {"jsonrpc": "2.0", "id": True, "method": "ping"},
            (None, -32600, "Invalid Request: expected a JSON-RPC 2.0 object."),
        ),
        ({"id": 1, "method": "ping"}, (None, -32600, "Invalid Request: expected a JSON-RPC 2.0 object.")),
        (["not", "an", "object"], (None, -32600, "Invalid Request: expected a JSON-RPC 2.0 object.")),
        ({"jsonrpc": "2.0", "id": 7}, (7, -32600, "Invalid Request: method must be a string.")),
        (
            {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": "x"},
            (7, -32602, "Invalid params: params must be an object."),
        ),
        (
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 3}},
            (7, -32602, "Invalid params: name must be a string."),
        ),
    ],
)
def test_a_malformed_message_gets_the_error_naming_its_wrong_member(api, bearer, message, reply):
    answer = rpc(api, bearer, [message, call("ping", id_="after")])
    assert answer.status == 200
    first, second = answer.json()
    assert (first["id"], first["error"]["code"], first["error"]["message"]) == reply
    assert second == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_a_reply_to_a_request_the_server_never_sent_is_ignored(api, bearer):
    answer = rpc(api, bearer, [{"jsonrpc": "2.0", "id": 9, "result": {}}, call("ping", id_=2)])
    assert answer.json() == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


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
    assert reply["result"]["_meta"] == {"svc/error": {"code": "invalid_arguments", "retryable": False}}


def test_business_failure_is_an_error_result_with_its_code(api, bearer):
    reply = rpc(
        api, bearer, call("tools/call", name="get_workspace", arguments={"workspace_id": "someone-else"})
    ).json()
    assert reply["result"] == {
        "content": [{"type": "text", "text": "workspace not found"}],
        "isError": True,
        "_meta": {"svc/error": {"code": "not_found", "retryable": False}},
    }


def test_an_error_result_reads_as_one_in_the_sdk_client(api, bearer):
    from mcp.types import CallToolResult

    reply = rpc(
        api, bearer, call("tools/call", name="get_workspace", arguments={"workspace_id": "someone-else"})
    ).json()
    result = CallToolResult.model_validate(reply["result"])
    assert result.is_error is True and result.structured_content is None
    assert result.meta == {"svc/error": {"code": "not_found", "retryable": False}}
    assert result.content[0].text == "workspace not found"


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


@pytest.fixture
def inspector_allowed(monkeypatch, app_env):
    from svc_shared.wiring import services

    monkeypatch.setenv("ALLOWED_ORIGINS", "http://localhost:6274, https://inspector.example")
    services.wire(clock=services.clock())
    yield
    monkeypatch.delenv("ALLOWED_ORIGINS")
    services.wire(clock=services.clock())


def test_an_allowed_browser_origin_gets_the_same_answer_at_preflight_and_request(
    inspector_allowed, api, bearer
):
    origin = {"Origin": "http://localhost:6274"}
    preflight = api.request("OPTIONS", "/mcp", headers={**origin, "Access-Control-Request-Method": "POST"})
    assert preflight.status == 204
    assert preflight.header("access-control-allow-origin") == "http://localhost:6274"  # echoed, never *
    assert preflight.header("vary") == "Origin"
    for header in ("Authorization", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"):
        assert header in preflight.header("access-control-allow-headers")
    answer = rpc(api, bearer, call("ping"), **origin)
    assert answer.status == 200
    assert answer.header("access-control-allow-origin") == "http://localhost:6274"
    unauthorized = api.post("/mcp", json_body=call("ping"), headers=origin)
    assert unauthorized.status == 401
    assert "WWW-Authenticate" in unauthorized.header("access-control-expose-headers")


def test_an_origin_not_in_the_list_is_refused_at_preflight_and_request_alike(inspector_allowed, api, bearer):
    origin = {"Origin": "https://evil.example"}
    preflight = api.request("OPTIONS", "/mcp", headers={**origin, "Access-Control-Request-Method": "POST"})
    assert preflight.status == 403
    assert preflight.header("access-control-allow-origin") is None
    answer = rpc(api, bearer, call("ping"), **origin)
    assert answer.status == 403
    assert answer.header("access-control-allow-origin") is None
    assert answer.json()["error"]["message"] == "Forbidden: untrusted Host or Origin."


def test_the_oauth_endpoints_follow_the_same_origin_list(inspector_allowed, api):
    good, bad = {"Origin": "https://inspector.example"}, {"Origin": "https://evil.example"}
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"):
        assert (
            api.get(path, headers=good).header("access-control-allow-origin") == "https://inspector.example"
        )
        refused = api.get(path, headers=bad)
        assert refused.status == 403
        assert "ALLOWED_ORIGINS" in refused.json()["error_description"]
    for path in ("/oauth/token", "/oauth/register", "/oauth/revoke"):
        preflight = api.request("OPTIONS", path, headers={**good, "Access-Control-Request-Method": "POST"})
        assert preflight.status == 204
        assert preflight.header("access-control-allow-origin") == "https://inspector.example"
        assert (
            api.request("OPTIONS", path, headers={**bad, "Access-Control-Request-Method": "POST"}).status
            == 403
        )
    token = api.post("/oauth/token", form={"grant_type": "refresh_token", "client_id": "nope"}, headers=good)
    assert token.status == 401  # the request itself is served (and readable by the browser)
    assert token.header("access-control-allow-origin") == "https://inspector.example"
    assert (
        api.post(
            "/oauth/token", form={"grant_type": "refresh_token", "client_id": "nope"}, headers=bad
        ).status
        == 403
    )


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


# -- protocol versions --------------------------------------------------------------------------------------
V2026 = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def stateless(api, bearer, method, id_=1, headers=None, meta=META, **params):
    """A 2026-07-28 request: version and capabilities in _meta, mirrored by the routing headers."""
    message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}
    routing = {"MCP-Protocol-Version": V2026, "Mcp-Method": method}
    if "name" in params:
        routing["Mcp-Name"] = params["name"]
    return rpc(api, bearer, message, **{**routing, **(headers or {})})


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_answers_each_handshake_version_it_is_asked_for(api, bearer, version):
    reply = rpc(
        api,
        bearer,
        call("initialize", protocolVersion=version, capabilities={}),
        **{"MCP-Protocol-Version": version},
    )
    assert reply.json()["result"]["protocolVersion"] == version


def test_initialize_asked_for_2026_answers_the_newest_handshake_version_it_has(api, bearer):
    # 2026-07-28 has no initialize; a client offering it in initialize gets the seed's 2025-03-26 back.
    reply = rpc(api, bearer, call("initialize", protocolVersion=V2026, capabilities={}))
    assert reply.json()["result"]["protocolVersion"] == "2025-03-26"


@pytest.mark.parametrize("version", ["1999-01-01", "not-a-version"])
def test_an_unsupported_version_header_is_400_naming_the_supported_versions(api, bearer, version):
    answer = rpc(api, bearer, call("tools/list", 9), **{"MCP-Protocol-Version": version})
    assert answer.status == 400
    error = answer.json()["error"]
    assert answer.json()["id"] == 9
    assert error["code"] == -32022
    assert "2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28" in error["message"]
    assert error["data"] == {
        "supported": ["2025-03-26", "2025-06-18", "2025-11-25", V2026],
        "requested": version,
    }


def test_a_missing_version_header_is_served_as_2025_03_26(api, bearer):
    assert rpc(api, bearer, call("ping")).json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_server_discover_describes_the_server_without_initialize(api, bearer):
    answer = stateless(api, bearer, "server/discover")
    assert answer.status == 200
    result = answer.json()["result"]
    assert result["supportedVersions"] == ["2025-03-26", "2025-06-18", "2025-11-25", V2026]
    assert result["capabilities"] == {"tools": {"listChanged": False}, "resources": {"listChanged": False}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "svc-mcp"
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")


def test_stateless_tools_list_carries_caching_hints_and_tool_calls_say_complete(api, bearer):
    listing = stateless(api, bearer, "tools/list").json()["result"]
    assert len(listing["tools"]) == 26
    assert (listing["resultType"], listing["cacheScope"]) == ("complete", "public")
    assert listing["ttlMs"] == 3_600_000
    called = stateless(api, bearer, "tools/call", name="get_me", arguments={}).json()["result"]
    assert called["resultType"] == "complete"
    assert called["isError"] is False
    # The handshake era's results are unchanged.
    assert "ttlMs" not in rpc(api, bearer, call("tools/list")).json()["result"]


@pytest.mark.parametrize(
    ("meta", "missing"),
    [
        (None, "_meta must be an object"),
        ({"io.modelcontextprotocol/clientCapabilities": {}}, "io.modelcontextprotocol/protocolVersion"),
        ({"io.modelcontextprotocol/protocolVersion": V2026}, "io.modelcontextprotocol/clientCapabilities"),
    ],
)
def test_a_stateless_request_without_its_envelope_is_400_invalid_params(api, bearer, meta, missing):
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/list",
        "params": {} if meta is None else {"_meta": meta},
    }
    answer = rpc(api, bearer, message, **{"MCP-Protocol-Version": V2026, "Mcp-Method": "tools/list"})
    assert answer.status == 400
    assert answer.json()["id"] == 5
    assert answer.json()["error"]["code"] == -32602
    assert missing in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"Mcp-Method": "prompts/list"}, "Mcp-Method"),
        ({"Mcp-Method": "TOOLS/CALL"}, "Mcp-Method"),
        ({"Mcp-Name": "get_workspaces"}, "Mcp-Name"),
    ],
)
def test_routing_headers_that_disagree_with_the_body_are_400_header_mismatch(api, bearer, headers, words):
    answer = stateless(api, bearer, "tools/call", headers=headers, name="get_me", arguments={})
    assert answer.status == 400
    assert answer.json()["error"]["code"] == -32020
    assert words in answer.json()["error"]["message"]


def test_routing_headers_are_read_case_insensitively_and_trimmed(api, bearer):
    headers = {"mcp-method": "tools/call", "MCP-NAME": "  get_me  "}
    answer = stateless(api, bearer, "tools/call", headers=headers, name="get_me", arguments={})
    assert answer.status == 200
    encoded = stateless(
        api, bearer, "tools/call", headers={"Mcp-Name": "=?base64?Z2V0X21l?="}, name="get_me", arguments={}
    )
    assert encoded.status == 200


def test_a_body_version_other_than_the_header_is_a_mismatch_and_an_unknown_one_unsupported(api, bearer):
    other = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    mismatch = stateless(api, bearer, "server/discover", meta=other)
    assert (mismatch.status, mismatch.json()["error"]["code"]) == (400, -32020)
    unknown = stateless(
        api, bearer, "server/discover", id_=301, meta=other, headers={"MCP-Protocol-Version": "v999.0.0"}
    )
    assert (unknown.status, unknown.json()["id"]) == (400, 301)
    assert unknown.json()["error"]["data"]["requested"] == "v999.0.0"


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "unknown/method"])
def test_methods_2026_does_not_have_are_404_method_not_found(api, bearer, method):
    answer = stateless(api, bearer, method, id_=500)
    assert answer.status == 404
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": 500,
        "error": {"code": -32601, "message": "Method not implemented"},
    }


def test_a_stateless_batch_is_400_and_a_notification_202(api, bearer):
    batch = rpc(
        api, bearer, [call("tools/list")], **{"MCP-Protocol-Version": V2026, "Mcp-Method": "tools/list"}
    )
    assert batch.status == 400
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    assert rpc(api, bearer, note, **{"MCP-Protocol-Version": V2026}).status == 202


# -- scopes -------------------------------------------------------------------------------------------------
def test_a_token_without_the_scope_a_tool_needs_is_403_insufficient_scope(api, bearer):
    from svc_shared.oauth.mcpauth import issue_access_token, read_access_token
    from svc_shared.wiring import services

    key = services.signing_key("mcp-access")
    resource = f"{BASE}/mcp"
    held = bearer["Authorization"].split(" ", 1)[1]
    claims = read_access_token(held, key, resource, services.clock().now())
    narrow, _ = issue_access_token(
        key,
        resource=resource,
        user_id=claims.user_id,
        grant_id=claims.grant_id,
        client_id=claims.client_id,
        expires_at=claims.expires_at,
        scope="mcp:read",  # a scope no tool accepts today
    )
    answer = rpc(
        api,
        {**bearer, "Authorization": f"Bearer {narrow}"},
        call("tools/call", 3, name="get_me", arguments={}),
    )
    assert answer.status == 403
    challenge = answer.header("www-authenticate")
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="mcp:all"' in challenge
    assert "resource_metadata=" in challenge
    assert "get_me needs the scope mcp:all" in answer.json()["error"]["message"]
