"""The workspace's routes, one router per page group; `ROUTERS` is what functions/workspace/app.py serves."""

from __future__ import annotations

from svc_shared.workspace.routes import (
    account,
    assets,
    builder,
    connections,
    credits,
    files,
    home,
    knowledge,
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
    builder.router,
    files.router,
    knowledge.router,
    traffic.router,
    settings.router,
    credits.router,
    account.router,
    assets.router,
)
