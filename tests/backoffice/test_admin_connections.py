"""Settings > Payments and Integrations against the real database: a provider's webhook signing secret set and
replaced beside Connect Stripe and never shown back, providers and integrations added and changed by an admin,
and the Google Search Console connection through the provider sandbox's consent page; an editor and a viewer
refused, a forged post included."""

from __future__ import annotations

import re

from adminhelpers import error_beside, forms, get, own_token, post, refused_by_role, submit, text
from test_backoffice_integrations import SITES, Provider, provider  # noqa: F401 - the sandbox's gsc provider

from svc_backoffice.core import config
from svc_backoffice.data import sealing
from svc_backoffice.domain import integrations, payments
from svc_backoffice.domain.models.commerce import PaymentProviderCreate

SECRET = "whsec_" + "s3cr3t" * 4


def _secret_of(db, kind: str) -> str | None:
    row = db.one("SELECT webhook_secret_encrypted AS s FROM payment_providers WHERE kind = %s", (kind,))
    if row["s"] is None:
        return None
    return sealing.unseal(bytes(row["s"]), sealing.purpose_of("payment_providers", "webhook_secret", kind))


def test_the_card_webhook_secret_is_set_replaced_and_never_shown(as_role, db):
    card = payments.create_provider(
        db, PaymentProviderCreate(kind="card", display_name="Stripe", enabled=True)
    )
    admin = as_role("admin")
    page = get(admin, "/settings/payments")
    assert "Connect" in page.body and "Webhook signing secret Not set" in text(page)
    assert "Stripe is connected" in text(get(admin, "/settings/payments?card=connected"))
    refused = text(get(admin, "/settings/payments?card=error&reason=access_denied"))
    assert "Stripe was not connected (access_denied). Try again." in refused
    action = f"/settings/payments/providers/{card['id']}"
    assert action in forms(page)
    assert submit(admin, "/settings/payments", action, {"webhook_secret": SECRET}).status == 303
    assert _secret_of(db, "card") == SECRET
    after = get(admin, "/settings/payments")
    assert "Webhook signing secret Set" in text(after) and SECRET not in after.body
    assert SECRET not in get(admin, action).body
    # Only the secret was sent: the rest stays as it was.
    assert payments.get_provider(db, str(card["id"]))["enabled"] is True
    short = submit(admin, "/settings/payments", action, {"webhook_secret": "short"})
    assert short.status == 400 and "16 characters" in error_beside(short, "webhook_secret")
    assert "short" not in re.findall(r'name="webhook_secret"[^>]*value="([^"]*)"', short.body)
    assert _secret_of(db, "card") == SECRET
    replaced = SECRET[::-1]
    assert submit(admin, action, action, {"webhook_secret": replaced}).status == 303
    assert _secret_of(db, "card") == replaced
    # An empty box keeps it; the remove box clears it.
    fields = {"display_name": "Stripe", "enabled": "on", "webhook_secret": "", "public_config": ""}
    assert submit(admin, action, action, fields).status == 303 and _secret_of(db, "card") == replaced
    assert submit(admin, action, action, {**fields, "webhook_secret_remove": "on"}).status == 303
    assert _secret_of(db, "card") is None


def test_an_admin_adds_a_provider_with_its_settings(as_role, db):
    admin = as_role("admin")
    new = "/settings/payments/providers/new"
    fields = {
        "kind": "wallet-a",
        "display_name": "Wallet",
        "enabled": "on",
        "webhook_secret": SECRET,
        "public_config": "merchant = m_42\n\nregion = eu",
    }
    assert submit(admin, new, new, fields).status == 303
    [wallet] = payments.list_providers(db)
    assert (wallet["kind"], wallet["enabled"], wallet["public_config"]) == (
        "wallet-a",
        True,
        {"merchant": "m_42", "region": "eu"},
    )
    assert _secret_of(db, "wallet-a") == SECRET
    page = get(admin, f"/settings/payments/providers/{wallet['id']}")
    assert "merchant = m_42" in page.body and SECRET not in page.body
    twice = submit(admin, new, new, fields)
    assert twice.status == 400 and error_beside(twice, "kind")
    lines = submit(admin, new, new, {**fields, "kind": "wallet-b", "public_config": "no equals sign"})
    assert error_beside(lines, "public_config") == "Write one setting a line, like name = value."
    # A value stored as a number stays a number when its line is left as it was.
    db.all('UPDATE payment_providers SET public_config = \'{"fee": 2, "region": "eu"}\'')
    path = f"/settings/payments/providers/{wallet['id']}"
    kept = {"display_name": "Wallet", "enabled": "on", "public_config": "fee = 2\nregion = us"}
    assert submit(admin, path, path, kept).status == 303
    assert payments.get_provider(db, str(wallet["id"]))["public_config"] == {"fee": 2, "region": "us"}


