"""The JSON request bodies of the platform's routes (OAuth and MCP messages have their own), as pydantic models
parsed at the edge by `web.parse_body`: a missing or wrong field is a 400 that names it, before any logic runs.

Fields whose checks the spec words itself (a repository name, a database ref, pushed files) are typed here and
checked in the domain module, which owns those messages.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

# Ids of live sites, visitors and sessions in analytics beacons.
BEACON_ID = r"^[A-Za-z0-9_-]{8,64}$"


class RequestBody(BaseModel):
    """Base of a request body: unknown fields are ignored (clients may send more), known ones are checked.
    `codes` names the error code of a field (the first wrong field's, else `invalid_request`).
    A body's validator is built on its first use (`defer_build`): each function parses two or three of these,
    and building all of them cost every cold start about 10 ms (fresh interpreters importing the accounts and
    connections functions, with and without it, in turn)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)
    codes: ClassVar[dict[str, str]] = {}


class ProvisionRequest(RequestBody):
    """POST /api/projects/{projectId}/provision: start (or resume) publishing, or only report its stage."""

    action: Literal["start", "status"] = "start"
    codes: ClassVar[dict[str, str]] = {"action": "invalid_action"}


class DisconnectRequest(RequestBody):
    """POST /api/oauth/disconnect."""

    provider: Literal["repo_host", "db_host", "static_host"]
    codes: ClassVar[dict[str, str]] = {"provider": "invalid_provider"}


class ProjectRequest(RequestBody):
    """A route about one of the caller's projects."""

    project_id: str = Field(alias="projectId", min_length=1, max_length=128)
    codes: ClassVar[dict[str, str]] = {"projectId": "project_id_invalid"}


class LinkDbProjectRequest(ProjectRequest):
    """POST /api/integrations/db-host/link: `ref` is checked by Integrations.link_db_project."""

    ref: Any = None  # its message is the domain's
    codes: ClassVar[dict[str, str]] = {**ProjectRequest.codes, "ref": "ref_invalid"}


class ConnectRepoRequest(ProjectRequest):
    """POST /api/repo-host/connect-repo: create a repository (`name`) or link one (`existingRepo`, owner/name)."""

    mode: Literal["create", "link"]
    name: Any = None  # these two are checked, with the spec's messages, by Integrations.connect_repo
    existing_repo: Any = Field(default=None, alias="existingRepo")
    codes: ClassVar[dict[str, str]] = {
        **ProjectRequest.codes,
        "mode": "mode_invalid",
        "name": "name_invalid",
        "existingRepo": "existing_repo_invalid",
    }


class PushedFile(RequestBody):
    path: Any = None  # checked by svc_shared.core.repopath.repo_path
    content: str
    encoding: Literal["utf-8", "base64"] = "utf-8"


class PushRequest(ProjectRequest):
    """POST /api/repo-host/push: files to commit on the project's repository branch."""

    files: list[PushedFile] = Field(min_length=1)
    message: str | None = Field(default=None, max_length=5000)
    codes: ClassVar[dict[str, str]] = {
        **ProjectRequest.codes,
        "files": "invalid_files",
        "message": "invalid_message",
    }


class BeaconRequest(RequestBody):
    """POST /api/analytics/collect: one pageview of a live site."""

    site: str = Field(pattern=BEACON_ID)
    visitor: str = Field(pattern=BEACON_ID)
    session: str = Field(pattern=BEACON_ID)
    path: str = Field(default="/", max_length=512, pattern=r"^(/.*)?$")
    referrer: str = Field(default="", max_length=1024)
    country: str = Field(default="", max_length=2)


class SignInForm(RequestBody):
    """POST /login (a form): what is missing is said on the sign-in page, not as a JSON error."""

    email: str = Field(default="", max_length=320)
    password: str = Field(default="", max_length=1024)
    next: str | None = None


class CheckoutMetadata(RequestBody):
    purpose: str | None = Field(default=None, max_length=64)
    user_id: str | None = Field(default=None, max_length=128)


class CheckoutSession(RequestBody):
    # The checkout's ids are short; a longer one would not fit a storage key (Credits.credited reads up to 255).
    id: str = Field(min_length=1, max_length=255)
    amount_total: int | None = None
    payment_status: str | None = None
    metadata: CheckoutMetadata | None = None


class CheckoutEventData(RequestBody):
    object: CheckoutSession


class CheckoutEvent(RequestBody):
    """A verified checkout webhook event: only the fields crediting reads."""

    id: str = Field(min_length=1, max_length=255)
    type: str
    data: CheckoutEventData
    codes: ClassVar[dict[str, str]] = {}
