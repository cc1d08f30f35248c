"""Asset tools: a presigned URL to upload an image or other asset to the project's storage."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.wiring import services


class UploadArguments(ProjectArguments):
    filename: str = Field(min_length=1, max_length=200, description="The asset's file name, e.g. hero.jpg.")
    content_type: str = Field(
        min_length=3,
        max_length=100,
        pattern=r"^[\w.+-]+/[\w.+-]+$",
        description="MIME type the upload will send, e.g. image/jpeg.",
    )
    size_bytes: int = Field(
        ge=1, le=10 * 1024 * 1024, description="Exact size of the file in bytes; at most 10 MB."
    )


class UploadUrl(Output):
    upload_url: str
    method: str
    key: str
    headers: dict[str, str]
    expires_at: str
    max_bytes: int


@registry.tool("Get an upload URL", read_only=False, idempotent=False, output=UploadUrl)
def get_file_upload_url(ctx: ToolContext, args: UploadArguments) -> dict[str, Any]:
    """A presigned PUT URL (valid 1 hour) to upload one asset of at most 10 MB to the project's storage.
    Send exactly the given Content-Type and Content-Length headers."""
    return services.workbench().upload_url(
        ctx.user_id, args.project_id, args.filename, args.content_type, args.size_bytes
    )
