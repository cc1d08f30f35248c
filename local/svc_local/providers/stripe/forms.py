"""Stripe's request and error shapes: bracket-notation forms and `{"error": {...}}` answers."""

from __future__ import annotations

import re
from typing import Any

from svc_local.sandbox import SandboxResponse, json_response

API_VERSION = "2024-06-20"
ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def error(status: int, message: str, *, kind: str = "invalid_request_error", **extra: Any) -> SandboxResponse:
    return json_response({"error": {"message": message, "type": kind, **extra}}, status)


def error_body(message: str, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "type": "invalid_request_error"}
    if param:
        body["param"] = param
    if code:
        body["code"] = code
    return {"error": body}


def parse_form(body: bytes) -> dict[str, Any]:
    """Stripe's bracket notation into nested dicts and lists: line_items[0][price_data][currency]=usd."""
    from urllib.parse import parse_qsl

    root: dict[str, Any] = {}
    for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
        parts = [key.split("[", 1)[0], *re.findall(r"\[([^\]]*)\]", key)]
        node: Any = root
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            nxt: Any = value if last else ([] if parts[index + 1].isdecimal() else {})
            if isinstance(node, list):
                position = int(part)
                while len(node) <= position:
                    node.append(None)
                if node[position] is None or last:
                    node[position] = nxt
                node = node[position]
            else:
                if part not in node or last:
                    node[part] = nxt
                node = node[part]
    return root
