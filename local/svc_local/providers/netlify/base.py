"""What the static_host sandbox's parts share: its state, the signed-in account, a site of that account,
and the errors in the real host's shape."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from svc_local.providers.common import BaseProvider, OAuthApp, Settings, bearer, owned
from svc_local.providers.github import GitHub
from svc_local.providers.netlify.serve import EdgeCache, LiveDeploy
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response

DEFAULT_ACCOUNT = "sandbox-team"
BUILD_TIMEOUT = 900.0  # the real host's 15 minutes


def error(status: int, message: str) -> SandboxResponse:
    return json_response({"code": status, "message": message}, status)


class NetlifyBase(BaseProvider):
    name = "netlify"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        client_id: str,
        client_secret: str,
        github: GitHub | None = None,
        build_delay: float = 1.0,
    ) -> None:
        super().__init__(state_dir, {"tokens": {}, "sites": {}, "builds": {}, "deploys": {}, "env": {}})
        self.oauth = OAuthApp(self.state, client_id, client_secret, DEFAULT_ACCOUNT)
        self.github = github
        # build_delay: a wait before each build starts (a deploy is seen "new" first, as on the real host)
        self.settings = Settings(build_delay=build_delay, build_timeout=BUILD_TIMEOUT)
        self._next_build_error: list[str] = []
        self._own_files = state_dir is None
        root = state_dir / "netlify-deploys" if state_dir else Path(tempfile.mkdtemp(prefix="sbx-deploys-"))
        root.mkdir(parents=True, exist_ok=True)
        self.deploy_root = root
        self.edge = EdgeCache()
        self.live: dict[str, LiveDeploy] = {}  # published deploys as served, by deploy id
        for deploy in self.data["deploys"].values():  # a state directory from before builds ran
            if "state" not in deploy:
                deploy.update(
                    state="error" if deploy.get("error") else "ready",
                    title=None,
                    trigger="api",
                    log=deploy.get("error") or "",
                    rules=[],
                    done_at_ts=deploy.get("ready_at_ts"),
                    published_at_ts=deploy.get("ready_at_ts") if deploy.get("published") else None,
                )

    def went_live(self) -> None:
        """A deploy was published: the CDN's answers are invalidated, as on the real host."""
        self.edge.clear()
        self.live.clear()

    def site_url(self, name: str) -> str:
        return f"{self.public_url}/sites/{name}/"

    def _account(self, request: SandboxRequest) -> str:
        """The token's account (Refused: 401)."""
        grant = self.data["tokens"].get(bearer(request) or "")
        if not grant:
            raise Refused(error(401, "Access Denied: Invalid token"))
        return str(grant["account"])

    def _site(self, request: SandboxRequest) -> dict[str, Any]:
        """The site the path names, when it is the token's account's (Refused: 401, 404)."""
        site = self.data["sites"].get(request.params["site_id"])
        return owned(self._account(request), site, "account_id", error(404, "Not Found"))
