"""Workspace sign-in and sign-out: credentials, throttling and sessions together."""

from __future__ import annotations

from svc_shared.accounts import INVALID_CREDENTIALS, Accounts, User
from svc_shared.errors import RateLimited, Unauthenticated
from svc_shared.ratelimit import RateLimiter
from svc_shared.sessions import Session, Sessions

TOO_MANY_ATTEMPTS = "Too many sign-in attempts. Try again in {seconds} seconds."


class SignIn:
    def __init__(
        self,
        accounts: Accounts,
        sessions: Sessions,
        limiter: RateLimiter,
        *,
        max_failures: int,
        ip_max_attempts: int,
        window: int,
    ) -> None:
        self._accounts = accounts
        self._sessions = sessions
        self._limiter = limiter
        self._max_failures = max_failures
        self._ip_max = ip_max_attempts
        self._window = window

    def sign_in(self, email: str, password: str, client_ip: str) -> Session:
        """A new session for valid credentials. Throttled per client address (every attempt) and per
        account (failures only), so a guesser cannot lock out a user from elsewhere for long."""
        attempts, wait = self._limiter.hit("login-ip", client_ip, self._window)
        if attempts > self._ip_max:
            raise RateLimited(TOO_MANY_ATTEMPTS.format(seconds=wait), retry_after=wait)
        account_key = email.strip().lower()
        failures, wait = self._limiter.count("login-fail", account_key, self._window)
        if failures >= self._max_failures:
            raise RateLimited(TOO_MANY_ATTEMPTS.format(seconds=wait), retry_after=wait)
        try:
            user = self._accounts.authenticate(email, password)
        except Unauthenticated:
            self._limiter.hit("login-fail", account_key, self._window)
            raise
        return self._sessions.create(user.id)

    def current_user_id(self, cookie: str | None) -> str:
        """The signed-in user's id (one read: the session), for routes that need nothing else of the user."""
        user_id = self._sessions.resolve(cookie)
        if user_id is None:
            raise Unauthenticated("Sign in to continue.", code="not_signed_in")
        return user_id

    def current_user(self, cookie: str | None) -> User:
        return self._accounts.get_user(self.current_user_id(cookie))

    def sign_out(self, cookie: str | None) -> None:
        self._sessions.revoke(cookie)


__all__ = ["INVALID_CREDENTIALS", "TOO_MANY_ATTEMPTS", "SignIn"]
