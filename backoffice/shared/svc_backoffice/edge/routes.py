"""The route table: every route file (`api/<path>/route`) with its handlers, minimum role, body model and
answers, read from the routers it is given, where each route is declared once (api_router.ApiRouter.api).
docs/routes.md, the OpenAPI document and the template check are derived from it; svc_backoffice.routers.table
builds the backoffice's from every router."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # /api/... with [id] / [slug] segments, as the route file's folder
    role: str | None  # minimum role; None = no role gate (signature-authenticated webhooks)
    resource: str
    body: str | None = None  # request model name in svc_backoffice.domain.models
    query: str | None = None  # query model name in svc_backoffice.domain.models
    answers: str = "200"
    summary: str = ""

    @property
    def rule(self) -> str:
        """The path as API Gateway and Powertools write it: [id] -> {id} / <id>."""
        return self.path.replace("[", "{").replace("]", "}")


def methods_at(path: str, declared: Iterable[Route]) -> list[str]:
    """The methods `declared` routes answer at `path` (a request path, `[id]` segments matching any one
    segment), sorted; empty when no route has that path."""
    asked = path.split("/")
    found = set()
    for route in declared:
        parts = route.path.split("/")
        if len(parts) == len(asked) and all(
            p == a or (p.startswith("[") and p.endswith("]") and a) for p, a in zip(parts, asked, strict=True)
        ):
            found.add(route.method)
    return sorted(found)


def resource_of(path: str) -> str:
    """/api/<resource>/... -> resource; the session routes and the OpenAPI document are `auth`'s."""
    parts = path.split("/")
    return parts[2] if len(parts) > 2 and parts[1] == "api" else "auth"


@dataclass(frozen=True)
class RouteTable:
    """The routes `routers` declare (ApiRouter.api), in router and declaration order; `functions` names the
    resources each function (template CodeUri functions/<name>/) serves."""

    routers: tuple[Any, ...]
    functions: dict[str, tuple[str, ...]]

    @functools.cached_property
    def _declared(self) -> tuple[Route, ...]:
        return tuple(route for router in self.routers for route in router.declared)

    def routes(self) -> tuple[Route, ...]:
        """The API routes."""
        return tuple(r for r in self._declared if r.resource != "auth")

    def auth_routes(self) -> tuple[Route, ...]:
        """The routes of the auth function: sessions and the OpenAPI document (no role gate)."""
        return tuple(r for r in self._declared if r.resource == "auth")

    def route_files(self) -> list[str]:
        """Distinct route-file paths, in table order."""
        return list(dict.fromkeys(r.path for r in self.routes()))

    def routes_of(self, resources: tuple[str, ...]) -> list[Route]:
        return [r for r in self.routes() if r.resource in resources]

    def implemented(self, route: Route) -> bool:
        return any(route.resource in resources for resources in self.functions.values())

    def function_of(self, route: Route) -> str | None:
        return next((name for name, resources in self.functions.items() if route.resource in resources), None)

    def render_markdown(self) -> str:
        """docs/routes.md."""
        ROUTES, AUTH_ROUTES = self.routes(), self.auth_routes()
        counts = {m: sum(r.method == m for r in ROUTES) for m in ("POST", "GET", "PATCH", "DELETE")}
        gated = sum(1 for p in self.route_files() if any(r.role for r in ROUTES if r.path == p))
        lines = [
            "# Backoffice routes",
            "",
            "Generated from the routers' declarations by `python -m svc_backoffice.routers.table`;",
            "do not edit by hand. A route file at `api/<path>/route` answers `/api/<path>`.",
            "",
            f"{len(self.route_files())} route files; handlers: "
            + ", ".join(f"{n} {m}" for m, n in counts.items())
            + f"; {gated} route files are behind the role gate (the others authenticate by signature).",
            "",
            "Minimum role: viewer 1 < editor 2 < admin 3 < owner 4. A missing or expired session redirects (302) to",
            "`/auth/signed-out`, an insufficient role to `/auth/signed-out?reason=insufficient_role`.",
            "",
            "| Method | Path | Minimum role | Body | Query | Answers | Function | Summary |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in (*ROUTES, *AUTH_ROUTES):
            fn = "auth" if r.resource == "auth" else (self.function_of(r) or "_(later issue)_")
            lines.append(
                f"| {r.method} | `{r.path}` | {r.role or 'none'} | {r.body or ''} | {r.query or ''} | "
                f"{r.answers} | {fn} | {r.summary} |"
            )
        return "\n".join(lines) + "\n"
