"""The tool server's tools, one module per domain, each holding its tools' argument models, result shapes
(`Output` models, declared as `outputSchema`) and functions side by side. A function's docstring is the
description a model reads; it makes one call into the domain; errors are domain errors, which the dispatcher
turns into `isError` results.

Every module registers on the one `registry` (tools.common); importing this package imports them all and puts
the tools in the order tools/list shows them: account, projects and templates, knowledge, analytics, credits,
publishing, the builder, the repository and assets."""

from __future__ import annotations

from svc_shared.mcp.tools import (  # noqa: F401  (each registers its tools)
    account,
    analytics,
    assets,
    builder,
    credits,
    knowledge,
    library,
    projects,
    publishing,
    repository,
)
from svc_shared.mcp.tools.common import registry

__all__ = ["registry"]

registry.arrange(
    (
        "get_me",
        "list_workspaces",
        "get_workspace",
        "list_library_projects",
        "create_project",
        "list_projects",
        "get_project_status",
        "resume_publish",
        "set_project_visibility",
        "remix_project",
        "list_template_projects",
        "get_workspace_knowledge",
        "set_workspace_knowledge",
        "get_project_knowledge",
        "set_project_knowledge",
        "get_project_analytics",
        "get_project_analytics_trend",
        "get_project_traffic_daily",
        "get_credits",
        "top_up_credits",
        "deploy_project",
        "send_message",
        "get_message",
        "list_edits",
        "list_files",
        "read_file",
        "get_diff",
        "get_file_upload_url",
    )
)
