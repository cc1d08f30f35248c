"""MCP Apps on POST /mcp: the views as `ui://` resources, the extension advertised only to clients that
declare it (per request in the stateless era, by the session id issued at initialize in the handshake era), the
tools' `_meta.ui` and the app-only tools for those clients only; every other client sees what it always saw."""

from __future__ import annotations

import re

import pytest
from test_mcp_provider_tools import shop  # noqa: F401 - the fixture
from test_mcp_transport import V2026, call, rpc, stateless

UI = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
MIME = "text/html;profile=mcp-app"
VIEWS = {"ui://svc/project-card.html", "ui://svc/publish-progress.html", "ui://svc/traffic.html"}
APP_ONLY = {"resume_publish", "get_project_traffic_daily"}
MAX_VIEW_BYTES = 150_000  # issue 41: each view under 150 KB as served


def initialize(api, bearer, capabilities):
    return rpc(
        api,
        bearer,
        call("initialize", protocolVersion="2025-11-25", capabilities=capabilities, clientInfo={"name": "t"}),
        **{"MCP-Protocol-Version": "2025-11-25"},
    )


def ui_meta():
    return {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": UI},
    }


def test_a_client_without_the_extension_gets_the_plain_tools_and_no_session(api, bearer):
    answer = initialize(api, bearer, {})
    assert answer.header("mcp-session-id") is None
    capabilities = answer.json()["result"]["capabilities"]
    assert "extensions" not in capabilities
    assert capabilities["resources"] == {"listChanged": False}
    tools = rpc(api, bearer, call("tools/list")).json()["result"]["tools"]
    assert len(tools) == 26
    assert not APP_ONLY & {t["name"] for t in tools}
    assert all("_meta" not in t for t in tools)
    refused = rpc(api, bearer, call("tools/call", name="resume_publish", arguments={"project_id": "p"}))
    assert refused.json()["error"] == {"code": -32601, "message": "Unknown tool: resume_publish"}


def test_a_client_with_the_extension_gets_a_session_the_views_and_the_app_only_tools(api, bearer):
    answer = initialize(api, bearer, {"extensions": UI})
    session = answer.header("mcp-session-id")
    assert session and session.startswith("ui1.")
    assert answer.json()["result"]["capabilities"]["extensions"] == UI
    tools = {
        t["name"]: t
        for t in rpc(api, bearer, call("tools/list"), **{"Mcp-Session-Id": session}).json()["result"]["tools"]
    }
    assert len(tools) == 28 and set(tools) >= APP_ONLY
    assert tools["create_project"]["_meta"]["ui"] == {
        "resourceUri": "ui://svc/project-card.html",
        "visibility": ["model", "app"],
    }
    assert tools["resume_publish"]["_meta"]["ui"]["visibility"] == ["app"]
    assert tools["get_project_traffic_daily"]["_meta"]["ui"]["resourceUri"] == "ui://svc/traffic.html"
    assert {t["_meta"]["ui"]["resourceUri"] for t in tools.values() if "_meta" in t} == VIEWS
    assert "_meta" not in tools["get_me"]


def test_a_session_id_this_server_did_not_issue_is_404(api, bearer):
    answer = rpc(api, bearer, call("tools/list"), **{"Mcp-Session-Id": "ui1.forged"})
    assert answer.status == 404
    assert "Initialize again" in answer.json()["error"]["message"]


def test_an_extension_without_our_mime_type_is_no_ui_client(api, bearer):
    other = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/uri-list"]}}
    answer = initialize(api, bearer, {"extensions": other})
    assert answer.header("mcp-session-id") is None
    assert "extensions" not in answer.json()["result"]["capabilities"]


def test_resources_list_and_read_serve_the_three_views_with_their_csp(api, bearer):
    listed = rpc(api, bearer, call("resources/list")).json()["result"]["resources"]
    assert {r["uri"] for r in listed} == VIEWS
    assert all(r["mimeType"] == MIME and r["name"] and r["description"] for r in listed)
    assert all(r["_meta"]["ui"]["csp"] == {} for r in listed)
    for uri in VIEWS:
        contents = rpc(api, bearer, call("resources/read", uri=uri)).json()["result"]["contents"]
        assert len(contents) == 1
        content = contents[0]
        assert (content["uri"], content["mimeType"]) == (uri, MIME)
        assert content["_meta"]["ui"] == {"csp": {}, "prefersBorder": True}
        page = content["text"]
        assert page.startswith("<!DOCTYPE html>")
        assert "class Host {" in page and "/*VIEW_" not in page
        # Self-contained: no outside script, style sheet, image or frame, and no token.
        assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)
        assert "Bearer" not in page
    templates = rpc(api, bearer, call("resources/templates/list")).json()["result"]
    assert templates == {"resourceTemplates": []}