def test_payments_are_refused_to_an_editor_and_a_forged_secret_changes_nothing(as_role, db):
    card = payments.create_provider(
        db, PaymentProviderCreate(kind="card", display_name="Stripe", webhook_secret=SECRET)
    )
    action = f"/settings/payments/providers/{card['id']}"
    for role in ("editor", "viewer"):
        member = as_role(role)
        assert get(member, "/settings/payments").status == 403
        assert refused_by_role(
            post(member, action, {"webhook_secret": "x" * 20}, csrf=own_token(member)), role
        )
    assert _secret_of(db, "card") == SECRET


def test_an_admin_adds_an_integration_and_its_secret_stays_sealed(as_role, db):
    admin = as_role("admin")
    fields = {"kind": "mailer", "status": "connected", "secret": "api-key-123456", "config": "list = news"}
    assert submit(admin, "/settings/integrations", "/settings/integrations/new", fields).status == 303
    [item] = integrations.list_integrations(db)
    assert (item["kind"], item["status"], item["secret_set"], item["config"]) == (
        "mailer",
        "connected",
        True,
        {"list": "news"},
    )
    page = get(admin, "/settings/integrations")
    assert "mailer" in text(page) and "Set (never shown)" in text(page) and "api-key-123456" not in page.body
    path = f"/settings/integrations/{item['id']}"
    edit = get(admin, path)
    assert "api-key-123456" not in edit.body and "readonly" in re.search(
        r'<input id="kind"[^>]*>', edit.body
    ).group(0)
    changed = {"status": "error", "secret": "", "secret_remove": "on", "config": "list = offers"}
    assert submit(admin, path, path, changed).status == 303
    item = integrations.get_integration(db, str(item["id"]))
    assert (item["status"], item["secret_set"], item["config"]) == ("error", False, {"list": "offers"})
    bad = submit(
        admin,
        "/settings/integrations/new",
        "/settings/integrations/new",
        {"kind": "Bad Kind", "status": "on"},
    )
    assert bad.status == 400 and error_beside(bad, "kind") and error_beside(bad, "status")
    assert (
        submit(admin, path, f"{path}/delete", {"understood": "on"}).location
        == "/settings/integrations?notice=removed"
    )
    assert integrations.list_integrations(db) == []


def test_integrations_are_refused_below_admin(as_role, db):
    for role in ("editor", "viewer"):
        member = as_role(role)
        assert get(member, "/settings/integrations").status == 403
        token = own_token(member)
        assert refused_by_role(
            post(member, "/settings/integrations/new", {"kind": "mailer"}, csrf=token), role
        )
        assert refused_by_role(post(member, "/settings/integrations/gsc/connect", {}, csrf=token), role)
    assert integrations.list_integrations(db) == []


def test_without_a_search_console_client_the_page_says_so(as_role, db, monkeypatch):
    monkeypatch.delenv("GSC_CLIENT_ID")
    config.reset_settings()
    page = get(as_role("admin"), "/settings/integrations")
    assert "has no search-console client set up yet" in text(page)
    assert "/settings/integrations/gsc/connect" not in forms(page)
    admin = as_role("admin")
    tried = post(admin, "/settings/integrations/gsc/connect", {}, csrf=own_token(admin))
    assert tried.status == 422 and "Search console is not configured" in text(tried)


def test_an_admin_connects_and_disconnects_google_search_console(as_role, db, provider):  # noqa: F811
    admin = as_role("admin")
    page = get(admin, "/settings/integrations")
    assert "Connect Google Search Console" in text(page)
    # The browser follows the form's redirect to the consent page only if the page's policy names it.
    origin = provider.base.split("/gsc", 1)[0]
    assert f"form-action 'self' {origin};" in page.headers["Content-Security-Policy"]
    assert "form-action 'self';" in get(admin, "/settings/payments").headers["Content-Security-Policy"]
    started = submit(admin, "/settings/integrations", "/settings/integrations/gsc/connect", {})
    assert started.status == 303 and started.location.startswith(f"{provider.base}/o/oauth2/v2/auth?")
    back = provider.authorize(started.location)
    landed = admin.get(f"/api/gsc/callback?code={back['code']}&state={back['state']}")
    assert landed.location == "/settings/integrations?gsc=connected"
    connected = text(get(admin, landed.location))
    assert "Google Search Console is connected." in connected and "Connected since" in connected
    assert SITES[0]["siteUrl"] in connected and "Connect Google Search Console" not in connected
    failed = text(get(admin, "/settings/integrations?gsc=error&reason=access_denied"))
    assert "was not connected (access_denied)" in failed
    gone = submit(admin, "/settings/integrations", "/settings/integrations/gsc/disconnect", {})
    assert gone.location == "/settings/integrations?notice=disconnected"
    assert "Connect Google Search Console" in text(get(admin, gone.location))
    assert provider.counts()["POST /gsc/revoke"] == 1
