"""The hosted backoffice's platform side: a published project's shop (URL, database through the recorded
pooler, per-shop keys, hand-off keys), kept warm for a minute, 404 for what is not a published shop, and the
shops function handing the backoffice an event whose path is relative to the shop."""

from __future__ import annotations

import json
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from awsadmin import SANDBOX_DATABASE_URL, admin_client

from svc_backoffice.core.tenancy import Shop
from svc_shared.core.config import ConfigurationError
from svc_shared.core.errors import NotFound
from svc_shared.storage import keys
from svc_shared.wiring import services

EVENTS = Path(__file__).resolve().parents[2] / "events"


@pytest.fixture
def shops_env(clock, app_env, monkeypatch):
    secret = admin_client("secretsmanager").create_secret(
        Name=f"backoffice-{app_env['TABLE_NAME']}", SecretString=uuid.uuid4().hex * 2
    )
    monkeypatch.setenv("BACKOFFICE_SECRET_ARN", secret["ARN"])
    services.wire(clock=clock)
    return {**app_env, "backoffice_secret_arn": secret["ARN"]}


def a_project(user, name: str = "Candle Shop"):
    return services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name=name,
    )


def publish_record(project, password: str = "s3cret/pass+word"):
    """What publishing leaves on a project: the encrypted database password (db_creating), the pooler and
    the backoffice URL (the site stage). The pooler is this machine's PostgreSQL, as the sandbox answers."""
    server = psycopg.conninfo.conninfo_to_dict(SANDBOX_DATABASE_URL)
    sealed = services.envelope().encrypt(password, {"project_id": project.id, "kind": "db_password"})
    return services.projects().update(
        project,
        {
            "db_password": sealed,
            "db_pooler_host": server.get("host", "127.0.0.1"),
            "db_pooler_port": int(server.get("port", 5432)),
            "db_pooler_user": server.get("user", "postgres"),
            "db_pooler_database": server.get("dbname", "postgres"),
            "backoffice_url": f"{services.settings().public_base_url}/shops/{project.id}",
        },
    )


def test_a_published_project_is_a_shop_on_its_own_database_with_its_own_keys(shops_env, demo_user):
    project = publish_record(a_project(demo_user))
    other = publish_record(a_project(demo_user, "Mug Shop"), password="another-password")
    services.handoffs().sign_in_url(demo_user, project.id)  # the first hand-off makes the first key

    shop = services.shops().get(project.id)
    assert shop.id == project.id
    assert shop.base_url == f"http://127.0.0.1:3000/shops/{project.id}"
    server = psycopg.conninfo.conninfo_to_dict(SANDBOX_DATABASE_URL)
    assert psycopg.conninfo.conninfo_to_dict(shop.conninfo) == {
        "host": server.get("host", "127.0.0.1"),
        "port": str(server.get("port", 5432)),
        "user": server.get("user", "postgres"),
        "password": "s3cret/pass+word",  # quoted in the URL, read back whole
        "dbname": server.get("dbname", "postgres"),
    }
    with psycopg.connect(shop.conninfo, connect_timeout=5) as conn:
        assert conn.execute("SELECT current_database()").fetchone()[0] == server.get("dbname", "postgres")
    assert shop.handoff_public_keys == services.handoff_keys().public_keys()
    assert len(shop.handoff_public_keys) == 1

    second = services.shops().get(other.id)
    assert len(shop.session_key) == len(shop.field_key) == 32
    assert len({shop.session_key, shop.field_key, second.session_key, second.field_key}) == 4
    assert "s3cret" not in repr(shop) and repr(shop.session_key) not in repr(shop)

    services.wire(clock=services.clock())  # another instance derives the same keys
    again = services.shops().get(project.id)
    assert (again.session_key, again.field_key) == (shop.session_key, shop.field_key)


def test_a_shop_knows_its_live_storefront_and_its_build_hook(shops_env, demo_user):
    """What the storefront API needs of the site: its live URL (CORS, the checkout's return) and the build hook
    publishing recorded (rebuilds after a catalog change); neither is shown by repr."""
    project = publish_record(a_project(demo_user, "Site Shop"))
    bare = services.shops().get(project.id)
    assert (bare.storefront_url, bare.build_hook_url) == (None, None)
    hook = "https://api.netlify.com/build_hooks/5f2c9b"
    services.projects().update(project, {"live_url": "https://site-shop.netlify.app", "deploy_hook": hook})
    services.wire(clock=services.clock())  # a fresh instance (no minute-long cache)
    shop = services.shops().get(project.id)
    assert (shop.storefront_url, shop.build_hook_url) == ("https://site-shop.netlify.app", hook)
    assert hook not in repr(shop)


