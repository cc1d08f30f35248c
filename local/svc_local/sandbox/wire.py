"""What a sandbox provider deals in: the request it is given, the response it returns (or raises, Refused),
its routes, and the provider itself (a set of routes the sandbox mounts)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class SandboxRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default


@dataclass
class SandboxResponse:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, bytes):
            return self.body, headers
        if isinstance(self.body, str):
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            return self.body.encode("utf-8"), headers
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(self.body).encode("utf-8"), headers


class Refused(Exception):
    """The answer a request gets before its handler's work starts (no or a wrong token: 401, something the
    caller may not see: 404): raised by the lookups a handler begins with, answered by the sandbox."""

    def __init__(self, response: SandboxResponse) -> None:
        super().__init__(response.status)
        self.response = response


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> SandboxResponse:
    return SandboxResponse(status, body if body is not None else {}, dict(headers or {}))


RouteHandler = Callable[[SandboxRequest], SandboxResponse]


@dataclass(frozen=True)
class SandboxRoute:
    method: str  # "*" for any
    path: str  # segments may be {name} or a final {name+}
    handler: RouteHandler


class Provider(Protocol):
    """A provider module: a name and its routes, mounted on the sandbox's routing table."""

    name: str

    def routes(self) -> Iterable[SandboxRoute]: ...
