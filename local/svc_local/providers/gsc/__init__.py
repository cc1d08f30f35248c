"""Search-console sandbox (Google shape), mounted at /gsc: the OAuth 2.0 authorize page
(/gsc/o/oauth2/v2/auth, PKCE S256), the token endpoint (/gsc/token: authorization_code with the code verifier,
refresh_token), revocation (/gsc/revoke) and the verified sites of the signed-in account
(/gsc/webmasters/v3/sites). Errors have Google's status codes and bodies."""

from __future__ import annotations

import base64
import hashlib
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    basic,
    bearer,
    form,
    json_body,
    now,
    random_id,
    route,
)
from svc_local.sandbox import SandboxRequest, SandboxResponse, json_response

DEFAULT_ACCOUNT = "sandbox-owner"
ACCESS_TOKEN_LIFETIME = 3599
SCOPES = (
    "https://www.googleapis.com/auth/webmasters",
    "https://www.googleapis.com/auth/webmasters.readonly",
)
TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"  # noqa: S105 - an alphabet


def default_sites(account: str) -> list[dict[str, str]]:
    """The sites an account has verified until an admin call sets them."""
    return [
        {"siteUrl": f"https://{account}.sandbox.test/", "permissionLevel": "siteOwner"},
        {"siteUrl": f"sc-domain:{account}.sandbox.test", "permissionLevel": "siteFullUser"},
    ]


def _oauth_error(error: str, description: str, status: int = 400) -> SandboxResponse:
    return json_response({"error": error, "error_description": description}, status)


