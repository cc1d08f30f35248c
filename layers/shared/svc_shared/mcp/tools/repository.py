"""Repository tools: a project's files at a ref, one file's content, and the diff between two refs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.wiring import services


class RefArguments(ProjectArguments):
    ref: str = Field(
        default="HEAD",
        min_length=1,
        max_length=255,
        description="Branch, tag or commit SHA; HEAD is the project's branch.",
    )


class ReadFileArguments(RefArguments):
    path: str = Field(
        min_length=1, max_length=1024, description="File path in the repository, e.g. src/app.tsx."
    )


class DiffArguments(ProjectArguments):
    base: str = Field(min_length=1, max_length=255, description="The older ref (branch, tag or SHA).")
    head: str = Field(
        default="HEAD", min_length=1, max_length=255, description="The newer ref; HEAD by default."
    )


class RepoFile(Output):
    path: str
    size: int | None


class Files(Output):
    ref: str
    commit_sha: str
    count: int
    files: list[RepoFile]


class FileContent(Output):
    path: str
    ref: str
    size: int
    encoding: str
    content: str


class DiffFile(Output):
    filename: str
    status: str | None = None
    additions: int | None = None
    deletions: int | None = None
    changes: int | None = None
    previous_filename: str | None = None
    patch: str | None = None
    truncated: bool | None = None


class Diff(Output):
    base: str
    head: str
    files: list[DiffFile]


@registry.tool("List repository files", open_world=True, output=Files)
def list_files(ctx: ToolContext, args: RefArguments) -> dict[str, Any]:
    """Every file of the project's repository at a ref (default HEAD). Repositories over 100,000 entries
    are refused."""
    return services.workbench().list_files(ctx.user_id, args.project_id, args.ref)


@registry.tool("Read a file", open_world=True, output=FileContent)
def read_file(ctx: ToolContext, args: ReadFileArguments) -> dict[str, Any]:
    """One file of the project's repository at a ref (default HEAD). Files over 1 MB are refused."""
    return services.workbench().read_file(ctx.user_id, args.project_id, args.path, args.ref)


@registry.tool("Diff two refs", open_world=True, output=Diff)
def get_diff(ctx: ToolContext, args: DiffArguments) -> dict[str, Any]:
    """Unified diff between two refs of the project's repository; a file's patch over 256 KB is truncated
    with a marker."""
    return services.workbench().diff(ctx.user_id, args.project_id, args.base, args.head)
