"""One HTTP client for every provider adapter: timeouts, retries only where safe, provider errors mapped to
domain errors, and no secret ever in a log line or an error message."""

from __future__ import annotations

import contextlib
import math
import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any, ClassVar
from urllib.parse import urlencode

from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError, RateLimited, UpstreamError
from svc_shared.core.logs import get_logger
from svc_shared.providers import label

logger = get_logger()

CONNECT_TIMEOUT = 3.0
REQUEST_BUDGET_SECONDS = 24.0
READ_TIMEOUT = 10.0
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class ProviderError(DomainError, code="provider_error"):
    """A provider answered with an error. The message is the product's words for it (what a person can do
    about it); what the provider answered (`status`, `detail`, `body`) is for the log, never for a client."""

    def __init__(self, provider: str, status: int, detail: str, body: Any = None) -> None:
        super().__init__(self.words(label(provider)))
        self.provider = provider
        self.status = status
        self.detail = detail
        self.body = body
        logger.info("provider error", extra={"provider": provider, "status": status, "detail": detail[:300]})

    @staticmethod
    def words(label: str) -> str:
        """The product's words for this error, naming the provider."""
        return say("providers.refused", label=label)


class ProviderAuthError(ProviderError, code="provider_unauthorized"):
    """The stored token was refused (401/403 without rate limiting): the user must reconnect."""

    @staticmethod
    def words(label: str) -> str:
        return say("providers.auth_refused", label=label)


class ProviderNotFound(ProviderError, code="provider_not_found"):
    @staticmethod
    def words(label: str) -> str:
        return say("providers.not_found", label=label)


class ProviderConflict(ProviderError, code="provider_conflict"):
    """409 or 422: the request conflicts with the provider's state (a name taken, an empty repository)."""

    @staticmethod
    def words(label: str) -> str:
        return say("providers.conflict", label=label)


class ProviderUnavailable(UpstreamError):
    """5xx, a timeout or a dropped connection: the operation may be retried."""

    def __init__(self, provider: str, detail: str) -> None:
        super().__init__(say("providers.unavailable", label=label(provider)))
        self.provider = provider
        self.detail = detail
        logger.warning("provider unavailable", extra={"provider": provider, "detail": detail[:300]})


# The moment (time.monotonic) by which the current request must be answered; provider calls never wait past
# it (API Gateway gives up at 29 s), so timeouts and retries shrink to what is left.
_deadline: ContextVar[float | None] = ContextVar("provider_deadline", default=None)


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Provider calls inside this block all finish within `seconds` from now."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def _remaining() -> float | None:
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


