"""Every path a browser reaches answers a page in words: the API's $default route sends what no other route
serves to the workspace, which answers a browser with its "no such page" and an API client with API Gateway's
own JSON; a browser opening the MCP server's URL is told what the address is for."""

from __future__ import annotations

import pytest

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
UNKNOWN = [
    ("GET", "/foo"),
    ("GET", "/workspace/nope"),
    ("GET", "/workspace/projects/00000000-0000-0000-0000-000000000000/bogus"),
    ("POST", "/workspace/connections/state/extra"),
    ("GET", "/login/again"),
]


@pytest.mark.parametrize(("method", "path"), UNKNOWN)
def test_a_browser_gets_a_page_in_words_for_a_path_nothing_serves(api, method, path):
    answer = api.request(method, path, headers=BROWSER)
    assert answer.status == 404
    assert answer.header("content-type").startswith("text/html")
    assert "This page does not exist." in answer.text
    assert "Back to your projects" in answer.text
    assert '{"message"' not in answer.text


def test_the_page_knows_who_is_signed_in(api, demo_user):
    assert api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"}).status == 303
    answer = api.get("/workspace/nope", headers=BROWSER)
    assert answer.status == 404
    assert "demo@example.com" in answer.text


@pytest.mark.parametrize(("method", "path"), UNKNOWN)
def test_an_api_client_keeps_api_gateways_json(api, method, path):
    answer = api.request(method, path, headers={"Accept": "application/json"})
    assert (answer.status, answer.json()) == (404, {"message": "Not Found"})
    assert api.request(method, path).json() == {"message": "Not Found"}  # no Accept at all


def test_a_method_a_path_does_not_have_is_the_same_answer(api):
    assert api.request("DELETE", "/login", headers=BROWSER).status == 404
    assert api.request("DELETE", "/login").json() == {"message": "Not Found"}


def test_a_browser_opening_the_mcp_url_is_told_what_it_is_for(api, app_env):
    base = app_env["PUBLIC_BASE_URL"]
    answer = api.get("/mcp", headers=BROWSER)
    assert answer.status == 200
    assert answer.header("content-type").startswith("text/html")
    assert "This address is for your AI client" in answer.text
    assert f"{base}/mcp</code>" in answer.text
    assert f'href="{base}/workspace/mcp"' in answer.text
    assert "script-src" not in answer.header("content-security-policy")
    assert answer.header("content-security-policy").startswith("default-src 'none'")


@pytest.mark.parametrize("accept", ["text/event-stream", "application/json, text/event-stream", None])
def test_an_mcp_client_get_is_still_405(api, accept):
    answer = api.get("/mcp", headers={"Accept": accept} if accept else {})
    assert answer.status == 405
    assert answer.header("allow") == "POST, OPTIONS"