def _api_error(status: int, message: str, reason: str, api_status: str) -> SandboxResponse:
    body = {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": api_status,
        }
    }
    headers = (
        {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"'}
        if status == 401
        else {}
    )
    return json_response(body, status, headers)


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class Gsc(BaseProvider):
    """Mounted at /gsc; see the module docstring."""

    name = "gsc"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        client_id: str,
        client_secret: str,
        access_token_lifetime: float = ACCESS_TOKEN_LIFETIME,
    ) -> None:
        # grants: refresh token -> {account, scope, client_id}; access_tokens: token -> {account, scope,
        # expires_at, refresh_token}; sites: account -> site entries (absent: default_sites).
        super().__init__(state_dir, {"grants": {}, "access_tokens": {}, "sites": {}})
        self.oauth = OAuthApp(self.state, client_id, client_secret, DEFAULT_ACCOUNT)
        self.access_token_lifetime = access_token_lifetime

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        return self.oauth.queue(data)

    # ---- OAuth

    @route("GET", "/gsc/o/oauth2/v2/auth")
    def authorize(self, request: SandboxRequest) -> SandboxResponse:
        def check(client_id: str, redirect_uri: str) -> str | None:
            if request.arg("response_type") != "code":
                return "Error 400: invalid_request (response_type must be code)"
            if not request.arg("scope"):
                return "Error 400: invalid_request (Missing required parameter: scope)"
            if request.arg("code_challenge") and request.arg("code_challenge_method", "plain") != "S256":
                return "Error 400: invalid_request (code_challenge_method must be S256)"
            return None

        answer = self.oauth.authorize(request, check)
        code = parse_qs(urlsplit(answer.headers.get("Location", "")).query).get("code")
        if code:  # a refresh token is issued only for access_type=offline, as Google does
            with self.state.lock:
                grant = self.data["codes"].get(code[0])
                if grant is not None:
                    grant["offline"] = request.arg("access_type") == "offline"
            self.save()
        return answer

    def _client_ok(self, request: SandboxRequest, data: dict[str, str]) -> bool:
        client = basic(request) or (data.get("client_id", ""), data.get("client_secret", ""))
        return secrets.compare_digest(client[0], self.oauth.client_id) and secrets.compare_digest(
            client[1], self.oauth.client_secret
        )

    @route("POST", "/gsc/token")
    def token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        if not self._client_ok(request, data):
            return _oauth_error("invalid_client", "Unauthorized", 401)
        grant_type = data.get("grant_type")
        if grant_type == "authorization_code":
            return self._exchange(data)
        if grant_type == "refresh_token":
            with self.state.lock:
                grant = self.data["grants"].get(data.get("refresh_token", ""))
                if grant is None or grant["client_id"] != self.oauth.client_id:
                    return _oauth_error("invalid_grant", "Token has been expired or revoked.")
                return json_response(self._access(grant, data["refresh_token"]))
        return _oauth_error("unsupported_grant_type", f"Invalid grant_type: {grant_type or ''}")

    def _exchange(self, data: dict[str, str]) -> SandboxResponse:
        if not data.get("code"):
            return _oauth_error("invalid_request", "Missing required parameter: code")
        if not data.get("redirect_uri"):
            return _oauth_error("invalid_request", "Missing parameter: redirect_uri")
        grant, why = self.oauth.redeem(data["code"], data.get("redirect_uri"))
        if why == "redirect_uri_mismatch":
            return _oauth_error("redirect_uri_mismatch", "Bad Request")
        if grant is None:
            return _oauth_error("invalid_grant", "Malformed auth code.")
        challenge = grant.get("code_challenge")
        verifier = data.get("code_verifier")
        if challenge and not verifier:
            return _oauth_error("invalid_grant", "Missing code verifier.")
        if challenge and not secrets.compare_digest(s256(verifier or ""), challenge):
            return _oauth_error("invalid_grant", "Invalid code verifier.")
        refresh = random_id("1//", 64, TOKEN_ALPHABET) if grant.get("offline") else None
        entry = {"account": grant["account"], "scope": grant["scope"], "client_id": grant["client_id"]}
        with self.state.lock:
            if refresh:
                self.data["grants"][refresh] = entry
            answer = self._access(entry, refresh)
        if refresh:
            answer["refresh_token"] = refresh
        return json_response(answer)

    def _access(self, grant: dict[str, Any], refresh: str | None) -> dict[str, Any]:
        """A new access token for `grant` (call with the state lock held)."""
        token = random_id("ya29.", 64, TOKEN_ALPHABET)
        self.data["access_tokens"][token] = {
            "account": grant["account"],
            "scope": grant["scope"],
            "expires_at": now() + self.access_token_lifetime,
            "refresh_token": refresh,
        }
        for old in [t for t, g in self.data["access_tokens"].items() if g["expires_at"] < now() - 3600]:
            del self.data["access_tokens"][old]
        self.save()
        return {
            "access_token": token,
            "expires_in": int(self.access_token_lifetime),
            "scope": grant["scope"],
            "token_type": "Bearer",
        }

    @route("POST", "/gsc/revoke")
    def revoke(self, request: SandboxRequest) -> SandboxResponse:
        """Revoking either token of a grant revokes the grant: its refresh token and every access token."""
        token = form(request).get("token") or request.arg("token") or ""
        with self.state.lock:
            access = self.data["access_tokens"].get(token)
            refresh = access["refresh_token"] if access else token
            if access is None and refresh not in self.data["grants"]:
                return _oauth_error("invalid_token", "Token expired or revoked")
            self.data["grants"].pop(refresh, None)
            self.data["access_tokens"] = {
                t: g
                for t, g in self.data["access_tokens"].items()
                if t != token and (refresh is None or g["refresh_token"] != refresh)
            }
        self.save()
        return json_response({})

    # ---- API

    @route("GET", "/gsc/webmasters/v3/sites")
    def sites(self, request: SandboxRequest) -> SandboxResponse:
        access = self.data["access_tokens"].get(bearer(request) or "")
        if access is None or access["expires_at"] < now():
            return _api_error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
                "or other valid authentication credential.",
                "authError",
                "UNAUTHENTICATED",
            )
        if not set(access["scope"].split()) & set(SCOPES):
            return _api_error(
                403,
                "Request had insufficient authentication scopes.",
                "insufficientPermissions",
                "PERMISSION_DENIED",
            )
        entries = self.data["sites"].get(access["account"], default_sites(access["account"]))
        return json_response({"siteEntry": list(entries)} if entries else {})

    # ---- admin

    @route("GET", "/__admin/gsc/sites")
    def admin_sites(self, request: SandboxRequest) -> SandboxResponse:
        account = request.arg("account") or DEFAULT_ACCOUNT
        return json_response(
            {"account": account, "siteEntry": self.data["sites"].get(account, default_sites(account))}
        )

    @route("POST", "/__admin/gsc/sites")
    def admin_set_sites(self, request: SandboxRequest) -> SandboxResponse:
        """{account?, sites: [{siteUrl, permissionLevel}]}: the sites that account has verified."""
        body = json_body(request)
        body = body if isinstance(body, dict) else {}
        sites, account = body.get("sites"), body.get("account") or DEFAULT_ACCOUNT
        if (
            not isinstance(account, str)
            or not isinstance(sites, list)
            or not all(
                isinstance(s, dict)
                and isinstance(s.get("siteUrl"), str)
                and isinstance(s.get("permissionLevel"), str)
                for s in sites
            )
        ):
            return json_response(
                {"error": "invalid_request", "message": "sites must be a list of {siteUrl, permissionLevel}"},
                400,
            )
        entries = [{"siteUrl": s["siteUrl"], "permissionLevel": s["permissionLevel"]} for s in sites]
        with self.state.lock:
            self.data["sites"][account] = entries
        self.save()
        return json_response({"account": account, "siteEntry": entries}, 201)

    @route("POST", "/__admin/gsc/expire")
    def admin_expire(self, request: SandboxRequest) -> SandboxResponse:
        """Expire every access token (refresh tokens stay valid): the next API call needs a refresh."""
        with self.state.lock:
            for grant in self.data["access_tokens"].values():
                grant["expires_at"] = 0
            count = len(self.data["access_tokens"])
        self.save()
        return json_response({"expired": count})
