"""Checkout Sessions: created with the platform's secret key, for the platform itself or, with
`Stripe-Account: acct_...`, for a connected account; Idempotency-Key replays; a hosted page whose Pay button
completes the session; expiry (at `expires_at`, through the API's expire call, or an admin call), each
completion or expiry recorded as an event and delivered signed (events.py)."""

from __future__ import annotations

import hashlib
import html as html_escape
from typing import Any

from svc_local.providers.common import html, now, random_id, redirect, route
from svc_local.providers.stripe.forms import ID_ALPHABET, error, error_body, parse_form
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response

SESSION_TTL = 24 * 3600
MIN_TTL = 30 * 60
REQUIRED = ("mode", "success_url")


class SessionsMixin:
    """Needs `data`, `state`, `public_url`, `authorized`, `account_of`, `record_event`, `later`, `deliver`."""

    data: dict[str, Any]
    state: Any
    public_url: str

    # ---- API

    @route("POST", "/stripe/v1/checkout/sessions")
    def create_session(self, request: SandboxRequest) -> SandboxResponse:
        account = self.caller(request)  # type: ignore[attr-defined]
        key = request.headers.get("idempotency-key")
        scope = f"{account or ''}:{key}"
        fingerprint = hashlib.sha256(request.body).hexdigest()
        if key:
            with self.state.lock:
                seen = self.data["idempotency"].get(scope)
            if seen is not None:
                if seen["fingerprint"] != fingerprint:
                    return error(
                        400,
                        "Keys for idempotent requests can only be used with the same parameters they were first "
                        "used with. Try using a key other than "
                        f"'{key}' if you meant to execute a different request.",
                        kind="idempotency_error",
                    )
                return json_response(seen["body"], seen["status"], {"Idempotent-Replayed": "true"})
        status, body = self._new_session(parse_form(request.body), account)
        if key and status < 500:
            with self.state.lock:
                self.data["idempotency"][scope] = {"fingerprint": fingerprint, "status": status, "body": body}
            self.state.save()
        return json_response(body, status)

    def _line_items(self, items: Any) -> tuple[int, str, list[dict[str, Any]]] | dict[str, Any]:
        if not isinstance(items, list) or not items:
            return error_body(
                "Missing required param: line_items.", param="line_items", code="parameter_missing"
            )
        total, currency, preview = 0, "usd", []
        for index, item in enumerate(items):
            price = item.get("price_data") if isinstance(item, dict) else None
            amount = price.get("unit_amount") if isinstance(price, dict) else None
            quantity = item.get("quantity", "1") if isinstance(item, dict) else "1"
            if not isinstance(amount, str) or not amount.isdecimal() or not str(quantity).isdecimal():
                param = f"line_items[{index}][price_data][unit_amount]"
                return error_body(f"Invalid integer: {param}", param=param)
            assert isinstance(price, dict) and isinstance(item, dict)
            total += int(amount) * int(quantity)
            currency = str(price.get("currency") or currency)
            name = (price.get("product_data") or {}).get("name", "")
            preview.append({"name": name, "unit_amount": int(amount), "quantity": int(quantity)})
        return total, currency, preview

    def _new_session(self, params: dict[str, Any], account: str | None) -> tuple[int, dict[str, Any]]:
        for name in REQUIRED:
            if not params.get(name):
                return 400, error_body(
                    f"Missing required param: {name}.", param=name, code="parameter_missing"
                )
        if params["mode"] != "payment":
            return 400, error_body("The sandbox supports mode=payment only.", param="mode")
        lines = self._line_items(params.get("line_items"))
        if isinstance(lines, dict):
            return 400, lines
        total, currency, preview = lines
        created = int(now())
        expires_at = created + SESSION_TTL
        if params.get("expires_at"):
            given = str(params["expires_at"])
            if not given.isdecimal() or not created + MIN_TTL <= int(given) <= created + SESSION_TTL:
                return 400, error_body(
                    "The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session "
                    "creation.",
                    param="expires_at",
                )
            expires_at = int(given)
        session_id = random_id("cs_test_", 58, ID_ALPHABET)
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
            "expires_at": expires_at,
            "client_reference_id": params.get("client_reference_id") or None,
            "customer_email": params.get("customer_email") or None,
            "metadata": params.get("metadata") if isinstance(params.get("metadata"), dict) else {},
            "success_url": params["success_url"],
            "cancel_url": params.get("cancel_url") or None,
            "payment_intent": None,
            "livemode": False,
            "account": account,
            "line_items_preview": preview,
        }
        with self.state.lock:
            self.data["sessions"][session_id] = session
        self.state.save()
        return 200, self.public(session)

    @staticmethod
    def public(session: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in session.items() if k not in ("line_items_preview", "account")}

    def current(self, session: dict[str, Any]) -> dict[str, Any]:
        """The session as of now: an open one past its expires_at expires (and says so by its event)."""
        if session["status"] == "open" and now() >= session["expires_at"]:
            event = self.expire(session["id"])
            if event is not None:
                self.later(0, lambda: self.deliver(event["id"]))  # type: ignore[attr-defined]
        return session

    def _session_for(self, request: SandboxRequest) -> dict[str, Any]:
        """The session the path names, when the caller may see it (Refused: 401, 403, 404)."""
        account = self.caller(request)  # type: ignore[attr-defined]
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None or session.get("account") != account:
            missing = f"No such checkout.session: '{request.params['session_id']}'"
            raise Refused(error(404, missing, code="resource_missing"))
        return session

    @route("GET", "/stripe/v1/checkout/sessions/{session_id}")
    def get_session(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(self.public(self.current(self._session_for(request))))

    @route("POST", "/stripe/v1/checkout/sessions/{session_id}/expire")
    def expire_session(self, request: SandboxRequest) -> SandboxResponse:
        """POST /v1/checkout/sessions/{id}/expire: an open session expires now (400 otherwise)."""
        session = self._session_for(request)
        event = self.expire(session["id"])
        if event is None:
            return error(
                400,
                f'Only Checkout Sessions with a status in ["open"] can be expired. This Checkout '
                f'Session has a status of "{session["status"]}".',
            )
        self.later(0, lambda: self.deliver(event["id"]))  # type: ignore[attr-defined]
        return json_response(self.public(session))

    # ---- hosted page

    @route("GET", "/stripe/pay/{session_id}")
    def page(self, request: SandboxRequest) -> SandboxResponse:
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None:
            return html(
                "<h1>Something went wrong</h1><p>The page you were looking for could not be found.</p>", 404
            )
        session = self.current(session)
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
            "<!doctype html><html><head><title>Checkout (sandbox)</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>'
            f"<h1>Pay {amount}</h1><ul>{items}</ul>{action}</body></html>"
        )

    @route("POST", "/stripe/pay/{session_id}")
    def pay(self, request: SandboxRequest) -> SandboxResponse:
        session = self.data["sessions"].get(request.params["session_id"])
        if session is None:
            return html("<h1>Not found</h1>", 404)
        session = self.current(session)
        if session["status"] == "expired":
            return html("<h1>This checkout session has expired.</h1>", 410)
        event = self.complete(session["id"])
        if event is not None:
            self.later(0, lambda: self.deliver(event["id"]))  # type: ignore[attr-defined]
        return redirect(session["success_url"].replace("{CHECKOUT_SESSION_ID}", session["id"]), 303)

    # ---- completion and expiry

    def complete(self, session_id: str) -> dict[str, Any] | None:
        """Mark an open session paid and record its `checkout.session.completed` event (None if it was not
        open)."""
        with self.state.lock:
            session = self.data["sessions"][session_id]
            if session["status"] != "open" or now() >= session["expires_at"]:
                return None
            session.update(
                {"status": "complete", "payment_status": "paid", "payment_intent": random_id("pi_", 24)}
            )
            event = self.record_event("checkout.session.completed", session)  # type: ignore[attr-defined]
        self.state.save()
        return event

    def expire(self, session_id: str) -> dict[str, Any] | None:
        """Expire an open session and record its `checkout.session.expired` event (None if it was not open)."""
        with self.state.lock:
            session = self.data["sessions"][session_id]
            if session["status"] != "open":
                return None
            session["status"] = "expired"
            event = self.record_event("checkout.session.expired", session)  # type: ignore[attr-defined]
        self.state.save()
        return event