class HttpPool:
    """The pooled httpx client the adapters share (connections reused across requests of a container); held
    by the services object and created, with httpx's import, on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import httpx

                    self._client = httpx.Client(
                        timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT), follow_redirects=False
                    )
        return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


MAX_INLINE_WAIT = 2  # seconds of Retry-After a request sleeps on before trying again itself


def _seconds(retry_after: str | None, default: int) -> int:
    """Retry-After in whole seconds (a number of seconds, or an HTTP date), `default` when absent or unreadable."""
    if not retry_after:
        return default
    value = retry_after.strip()
    if value.isdecimal():
        return int(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0, math.ceil(when.timestamp() - time.time()))


def _message(body: Any, fallback: str) -> str:
    if isinstance(body, dict):
        for key in ("message", "error_description", "msg", "error"):
            if isinstance(body.get(key), str):
                return body[key]
    return fallback


class Provider:
    """Base of an adapter: `name` for messages, `base_url` from configuration, a bearer token if any."""

    name = "provider"
    retries = 2

    def __init__(self, base_url: str, token: str | None = None, *, http: HttpPool | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._http = http  # None: a connection per request (scripts and tests; the services pass their pool)

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "svc-platform/0.2"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        params: Any = None,
        headers: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        url: str | None = None,
        expect_json: bool = True,
        retry: bool | None = None,
    ) -> Any:
        """Send one request; retries idempotent methods on 5xx, 429 and transport errors with backoff."""
        import httpx

        target = url or f"{self.base_url}{path}"
        may_retry = method in IDEMPOTENT if retry is None else retry
        attempts = 1 + (self.retries if may_retry else 0)
        for attempt in range(attempts):
            started = time.perf_counter()
            remaining = _remaining()
            if remaining is not None and remaining < 0.5:
                raise ProviderUnavailable(self.name, "no time left in this request")
            timeout = READ_TIMEOUT if remaining is None else min(READ_TIMEOUT, remaining - 0.25)
            try:
                response = self._send(
                    method,
                    target,
                    timeout=httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
                    json=json,
                    data=data,
                    params=params,
                    auth=auth,
                    headers={**self.headers(), **(headers or {})},
                )
            except httpx.TransportError as exc:
                logger.warning(
                    "provider request failed",
                    extra={
                        "provider": self.name,
                        "method": method,
                        "path": path,
                        "reason": type(exc).__name__,
                    },
                )
                if attempt + 1 < attempts:
                    self._backoff(attempt, None)
                    continue
                raise ProviderUnavailable(self.name, type(exc).__name__) from None
            logger.debug(
                "provider request",
                extra={
                    "provider": self.name,
                    "method": method,
                    "path": path,
                    "status": response.status_code,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )
            retry_after = response.headers.get("retry-after")
            if (
                response.status_code >= 500
                or (response.status_code == 429 and _seconds(retry_after, 0) <= MAX_INLINE_WAIT)
            ) and attempt + 1 < attempts:
                # A 429 that asks for more than a moment is not slept on here: the caller is told when to
                # come back (RateLimited.retry_after), and a retry now would only spend the provider's quota.
                self._backoff(attempt, retry_after)
                continue
            return self._result(response, expect_json)
        raise AssertionError("unreachable")

    def _send(self, method: str, url: str, **options: Any) -> Any:
        if self._http is not None:
            return self._http.client().request(method, url, **options)
        import httpx

        with httpx.Client(follow_redirects=False) as one_off:
            return one_off.request(method, url, **options)

    @staticmethod
    def _backoff(attempt: int, retry_after: str | None) -> None:
        delay = 0.2 * (2**attempt) + random.uniform(0, 0.1)
        if retry_after:
            delay = min(float(_seconds(retry_after, delay)), 5.0)
        remaining = _remaining()
        if remaining is not None:
            delay = max(0.0, min(delay, remaining - 1.0))
        time.sleep(delay)

    def _result(self, response: Any, expect_json: bool) -> Any:
        status = response.status_code
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = None
        if status < 400:
            if expect_json and body is None and response.content:
                raise ProviderUnavailable(self.name, f"answered {status} with a body that is not JSON")
            return body if expect_json else response
        message = _message(body, response.reason_phrase or "error")
        if status == 429:
            raise RateLimited(
                say("providers.rate_limited", label=label(self.name)),
                retry_after=_seconds(response.headers.get("retry-after"), 60),
                code="provider_rate_limited",
            )
        if status in (401, 403):
            if status == 403 and response.headers.get("x-ratelimit-remaining") == "0":
                raise RateLimited(
                    say("providers.rate_limited", label=label(self.name)),
                    retry_after=60,
                    code="provider_rate_limited",
                )
            raise ProviderAuthError(self.name, status, message, body)
        if status == 404:
            raise ProviderNotFound(self.name, status, message, body)
        if status in (409, 422):
            raise ProviderConflict(self.name, status, message, body)
        if status >= 500:
            raise ProviderUnavailable(self.name, f"answered {status}")
        raise ProviderError(self.name, status, message, body)


class OAuthWebFlow(Provider):
    """The OAuth web flow's side of a provider: where a person is sent to authorize the platform (its page at
    `authorize_path`, with what else this provider asks, `authorize_asks`)."""

    authorize_path: ClassVar[str]
    authorize_asks: ClassVar[dict[str, str]]

    def authorize_url(self, *, client_id: str, redirect_uri: str, state: str) -> str:
        query = {"client_id": client_id, "redirect_uri": redirect_uri, "state": state, **self.authorize_asks}
        return f"{self.base_url}{self.authorize_path}?{urlencode(query)}"
