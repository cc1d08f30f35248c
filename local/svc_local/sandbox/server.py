"""The provider sandbox's server: a real HTTP server that providers plug routes into, with fault injection
applied before routing and the requests it served kept for tests."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, TextIO
from urllib.parse import parse_qs, unquote, urlsplit

from svc_local.sandbox.faults import FaultInjector, parse_fault
from svc_local.sandbox.wire import Refused, SandboxRequest, SandboxResponse, SandboxRoute, json_response
from svc_local.serving import BackgroundServer, BodyTooLarge, DispatchingHandler, OwnedServer, match_resource

if TYPE_CHECKING:
    from svc_local.sandbox.wire import Provider

DEFAULT_PORT = 4010
MAX_BODY_BYTES = 20 * 1024 * 1024


def _first_segment(path: str) -> str:
    return next((part for part in path.split("/") if part), "")


class _Drop(Exception):
    """Close the connection without answering."""


class _Handler(DispatchingHandler):
    server_version = "svc-local-sandbox"
    server: OwnedServer[Sandbox]

    def _dispatch(self) -> None:
        started = time.perf_counter()
        split = urlsplit(self.path)
        try:
            try:
                body = self.read_body(MAX_BODY_BYTES)
            except (
                ValueError
            ):  # malformed framing (a Content-Length that is not a length): the client's fault
                self.close_connection = True
                response = json_response(
                    {"error": "bad_request", "message": "Malformed request body framing"}, 400
                )
            else:
                request = SandboxRequest(
                    method=self.command,
                    path=unquote(split.path) or "/",
                    query=parse_qs(split.query, keep_blank_values=True),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                response = self.server.owner.handle(request)
        except BodyTooLarge:
            response = json_response({"error": "payload_too_large"}, 413)
            self.close_connection = True
        except _Drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            self.server.owner.log(f'{self.client_address[0]} "{self.command} {split.path}" dropped (fault)')
            return
        except Exception as exc:  # noqa: BLE001 - a provider bug is a 500, never a dead server
            self.server.owner.log(f"sandbox error on {self.command} {split.path}: {exc!r}")
            response = json_response({"error": "internal_error", "message": str(exc)}, 500)
        data, headers = response.encoded()
        try:
            self.send_answer(response.status, headers.items(), data)
        except OSError:
            self.close_connection = True
        elapsed = (time.perf_counter() - started) * 1000
        self.server.owner.log(
            f'{self.client_address[0]} "{self.command} {split.path}" {response.status} {elapsed:.1f}ms'
        )


class Sandbox(BackgroundServer):
    """Table-driven HTTP server: core routes, admin routes and each provider's routes."""

    thread_name = "svc-sandbox"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        providers: Iterable[Provider] = (),
        *,
        log_stream: TextIO | None = None,
        quiet: bool = False,
    ) -> None:
        super().__init__(host, port)
        self.faults = FaultInjector()
        self.providers = list(providers)
        self.routes: list[SandboxRoute] = [
            SandboxRoute("GET", "/health", self._health),
            SandboxRoute("GET", "/__admin/faults", self._list_faults),
            SandboxRoute("POST", "/__admin/faults", self._add_fault),
            SandboxRoute("DELETE", "/__admin/faults", self._clear_faults),
            SandboxRoute("GET", "/__admin/requests", self._list_requests),
            SandboxRoute("DELETE", "/__admin/requests", self._clear_requests),
            SandboxRoute("POST", "/__admin/oauth/next", self._oauth_next),
        ]
        self.request_counts: Counter[str] = Counter()
        self._counts_lock = threading.Lock()
        for provider in self.providers:
            attach = getattr(provider, "attach", None)
            if attach is not None:
                attach(self)
            self.routes.extend(provider.routes())
        # routes by their path's first segment (those starting with a {param} go with every path): a request
        # is matched against a handful of routes rather than all of them
        self._by_first: dict[str, list[SandboxRoute]] = {}
        self._any_first: list[SandboxRoute] = []
        for route in self.routes:
            first = _first_segment(route.path)
            if first.startswith("{"):
                self._any_first.append(route)
            else:
                self._by_first.setdefault(first, []).append(route)
        self.log_stream = log_stream
        self.quiet = quiet
        self._log_lock = threading.Lock()

    def make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return OwnedServer(address, _Handler, self)

    def stopped(self) -> None:
        """Let each provider persist its state and end its timers."""
        for provider in self.providers:
            stop = getattr(provider, "stop", None)
            if stop is not None:
                try:
                    stop()
                except Exception as exc:  # noqa: BLE001 - stop every provider whatever one does
                    self.log(f"error stopping provider {provider.name}: {exc!r}")

    def log(self, line: str) -> None:
        if self.quiet:
            return
        with self._log_lock:
            print(f"[sandbox] {line}", file=self.log_stream or sys.stderr, flush=True)

    def handle(self, request: SandboxRequest) -> SandboxResponse:
        """Apply faults (admin routes are exempt), then route."""
        if not request.path.startswith("/__admin/"):
            fault = self.faults.take(request.method, request.path)
            if fault is not None:
                if fault.delay_ms:
                    time.sleep(fault.delay_ms / 1000)
                if fault.drop:
                    raise _Drop
                if fault.status is not None:
                    return json_response(
                        {
                            "error": "injected_fault",
                            "message": f"fault injected on {request.method} {request.path}",
                        },
                        fault.status,
                        {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)},
                    )
        best: tuple[tuple[int, ...], SandboxRoute, dict[str, str]] | None = None
        allowed: set[str] = set()
        candidates = self._by_first.get(_first_segment(request.path), [])
        for route in [*candidates, *self._any_first] if self._any_first else candidates:
            found = match_resource(route.path, request.path)
            if found is None:
                continue
            if route.method not in ("*", request.method):
                allowed.add(route.method)
                continue
            if best is None or found[0] > best[0]:
                best = (found[0], route, found[1])
        if best is None:
            if allowed:
                return json_response(
                    {"error": "method_not_allowed"}, 405, {"Allow": ", ".join(sorted(allowed))}
                )
            return json_response(
                {"error": "not_found", "message": f"No route for {request.method} {request.path}"}, 404
            )
        request.params = best[2]
        if not request.path.startswith("/__admin/"):
            with self._counts_lock:
                self.request_counts[f"{request.method} {best[1].path}"] += 1
        try:
            return best[1].handler(request)
        except Refused as refused:
            return refused.response

    # ---- core and admin routes

    def _health(self, request: SandboxRequest) -> SandboxResponse:
        return json_response({"status": "ok", "providers": [p.name for p in self.providers]})

    def _list_faults(self, request: SandboxRequest) -> SandboxResponse:
        return json_response({"faults": [asdict(f) for f in self.faults.list()]})

    def _add_fault(self, request: SandboxRequest) -> SandboxResponse:
        try:
            fault = parse_fault(request.json())
        except ValueError as exc:
            return json_response({"error": "invalid_request", "message": str(exc)}, 400)
        self.faults.add(fault)
        return json_response({"fault": asdict(fault)}, 201)

    def _clear_faults(self, request: SandboxRequest) -> SandboxResponse:
        self.faults.clear()
        return SandboxResponse(204)

    def _list_requests(self, request: SandboxRequest) -> SandboxResponse:
        """Requests served per "METHOD route template" (benchmarks assert counts); ?prefix= filters."""
        prefix = request.arg("prefix") or ""
        with self._counts_lock:
            counts = {
                key: n
                for key, n in sorted(self.request_counts.items())
                if key.split(" ", 1)[1].startswith(prefix)
            }
        return json_response({"counts": counts, "total": sum(counts.values())})

    def _clear_requests(self, request: SandboxRequest) -> SandboxResponse:
        with self._counts_lock:
            self.request_counts.clear()
        return SandboxResponse(204)

    def _oauth_next(self, request: SandboxRequest) -> SandboxResponse:
        """Decide the next OAuth authorization of a provider: {provider, decision: approve|deny, account?}."""
        try:
            data = request.json()
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("provider"), str):
            return json_response({"error": "invalid_request", "message": "provider is required"}, 400)
        provider = next((p for p in self.providers if p.name == data["provider"]), None)
        oauth_next = getattr(provider, "oauth_next", None)
        if oauth_next is None:
            return json_response(
                {"error": "invalid_request", "message": f"no OAuth provider named {data['provider']}"}, 400
            )
        try:
            decided = oauth_next(data)
        except ValueError as exc:
            return json_response({"error": "invalid_request", "message": str(exc)}, 400)
        return json_response(decided, 201)
