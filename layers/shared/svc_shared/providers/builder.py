"""AI builder adapter: our own contract (docs/builder-api.md). The builder edits a project's repository in
response to messages and commits its edits there."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import quote

from svc_shared.providers.http import HttpPool, Provider


@dataclass(frozen=True)
class Sent:
    message_id: str
    edit_session_id: str | None


@dataclass(frozen=True)
class BuilderMessage:
    """A message as the builder reports it (docs/builder-api.md); a field is None until it is known."""

    message_id: str
    edit_session_id: str | None
    status: str  # in_progress, then complete or error
    response: str | None
    commit_sha: str | None
    error: str | None
    created_at: str | None
    completed_at: str | None

    def known(self) -> dict[str, Any]:
        """The fields known so far, in the contract's order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


class Builder(Provider):
    name = "builder"

    def __init__(self, base_url: str, api_key: str | None, *, http: HttpPool | None = None) -> None:
        super().__init__(base_url, api_key, http=http)

    def send(
        self,
        *,
        project_id: str,
        repo: str,
        branch: str,
        repo_token: str,
        content: str,
        edit_session_id: str | None,
        knowledge: str,
        idempotency_key: str,
    ) -> Sent:
        body = self.request(
            "POST",
            f"/v1/projects/{quote(project_id)}/messages",
            retry=True,
            headers={"Idempotency-Key": idempotency_key},
            json={
                "content": content,
                "edit_session_id": edit_session_id,
                "knowledge": knowledge,
                "repository": {"full_name": repo, "branch": branch, "token": repo_token},
            },
        )
        return Sent(message_id=str(body["message_id"]), edit_session_id=body.get("edit_session_id"))

    def message(self, message_id: str) -> BuilderMessage:
        return _message(self.request("GET", f"/v1/messages/{quote(message_id)}"), message_id)

    def edit_sessions(self, project_id: str) -> list[dict[str, Any]]:
        """The project's edit sessions as the builder lists them (passed on to the caller as they are)."""
        return self.request("GET", f"/v1/projects/{quote(project_id)}/edit-sessions")

    def edit_session(self, project_id: str, edit_session_id: str) -> dict[str, Any]:
        """One edit session of the project with its messages in the order they were sent, each as `message`
        reads it plus the merchant's `content` (ProviderNotFound for a session of another project)."""
        body = self.request(
            "GET", f"/v1/projects/{quote(project_id)}/edit-sessions/{quote(edit_session_id, safe='')}"
        )
        messages = body.get("messages") if isinstance(body, dict) else None
        return {
            **{k: v for k, v in (body or {}).items() if k != "messages"},
            "messages": [
                {**_message(m, "").known(), "content": str(m.get("content") or "")}
                for m in messages or []
                if isinstance(m, dict)
            ],
        }


def _message(body: dict[str, Any], message_id: str) -> BuilderMessage:
    return BuilderMessage(
        message_id=str(body.get("message_id") or message_id),
        edit_session_id=body.get("edit_session_id"),
        status=str(body.get("status")),
        response=body.get("response"),
        commit_sha=body.get("commit_sha"),
        error=body.get("error"),
        created_at=body.get("created_at"),
        completed_at=body.get("completed_at"),
    )
