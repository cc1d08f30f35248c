"""Server-rendered HTML pages of the workspace (sign-in)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from html import escape
from urllib.parse import urlencode

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;background:#f6f7f9;color:#111;margin:0}
main{max-width:380px;margin:10vh auto;background:#fff;padding:2rem;border-radius:12px;
box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #bbb;
border-radius:6px;font-size:1rem}
button{margin-top:1.2rem;width:100%;padding:.7rem;border:0;border-radius:6px;background:#111;color:#fff;
font-size:1rem;cursor:pointer}
.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:6px;margin-bottom:.5rem}
"""


def layout(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body><main>{body}</main></body></html>"
    )


def login_page(*, action: str, next_path: str, error: str | None = None, email: str = "") -> str:
    notice = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return layout(
        "Sign in",
        f"<h1>Sign in to your workspace</h1>{notice}"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="next" value="{escape(next_path)}">'
        '<label for="email">Email</label>'
        f'<input id="email" name="email" type="email" autocomplete="username" required value="{escape(email)}">'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" autocomplete="current-password" required>'
        '<button type="submit">Sign in</button></form>',
    )


_SCOPE_TEXT = {
    "mcp:all": "Use every tool of your svc account: read your profile, workspaces, projects and credits; create, "
    "change and deploy projects; send messages to the builder; read your repositories; start credit top-ups.",
}


def consent_page(
    *,
    action: str,
    client_name: str | None,
    redirect_host: str,
    client_host: str | None = None,
    scope: str,
    consent_token: str,
    user_email: str,
) -> str:
    name = escape(client_name or client_host or "An unnamed application")
    # A client identified by a metadata document is vouched for by the host that serves it; a registered
    # client's name is only what it said about itself.
    identity = (
        f'<p class="client-host">Identified by <strong>{escape(client_host)}</strong>, which publishes its details.</p>'
        if client_host
        else ""
    )
    return layout(
        "Authorize access",
        f"<h1>Allow {name} to use your account?</h1>{identity}"
        f"<p>Signed in as <strong>{escape(user_email)}</strong>.</p>"
        f"<p><strong>{name}</strong> will be sent back to <code>{escape(redirect_host)}</code> and will be able to:</p>"
        f"<p>{escape(_SCOPE_TEXT.get(scope, scope))}</p>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="consent_token" value="{escape(consent_token)}">'
        '<button type="submit" name="decision" value="allow" id="allow">Allow</button>'
        '<button type="submit" name="decision" value="deny" id="deny" style="background:#fff;color:#111;'
        'border:1px solid #bbb">Deny</button></form>',
    )


def wants_page(headers: Mapping[str, str]) -> bool:
    """Does the request come from a browser navigating (its Accept names text/html), rather than an API client?
    `headers` are lower-cased names."""
    accept = headers.get("accept", "")
    return any(part.split(";", 1)[0].strip() == "text/html" for part in accept.split(","))


def mcp_page(*, mcp_url: str, access_url: str) -> str:
    """What a browser opening the MCP server's URL sees: what the address is for and where it goes."""
    return layout(
        "Your MCP server",
        "<h1>This address is for your AI client</h1>"
        "<p>It is the MCP server of your shop builder. Add it as a remote MCP server (a connector) in Claude, "
        "ChatGPT, VS Code, the MCP Inspector or any MCP client:</p>"
        f'<p><code id="mcp-url">{escape(mcp_url)}</code></p>'
        "<p>The client opens a page where you sign in and allow it; it then works with your projects.</p>"
        f'<p><a href="{escape(access_url)}">See the clients you allowed</a></p>',
    )


PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"


def error_page(title: str, message: str) -> str:
    return layout(title, f'<h1>{escape(title)}</h1><p class="error" role="alert">{escape(message)}</p>')


def connection_result(*, ok: bool, provider: str | None, message: str, reason: str = "") -> str:
    """The page the provider's callback ends on: it tells the opener (the workspace, which opened a popup)
    and closes itself; opened in the same tab, it goes back to the connections page, where a failure shows
    on the provider's card (`reason`: denied, expired or empty, a code the page turns into its words)."""
    back = "../../workspace/connections"
    if not ok:
        back += "?" + urlencode({"failed": provider or "", "reason": reason})
    payload = escape(
        json.dumps(
            {"type": "svc-oauth-result", "ok": ok, "provider": provider, "message": message, "back": back}
        )
    )
    title = "Connected" if ok else "Connection failed"
    notice = '<p class="error" role="alert">' if not ok else "<p>"
    body = (
        f"<h1>{escape(title)}</h1>{notice}{escape(message)}</p>"
        f'<p><a href="{escape(back)}">Back to the workspace</a></p><div id="result" data-result="{payload}"></div>'
    )
    return layout(title, body).replace("</body>", f"<script>{_CLOSE_POPUP}</script></body>")


# Posts the result to the workspace window that opened the popup (same origin only), then closes; opened in
# the same tab (the repo_host panel flow), it goes back to the connections page (a failure shown on the card).
_CLOSE_POPUP = (
    "(function(){var r=JSON.parse(document.getElementById('result').dataset.result);"
    "if(window.opener){window.opener.postMessage(r,window.location.origin);window.close();}"
    "else{window.location.replace(r.back);}})();"
)
CONNECTION_RESULT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(_CLOSE_POPUP.encode()).digest()).decode()}'"
)
