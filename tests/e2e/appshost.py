"""The MCP Apps test host's servers: the host page (with the bundled official AppBridge and MCP client) on the
token-adding relay to the stack's /mcp, and the sandbox proxy on another origin, which serves each view under
the Content-Security-Policy the MCP Apps specification builds from the view's declared `csp`."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from authproxy import AuthProxy, LoopbackServer
from stackproc import ROOT

HERE = Path(__file__).resolve().parent / "apps_host"
NODE = ROOT / "node_modules" / ".bin" / "node"
VITE = ROOT / "node_modules" / "vite" / "bin" / "vite.js"


def csp_header(csp: dict[str, list[str]]) -> str:
    """The specification's CSP construction (Security Implications, 4): only the declared domains."""
    resources = " ".join(csp.get("resourceDomains") or [])
    connect = " ".join(csp.get("connectDomains") or []) or "'none'"
    frames = " ".join(csp.get("frameDomains") or []) or "'none'"
    base = " ".join(csp.get("baseUriDomains") or []) or "'self'"
    return "; ".join(
        part.strip()
        for part in (
            "default-src 'none'",
            f"script-src 'self' 'unsafe-inline' {resources}",
            f"style-src 'self' 'unsafe-inline' {resources}",
            f"connect-src {connect}",
            f"img-src 'self' data: {resources}",
            f"font-src 'self' {resources}",
            f"media-src 'self' data: {resources}",
            f"frame-src {frames}",
            "object-src 'none'",
            f"base-uri {base}",
        )
    )


def build_host_bundle() -> bytes:
    """host.js and its packages (AppBridge, the MCP client) bundled from node_modules by vite, offline."""
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [str(NODE), str(VITE), "build", "--config", str(HERE / "vite.config.mjs")],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env={**os.environ, "SVC_APPS_HOST_OUT": out},
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        return (Path(out) / "host.bundle.js").read_bytes()


class SandboxServer(LoopbackServer):
    """The sandbox proxy's origin: sandbox.html?csp=<json> answers with that CSP as a header."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                name = {"/sandbox.html": "sandbox.html", "/sandbox.js": "sandbox.js"}.get(parts.path)
                if name is None:
                    self.send_error(404)
                    return
                body = (HERE / name).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if name.endswith(".html") else "text/javascript")
                if name.endswith(".html"):
                    csp = json.loads(parse_qs(parts.query).get("csp", ["{}"])[0])
                    self.send_header("Content-Security-Policy", csp_header(csp))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)

    def url(self) -> str:
        """The sandbox page; the host adds the view's declared csp as the `csp` query parameter."""
        return f"http://127.0.0.1:{self.port}/sandbox.html"


def host_relay(gateway: str, token: str, bundle: bytes) -> AuthProxy:
    """The host page and its backend: /mcp relayed to the stack with the user's token added."""
    return AuthProxy(
        gateway,
        token,
        static={
            "/host.html": ("text/html; charset=utf-8", (HERE / "host.html").read_bytes()),
            "/host.bundle.js": ("text/javascript", bundle),
        },
    )
