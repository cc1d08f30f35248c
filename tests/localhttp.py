"""Real HTTP pieces the tests and benchmarks share: a quiet request handler that answers with a body, a server on a
free loopback port in a thread, an endpoint that records the POSTs it receives, the platform's beacon route as a storefront meets it, and the repository and
static-host clients of a running provider sandbox (each with a token the sandbox issued)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable, Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from svc_local.providers import base_urls
from svc_shared.providers.repo_host import RepoHost
from svc_shared.providers.static_host import StaticHost


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing and answers a whole body with its type and length."""

    def reply(self, status: int, kind: str, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a free loopback port in a thread; yields its base URL, then stops it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Beacons(QuietHandler):
    """The platform's beacon route as the storefront meets it: cross-origin, CORS for any origin, 204."""

    received: list[dict] = []

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "Content-Type")
        self.send_header("Access-Control-Allow-Methods", "POST")

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self._cors()
        self.end_headers()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/api/analytics/collect":
            Beacons.received.append(json.loads(body))
        self.send_response(204)
        self._cors()
        self.end_headers()


class PostRecorder:
    """An endpoint on a loopback port that records each POST (its body and headers) and answers 200."""

    def __init__(self, path: str = "/") -> None:
        self.received: list[tuple[bytes, Message]] = []
        self.arrived = threading.Condition()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.arrived:
                    outer.received.append((body, self.headers))
                    outer.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._running = contextlib.ExitStack()
        self.url = self._running.enter_context(serving(Handler)) + path

    def wait_for(self, count: int, seconds: float) -> int:
        """How many POSTs have arrived, once `count` have or `seconds` have passed."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, seconds)
            return len(self.received)

    def close(self) -> None:
        self._running.close()

    def __enter__(self) -> PostRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sandbox_hosts(sandbox_url: str) -> tuple[RepoHost, StaticHost]:
    """The repository host's and the static host's clients of the provider sandbox at `sandbox_url`."""
    urls = base_urls(sandbox_url)
    github = httpx.post(f"{sandbox_url}/__admin/github/tokens", json={}).json()["access_token"]
    netlify = httpx.post(f"{sandbox_url}/__admin/netlify/tokens", json={}).json()["access_token"]
    return RepoHost(urls["REPO_HOST_API_URL"], github), StaticHost(urls["STATIC_HOST_API_URL"], netlify)


def live_site_status(url: str, within: float = 120) -> int:
    """A live site's status once its first build is out (publishing ends when the build is started): 404 is
    waited past for `within` seconds."""
    import time

    deadline = time.monotonic() + within
    while (status := httpx.get(url, timeout=10).status_code) == 404 and time.monotonic() < deadline:
        time.sleep(1)
    return status
