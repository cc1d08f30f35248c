"""A stack deployed without a custom domain (PublicBaseUrl empty): the functions read the base URL from API
Gateway's request context, print the same URLs as the stack's Outputs, and the publish steps, which no request
reaches, learn it from the table (a sign-in or a publish through the API records it)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from apiclient import connected_project
from svc_local.template import Template
from svc_shared.core.config import get_settings
from svc_shared.storage import keys
from svc_shared.wiring import baseurl, services

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
API_ID = "abc123"
DOMAIN = f"{API_ID}.execute-api.us-east-1.amazonaws.com"
BASE = f"https://{DOMAIN}"
OUTPUTS = Template(TEMPLATE, refs={"PlatformHttpApi": API_ID}).outputs()


@pytest.fixture
def derived(provider_env, api, monkeypatch):
    """The functions' environment of a stack deployed with the defaults; requests come in on execute-api."""
    monkeypatch.setenv("PUBLIC_BASE_URL", "")
    services.wire(clock=services.clock())
    api.domain_name = DOMAIN
    api.host = DOMAIN
    yield {"api": api, "env": provider_env}
    baseurl.bind({})


def _recorded() -> str | None:
    item = services.table().get(keys.CONFIG, keys.PUBLIC_BASE_URL, consistent=True)
    return item["url"] if item else None


def _forget_recorded() -> None:
    services.table().delete(keys.CONFIG, keys.PUBLIC_BASE_URL)


def test_discovery_names_the_execute_api_url_whatever_host_the_client_sends(derived):
    api = derived["api"]
    forged = {"Host": "evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http"}
    server = api.get("/.well-known/oauth-authorization-server", headers=forged).json()
    assert server["issuer"] == OUTPUTS["ApiUrl"] == BASE
    assert server["token_endpoint"] == f"{BASE}/oauth/token"
    resource = api.get("/.well-known/oauth-protected-resource/mcp", headers=forged).json()
    assert resource["resource"] == OUTPUTS["McpUrl"] == f"{BASE}/mcp"
    assert resource["authorization_servers"] == [BASE]
    challenge = api.post("/mcp", json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert challenge.status == 401
    assert f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"' in challenge.header(
        "WWW-Authenticate"
    )


def test_provider_callbacks_are_the_urls_the_stack_outputs(derived, demo_user):
    api = derived["api"]
    answer = api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert answer.status == 303 and answer.header("Location") == f"{BASE}/"
    assert "Secure" in answer.header("Set-Cookie")
    for provider, output in [
        ("repo_host", "RepoHostCallbackUrl"),
        ("db_host", "DbHostCallbackUrl"),
        ("static_host", "StaticHostCallbackUrl"),
    ]:
        url = api.get("/api/oauth/initiate", params={"provider": provider}).json()["url"]
        assert parse_qs(urlsplit(url).query)["redirect_uri"] == [OUTPUTS[output]], provider
    mcp_page = api.get("/workspace/mcp")
    assert OUTPUTS["McpUrl"] in mcp_page.text


def _wait_for_execution(arn: str, timeout: float = 60.0) -> str:
    sfn = services.current().aws.client("stepfunctions")
    deadline = time.monotonic() + timeout
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.2)
    return str(sfn.describe_execution(executionArn=arn)["status"])


def _site_variables(env, user_id: str, slug: str) -> dict[str, str]:
    from svc_shared.providers.static_host import StaticHost

    host = StaticHost(
        env["STATIC_HOST_API_URL"], services.connections().token(user_id, "static_host").access_token
    )
    site = host.find_site(f"svc-{slug}")
    assert site is not None
    return dict(host.env(site.account_id, site.id))


def test_an_execution_started_by_hand_learns_the_url_from_the_sign_in(derived, demo_user):
    api, env = derived["api"], derived["env"]
    assert _recorded() is None
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert _recorded() == BASE
    project = connected_project(api, demo_user, "Loose-leaf teas for curious drinkers, calm tone", "Tea Shop")
    baseurl.bind({})
    services.wire(clock=services.clock())  # a fresh container: what a publish-steps function starts with
    # An operator starts the state machine with the project id only.
    sfn = services.current().aws.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=get_settings().publish_state_machine_arn, input=json.dumps({"projectId": project.id})
    )["executionArn"]
    assert _wait_for_execution(arn) == "SUCCEEDED"
    stored = services.projects().get(project.id, consistent=True)
    assert stored.extra.get("publish_stage") == "ready"
    assert _site_variables(env, demo_user.id, stored.slug)["SVC_PLATFORM_URL"] == BASE


def test_a_publish_through_the_api_records_the_url_for_its_steps(derived, demo_user):
    api, env = derived["api"], derived["env"]
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project = connected_project(api, demo_user, "Handmade soaps for sensitive skin, gentle tone", "Soap Shop")
    _forget_recorded()
    services.wire(clock=services.clock())  # forget what this container wrote
    started = api.post(f"/api/projects/{project.id}/provision", json_body={"action": "start"})
    assert started.status == 200, started.text
    assert _recorded() == BASE
    arn = services.projects().get(project.id, consistent=True).extra["publish_execution_arn"]
    assert _wait_for_execution(arn) == "SUCCEEDED"
    stored = services.projects().get(project.id, consistent=True)
    assert _site_variables(env, demo_user.id, stored.slug)["SVC_PLATFORM_URL"] == BASE


def test_a_configured_url_is_used_as_is_and_nothing_is_recorded(provider_env, api, demo_user):
    api.domain_name = DOMAIN
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert (
        api.get("/.well-known/oauth-authorization-server").json()["issuer"] == provider_env["PUBLIC_BASE_URL"]
    )
    assert _recorded() is None
