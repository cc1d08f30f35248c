"""What each workspace page shows, gathered from the services (no HTML here)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User, Workspace
from svc_shared.domain.credits import MESSAGE_COST
from svc_shared.domain.projects import OWNER, Project
from svc_shared.domain.publish_state import STAGES
from svc_shared.providers import label
from svc_shared.providers.static_host import FAILED_STATES, READY_STATES
from svc_shared.wiring import services

# The publish sequence as a person reads it (spec §8 stages, in order; `ready` is the last step).
STAGE_LABELS = {
    "db_creating": "Create the database project",
    "db_waiting_ready": "Wait for the database to be ready",
    "db_applying_migrations": "Set up the store's tables",
    "repo_host_creating_repo": "Create the private repository",
    "repo_host_pushing_template": "Push the store's code",
    "host_triggering_build": "Build and deploy the site",
    "ready": "Live",
}
PROVIDER_ROLES = {
    "repo_host": "Holds your store's code in a private repository.",
    "db_host": "Holds your store's database: products, orders, customers.",
    "static_host": "Builds your site from the repository and serves it.",
}
# A deploy in one of these states moves no more; any other is still on its way to live.
SETTLED_DEPLOYS = READY_STATES | FAILED_STATES
STATUS_WORDS = {
    "not_started": "Not published",
    "starting": "Publishing",
    "running": "Publishing",
    "failed": "Publish failed",
    "ready": "Live",
}


@dataclass(frozen=True)
class WorkspaceProjects:
    workspace: Workspace
    projects: list[dict[str, Any]]


def publish_state(project: Project) -> dict[str, Any]:
    report = services.provisioning().report(project)
    return {**report, "words": STATUS_WORDS.get(report["status"], report["status"])}


def home(user: User) -> dict[str, Any]:
    spaces = services.accounts().list_workspaces(user.id)
    owners: dict[str, list[Project]] = {}
    listed = []
    for space in spaces:
        owner = user.id if space.personal else (space.owner_id or user.id)
        if owner not in owners:
            owners[owner] = services.projects().list_owned(owner)
        projects = [
            {"project": p, "publish": publish_state(p)}
            for p in owners[owner]
            if p.workspace_id == space.id and services.projects().visible_to(user, p, services.accounts())
        ]
        listed.append(WorkspaceProjects(space, projects))
    connected = services.connections().details(user.id)
    return {
        "credits": services.credits().balance(user.id),
        "workspaces": listed,
        # The "connect first" hint, only while GitHub or Supabase is not connected.
        "needs_connections": not all(connected[p]["connected"] for p in ("repo_host", "db_host")),
    }


def connections(user: User) -> list[dict[str, Any]]:
    found = services.connections().details(user.id)
    return [{"provider": p, "label": label(p), "role": PROVIDER_ROLES[p], **found[p]} for p in PROVIDER_ROLES]


def accessible_project(user: User, project_id: str) -> tuple[Project, bool]:
    """(the project, whether the user owns it) for those the visibility rule lets see it (Projects.visible_to);
    NotFound, as for an unknown id, for anyone else, so a project's existence is not revealed."""
    project, role = services.projects().viewable(user, project_id, services.accounts())
    return project, role == OWNER


def owned_project(user: User, project_id: str, refusal: str) -> Project:
    """The project if the user owns it; Forbidden with `refusal` for those who may only see it; NotFound for
    anyone else."""
    project, owner = accessible_project(user, project_id)
    if not owner:
        raise errors.Forbidden(refusal, code="owner_only")
    return project


def project_now(user: User, project_id: str) -> dict[str, Any]:
    """What the project page shows that moves: the project as the providers say it is now (for its owner:
    the branch's head and the site's deploys, read with the owner's connections), its publish state, and
    one version per part of the page, which changes exactly when that part would be drawn differently."""
    project, owner = accessible_project(user, project_id)
    # What is live is read with the owner's own static_host connection (a viewer sees what was recorded).
    deploys = services.workbench().site_deploys(user.id, project) if owner else None
    if owner:
        project = services.workbench().refresh_status(user.id, project, deploys)
    state = publish_state(project)
    parts: dict[str, object] = {
        "facts": (project.repo_host_repo, state["live_url"], project.last_pushed_sha, state["done"]),
        "deploys": (owner, project.static_site_id, project.repo_host_branch)
        + (
            ()
            if deploys is None
            else (
                tuple((d.id, d.state, d.live, d.error) for d in deploys.deploys),
                deploys.failed_log is not None,
            )
        ),
        "builder": (owner, bool(project.repo_host_repo and project.repo_host_branch)),
        "setup": (owner, state["done"]),
    }
    moving = state["status"] in ("starting", "running") or bool(
        deploys and deploys.latest and deploys.latest.state not in SETTLED_DEPLOYS
    )
    return {
        "project": project,
        "owner": owner,
        "publish": state,
        "deploys": deploys,
        "versions": {name: _version(value) for name, value in parts.items()},
        "moving": moving,
    }


def _version(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def project_page(user: User, project_id: str) -> dict[str, Any]:
    now = project_now(user, project_id)
    project, owner, state = now["project"], now["owner"], now["publish"]
    steps = []
    current = state["stage"]
    reached = STAGES.index(current) if current in STAGES else 0
    for index, stage in enumerate(STAGES):
        if state["status"] == "not_started":
            step = "waiting"
        elif index < reached or (stage == "ready" and state["done"]):
            step = "done"
        elif index == reached:
            step = "failed" if state["status"] == "failed" else "current"
        else:
            step = "waiting"
        steps.append({"stage": stage, "label": STAGE_LABELS[stage], "state": step})
    linked = services.connections().details(user.id) if owner else {}
    return {
        **now,
        "steps": steps,
        "paid": user.plan == "paid",
        "connections": linked,
        "repo_url": f"https://github.com/{project.repo_host_repo}" if project.repo_host_repo else None,
        # What the builder's Send costs, beside it (the owner's balance pays for the owner's messages).
        "credit_balance": services.credits().balance(user.id) if owner else 0,
        "message_cost": MESSAGE_COST,
    }


def setup(user: User, project: Project, connections: dict[str, Any]) -> dict[str, Any]:
    """The repository and database forms' choices: the owner's Supabase projects, or why there are none."""
    db_projects: list[dict[str, Any]] = []
    db_note = None
    if connections.get("db_host", {}).get("connected"):
        try:
            db_projects = services.integrations().list_db_projects(user.id)
        except errors.DomainError as exc:
            db_note = exc.message
    else:
        db_note = say("workspace.connect_db_host")
    return {"db_projects": db_projects, "db_note": db_note}


def mcp_access(user: User) -> dict[str, Any]:
    clients = sorted(services.mcp_clients().list(user.id), key=lambda c: -c.authorized_at)
    return {
        "server_url": f"{services.public_base_url()}/mcp",
        "clients": clients,
        "activity": services.tool_audit().recent(user.id),
    }
