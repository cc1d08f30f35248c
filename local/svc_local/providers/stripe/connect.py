"""Stripe Connect for Standard accounts: the OAuth authorize page (an Allow and a Deny button), the code
exchange at /stripe/connect/oauth/token (the platform's secret key) answering `stripe_user_id`, and webhook
endpoints (`/v1/webhook_endpoints`) of the platform or, with `Stripe-Account`, of a connected account."""

from __future__ import annotations

import html as html_escape
from typing import Any

from svc_local.providers.common import form, html, now, random_id, redirect, route, with_query
from svc_local.providers.stripe.forms import ID_ALPHABET, error, parse_form
from svc_local.sandbox import SandboxRequest, SandboxResponse, json_response

CODE_TTL = 300
SCOPES = ("read_write", "read_only")


def _oauth_error(error_code: str, description: str, status: int = 400) -> SandboxResponse:
    return json_response({"error": error_code, "error_description": description}, status)


class ConnectMixin:
    """Needs `data`, `state`, `connect_client_id`, `refusal`, `account_of`."""

    data: dict[str, Any]
    state: Any
    connect_client_id: str

    def _authorize_problem(self, params: dict[str, str]) -> str | None:
        if params.get("client_id") != self.connect_client_id:
            return "No application matches the supplied client identifier."
        if params.get("response_type") != "code":
            return "Invalid response_type: only code is supported."
        if (params.get("scope") or "read_only") not in SCOPES:
            return "Invalid scope: read_write or read_only."
        if not (params.get("redirect_uri") or "").startswith(("http://", "https://")):
            return "Invalid redirect_uri."
        return None

    @route("GET", "/stripe/connect/oauth/authorize")
    def authorize_page(self, request: SandboxRequest) -> SandboxResponse:
        names = ("client_id", "response_type", "scope", "state", "redirect_uri")
        params = {name: request.arg(name) or "" for name in names}
        problem = self._authorize_problem(params)
        if problem:
            return html(f"<h1>Something went wrong</h1><p>{html_escape.escape(problem)}</p>", 400)
        hidden = "".join(
            f'<input type="hidden" name="{name}" value="{html_escape.escape(value)}">'
            for name, value in params.items()
        )
        return html(
            "<!doctype html><html><head><title>Connect with Stripe (sandbox)</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>'
            "<h1>Connect your Stripe account</h1>"
            "<p>The platform asks to create payments on your account.</p>"
            f'<form method="post" action="/stripe/connect/oauth/authorize">{hidden}'
            '<button type="submit" name="decision" value="allow" id="allow">Allow</button> '
            '<button type="submit" name="decision" value="deny" id="deny">Deny</button></form></body></html>'
        )

    @route("POST", "/stripe/connect/oauth/authorize")
    def authorize_decide(self, request: SandboxRequest) -> SandboxResponse:
        params = form(request)
        problem = self._authorize_problem(params)
        if problem:
            return html(f"<h1>Something went wrong</h1><p>{html_escape.escape(problem)}</p>", 400)
        back = {"state": params["state"]} if params.get("state") else {}
        if params.get("decision") != "allow":
            return redirect(
                with_query(
                    params["redirect_uri"],
                    {"error": "access_denied", "error_description": "The user denied your request", **back},
                )
            )
        code = random_id("ac_", 32, ID_ALPHABET)
        with self.state.lock:
            queued = self.data["connect"]["next_accounts"]
            account = queued.pop(0) if queued else random_id("acct_", 16, ID_ALPHABET)
            self.data["connect"]["codes"][code] = {
                "account": account,
                "scope": params.get("scope") or "read_only",
                "expires_at": now() + CODE_TTL,
            }
        self.state.save()
        scope = params.get("scope") or "read_only"
        return redirect(with_query(params["redirect_uri"], {"code": code, "scope": scope, **back}))

    @route("POST", "/stripe/connect/oauth/token")
    def token(self, request: SandboxRequest) -> SandboxResponse:
        params = form(request)
        if not self.authorized(request) and params.get("client_secret") != self.secret_key:  # type: ignore[attr-defined]
            return _oauth_error("invalid_client", "No authentication was provided.", 401)
        if params.get("grant_type") != "authorization_code":
            return _oauth_error("unsupported_grant_type", "Only authorization_code is supported here.")
        code = params.get("code") or ""
        with self.state.lock:
            grant = self.data["connect"]["codes"].pop(code, None)
            if grant is None or grant["expires_at"] < now():
                return _oauth_error("invalid_grant", f"Authorization code does not exist: {code}")
            account = grant["account"]
            self.data["accounts"].setdefault(account, {"id": account, "connected_at": int(now())})
        self.state.save()
        return json_response(
            {
                "access_token": random_id("sk_test_", 48, ID_ALPHABET),
                "livemode": False,
                "refresh_token": random_id("rt_", 48, ID_ALPHABET),
                "token_type": "bearer",
                "stripe_publishable_key": random_id("pk_test_", 48, ID_ALPHABET),
                "stripe_user_id": account,
                "scope": grant["scope"],
            }
        )

    # ---- webhook endpoints

    @route("POST", "/stripe/v1/webhook_endpoints")
    def create_endpoint(self, request: SandboxRequest) -> SandboxResponse:
        account = self.caller(request)  # type: ignore[attr-defined]
        params = parse_form(request.body)
        url, events = params.get("url"), params.get("enabled_events")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return error(400, "Missing required param: url.", param="url")
        if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
            return error(400, "Missing required param: enabled_events.", param="enabled_events")
        endpoint = {
            "id": random_id("we_", 24, ID_ALPHABET),
            "object": "webhook_endpoint",
            "url": url,
            "enabled_events": events,
            "status": "enabled",
            "description": params.get("description") or None,
            "created": int(now()),
            "livemode": False,
            "account": account,
            "secret": random_id("whsec_", 32, ID_ALPHABET),
        }
        with self.state.lock:
            self.data["endpoints"][endpoint["id"]] = endpoint
        self.state.save()
        return json_response({k: v for k, v in endpoint.items() if k != "account"})

    @route("GET", "/stripe/v1/webhook_endpoints")
    def list_endpoints(self, request: SandboxRequest) -> SandboxResponse:
        account = self.caller(request)  # type: ignore[attr-defined]
        with self.state.lock:
            mine = [
                {k: v for k, v in e.items() if k not in ("secret", "account")}
                for e in self.data["endpoints"].values()
                if e.get("account") == account
            ]
        return json_response(
            {"object": "list", "data": mine, "has_more": False, "url": "/v1/webhook_endpoints"}
        )
