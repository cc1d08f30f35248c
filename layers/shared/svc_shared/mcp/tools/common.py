"""What the tool modules share: the one `registry` every tool registers on, the base of the fixed result
shapes, and the arguments that name a project.

A tool whose result has a fixed shape names an `Output` model: it is declared as the tool's `outputSchema`,
and the result is sent as `structuredContent` too (the text content stays, for clients before 2025-06-18).
Members may be added later, so every model allows more than it names."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from svc_shared.mcp.registry import Registry, ToolInput

registry = Registry()


class Output(BaseModel):
    model_config = ConfigDict(extra="allow")


class ProjectArguments(ToolInput):
    project_id: str = Field(
        min_length=1, max_length=64, description="Project id from list_projects or create_project."
    )
