"""The Supabase sandbox's OAuth tokens: expiring access tokens, refresh tokens that rotate on use, and the
Management API's per-token rate limit."""

from __future__ import annotations

import base64
import hashlib
import time
from collections import deque
from typing import Any

from svc_local.providers.common import JsonState, OAuthApp, Settings, basic, bearer, form, now, random_id
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response


def message(status: int, text: str) -> SandboxResponse:
    """An error as the Management API words it."""
    return json_response({"message": text}, status)


class Tokens:
    """The tokens of the OAuth app `oauth`, kept in `state` (its "tokens" and "refresh_tokens")."""

    def __init__(self, state: JsonState, oauth: OAuthApp, settings: Settings) -> None:
        self.state, self.oauth, self.settings = state, oauth, settings
        self.rate_limited = 0  # requests answered 429 (GET /__admin/supabase/rate-limited)
        self._calls: dict[str, deque[float]] = {}

    @property
    def data(self) -> dict[str, Any]:
        return self.state.data

    def issue(self, account: str) -> dict[str, Any]:
        lifetime = float(self.settings["access_token_lifetime"])
        access = random_id("sbp_oauth_", 40, "0123456789abcdef")
        refresh = random_id("sbr_", 40, "0123456789abcdef")
        with self.state.lock:
            self.data["tokens"][access] = {
                "account": account,
                "expires_at": now() + lifetime,
                "refresh": refresh,
            }
            self.data["refresh_tokens"][refresh] = {"account": account, "access": access}
        self.state.save()
        return {
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": int(lifetime),
            "token_type": "Bearer",
        }

    def token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        credentials = basic(request) or (data.get("client_id", ""), data.get("client_secret", ""))
        if credentials != (self.oauth.client_id, self.oauth.client_secret):
            return message(401, "Invalid client credentials")
        grant_type = data.get("grant_type")
        if grant_type == "authorization_code":
            grant, why = self.oauth.redeem(data.get("code", ""), data.get("redirect_uri"))
            if grant is None:
                return message(
                    400,
                    "Invalid redirect_uri"
                    if why == "redirect_uri_mismatch"
                    else "Invalid authorization code",
                )
            verifier, challenge = data.get("code_verifier"), grant.get("code_challenge")
            if challenge:
                digest = hashlib.sha256((verifier or "").encode()).digest()
                if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != challenge:
                    return message(400, "Invalid code_verifier")
            return json_response(self.issue(grant["account"]), 201)
        if grant_type == "refresh_token":
            with self.state.lock:
                old = self.data["refresh_tokens"].pop(data.get("refresh_token", ""), None)
                if old is not None:
                    self.data["tokens"].pop(old["access"], None)
            if old is None:
                self.state.save()
                return message(400, "Invalid refresh token")
            return json_response(self.issue(old["account"]), 201)
        return message(400, "Unsupported grant_type")

    def account(self, request: SandboxRequest) -> str:
        """The access token's account (Refused: 401 for a missing, unknown or expired token, 429 past the
        rate limit)."""
        token = bearer(request) or ""
        with self.state.lock:
            grant = self.data["tokens"].get(token)
        if grant is None or grant["expires_at"] <= now():
            raise Refused(message(401, "Unauthorized"))
        limit = self.settings["rate_limit_per_minute"]
        if limit:
            # `limit` requests per `rate_limit_window` seconds (60: the Management API's per-minute limit; a
            # test shortens the window to see the same behaviour in seconds). A refused request is not counted.
            window = float(self.settings["rate_limit_window"] or 60)
            moment = time.monotonic()
            with self.state.lock:
                calls = self._calls.setdefault(token, deque())
                while calls and calls[0] <= moment - window:
                    calls.popleft()
                if len(calls) >= limit:
                    self.rate_limited += 1
                    wait = max(1, int(window - (moment - calls[0])) + 1)
                    raise Refused(
                        json_response({"message": "Too many requests"}, 429, {"Retry-After": str(wait)})
                    )
                calls.append(moment)
        return str(grant["account"])
