"""Hosted-checkout sandbox (Stripe shape): checkout sessions created with the secret key (form encoded,
Idempotency-Key replays), a hosted page whose Pay button completes the session, and a signed
`checkout.session.completed` webhook delivered to the configured endpoint (again on demand)."""

from __future__ import annotations

import hashlib
import html as html_escape
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from svc_local.providers.common import (
    BaseProvider,
    basic,
    bearer,
    html,
    json_body,
    now,
    random_id,
    redirect,
)
from svc_local.sandbox import SandboxRequest, SandboxResponse, SandboxRoute, json_response

API_VERSION = "2024-06-20"
SESSION_TTL = 24 * 3600
REQUIRED = ("mode", "success_url")


def _error(
    status: int, message: str, *, kind: str = "invalid_request_error", **extra: Any
) -> SandboxResponse:
    return json_response({"error": {"message": message, "type": kind, **extra}}, status)


def parse_form(body: bytes) -> dict[str, Any]:
    """Stripe's bracket notation into nested dicts and lists: line_items[0][price_data][currency]=usd."""
    from urllib.parse import parse_qsl

    root: dict[str, Any] = {}
    for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        parts = [key.split("[", 1)[0], *re.findall(r"\[([^\]]*)\]", key)]
        node: Any = root
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            nxt: Any = value if last else ([] if parts[index + 1].isdecimal() else {})
            if isinstance(node, list):
                position = int(part)
                while len(node) <= position:
                    node.append(None)
                if node[position] is None or last:
                    node[position] = nxt
                node = node[position]
            else:
                if part not in node or last:
                    node[part] = nxt
                node = node[part]
    return root


