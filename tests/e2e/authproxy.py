"""A loopback reverse proxy that adds a Bearer token to every request it forwards to the stack's /mcp.

Tools that test MCP servers without speaking OAuth (the conformance suite's server scenarios) reach the real,
authenticated endpoint through it: the token was obtained through the real OAuth flow, and everything else —
headers, bodies, statuses — passes through untouched. Host and Origin naming the proxy are rewritten to name
the gateway, so the server's DNS-rebinding check sees what a direct client would send; any other Host or
Origin (an attacker's) is forwarded as it came.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

import httpx

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "content-length", "host"}


class LoopbackServer:
    """A threaded HTTP server with `handler` on a free loopback port, serving while used as a context
    manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


class AuthProxy(LoopbackServer):
    def __init__(self, upstream: str, token: str, static: dict[str, tuple[str, bytes]] | None = None) -> None:
        """`static`: pages this proxy serves itself on GET, by path: (content type, body) (a test host's page)."""
        self.upstream = upstream.rstrip("/")
        self.token = token
        self.static = static or {}
        self._upstream_netloc = urlsplit(self.upstream).netloc
        self._client = httpx.Client(timeout=30)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                page = proxy.static.get(self.path.split("?")[0]) if self.command == "GET" else None
                if page is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", page[0])
                    self.send_header("Content-Length", str(len(page[1])))
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    self.wfile.write(page[1])
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                # Surrounding whitespace is not part of a field value (RFC 9110 §5.5); API Gateway drops it too.
                headers = [(k, v.strip()) for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP]
                headers = [(k, proxy.rewrite(v) if k.lower() == "origin" else v) for k, v in headers]
                headers.append(("Host", proxy.rewrite_host(self.headers.get("Host", ""))))
                headers = [(k, v) for k, v in headers if k.lower() != "authorization"]
                headers.append(("Authorization", f"Bearer {proxy.token}"))
                try:
                    answer = proxy._client.request(
                        self.command, proxy.upstream + self.path, headers=headers, content=body
                    )
                except httpx.HTTPError as exc:
                    self.send_error(502, f"upstream: {exc}")
                    return
                self.send_response(answer.status_code)
                for name, value in answer.headers.multi_items():
                    if name.lower() not in _HOP_BY_HOP and name.lower() != "content-encoding":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = do_OPTIONS = _forward

        super().__init__(Handler)

    def rewrite_host(self, host: str) -> str:
        name, _, port = host.rpartition(":")
        if port == str(self.port) and name in ("127.0.0.1", "localhost", "[::1]"):
            return f"{name}:{urlsplit(self.upstream).port}"
        return host

    def rewrite(self, origin: str) -> str:
        parts = urlsplit(origin)
        if parts.scheme == "http" and parts.netloc:
            return f"http://{self.rewrite_host(parts.netloc)}"
        return origin

    def url(self, host: str = "localhost") -> str:
        return f"http://{host}:{self.port}"

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        super().__exit__(kind, exc, tb)
        self._client.close()
