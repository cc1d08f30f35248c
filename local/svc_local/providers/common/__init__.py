"""Pieces every sandbox provider shares: routes declared on their handlers, persisted JSON state, bearer
tokens, ids, form bodies, the OAuth authorize step with its admin-chosen decision, and settings changed through
admin routes."""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, SandboxRoute, json_response
from svc_local.state import atomic_write

if TYPE_CHECKING:
    from svc_local.sandbox import Sandbox

ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyz0123456789"
_ROUTES = "sandbox_routes"
Handler = TypeVar("Handler", bound=Callable[..., SandboxResponse])
Shape = TypeVar("Shape")


def route(method: str, path: str) -> Callable[[Handler], Handler]:
    """Declares that a provider's handler method serves `method` ("*" for any) on `path`; one handler may
    serve several routes. `BaseProvider.routes()` reads the declarations back."""

    def declare(handler: Handler) -> Handler:
        setattr(handler, _ROUTES, [(method, path), *getattr(handler, _ROUTES, [])])
        return handler

    return declare


def now() -> float:
    return time.time()


def iso(ts: float | None = None) -> str:
    moment = datetime.fromtimestamp(now() if ts is None else ts, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def random_id(prefix: str = "", length: int = 24, alphabet: str = ALPHANUMERIC) -> str:
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


def bearer(request: SandboxRequest) -> str | None:
    """The token of `Authorization: Bearer x` (or GitHub's `token x`)."""
    value = request.headers.get("authorization") or ""
    scheme, _, token = value.partition(" ")
    if scheme.lower() in ("bearer", "token") and token.strip():
        return token.strip()
    return None


def basic(request: SandboxRequest) -> tuple[str, str] | None:
    value = request.headers.get("authorization") or ""
    scheme, _, encoded = value.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(encoded.strip()).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return user, password


def form(request: SandboxRequest) -> dict[str, str]:
    """A form-encoded body (last value wins); a JSON object body is accepted too, as GitHub does."""
    if "json" in (request.headers.get("content-type") or ""):
        try:
            data = request.json()
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    parsed = parse_qs(request.body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[-1] for k, v in parsed.items()}


def json_body(request: SandboxRequest) -> Any:
    """The JSON body, or None when it is missing or malformed."""
    try:
        return request.json()
    except (ValueError, UnicodeDecodeError):
        return None


def json_body_as(request: SandboxRequest, kind: type[Shape], refusal: SandboxResponse) -> Shape:
    """The JSON body when it is a `kind` (dict: an object, list: an array), else Refused with the provider's
    `refusal`."""
    body = json_body(request)
    if not isinstance(body, kind):
        raise Refused(refusal)
    return body


def with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit(parts._replace(query=query))


def redirect(url: str, status: int = 302) -> SandboxResponse:
    return SandboxResponse(status, b"", {"Location": url})


def html(body: str, status: int = 200) -> SandboxResponse:
    return SandboxResponse(status, body.encode("utf-8"), {"Content-Type": "text/html; charset=utf-8"})


def owned(
    account: str, record: dict[str, Any] | None, owner: str, missing: SandboxResponse
) -> dict[str, Any]:
    """`record` when the signed-in `account` owns it (its `owner` field names it), else Refused with `missing`
    (the provider's 404)."""
    if record is None or record[owner] != account:
        raise Refused(missing)
    return record


class JsonState:
    """A provider's state as one JSON document under the state directory, replaced atomically on every
    change (small documents: a write costs about a millisecond). Without a path it lives in memory."""

    def __init__(self, path: Path | None, default: dict[str, Any]) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.data: dict[str, Any] = json.loads(json.dumps(default))
        if path is not None and path.is_file():
            loaded = json.loads(path.read_text(encoding="utf-8"))
            for key, value in loaded.items():
                self.data[key] = value

    def save(self) -> None:
        if self.path is None:
            return
        with self.lock:
            payload = json.dumps(self.data, sort_keys=True).encode("utf-8")
        atomic_write(self.path, payload, mode=0o600)


class BaseProvider:
    """A sandbox provider: routes under its prefix, JSON state, the sandbox it is mounted on."""

    name = "provider"

    def __init__(self, state_dir: Path | None, default: dict[str, Any]) -> None:
        self.state_dir = state_dir
        self.state = JsonState(state_dir / f"{self.name}.json" if state_dir else None, default)
        self.sandbox: Sandbox | None = None
        self._timers: set[threading.Timer] = set()
        self._timers_lock = threading.Lock()

    @property
    def data(self) -> dict[str, Any]:
        return self.state.data

    def attach(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def public_url(self) -> str:
        """The sandbox's base URL (known once it listens)."""
        if self.sandbox is None:
            raise RuntimeError(f"provider {self.name} is not mounted on a sandbox")
        return self.sandbox.url

    def routes(self) -> Iterable[SandboxRoute]:
        """The routes its handler methods declare with @route (a method overridden without one serves none)."""
        declared: list[SandboxRoute] = []
        seen: set[str] = set()
        for cls in type(self).__mro__:
            for name, member in vars(cls).items():
                if name not in seen:
                    seen.add(name)
                    for method, path in getattr(member, _ROUTES, []):
                        declared.append(SandboxRoute(method, path, getattr(self, name)))
        return declared

    def save(self) -> None:
        self.state.save()

    def later(self, seconds: float, action: Callable[[], object]) -> None:
        """Run `action` after `seconds` on a daemon timer (stopped with the provider)."""

        def run() -> None:
            with self._timers_lock:
                self._timers.discard(timer)
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - a timer must not die silently
                if self.sandbox is not None:
                    self.sandbox.log(f"{self.name} timer failed: {exc!r}")

        timer = threading.Timer(max(seconds, 0.0), run)
        timer.daemon = True
        with self._timers_lock:
            self._timers.add(timer)
        timer.start()

    def stop(self) -> None:
        with self._timers_lock:
            timers = list(self._timers)
            self._timers.clear()
        for timer in timers:
            timer.cancel()
        self.save()


class Settings:
    """Numeric knobs a test changes at run time through `POST /__admin/{provider}/settings`."""

    def __init__(self, **values: float | None) -> None:
        self.values: dict[str, float | None] = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def update(self, data: Any) -> dict[str, float | None]:
        if not isinstance(data, dict):
            raise ValueError("body must be a JSON object")
        unknown = set(data) - set(self.values)
        if unknown:
            raise ValueError(
                f"unknown setting(s): {', '.join(sorted(unknown))}; known: {sorted(self.values)}"
            )
        for key, value in data.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise ValueError(f"{key} must be a non-negative number or null")
            self.values[key] = value
        return dict(self.values)

    def routes(self, provider: str) -> list[SandboxRoute]:
        def show(request: SandboxRequest) -> SandboxResponse:
            return json_response(dict(self.values))

        def change(request: SandboxRequest) -> SandboxResponse:
            try:
                return json_response(self.update(json_body(request)))
            except ValueError as exc:
                return json_response({"error": "invalid_request", "message": str(exc)}, 400)

        path = f"/__admin/{provider}/settings"
        return [SandboxRoute("GET", path, show), SandboxRoute("POST", path, change)]


class OAuthApp:
    """The authorize step of an OAuth provider: the sandbox's signed-in account approves at once unless an
    admin call decided the next authorization (deny, or another account). Codes are single use, 10 min."""

    CODE_TTL = 600

    def __init__(self, state: JsonState, client_id: str, client_secret: str, default_account: str) -> None:
        self.state = state
        self.client_id = client_id
        self.client_secret = client_secret
        self.default_account = default_account
        self._next: list[dict[str, Any]] = []
        state.data.setdefault("codes", {})

    def queue(self, data: dict[str, Any]) -> dict[str, Any]:
        decision = data.get("decision", "approve")
        if decision not in ("approve", "deny"):
            raise ValueError("decision must be approve or deny")
        account = data.get("account")
        if account is not None and (not isinstance(account, str) or not account):
            raise ValueError("account must be a non-empty string")
        entry = {"decision": decision, "account": account or None}
        with self.state.lock:
            self._next.append(entry)
        return entry

    def authorize(self, request: SandboxRequest, check: Callable[[str, str], str | None]) -> SandboxResponse:
        """Validate client_id and redirect_uri (`check` may add provider-specific errors), then redirect back
        with code and state, or with error=access_denied."""
        client_id = request.arg("client_id") or ""
        redirect_uri = request.arg("redirect_uri") or ""
        state = request.arg("state")
        if client_id != self.client_id:
            return html("<h1>Unknown OAuth application</h1>", 404)
        if not redirect_uri.startswith(("http://", "https://")):
            return html("<h1>Invalid redirect_uri</h1>", 400)
        problem = check(client_id, redirect_uri)
        if problem:
            return html(f"<h1>{problem}</h1>", 400)
        with self.state.lock:
            decided = self._next.pop(0) if self._next else {"decision": "approve", "account": None}
            extra = {"state": state} if state is not None else {}
            if decided["decision"] == "deny":
                params = {
                    "error": "access_denied",
                    "error_description": "The user has denied your application access.",
                    **extra,
                }
                return redirect(with_query(redirect_uri, params))
            code = random_id(length=20, alphabet="0123456789abcdef")
            self.state.data["codes"][code] = {
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "account": decided["account"] or self.default_account,
                "expires_at": now() + self.CODE_TTL,
                "code_challenge": request.arg("code_challenge"),
                "scope": request.arg("scope") or "",
            }
            self._expire_codes()
        self.state.save()
        return redirect(with_query(redirect_uri, {"code": code, **extra}))

    def authorize_code(self, request: SandboxRequest) -> SandboxResponse:
        """The authorize step of a provider that answers only `response_type=code`."""

        def check(client_id: str, redirect_uri: str) -> str | None:
            return None if request.arg("response_type") == "code" else "response_type must be code"

        return self.authorize(request, check)

    def redeem(self, code: str, redirect_uri: str | None) -> tuple[dict[str, Any] | None, str]:
        """Use a code up: (its grant, "") or (None, why: "bad_code" | "redirect_uri_mismatch")."""
        with self.state.lock:
            grant = self.state.data["codes"].get(code)
            if grant is None or grant["expires_at"] < now():
                self.state.data["codes"].pop(code, None)
                return None, "bad_code"
            if redirect_uri and redirect_uri != grant["redirect_uri"]:
                return None, "redirect_uri_mismatch"
            del self.state.data["codes"][code]
        return grant, ""

    def _expire_codes(self) -> None:
        codes = self.state.data["codes"]
        for code in [c for c, g in codes.items() if g["expires_at"] < now()]:
            del codes[code]
