"""AI builder sandbox (docs/builder-api.md): a deterministic builder. A message completes after a short
delay by committing a small real edit (a line appended to BUILDER_NOTES.md) to the given branch of a GitHub
sandbox repository, with the repository token it was given."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from svc_local.providers.common import BaseProvider, Settings, bearer, iso, json_body, now, random_id, route
from svc_local.providers.github import GitHub
from svc_local.providers.gitstore import GitError
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, SandboxRoute, json_response

NOTES = "BUILDER_NOTES.md"
AUTHOR = ("AI Builder", "builder@sandbox.test")


def _error(status: int, error: str, message: str) -> SandboxResponse:
    return json_response({"error": error, "message": message}, status)


class Builder(BaseProvider):
    """Mounted at /builder; the adapter's base URL is {sandbox}/builder."""

    name = "builder"

    def __init__(
        self, state_dir: Path | None, *, api_key: str, github: GitHub | None, delay: float = 0.5
    ) -> None:
        super().__init__(state_dir, {"messages": {}, "sessions": {}, "idempotency": {}})
        self.api_key = api_key
        self.github = github
        self.settings = Settings(delay=delay)

    def routes(self) -> Iterable[SandboxRoute]:
        return [*super().routes(), *self.settings.routes("builder")]

    def _authenticate(self, request: SandboxRequest) -> None:
        """Refused (401) unless the request carries the service key."""
        if not hmac.compare_digest((bearer(request) or "").encode(), self.api_key.encode()):
            raise Refused(_error(401, "unauthorized", "The service key is missing or wrong."))

    # ---- send

    @route("POST", "/builder/v1/projects/{project_id}/messages")
    def send(self, request: SandboxRequest) -> SandboxResponse:
        self._authenticate(request)
        body = json_body(request)
        problem = self._invalid(body)
        if problem:
            return _error(400, "invalid_request", problem)
        project_id = request.params["project_id"]
        key = request.headers.get("idempotency-key")
        fingerprint = hashlib.sha256(request.body).hexdigest()
        with self.state.lock:
            if key:
                seen = self.data["idempotency"].get(f"{project_id}:{key}")
                if seen is not None:
                    if seen["fingerprint"] != fingerprint:
                        return _error(
                            409, "idempotency_conflict", "This Idempotency-Key was used with another body."
                        )
                    return json_response(seen["answer"], 202, {"Idempotent-Replayed": "true"})
            session_id = body.get("edit_session_id")
            sessions = self.data["sessions"]
            if session_id:
                session = sessions.get(session_id)
                if session is None or session["project_id"] != project_id:
                    return _error(404, "not_found", f"No edit session {session_id} in this project.")
            else:
                session_id = random_id("es_", 20)
                content = body["content"].strip()
                session = sessions[session_id] = {
                    "edit_session_id": session_id,
                    "project_id": project_id,
                    "title": content if len(content) <= 60 else content[:57] + "...",
                    "created_at_ts": now(),
                    "updated_at_ts": now(),
                    "message_count": 0,
                }
            session["message_count"] += 1
            session["updated_at_ts"] = now()
            message_id = random_id("msg_", 20)
            delay = float(self.settings["delay"])
            self.data["messages"][message_id] = {
                "message_id": message_id,
                "edit_session_id": session_id,
                "project_id": project_id,
                "content": body["content"],
                "repository": dict(body["repository"]),
                "status": "in_progress",
                "response": None,
                "commit_sha": None,
                "error": None,
                "created_at_ts": now(),
                "due_at_ts": now() + delay,
                "completed_at_ts": None,
            }
            answer = {"message_id": message_id, "edit_session_id": session_id, "status": "in_progress"}
            if key:
                self.data["idempotency"][f"{project_id}:{key}"] = {
                    "fingerprint": fingerprint,
                    "answer": answer,
                }
        self.state.save()
        self.later(delay, lambda: self._advance(message_id))
        return json_response(answer, 202)

    @staticmethod
    def _invalid(body: Any) -> str | None:
        if not isinstance(body, dict):
            return "The body must be a JSON object."
        if not isinstance(body.get("content"), str) or not body["content"].strip():
            return "content is required."
        if body.get("edit_session_id") is not None and not isinstance(body["edit_session_id"], str):
            return "edit_session_id must be a string or null."
        if body.get("knowledge") is not None and not isinstance(body["knowledge"], str):
            return "knowledge must be a string."
        repo = body.get("repository")
        if not isinstance(repo, dict) or not all(
            isinstance(repo.get(k), str) and repo[k] for k in ("full_name", "branch", "token")
        ):
            return "repository needs full_name, branch and token."
        return None

    # ---- the work

    def _advance(self, message_id: str) -> dict[str, Any]:
        """Complete a message whose time is up: commit the edit (once) with the repository token given."""
        with self.state.lock:
            message = self.data["messages"][message_id]
            if message["status"] != "in_progress" or now() < message["due_at_ts"]:
                return message
            repo = message["repository"]
            try:
                sha = self._commit(message)
            except GitError as exc:
                message.update({"status": "error", "error": str(exc)})
            else:
                message.update(
                    {
                        "status": "complete",
                        "commit_sha": sha,
                        "response": f"Done: {message['content'].strip()} (noted in {NOTES} on {repo['branch']}).",
                    }
                )
            message["completed_at_ts"] = now()
        self.state.save()
        return message

    def _commit(self, message: dict[str, Any]) -> str:
        repo = message["repository"]
        if self.github is None:
            raise GitError("no repository host is connected to the builder")
        account = self.github.account_for_token(repo["token"])
        found = self.github.repository(repo["full_name"])
        if account is None:
            raise GitError("The repository token was refused (401 Bad credentials).")
        if found is None or not self.github.can_access(account["login"], found[0]):
            raise GitError(f"Repository {repo['full_name']} was not found with the given token.")
        git = found[1]
        head = git.ref(f"refs/heads/{repo['branch']}")
        if head is None:
            raise GitError(f"Branch {repo['branch']} does not exist in {repo['full_name']}.")
        existing = self.github.read_file(git, head, NOTES) or b"# Builder notes\n\n"
        line = f"- {message['content'].strip().splitlines()[0]} ({message['message_id']})\n"
        return self.github.commit_change(
            repo["full_name"],
            repo["branch"],
            f"Builder: {message['content'].strip().splitlines()[0][:60]}",
            {NOTES: existing + line.encode("utf-8")},
            author=AUTHOR,
        )

    # ---- reading

    @route("GET", "/builder/v1/messages/{message_id}")
    def get_message(self, request: SandboxRequest) -> SandboxResponse:
        self._authenticate(request)
        if request.params["message_id"] not in self.data["messages"]:
            return _error(404, "not_found", "No such message.")
        return json_response(self._view(self._advance(request.params["message_id"])))

    @staticmethod
    def _view(message: dict[str, Any]) -> dict[str, Any]:
        """A message as the contract shows it: the fields known so far."""
        body: dict[str, Any] = {
            "message_id": message["message_id"],
            "edit_session_id": message["edit_session_id"],
            "status": message["status"],
            "created_at": iso(message["created_at_ts"]),
        }
        if message["status"] == "complete":
            body.update({"response": message["response"], "completed_at": iso(message["completed_at_ts"])})
            if message["commit_sha"]:
                body["commit_sha"] = message["commit_sha"]
        elif message["status"] == "error":
            body.update({"error": message["error"], "completed_at": iso(message["completed_at_ts"])})
        return body

    @staticmethod
    def _summary(session: dict[str, Any]) -> dict[str, Any]:
        return {
            "edit_session_id": session["edit_session_id"],
            "title": session["title"],
            "created_at": iso(session["created_at_ts"]),
            "updated_at": iso(session["updated_at_ts"]),
            "message_count": session["message_count"],
        }

    @route("GET", "/builder/v1/projects/{project_id}/edit-sessions")
    def edit_sessions(self, request: SandboxRequest) -> SandboxResponse:
        self._authenticate(request)
        project_id = request.params["project_id"]
        with self.state.lock:
            sessions = [s for s in self.data["sessions"].values() if s["project_id"] == project_id]
        sessions.sort(key=lambda s: (s["created_at_ts"], s["edit_session_id"]), reverse=True)
        return json_response([self._summary(s) for s in sessions])

    @route("GET", "/builder/v1/projects/{project_id}/edit-sessions/{edit_session_id}")
    def edit_session(self, request: SandboxRequest) -> SandboxResponse:
        """One session of the project with its messages, in the order they were sent."""
        self._authenticate(request)
        session_id = request.params["edit_session_id"]
        with self.state.lock:
            session = self.data["sessions"].get(session_id)
            if session is None or session["project_id"] != request.params["project_id"]:
                return _error(404, "not_found", f"No edit session {session_id} in this project.")
            ids = [
                m["message_id"] for m in self.data["messages"].values() if m["edit_session_id"] == session_id
            ]
        messages = [self._advance(i) for i in ids]
        messages.sort(key=lambda m: (m["created_at_ts"], m["message_id"]))
        listed = [{**self._view(m), "content": m["content"]} for m in messages]
        return json_response({**self._summary(session), "messages": listed})

    def stop(self) -> None:
        super().stop()
