"""The merchant connects their card provider account (Stripe Connect OAuth, no key pasted): a one-time state
bound to the staff member who started (kept as its SHA-256 in this shop's database, so it is bound to the
shop too), the provider's authorize page, then the callback: the code is exchanged for the connected
account, a webhook endpoint of that account is pointed at this shop's card webhook, and the card provider row
(payment_providers, kind `card`) is enabled with the account and the endpoint's secret, sealed."""

from __future__ import annotations

import hashlib
import secrets
import urllib.parse
from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.access.auth import Staff
from svc_backoffice.core import config
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import InvalidInput, Unprocessable
from svc_backoffice.core.logs import logger
from svc_backoffice.data import sealing
from svc_backoffice.data.db import Database
from svc_backoffice.domain import card_provider as stripe
from svc_backoffice.domain import payments

STATE_TTL_SECONDS = 600
RETURN_PATH = "/settings/payments"  # the admin screens' payments tab
CALLBACK = "/api/payments/providers/card/callback"
WEBHOOK = "/api/payments/webhooks/card"


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def start(db: Database, staff: Staff) -> dict[str, Any]:
    if not stripe.configured():
        raise Unprocessable(say("card_connect.not_configured"))
    state = secrets.token_urlsafe(32)
    db.all("DELETE FROM card_connect_states WHERE expires_at < now()")
    db.all(
        "INSERT INTO card_connect_states (state_sha256, staff_id, expires_at) "
        "VALUES (%s, %s, now() + make_interval(secs => %s))",
        (_digest(state), staff.id, STATE_TTL_SECONDS),
    )
    return {"url": stripe.authorize_url(state, config.own_url(CALLBACK)), "expires_in": STATE_TTL_SECONDS}


def finish(db: Database, staff: Staff, *, code: str | None, state: str | None, error: str | None) -> str:
    """The provider's redirect back; returns where to send the browser. A missing, unknown, expired or
    another member's state is 400 and changes nothing."""
    if not state:
        raise InvalidInput(say("card_connect.missing_state"))
    pending = db.one(
        "DELETE FROM card_connect_states WHERE state_sha256 = %s RETURNING staff_id::text, "
        "expires_at < now() AS expired",
        (_digest(state),),
    )
    if pending is None or not secrets.compare_digest(pending["staff_id"], staff.id):
        raise InvalidInput(say("card_connect.state_unverified"))
    if pending["expired"]:
        raise InvalidInput(say("card_connect.expired"))
    if error or not code:
        reason = urllib.parse.quote((error or "missing_code")[:100])
        return f"{RETURN_PATH}?card=error&reason={reason}"
    try:
        account = stripe.exchange_code(code)
        secret = stripe.create_webhook_endpoint(account["account_id"], config.own_url(WEBHOOK))
    except (stripe.ProviderError, stripe.NotConfigured) as exc:
        logger.warning("card provider connection failed", extra={"reason": str(exc)})
        return f"{RETURN_PATH}?card=error&reason=provider_refused"
    public = {
        "provider": "stripe",
        "account_id": account["account_id"],
        "livemode": account["livemode"],
        "connected_by": staff.id,
    }
    sealed = sealing.seal(secret, payments._purpose("card"))
    db.all(
        "INSERT INTO payment_providers (kind, display_name, enabled, public_config, webhook_secret_encrypted) "
        "VALUES ('card', 'Stripe', true, %s, %s) ON CONFLICT (kind) DO UPDATE SET enabled = true, "
        "public_config = payment_providers.public_config || EXCLUDED.public_config, "
        "webhook_secret_encrypted = EXCLUDED.webhook_secret_encrypted",
        (Jsonb(public), sealed),
    )
    logger.info("card provider connected", extra={"account": account["account_id"]})
    return f"{RETURN_PATH}?card=connected"
