"""The authorization code grant: consent forms answered once, single-use codes bound to the user's session
epoch, and their exchange for a new token family (svc_shared.oauth.families) under PKCE.

A code is stored as its SHA-256 hash and consumed by flipping `used` under the condition that it was not used;
a code presented twice revokes the family its first exchange issued (RFC 6749 §4.1.2).
"""

from __future__ import annotations

import uuid

from svc_shared.core.catalogue import say
from svc_shared.core.tokens import hash_token, new_token
from svc_shared.oauth.clients import Client
from svc_shared.oauth.errors import OAuthError
from svc_shared.oauth.families import TokenFamilies, TokenPair
from svc_shared.oauth.messages import TokenRequest
from svc_shared.oauth.metadata import SCOPE
from svc_shared.oauth.pkce import verifier_matches
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, attr, item_absent, item_exists

CODE_TTL = 60


class Grants(TokenFamilies):
    """Authorization codes over the token families they turn into: what the OAuth routes and the account
    (sign out everywhere, deletion) use, as `services.grants()`."""

    # -- authorization codes ------------------------------------------------------------------------------
    def spend_consent(self, consent_id: str, expires_at: int) -> bool:
        """Record that a consent form was answered: True the first time, False ever after (a conditional
        write, so two posts of one form racing each other cannot both win). The record outlives the form."""
        try:
            self.table.put(
                {"pk": keys.oauth_consent(consent_id), "sk": keys.CONSENT, "expires_at": expires_at + 60},
                when=item_absent(),
            )
        except ConditionFailed:
            return False
        return True

    def issue_code(
        self,
        *,
        client: Client,
        redirect_uri: str,
        redirect_explicit: bool,
        code_challenge: str,
        user_id: str,
        resource: str,
        scope: str = SCOPE,
        session_epoch: int = 0,
    ) -> str:
        """A single-use code valid CODE_TTL seconds, bound to the user's session epoch when it was issued:
        a password change, "sign out everywhere" or the account's deletion (which raise the epoch or remove
        the profile) make it unexchangeable at once."""
        code = new_token()
        now = int(self.clock.now())
        self.table.put(
            {
                "pk": keys.oauth_code(hash_token(code)),
                "sk": keys.CODE,
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "redirect_explicit": redirect_explicit,
                "code_challenge": code_challenge,
                "user_id": user_id,
                "resource": resource,
                "scope": scope,
                "session_epoch": session_epoch,
                "issued_at": now,
                "expires_at": now + CODE_TTL,
            }
        )
        return code

    def exchange_code(self, client: Client, request: TokenRequest) -> TokenPair:
        code, verifier = request.code, request.code_verifier
        if not code:
            raise OAuthError("invalid_request", say("oauth.code_required"))
        if not verifier:
            raise OAuthError("invalid_request", say("oauth.code_verifier_required"))
        key = keys.oauth_code(hash_token(code))
        now = self.clock.now()
        family_id = str(uuid.uuid4())
        try:
            item = self.table.update(
                key,
                keys.CODE,
                set={"used": True, "family_id": family_id},
                when=item_exists() & attr("used").missing() & attr("expires_at").gt(now),
            )
        except ConditionFailed:
            self._revoke_replayed_code(key)
            raise OAuthError("invalid_grant", say("oauth.invalid_code")) from None
        if item["client_id"] != client.client_id:
            raise OAuthError("invalid_grant", say("oauth.invalid_code"))
        redirect_uri = request.redirect_uri
        if (redirect_uri or item["redirect_explicit"]) and redirect_uri != item["redirect_uri"]:
            raise OAuthError("invalid_grant", say("oauth.redirect_uri_differs"))
        if request.resource and request.resource != item["resource"]:
            raise OAuthError("invalid_target", say("oauth.resource_differs"))
        if not verifier_matches(verifier, item["code_challenge"]):
            raise OAuthError("invalid_grant", say("oauth.pkce_mismatch"))
        if not self._epoch_holds(item["user_id"], int(item.get("session_epoch", 0))):
            raise OAuthError("invalid_grant", say("oauth.invalid_code"))
        return self._new_family(family_id, client.client_id, item["user_id"], item["resource"], item["scope"])

    def _epoch_holds(self, user_id: str, epoch: int) -> bool:
        """Whether the user still exists and no password change or sign-out everywhere came after `epoch`."""
        profile = self.table.get(keys.user(user_id), keys.PROFILE, consistent=True)
        return profile is not None and int(profile.get("session_epoch", 0)) == epoch

    def _revoke_replayed_code(self, key: str) -> None:
        """A code presented twice: revoke the tokens the first exchange issued (RFC 6749 §4.1.2)."""
        item = self.table.get(key, keys.CODE, consistent=True)
        if item and item.get("family_id"):
            self.revoke_family(item["family_id"])
