"""The backoffice route table: every route file (`api/<path>/route`) with its handlers, minimum role, body
model and answers, read from the routers, where each route is declared once (web.ApiRouter.api).
docs/routes.md, the OpenAPI document and the template check are derived from it."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

ROLE_RANK = {"viewer": 1, "editor": 2, "admin": 3, "owner": 4}

# Resources whose routers are implemented, by the function (template CodeUri functions/<name>/) serving them.
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "catalog": ("products", "categories", "attributes", "collections"),
    "inventory": ("inventory",),
    "settings": ("settings", "staff"),
    "search": ("search", "ai"),
    "commerce": ("orders", "customers", "coupons"),
    "shipping": ("shipping", "payments"),
    "blog": ("blog",),
    "integrations": ("integrations", "gsc"),
}


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # /api/... with [id] / [slug] segments, as the route file's folder
    role: str | None  # minimum role; None = no role gate (signature-authenticated webhooks)
    resource: str
    body: str | None = None  # request model name in svc_backoffice.models
    query: str | None = None  # query model name in svc_backoffice.models
    answers: str = "200"
    summary: str = ""

    @property
    def rule(self) -> str:
        """The path as API Gateway and Powertools write it: [id] -> {id} / <id>."""
        return self.path.replace("[", "{").replace("]", "}")


def resource_of(path: str) -> str:
    """/api/<resource>/... -> resource; the session routes and the OpenAPI document are `auth`'s."""
    parts = path.split("/")
    return parts[2] if len(parts) > 2 and parts[1] == "api" else "auth"


@functools.cache
def _declared() -> tuple[Route, ...]:
    """Every route as its router declares it (ApiRouter.api), in module and declaration order."""
    import importlib

    routes: list[Route] = []
    for module in (*FUNCTIONS, "auth"):
        for router in importlib.import_module(f"svc_backoffice.routers.{module}").ROUTERS:
            routes.extend(router.declared)
    return tuple(routes)


def routes() -> tuple[Route, ...]:
    """The API routes."""
    return tuple(r for r in _declared() if r.resource != "auth")


def auth_routes() -> tuple[Route, ...]:
    """The routes of the auth function: sessions and the OpenAPI document (no role gate)."""
    return tuple(r for r in _declared() if r.resource == "auth")


def __getattr__(name: str) -> tuple[Route, ...]:
    # ROUTES and AUTH_ROUTES, read from the routers on first use (they import this module).
    if name == "ROUTES":
        return routes()
    if name == "AUTH_ROUTES":
        return auth_routes()
    raise AttributeError(name)


def route_files() -> list[str]:
    """Distinct route-file paths, in table order."""
    return list(dict.fromkeys(r.path for r in routes()))


def routes_of(resources: tuple[str, ...]) -> list[Route]:
    return [r for r in routes() if r.resource in resources]


def implemented(route: Route) -> bool:
    return any(route.resource in resources for resources in FUNCTIONS.values())


def function_of(route: Route) -> str | None:
    return next((name for name, resources in FUNCTIONS.items() if route.resource in resources), None)


def render_markdown() -> str:
    ROUTES, AUTH_ROUTES = routes(), auth_routes()
    counts = {m: sum(r.method == m for r in ROUTES) for m in ("POST", "GET", "PATCH", "DELETE")}
    gated = sum(1 for p in route_files() if any(r.role for r in ROUTES if r.path == p))
    lines = [
        "# Backoffice routes",
        "",
        "Generated from the routers' declarations by `python -m svc_backoffice.route_table`;",
        "do not edit by hand. A route file at `api/<path>/route` answers `/api/<path>`.",
        "",
        f"{len(route_files())} route files; handlers: "
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
        fn = "auth" if r.resource == "auth" else (function_of(r) or "_(later issue)_")
        lines.append(
            f"| {r.method} | `{r.path}` | {r.role or 'none'} | {r.body or ''} | {r.query or ''} | "
            f"{r.answers} | {fn} | {r.summary} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "docs/routes.md"
    )
    target.write_text(render_markdown())


if __name__ == "__main__":
    main()
