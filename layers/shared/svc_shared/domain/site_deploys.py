"""What is live on a project's site: its recent deploys (commit, state, time, why a build failed and its log),
read from static_host, and which of them the site serves."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from svc_shared.providers.static_host import FAILED_STATES

if TYPE_CHECKING:
    from svc_shared.providers.static_host import Deploy, StaticHost

RECENT = 10
MAX_LOG_CHARS = 8000  # the tail of a failed build's log shown to the merchant


@dataclass(frozen=True)
class DeployRow:
    id: str
    state: str
    commit_sha: str | None
    title: str | None
    created_at: int | None  # epoch seconds
    error: str | None
    live: bool
    url: str | None = None  # the site's address

    @property
    def failed(self) -> bool:
        return self.state in FAILED_STATES


@dataclass(frozen=True)
class SiteDeploys:
    deploys: list[DeployRow]  # newest first
    live: DeployRow | None
    failed_log: str | None  # the log of the newest deploy, when its build failed

    @property
    def latest(self) -> DeployRow | None:
        return self.deploys[0] if self.deploys else None


def _epoch(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def _row(deploy: Deploy, live_id: str | None) -> DeployRow:
    return DeployRow(
        id=deploy.id,
        state=deploy.state or "new",
        commit_sha=deploy.commit_ref,
        title=deploy.title,
        created_at=_epoch(deploy.created_at),
        error=deploy.error_message,
        live=deploy.id == live_id,
        url=deploy.ssl_url,
    )


def read(host: StaticHost, site_id: str, *, limit: int = RECENT, with_log: bool = True) -> SiteDeploys:
    """The site's recent deploys and the one it serves; `with_log`, the newest one's build log when it failed."""
    found = host.deploys(site_id, limit=limit)
    live_id = host.published_deploy_id(site_id)
    rows = [_row(d, live_id) for d in found]
    log = None
    if with_log and found and rows[0].failed and found[0].build_id:
        text = host.build_log(found[0].build_id)
        log = text if len(text) <= MAX_LOG_CHARS else text[-MAX_LOG_CHARS:]
    live = next((r for r in rows if r.live), None)
    if live is None and live_id:  # served, but older than the recent ones
        live = _row(host.deploy(live_id), live_id)
    return SiteDeploys(rows, live, log)
