"""In-process client for handler-level tests: routes a request through template.yaml's Api events to the
function's `handler(event, context)` with a real API Gateway proxy event, as the local gateway does."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from svc_local.gateway import Router, build_event, convert_response
from svc_local.runtime import FunctionRegistry, LambdaContext
from svc_local.template import Template


@dataclass
class ApiResponse:
    status: int
    header_list: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.header_list if k.lower() == name.lower()), None)

    def headers_named(self, name: str) -> list[str]:
        return [v for k, v in self.header_list if k.lower() == name.lower()]

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def set_cookies(self) -> dict[str, str]:
        jar: SimpleCookie = SimpleCookie()
        for header in self.headers_named("set-cookie"):
            jar.load(header)
        return {name: morsel.value for name, morsel in jar.items()}


@dataclass
class ApiClient:
    template_path: Path
    cookies: dict[str, str] = field(default_factory=dict)
    source_ip: str = "127.0.0.1"
    host: str = "127.0.0.1:3000"
    # requestContext.domainName of HTTP API routes: the domain API Gateway serves the API on (the Host
    # header when None, as the local gateway on loopback).
    domain_name: str | None = None

    def __post_init__(self) -> None:
        self.template = Template(self.template_path)
        self.router = Router(self.template.routes())
        self.registry = FunctionRegistry(route.function for route in self.template.routes())

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: bytes | str = b"",
        form: dict[str, str] | None = None,
        json_body: Any = None,
        params: dict[str, str] | None = None,
    ) -> ApiResponse:
        all_headers = {"Host": self.host, **(headers or {})}
        if form is not None:
            body = urlencode(form)
            all_headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif json_body is not None:
            body = json.dumps(json_body)
            all_headers.setdefault("Content-Type", "application/json")
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        raw_path = f"{path}?{urlencode(params)}" if params else path
        route, _ = self.router.resolve(method, raw_path.split("?")[0])
        if route is None:  # the platform's HTTP API answers every unmatched request so
            return ApiResponse(404, [("Content-Type", "application/json")], b'{"message": "Not Found"}')
        event = build_event(
            method,
            raw_path,
            route.path,
            list(all_headers.items()),
            body.encode() if isinstance(body, str) else body,
            source_ip=self.source_ip,
            binary_media_types=route.binary_media_types,
            kind=route.kind,
            domain_name=self.domain_name,
        )
        handler = self.registry.handler(route.function)
        result = handler(event, LambdaContext.for_function(route.function))
        status, header_list, out = convert_response(result)
        response = ApiResponse(status, header_list, out)
        for name, value in response.set_cookies.items():
            if value:
                self.cookies[name] = value
            else:
                self.cookies.pop(name, None)
        return response

    def get(self, path: str, **kwargs: Any) -> ApiResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> ApiResponse:
        return self.request("POST", path, **kwargs)


LOOPBACK_REDIRECT = "http://127.0.0.1:33418/callback"


def pkce_pair() -> tuple[str, str]:
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def authorize_client(api: ApiClient, email: str, password: str) -> dict[str, Any]:
    """Register a public client, sign in, press Allow and exchange the code: the token response."""
    import re
    from urllib.parse import parse_qs, urlsplit

    client_id = api.post(
        "/oauth/register",
        json_body={"redirect_uris": [LOOPBACK_REDIRECT], "token_endpoint_auth_method": "none"},
    ).json()["client_id"]
    assert api.post("/login", form={"email": email, "password": password}).status == 303
    verifier, challenge = pkce_pair()
    page = api.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": LOOPBACK_REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
        },
    )
    consent = re.search(r'name="consent_token" value="([^"]+)"', page.text)
    assert consent, page.text
    answer = api.post("/oauth/authorize", form={"consent_token": consent.group(1), "decision": "allow"})
    code = parse_qs(urlsplit(answer.header("location") or "").query)["code"][0]
    tokens = api.post(
        "/oauth/token",
        form={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": LOOPBACK_REDIRECT,
            "code_verifier": verifier,
            "client_id": client_id,
        },
    ).json()
    return {**tokens, "client_id": client_id}


def refresh_tokens(api: ApiClient, tokens: dict[str, Any]) -> ApiResponse:
    """The refresh grant of a token response from `authorize_client` (its refresh token and client)."""
    return api.post(
        "/oauth/token",
        form={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": tokens["client_id"],
        },
    )


def mcp_status(api: ApiClient, access_token: str) -> int:
    """The status of a tools/list on /mcp with this access token."""
    return api.post(
        "/mcp",
        json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {access_token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    ).status


def create_repo(api: ApiClient, project_id: str, name: Any) -> ApiResponse:
    """The workspace's connect-repo call creating a repository `name` for the project."""
    return api.post(
        "/api/repo-host/connect-repo", json_body={"projectId": project_id, "mode": "create", "name": name}
    )


