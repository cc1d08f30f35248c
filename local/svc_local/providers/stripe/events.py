"""Events and their signed deliveries: the platform's own events (no `account`) go to the webhook the stack
configured (the credits checkout) and to the platform's endpoints; a connected account's events carry
`account` and go to that account's webhook endpoints, each signed with its endpoint's secret
(`Stripe-Signature: t=..,v1=..` over `{t}.{raw body}`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from svc_local.providers.common import now, random_id
from svc_local.providers.stripe.forms import API_VERSION, ID_ALPHABET


def _post(url: str, payload: bytes, signature: str) -> dict[str, Any]:
    outgoing = urllib.request.Request(  # noqa: S310 - the configured endpoint (http or https)
        url,
        data=payload,
        method="POST",
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "Stripe-Signature": signature,
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        },
    )
    try:
        with urllib.request.urlopen(outgoing, timeout=10) as answer:  # noqa: S310 - configured URL
            return {"status": answer.status, "body": answer.read(2000).decode("utf-8", "replace")}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "body": exc.read(2000).decode("utf-8", "replace")}
    except (OSError, ValueError) as exc:
        return {"status": None, "error": str(exc)}


class EventsMixin:
    """Needs `data`, `state` and `public(session)`."""

    data: dict[str, Any]
    state: Any

    def record_event(self, kind: str, session: dict[str, Any]) -> dict[str, Any]:
        """Record an event about `session` (the caller holds the state lock)."""
        event: dict[str, Any] = {
            "id": random_id("evt_", 24, ID_ALPHABET),
            "object": "event",
            "api_version": API_VERSION,
            "created": int(now()),
            "type": kind,
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "data": {"object": self.public(session)},  # type: ignore[attr-defined]
            "deliveries": [],
        }
        if session.get("account"):
            event["account"] = session["account"]
        self.data["events"][event["id"]] = event
        return event

    def _targets(self, event: dict[str, Any]) -> list[tuple[str, str]]:
        """(url, secret) of every endpoint the event goes to."""
        account = event.get("account")
        targets = [
            (endpoint["url"], endpoint["secret"])
            for endpoint in self.data["endpoints"].values()
            if endpoint.get("account") == account
            and endpoint.get("status") == "enabled"
            and ("*" in endpoint["enabled_events"] or event["type"] in endpoint["enabled_events"])
        ]
        webhook = self.data["webhook"]
        if account is None and webhook.get("url"):
            targets.insert(0, (webhook["url"], webhook.get("secret") or ""))
        return targets

    def deliver(self, event_id: str) -> dict[str, Any]:
        """POST the event, signed now, to each of its endpoints; returns what the first one answered."""
        from svc_shared.providers.checkout import sign_payload

        with self.state.lock:
            event = self.data["events"][event_id]
            targets = self._targets(event)
        payload = json.dumps({k: v for k, v in event.items() if k != "deliveries"}, indent=2).encode()
        results: list[dict[str, Any]] = []
        for url, secret in targets:
            result = _post(url, payload, sign_payload(payload, secret, int(now())))
            results.append({**result, "url": url, "at": int(now())})
        if not results:
            results.append({"status": None, "error": "no webhook endpoint configured", "at": int(now())})
        with self.state.lock:
            event["deliveries"].extend(results)
            if all(r.get("status") and 200 <= r["status"] < 300 for r in results):
                event["pending_webhooks"] = 0
        self.state.save()
        first = dict(results[0])
        first.pop("url", None)
        return first