class Stripe(BaseProvider):
    """Mounted at /stripe: API at /stripe/v1, hosted pages at /stripe/pay/{session id}."""

    name = "stripe"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        secret_key: str,
        webhook_secret: str,
        webhook_url: str | None = None,
    ) -> None:
        super().__init__(
            state_dir,
            {
                "sessions": {},
                "events": {},
                "idempotency": {},
                "webhook": {"url": webhook_url, "secret": webhook_secret},
            },
        )
        self.secret_key = secret_key
        if webhook_url:  # the stack's configuration wins over an older admin choice
            self.data["webhook"]["url"] = webhook_url
        self.data["webhook"]["secret"] = self.data["webhook"].get("secret") or webhook_secret

    # ---- routes

    def routes(self) -> Iterable[SandboxRoute]:
        return [
            SandboxRoute("POST", "/stripe/v1/checkout/sessions", self.create_session),
            SandboxRoute("GET", "/stripe/v1/checkout/sessions/{session_id}", self.get_session),
            SandboxRoute("GET", "/stripe/pay/{session_id}", self.page),
            SandboxRoute("POST", "/stripe/pay/{session_id}", self.pay),
            SandboxRoute("GET", "/__admin/stripe/webhook", self.admin_get_webhook),
            SandboxRoute("POST", "/__admin/stripe/webhook", self.admin_set_webhook),
            SandboxRoute("POST", "/__admin/stripe/sessions/{session_id}/complete", self.admin_complete),
            SandboxRoute("GET", "/__admin/stripe/events", self.admin_events),
            SandboxRoute("POST", "/__admin/stripe/events/{event_id}/deliver", self.admin_deliver),
        ]

    # ---- API

    def _authorized(self, request: SandboxRequest) -> bool:
        credentials = basic(request)
        key = credentials[0] if credentials else bearer(request)
        return key == self.secret_key

    def create_session(self, request: SandboxRequest) -> SandboxResponse:
        if not self._authorized(request):
            given = bearer(request) or ""
            return _error(401, f"Invalid API Key provided: {given[:8]}{'*' * 8}{given[-4:]}")
        key = request.headers.get("idempotency-key")
        fingerprint = hashlib.sha256(request.body).hexdigest()
        if key:
            with self.state.lock:
                seen = self.data["idempotency"].get(key)
            if seen is not None:
                if seen["fingerprint"] != fingerprint:
                    return _error(
                        400,
                        "Keys for idempotent requests can only be used with the same parameters they were first "
                        "used with. Try using a key other than "
                        f"'{key}' if you meant to execute a different request.",
                        kind="idempotency_error",
                    )
                return json_response(seen["body"], seen["status"], {"Idempotent-Replayed": "true"})
        status, body = self._new_session(parse_form(request.body))
        if key and status < 500:
            with self.state.lock:
                self.data["idempotency"][key] = {"fingerprint": fingerprint, "status": status, "body": body}
            self.state.save()
        return json_response(body, status)

    def _new_session(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        for name in REQUIRED:
            if not params.get(name):
                return 400, {
                    "error": {
                        "code": "parameter_missing",
                        "message": f"Missing required param: {name}.",
                        "param": name,
                        "type": "invalid_request_error",
                    }
                }
        if params["mode"] != "payment":
            return 400, {
                "error": {
                    "message": "The sandbox supports mode=payment only.",
                    "param": "mode",
                    "type": "invalid_request_error",
                }
            }
        items = params.get("line_items")
        if not isinstance(items, list) or not items:
            return 400, {
                "error": {
                    "code": "parameter_missing",
                    "message": "Missing required param: line_items.",
                    "param": "line_items",
                    "type": "invalid_request_error",
                }
            }
        total, currency = 0, "usd"
        for index, item in enumerate(items):
            price = item.get("price_data") if isinstance(item, dict) else None
            amount = price.get("unit_amount") if isinstance(price, dict) else None
            quantity = item.get("quantity", "1") if isinstance(item, dict) else "1"
            if not isinstance(amount, str) or not amount.isdecimal() or not str(quantity).isdecimal():
                return 400, {
                    "error": {
                        "message": f"Invalid integer: line_items[{index}][price_data][unit_amount]",
                        "param": f"line_items[{index}][price_data][unit_amount]",
                        "type": "invalid_request_error",
                    }
                }
            total += int(amount) * int(quantity)
            currency = str(price.get("currency") or currency) if isinstance(price, dict) else currency
        session_id = random_id(
            "cs_test_", 58, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        )
        created = int(now())
        session = {
            "id": session_id,
            "object": "checkout.session",
            "url": f"{self.public_url}/stripe/pay/{session_id}",
            "status": "open",
            "payment_status": "unpaid",
            "mode": "payment",
            "amount_subtotal": total,
            "amount_total": total,
            "currency": currency,
            "created": created,
            "expires_at": created + SESSION_TTL,
            "client_reference_id": params.get("client_reference_id") or None,
            "metadata": params.get("metadata") if isinstance(params.get("metadata"), dict) else {},
            "success_url": params["success_url"],
            "cancel_url": params.get("cancel_url") or None,
            "payment_intent": None,
            "livemode": False,
            "line_items_preview": [
                {
                    "name": (i.get("price_data") or {}).get("product_data", {}).get("name", ""),
                    "unit_amount": int((i.get("price_data") or {}).get("unit_amount", "0")),
                    "quantity": int(i.get("quantity", "1")),
                }
                for i in items
                if isinstance(i, dict)
            ],
        }
        with self.state.lock:
            self.data["sessions"][session_id] = session
        self.state.save()
        return 200, self._public(session)

    @staticmethod
    def _public(session: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in session.items() if k != "line_items_preview"}

    def _current(self, session: dict[str, Any]) -> dict[str, Any]:
        if session["status"] == "open" and now() >= session["expires_at"]:
            session["status"] = "expired"
        return session

    def get_session(self, request: SandboxRequest) -> SandboxResponse:
        if not self._authorized(request):
            return _error(401, "Invalid API Key provided.")
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None:
            return _error(
                404, f"No such checkout.session: '{request.params['session_id']}'", code="resource_missing"
            )
        return json_response(self._public(self._current(session)))

    # ---- hosted page

    def page(self, request: SandboxRequest) -> SandboxResponse:
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None:
            return html(
                "<h1>Something went wrong</h1><p>The page you were looking for could not be found.</p>", 404
            )
        session = self._current(session)
        amount = f"{session['amount_total'] / 100:.2f} {session['currency'].upper()}"
        items = "".join(
            f"<li>{html_escape.escape(i['name'])} x {i['quantity']}</li>"
            for i in session["line_items_preview"]
        )
        if session["status"] != "open":
            action = f'<p id="status">This checkout session is {session["status"]}.</p>'
        else:
            cancel = (
                f'<a href="{html_escape.escape(session["cancel_url"])}">Cancel</a>'
                if session["cancel_url"]
                else ""
            )
            action = (
                f'<form method="post" action="/stripe/pay/{session["id"]}">'
                f'<button type="submit" id="pay">Pay {amount}</button></form>{cancel}'
            )
        return html(
            "<!doctype html><html><head><title>Checkout (sandbox)</title></head><body>"
            f"<h1>Pay {amount}</h1><ul>{items}</ul>{action}</body></html>"
        )

    def pay(self, request: SandboxRequest) -> SandboxResponse:
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None:
            return html("<h1>Not found</h1>", 404)
        session = self._current(session)
        if session["status"] == "expired":
            return html("<h1>This checkout session has expired.</h1>", 410)
        event = self.complete(session["id"])
        if event is not None:
            self.later(0, lambda: self.deliver(event["id"]))
        return redirect(session["success_url"].replace("{CHECKOUT_SESSION_ID}", session["id"]), 303)

    # ---- completion and webhooks

    def complete(self, session_id: str) -> dict[str, Any] | None:
        """Mark an open session paid and record its `checkout.session.completed` event (None if it was not
        open)."""
        with self.state.lock:
            session = self._current(self.data["sessions"][session_id])
            if session["status"] != "open":
                return None
            session.update(
                {"status": "complete", "payment_status": "paid", "payment_intent": random_id("pi_", 24)}
            )
            event = {
                "id": random_id("evt_", 24, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
                "object": "event",
                "api_version": API_VERSION,
                "created": int(now()),
                "type": "checkout.session.completed",
                "livemode": False,
                "pending_webhooks": 1,
                "request": {"id": None, "idempotency_key": None},
                "data": {"object": self._public(session)},
                "deliveries": [],
            }
            self.data["events"][event["id"]] = event
        self.state.save()
        return event

    def deliver(self, event_id: str) -> dict[str, Any]:
        """POST the event, signed now, to the webhook endpoint; returns what the endpoint answered."""
        from svc_shared.providers.checkout import sign_payload

        with self.state.lock:
            event = self.data["events"][event_id]
            url, secret = self.data["webhook"].get("url"), self.data["webhook"].get("secret")
        if not url:
            result: dict[str, Any] = {"status": None, "error": "no webhook endpoint configured"}
        else:
            payload = json.dumps({k: v for k, v in event.items() if k != "deliveries"}, indent=2).encode()
            timestamp = int(now())
            outgoing = urllib.request.Request(  # noqa: S310 - the configured endpoint (http or https)
                url,
                data=payload,
                method="POST",
                headers={
                    "Content-Type": "application/json; charset=utf-8",
                    "Stripe-Signature": sign_payload(payload, secret, timestamp),
                    "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
                },
            )
            try:
                with urllib.request.urlopen(outgoing, timeout=10) as answer:  # noqa: S310 - configured URL
                    result = {"status": answer.status, "body": answer.read(2000).decode("utf-8", "replace")}
            except urllib.error.HTTPError as exc:
                result = {"status": exc.code, "body": exc.read(2000).decode("utf-8", "replace")}
            except (OSError, ValueError) as exc:
                result = {"status": None, "error": str(exc)}
        result["at"] = int(now())
        with self.state.lock:
            event["deliveries"].append(result)
            if result.get("status") and 200 <= result["status"] < 300:
                event["pending_webhooks"] = 0
        self.state.save()
        return result

    # ---- admin

    def admin_get_webhook(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(dict(self.data["webhook"]))

    def admin_set_webhook(self, request: SandboxRequest) -> SandboxResponse:
        body = json_body(request)
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("url"), str)
            or not body["url"].startswith(("http://", "https://"))
        ):
            return json_response(
                {"error": "invalid_request", "message": "url (http or https) is required"}, 400
            )
        with self.state.lock:
            self.data["webhook"]["url"] = body["url"]
            if isinstance(body.get("secret"), str) and body["secret"]:
                self.data["webhook"]["secret"] = body["secret"]
        self.state.save()
        return json_response(dict(self.data["webhook"]))

    def admin_complete(self, request: SandboxRequest) -> SandboxResponse:
        """Pay a session as the hosted page would, and deliver its webhook now: {event_id, delivery}."""
        session_id = request.params["session_id"]
        if session_id not in self.data["sessions"]:
            return json_response({"error": "not_found"}, 404)
        event = self.complete(session_id)
        if event is None:
            return json_response({"error": "not_open", "message": "the session is not open"}, 409)
        return json_response({"event_id": event["id"], "delivery": self.deliver(event["id"])}, 201)

    def admin_events(self, request: SandboxRequest) -> SandboxResponse:
        with self.state.lock:
            events = list(self.data["events"].values())
        return json_response({"events": events})

    def admin_deliver(self, request: SandboxRequest) -> SandboxResponse:
        """Deliver an event again (same id and body, a fresh signature): idempotency tests use it."""
        if request.params["event_id"] not in self.data["events"]:
            return json_response({"error": "not_found"}, 404)
        return json_response({"delivery": self.deliver(request.params["event_id"])}, 201)