@pytest.mark.parametrize("uri", ["ui://svc/nope.html", "test://nonexistent"])
def test_reading_an_unknown_resource_is_invalid_params_naming_it(api, bearer, uri):
    reply = rpc(api, bearer, call("resources/read", uri=uri)).json()
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == f"Resource not found: {uri}"
    assert reply["error"]["data"] == {"uri": uri}


def test_stateless_requests_declare_the_extension_per_request(api, bearer):
    plain = stateless(api, bearer, "tools/list").json()["result"]
    assert len(plain["tools"]) == 26
    with_ui = stateless(api, bearer, "tools/list", meta=ui_meta()).json()["result"]
    assert len(with_ui["tools"]) == 28
    discovered = stateless(api, bearer, "server/discover", meta=ui_meta()).json()["result"]
    assert discovered["capabilities"]["extensions"] == UI
    assert "extensions" not in stateless(api, bearer, "server/discover").json()["result"]["capabilities"]
    uri = "ui://svc/traffic.html"
    read = stateless(api, bearer, "resources/read", headers={"Mcp-Name": uri}, uri=uri)
    assert read.status == 200
    body = read.json()["result"]
    assert (body["resultType"], body["cacheScope"], body["ttlMs"]) == ("complete", "public", 3_600_000)
    missing = stateless(
        api,
        bearer,
        "resources/read",
        headers={"Mcp-Name": "ui://svc/missing.html"},
        uri="ui://svc/missing.html",
    )
    assert missing.status == 400 and missing.json()["error"]["data"] == {"uri": "ui://svc/missing.html"}


def test_each_view_as_served_weighs_under_150_kb(api, bearer):
    """What a host downloads and renders per view: the resources/read text, in UTF-8 bytes."""
    sizes = {}
    for uri in sorted(VIEWS):
        contents = rpc(api, bearer, call("resources/read", uri=uri)).json()["result"]["contents"]
        sizes[uri] = len(contents[0]["text"].encode("utf-8"))
    assert all(size < MAX_VIEW_BYTES for size in sizes.values()), sizes


def ui_call(api, bearer, session, name, **arguments):
    reply = rpc(
        api, bearer, call("tools/call", name=name, arguments=arguments), **{"Mcp-Session-Id": session}
    )
    assert reply.status == 200, reply.text
    return reply.json()["result"]


def test_the_views_tools_answer_a_ui_client(shop):  # noqa: F811 - the fixture imported above
    api, bearer, project_id = shop["api"], shop["bearer"], shop["project_id"]
    session = initialize(api, bearer, {"extensions": UI}).header("mcp-session-id")

    status = ui_call(api, bearer, session, "get_project_status", project_id=project_id)
    assert status["isError"] is False
    details = status["structuredContent"]
    assert (details["publish_status"], details["publish_stage"], details["publish_error"]) == (
        "not_started",
        "db_creating",
        None,
    )

    def traffic_daily(start_date: str, end_date: str) -> dict:
        return ui_call(
            api,
            bearer,
            session,
            "get_project_traffic_daily",
            project_id=project_id,
            start_date=start_date,
            end_date=end_date,
        )

    daily = traffic_daily("2026-01-30", "2026-02-01")
    assert daily["isError"] is False
    assert daily["structuredContent"]["days"] == [
        {"date": day, "pageviews": 0, "unique_visitors": 0}
        for day in ("2026-01-30", "2026-01-31", "2026-02-01")
    ]
    ninety = traffic_daily("2026-01-01", "2026-03-31")
    assert ninety["isError"] is False and len(ninety["structuredContent"]["days"]) == 90
    over = traffic_daily("2026-01-01", "2026-04-01")
    assert over["isError"] is True
    assert "the date range is at most 90 days" in over["content"][0]["text"]

    stranger = ui_call(api, bearer, session, "resume_publish", project_id="not-a-project-of-yours")
    assert stranger["isError"] is True
    assert stranger["content"][0]["text"] == "project not found"