def link_repo(api: ApiClient, project_id: str, existing: Any) -> ApiResponse:
    """The workspace's connect-repo call linking the project to the repository `existing` (owner/name)."""
    return api.post(
        "/api/repo-host/connect-repo",
        json_body={"projectId": project_id, "mode": "link", "existingRepo": existing},
    )


def push_files(api: ApiClient, project_id: str, files: dict[str, str]) -> ApiResponse:
    """The workspace's push of `files` (path: text) to the project's repository."""
    listed = [{"path": path, "content": content} for path, content in files.items()]
    return api.post("/api/repo-host/push", json_body={"projectId": project_id, "files": listed})


def call_tool(api: ApiClient, bearer: dict[str, str], name: str, **arguments: Any) -> dict[str, Any]:
    """tools/call through POST /mcp; the JSON-RPC result."""
    reply = api.post(
        "/mcp",
        headers=bearer,
        body=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        ),
    )
    assert reply.status == 200, reply.text
    result: dict[str, Any] = reply.json()["result"]
    check_structured_content(name, result)
    return result


def check_structured_content(name: str, result: dict[str, Any]) -> None:
    """A successful call of a tool that declares an outputSchema carries structuredContent that is valid by
    that schema and equal to the text content (what SDK clients check)."""
    import jsonschema

    from svc_shared.mcp.tools import registry

    tool = registry.tools.get(name)
    if tool is None or result.get("isError"):
        return
    schema = tool.definition().get("outputSchema")
    if schema is None:
        assert "structuredContent" not in result
        return
    jsonschema.validate(result["structuredContent"], schema)
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])


def tool_ok(result: dict[str, Any]) -> Any:
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


def tool_error(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    return str(result["content"][0]["text"])


def connect_provider(api: ApiClient, provider: str) -> None:
    """The workspace's OAuth dance with a sandbox provider: initiate, the provider's page, our callback."""
    import httpx

    url = api.get("/api/oauth/initiate", params={"provider": provider}).json()["url"]
    params = dict(httpx.URL(httpx.get(url).headers["location"]).params)
    answer = api.get("/api/oauth/callback", params=params)
    assert answer.status == 200, answer.text


PUBLISH_PROVIDERS = ("repo_host", "db_host", "static_host")


def connected_project(api: ApiClient, user: Any, prompt: str, name: str | None = None) -> Any:
    """The signed-in `user` connects the three providers a publish needs, then has a project of `prompt`."""
    from svc_shared.wiring import services

    for provider in PUBLISH_PROVIDERS:
        connect_provider(api, provider)
    return services.projects().create(
        owner_id=user.id, workspace_id=user.default_workspace_id, prompt=prompt, name=name
    )


def project_with_repository(
    api: ApiClient, bearer: dict[str, str], providers: tuple[str, ...] = ("repo_host", "db_host")
) -> dict[str, Any]:
    """The signed-in user connects `providers`, makes a project with create_project (its answer is returned)
    and creates the project's repository."""
    for provider in providers:
        connect_provider(api, provider)
    created = tool_ok(
        call_tool(api, bearer, "create_project", prompt="Handmade candles for cosy homes, warm tone")
    )
    answer = create_repo(api, created["project_id"], f"shop-{created['project_id'][:8]}")
    assert answer.status == 200, answer.text
    return dict(created)
