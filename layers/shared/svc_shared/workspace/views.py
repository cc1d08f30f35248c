"""What each workspace page shows, gathered from the services (no HTML here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svc_shared.domain.accounts import User, Workspace
from svc_shared.domain.credits import MESSAGE_COST
from svc_shared.domain.projects import OWNER, Project
from svc_shared.domain.publish_state import STAGES
from svc_shared.providers import label
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


def project_page(user: User, project_id: str) -> dict[str, Any]:
    project, owner = accessible_project(user, project_id)
    # What is live is read with the owner's own static_host connection (a viewer sees what was recorded).
    deploys = services.workbench().site_deploys(user.id, project) if owner else None
    if owner:
        project = services.workbench().refresh_status(user.id, project, deploys)
    state = publish_state(project)
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
        "project": project,
        "owner": owner,
        "publish": state,
        "steps": steps,
        "paid": user.plan == "paid",
        "connections": linked,
        "repo_url": f"https://github.com/{project.repo_host_repo}" if project.repo_host_repo else None,
        "deploys": deploys,
        # What the builder's Send costs, beside it (the owner's balance pays for the owner's messages).
        "credit_balance": services.credits().balance(user.id) if owner else 0,
        "message_cost": MESSAGE_COST,
    }


def mcp_access(user: User) -> dict[str, Any]:
    clients = sorted(services.mcp_clients().list(user.id), key=lambda c: -c.authorized_at)
    return {
        "server_url": f"{services.public_base_url()}/mcp",
        "clients": clients,
        "activity": services.tool_audit().recent(user.id),
    }
