"""Workspace sign-in and sign-out: credentials, throttling and sessions together, and ending every session
and MCP grant of a user (a password change, "sign out everywhere")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from svc_shared.core.catalogue import say
from svc_shared.core.errors import InvalidInput, RateLimited, Unauthenticated
from svc_shared.domain.accounts import Accounts, User, normalize_email
from svc_shared.domain.sessions import Session, Sessions
from svc_shared.storage.ratelimit import RateLimiter

if TYPE_CHECKING:
    from svc_shared.core.clock import Clock
    from svc_shared.storage.dal import Table

BACKOFF_BASE = 60  # seconds of wait after the first failure beyond the free ones; doubles with each next
FAILURES_FORGOTTEN = 3600  # an address's failures on an account are forgotten an hour after the last


def user_grant_revoker(table: Table, clock: Clock) -> Callable[[str], int]:
    """svc_shared.oauth.mcpauth.revoke_user_grants bound to a Grants that only revokes (it issues nothing, so it
    needs neither the resource URL nor the access-token key): for sign-in and the command line."""

    def revoke(user_id: str) -> int:
        from svc_shared.oauth.grants import Grants
        from svc_shared.oauth.mcpauth import revoke_user_grants

        return revoke_user_grants(Grants(table, clock, ""), user_id)

    return revoke


@dataclass(eq=False)
class SignIn:
    accounts: Accounts
    sessions: Sessions
    limiter: RateLimiter
    _: KW_ONLY
    max_failures: int
    ip_max_attempts: int
    window: int
    # every MCP grant of a user (svc_shared.oauth.mcpauth.revoke_user_grants)
    revoke_grants: Callable[[str], object] | None = None

    @staticmethod
    def _pair(client_ip: str, email: str) -> str:
        try:
            address = normalize_email(email)
        except InvalidInput:
            address = email.strip().lower()
        return f"{client_ip}\n{address}"

    def sign_in(self, email: str, password: str, client_ip: str) -> Session:
        """A new session for valid credentials. Throttled per client address (every attempt counts) and per
        address and account (failures, with an exponential backoff), never per account alone: a guesser
        elsewhere can slow only their own attempts, never lock the owner out."""
        user = self.check_credentials(email, password, client_ip)
        return self.sessions.create(user.id, user.session_epoch)

    def check_password(self, user: User, password: str, client_ip: str) -> User:
        """The signed-in user, once their password is typed again (changing it, deleting the account): the
        same throttle as signing in, on the same counters, so a stolen session cannot guess it faster."""
        return self.check_credentials(user.email, password, client_ip)

    def new_session(self, user_id: str) -> Session:
        """A session in the user's current epoch (this browser, after the password change it made)."""
        return self.sessions.create(user_id, self.accounts.get_user(user_id).session_epoch)

    def check_credentials(self, email: str, password: str, client_ip: str) -> User:
        """The user with these credentials, throttled as sign_in describes."""
        attempts, wait = self.limiter.hit("login-ip", client_ip, self.window)
        if attempts > self.ip_max_attempts:
            raise RateLimited(say("signin.too_many_attempts", seconds=wait), retry_after=wait)
        pair = self._pair(client_ip, email)
        wait = self.limiter.backoff(
            "login-pair",
            pair,
            free=self.max_failures,
            base=BACKOFF_BASE,
            cap=self.window,
            forget=FAILURES_FORGOTTEN,
        )
        if wait > 0:
            raise RateLimited(say("signin.too_many_attempts", seconds=wait), retry_after=wait)
        try:
            user = self.accounts.authenticate(email, password)
        except Unauthenticated:
            self.limiter.fail("login-pair", pair, forget=FAILURES_FORGOTTEN)
            raise
        self.limiter.clear("login-pair", pair)
        return user

    def current_user_id(self, cookie: str | None) -> str:
        """The signed-in user's id (one read: the session), for routes that need nothing else of the user."""
        user_id = self.sessions.resolve(cookie)
        if user_id is None:
            raise Unauthenticated(say("signin.required"), code="not_signed_in")
        return user_id

    def current_user(self, cookie: str | None) -> User:
        return self.accounts.get_user(self.current_user_id(cookie))

    def sign_out(self, cookie: str | None) -> None:
        self.sessions.revoke(cookie)

    def sign_out_everywhere(self, user_id: str) -> None:
        """End every workspace session of the user and revoke every MCP grant (access and refresh tokens)."""
        self.accounts.end_sessions(user_id)
        if self.revoke_grants is not None:
            self.revoke_grants(user_id)

    def change_password(self, user_id: str, password: str) -> None:
        """A new password: every session ends (in the same write) and every MCP grant is revoked."""
        self.accounts.set_password(user_id, password)
        if self.revoke_grants is not None:
            self.revoke_grants(user_id)


__all__ = ["SignIn"]