def test_unknown_and_unpublished_projects_are_not_shops(shops_env, demo_user):
    with pytest.raises(NotFound):
        services.shops().get(str(uuid.uuid4()))
    with pytest.raises(NotFound):
        services.shops().get("")
    draft = a_project(demo_user)
    with pytest.raises(NotFound):
        services.shops().get(draft.id)
    # The site stage records the URL and pooler after the database password: half a record is no shop.
    services.projects().update(draft, {"backoffice_url": f"http://127.0.0.1:3000/shops/{draft.id}"})
    with pytest.raises(NotFound):
        services.shops().get(draft.id)


def test_a_warm_instance_keeps_the_keys_a_minute_but_a_deleted_shop_stops_at_once(
    shops_env, demo_user, clock, monkeypatch
):
    from svc_shared.core.crypto import Envelope

    project = publish_record(a_project(demo_user))
    services.handoffs().sign_in_url(demo_user, project.id)  # the platform's hand-off key exists
    opened: list[str] = []
    decrypt = Envelope.decrypt_text
    monkeypatch.setattr(
        Envelope, "decrypt_text", lambda self, *a, **k: opened.append("x") or decrypt(self, *a, **k)
    )
    first = services.shops().get(project.id)
    clock.advance(59)
    assert services.shops().get(project.id) == first
    assert len(opened) == 1  # the database password was opened once in the minute
    # Gone from storage (the owner deleted the account): the next request finds no shop, cache or not.
    shops_env["dynamodb"].delete_item(
        TableName=shops_env["TABLE_NAME"],
        Key={"pk": {"S": keys.project(project.id)}, "sk": {"S": keys.META}},
    )
    with pytest.raises(NotFound):
        services.shops().get(project.id)


def test_a_shop_served_before_the_first_hand_off_knows_its_key_at_once(shops_env, demo_user, clock):
    # A storefront build reads the shop before anyone opened its backoffice: no hand-off key exists yet, and a
    # shop kept with none would refuse the first hand-off for a minute ("no hand-off key with that kid").
    project = publish_record(a_project(demo_user))
    assert services.shops().get(project.id).handoff_public_keys == ()
    services.handoffs().sign_in_url(demo_user, project.id)  # the first hand-off makes the first key
    clock.advance(1)
    assert services.shops().get(project.id).handoff_public_keys == services.handoff_keys().public_keys()
    assert len(services.handoff_keys().public_keys()) == 1


def test_without_the_backoffice_secret_the_error_names_the_setting(app_env, clock, demo_user, monkeypatch):
    monkeypatch.delenv("BACKOFFICE_SECRET_ARN", raising=False)
    services.wire(clock=clock)
    project = publish_record(a_project(demo_user))
    with pytest.raises(ConfigurationError, match="BACKOFFICE_SECRET_ARN is not set"):
        services.shops().get(project.id)


# ---- the shops function ---------------------------------------------------------------------------------
# TEST STAND-IN for svc_backoffice.hosting.shops's `handle` (the backoffice side, tested in tests/backoffice):
# it records what it was given. Only here, never in shipped code.
@pytest.fixture
def hosting(monkeypatch):
    import svc_backoffice.hosting

    calls: list[tuple[dict[str, Any], Shop]] = []

    def handle(
        event: dict[str, Any], context: Any, shop: Shop, *, migrations_dir: Path | None = None
    ) -> dict[str, Any]:
        # The shop's database is brought to the schema of the backoffice version this deployment runs.
        assert migrations_dir is not None and (migrations_dir / "0001_core.sql").is_file()
        calls.append((event, shop))
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"ok": true}'}

    module = types.ModuleType("svc_backoffice.hosting.shops")
    module.handle = handle  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "svc_backoffice.hosting.shops", module)
    monkeypatch.setattr(svc_backoffice.hosting, "shops", module, raising=False)
    return calls


