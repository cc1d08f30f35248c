"""The handshake era's session: what a client declared at `initialize` that later requests cannot say again
(they carry no capabilities): that it renders MCP Apps views (svc_shared.mcp.apps) and that it speaks tasks
(2025-11-25's `tasks` capability, svc_shared.mcp.tasks).

An `initialize` that declares either is answered with an `Mcp-Session-Id` naming what it declared: a prefix
for the flags and an HMAC of the prefix and the user id under a key of its own, checked with no I/O on every
later request. A client that declares neither gets no session id, and every request of it reads as one."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from svc_shared.mcp import apps

SESSION_HEADER = "Mcp-Session-Id"
TASKS_VERSION = "2025-11-25"  # the one handshake version with the `tasks` capability


@dataclass(frozen=True)
class Declared:
    ui: bool = False
    tasks: bool = False


# The flags each session id prefix stands for ("ui1." is the prefix of sessions issued before tasks existed).
PREFIXES = {Declared(True, False): "ui1.", Declared(False, True): "tk1.", Declared(True, True): "ut1."}


def _key() -> bytes:
    from svc_shared.wiring import services

    return services.signing_key("mcp-ui-session")


def session_id(user_id: str, declared: Declared, key: bytes | None = None) -> str:
    prefix = PREFIXES[declared]
    mac = hmac.new(key or _key(), f"{prefix}{user_id}".encode(), hashlib.sha256).digest()
    return prefix + base64.urlsafe_b64encode(mac[:24]).decode()


def declared(header: str | None, user_id: str, key: bytes | None = None) -> Declared | None:
    """What a request's Mcp-Session-Id says its client declared: nothing for no header, None for a value this
    server did not issue to this user (the transport's 404: initialize again)."""
    if header is None or not header.strip():
        return Declared()
    value = header.strip()
    for flags, prefix in PREFIXES.items():
        if value.startswith(prefix):
            return flags if hmac.compare_digest(value, session_id(user_id, flags, key)) else None
    return None


def offers_tasks(params: dict[str, Any]) -> bool:
    """Whether an `initialize` declares the tasks capability, in the one version that has it."""
    capabilities = params.get("capabilities")
    return (
        params.get("protocolVersion") == TASKS_VERSION
        and isinstance(capabilities, dict)
        and isinstance(capabilities.get("tasks"), dict)
    )


def of_initialize(params: dict[str, Any]) -> Declared:
    return Declared(ui=apps.offers_ui(params.get("capabilities")), tasks=offers_tasks(params))


def session_headers(messages: list[Any], user_id: str) -> dict[str, str]:
    """The Mcp-Session-Id to answer an `initialize` that declared the extension or tasks with."""
    for message in messages:
        if getattr(message, "method", None) == "initialize":  # a Message, whose arguments are a dict
            flags = of_initialize(message.arguments)
            if flags != Declared():
                return {SESSION_HEADER: session_id(user_id, flags)}
    return {}
