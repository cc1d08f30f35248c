"""The card provider sandbox (Stripe shape), mounted at /stripe: API at /stripe/v1, hosted payment pages at
/stripe/pay/{session id}, Connect OAuth at /stripe/connect/oauth/*, admin calls under /__admin/stripe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from svc_local.providers.common import BaseProvider, basic, bearer, json_body, route
from svc_local.providers.stripe.connect import ConnectMixin
from svc_local.providers.stripe.events import EventsMixin
from svc_local.providers.stripe.forms import error
from svc_local.providers.stripe.sessions import SessionsMixin
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response


class Stripe(SessionsMixin, ConnectMixin, EventsMixin, BaseProvider):
    """Sessions of the platform (credits) and of connected accounts (shops' checkouts), Connect OAuth,
    webhook endpoints and signed events."""

    name = "stripe"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        secret_key: str,
        webhook_secret: str,
        webhook_url: str | None = None,
        connect_client_id: str = "ca_sandbox",
    ) -> None:
        super().__init__(
            state_dir,
            {
                "sessions": {},
                "events": {},
                "idempotency": {},
                "webhook": {"url": webhook_url, "secret": webhook_secret},
                "accounts": {},
                "endpoints": {},
                "connect": {"codes": {}, "next_accounts": []},
            },
        )
        self.secret_key = secret_key
        self.connect_client_id = connect_client_id
        if webhook_url:  # the stack's configuration wins over an older admin choice
            self.data["webhook"]["url"] = webhook_url
        self.data["webhook"]["secret"] = self.data["webhook"].get("secret") or webhook_secret

    # ---- authentication

    def authorized(self, request: SandboxRequest) -> bool:
        credentials = basic(request)
        key = credentials[0] if credentials else bearer(request)
        return key == self.secret_key

    def refusal(self, request: SandboxRequest) -> SandboxResponse | None:
        if self.authorized(request):
            return None
        given = bearer(request) or ""
        return error(401, f"Invalid API Key provided: {given[:8]}{'*' * 8}{given[-4:]}")

    def caller(self, request: SandboxRequest) -> str | None:
        """Who an API call acts for: `account_of`'s account or None (Refused: 401 for a wrong key)."""
        refused = self.refusal(request)
        if refused is not None:
            raise Refused(refused)
        return self.account_of(request)

    def account_of(self, request: SandboxRequest) -> str | None:
        """The connected account the call acts for (`Stripe-Account`), None for the platform itself (Refused:
        403 for an account not connected to this platform)."""
        account = request.headers.get("stripe-account")
        if not account:
            return None
        if account not in self.data["accounts"]:
            raise Refused(
                error(
                    403,
                    f"The provided key does not have access to account '{account}' (or that account does not "
                    "exist). Application access may have been revoked.",
                    code="account_invalid",
                )
            )
        return account

    # ---- admin

    @route("GET", "/__admin/stripe/webhook")
    def admin_get_webhook(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(dict(self.data["webhook"]))

    @route("POST", "/__admin/stripe/webhook")
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

    def _admin_settle(self, request: SandboxRequest, settle: Any) -> SandboxResponse:
        session_id = request.params["session_id"]
        if session_id not in self.data["sessions"]:
            return json_response({"error": "not_found"}, 404)
        event = settle(session_id)
        if event is None:
            return json_response({"error": "not_open", "message": "the session is not open"}, 409)
        if request.arg("deliver") == "false":  # recorded only: a test delivers it (several times at once)
            return json_response({"event_id": event["id"], "delivery": None}, 201)
        return json_response({"event_id": event["id"], "delivery": self.deliver(event["id"])}, 201)

    @route("POST", "/__admin/stripe/sessions/{session_id}/complete")
    def admin_complete(self, request: SandboxRequest) -> SandboxResponse:
        """Pay a session as the hosted page would, and deliver its webhook now: {event_id, delivery}."""
        return self._admin_settle(request, self.complete)

    @route("POST", "/__admin/stripe/sessions/{session_id}/expire")
    def admin_expire(self, request: SandboxRequest) -> SandboxResponse:
        """Expire an open session now (as its expires_at passing would) and deliver its webhook now."""
        return self._admin_settle(request, self.expire)

    @route("GET", "/__admin/stripe/events")
    def admin_events(self, request: SandboxRequest) -> SandboxResponse:
        with self.state.lock:
            events = list(self.data["events"].values())
        return json_response({"events": events})

    @route("POST", "/__admin/stripe/events/{event_id}/deliver")
    def admin_deliver(self, request: SandboxRequest) -> SandboxResponse:
        """Deliver an event again (same id and body, a fresh signature): idempotency tests use it."""
        if request.params["event_id"] not in self.data["events"]:
            return json_response({"error": "not_found"}, 404)
        return json_response({"delivery": self.deliver(request.params["event_id"])}, 201)

    @route("GET", "/__admin/stripe/accounts")
    def admin_accounts(self, request: SandboxRequest) -> SandboxResponse:
        """Connected accounts and every webhook endpoint (with its account)."""
        with self.state.lock:
            return json_response(
                {
                    "accounts": list(self.data["accounts"].values()),
                    "endpoints": [
                        {k: v for k, v in e.items() if k != "secret"} for e in self.data["endpoints"].values()
                    ],
                }
            )

    @route("POST", "/__admin/stripe/connect/next")
    def admin_connect_next(self, request: SandboxRequest) -> SandboxResponse:
        """The account the next Allow connects (`{"account": "acct_..."}`), instead of a new one."""
        body = json_body(request)
        account = body.get("account") if isinstance(body, dict) else None
        if not isinstance(account, str) or not account.startswith("acct_") or len(account) > 64:
            return json_response(
                {"error": "invalid_request", "message": "account (acct_...) is required"}, 400
            )
        with self.state.lock:
            self.data["connect"]["next_accounts"].append(account)
        self.state.save()
        return json_response({"account": account}, 201)