def test_the_backoffice_gets_the_path_below_the_shop_and_the_shop(shops_env, demo_user, api, hosting):
    project = publish_record(a_project(demo_user))
    # As a shop is served once its owner has opened it: a hand-off key exists, so a warm instance keeps it.
    services.handoffs().sign_in_url(demo_user, project.id)
    answer = api.post(
        f"/shops/{project.id}/api/products",
        params={"expand": "variants"},
        json_body={"title": "Speckled mug"},
        headers={"Cookie": "svc_session=abc"},
    )
    assert answer.status == 200 and answer.json() == {"ok": True}
    event, shop = hosting[-1]
    assert type(shop) is Shop  # the backoffice's own type, from the Shops service to the pool
    assert (shop.id, shop.base_url) == (project.id, f"http://127.0.0.1:3000/shops/{project.id}")
    assert shop.conninfo == services.shops().get(project.id).conninfo
    assert event["path"] == "/api/products" and event["requestContext"]["path"] == "/api/products"
    assert event["httpMethod"] == "POST"
    assert event["queryStringParameters"] == {"expand": "variants"}
    assert json.loads(event["body"]) == {"title": "Speckled mug"}
    assert event["headers"]["Cookie"] == "svc_session=abc"

    root = api.get(f"/shops/{project.id}")
    assert root.status == 200 and hosting[-1][0]["path"] == "/"
    assert api.get(f"/shops/{project.id}/auth/sso", params={"token": "t"}).status == 200
    assert hosting[-1][0]["path"] == "/auth/sso"


def test_a_stage_or_base_path_in_front_changes_nothing(shops_env, demo_user, hosting):
    from functions.shops.app import handler
    from svc_local.runtime import LambdaContext
    from svc_local.template import Template

    (spec,) = [
        f for f in Template(EVENTS.parent / "template.yaml").functions() if f.logical_id == "ShopsFunction"
    ]
    project = publish_record(a_project(demo_user))
    event = json.loads((EVENTS / "shops_proxy_post.json").read_text())
    event["pathParameters"]["projectId"] = project.id
    event["path"] = f"/v1/shops/{project.id}/api/products"  # a custom domain's base path
    event["requestContext"]["path"] = f"/live/v1/shops/{project.id}/api/products"
    assert handler(event, LambdaContext.for_function(spec))["statusCode"] == 200
    assert hosting[-1][0]["path"] == "/api/products"
    assert hosting[-1][0]["resource"] == "/{proxy+}"


def test_what_is_not_a_published_shop_answers_404_in_the_backoffice_error_shape(
    shops_env, demo_user, api, hosting
):
    draft = a_project(demo_user)
    for path in (f"/shops/{uuid.uuid4()}", f"/shops/{draft.id}/api/products", "/shops/x/auth/sso"):
        answer = api.get(path)
        assert answer.status == 404
        assert answer.header("content-type") == "application/json"
        assert answer.json() == {"error": "Shop not found"}
    assert hosting == []


def test_a_misconfigured_stack_answers_500_naming_the_request_only(
    app_env, clock, demo_user, api, monkeypatch
):
    monkeypatch.delenv("BACKOFFICE_SECRET_ARN", raising=False)
    services.wire(clock=clock)
    project = publish_record(a_project(demo_user))
    answer = api.get(f"/shops/{project.id}/api/products")
    assert answer.status == 500
    body = answer.json()
    assert body["error"] == "internal error" and body["request_id"]
    assert "BACKOFFICE_SECRET_ARN" not in answer.text


def test_the_shop_asks_who_may_still_be_signed_in_on_each_request(shops_env, demo_user):
    """The hosted backoffice asks, for each request of a session, what the account that signed in may do
    now: the project read afresh (made private: its workspace members are invitees again), the account
    read afresh (deleted, or its sessions ended since: nothing)."""
    project = publish_record(a_project(demo_user))
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id, role="admin")
    services.projects().set_visibility(project, "workspace")
    access = services.shops().get(project.id).account_access
    assert access is not None
    assert (access(demo_user.id, 0), access(member.id, 0)) == ("owner", "admin")
    services.projects().set_visibility(services.projects().get(project.id), "private")
    access = services.shops().get(project.id).account_access
    assert access is not None
    assert (access(demo_user.id, 0), access(member.id, 0)) == ("owner", "invitee")
    services.accounts().end_sessions(demo_user.id)  # a password change, "Sign out everywhere"
    assert (access(demo_user.id, 0), access(demo_user.id, 1)) == (None, "owner")
    assert access("no-such-account", 0) is None
