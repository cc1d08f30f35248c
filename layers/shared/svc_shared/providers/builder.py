"""AI builder adapter: our own contract (docs/builder-api.md). The builder edits a project's repository in
response to messages and commits its edits there."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from svc_shared.providers.http import HttpPool, Provider


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
    ) -> dict[str, Any]:
        return self.request(
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

    def message(self, message_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/messages/{quote(message_id)}")

    def edit_sessions(self, project_id: str) -> list[dict[str, Any]]:
        return self.request("GET", f"/v1/projects/{quote(project_id)}/edit-sessions")
