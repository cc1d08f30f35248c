"""The workspace's routes, one router per page group; `ROUTERS` is what functions/workspace/app.py serves."""

from __future__ import annotations

from svc_shared.workspace.routes import (
    assets,
    connections,
    credits,
    home,
    mcp_access,
    projects,
    settings,
    traffic,
)

ROUTERS = (
    home.router,
    connections.router,
    projects.router,
    mcp_access.router,
    assets.router,
    traffic.router,
    credits.router,
    settings.router,
)
