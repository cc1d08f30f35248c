"""Projects: the shop a user builds. Created from a prompt (or a template), listed per owner, with the
build, repository, database and site facts that publishing and deploys record on them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock, iso_utc
from svc_shared.core.errors import Conflict, InvalidInput, NotFound
from svc_shared.core.names import slugify
from svc_shared.storage import keys
from svc_shared.storage.dal import Cond, ConditionFailed, Table, attr, item_absent, item_exists

if TYPE_CHECKING:
    from svc_shared.domain.accounts import Accounts, User

VISIBILITIES = ("private", "workspace", "public")
OWNER = "owner"
MIN_PROMPT = 10
MAX_PROMPT = 4000
MAX_NAME = 100  # a project's name, as create_project keeps it
KNOWLEDGE_MAX_BYTES = 10 * 1024


def iso(ts: float | int | None) -> str | None:
    return None if ts is None else iso_utc(ts)


@dataclass(frozen=True)
class Template:
    id: str
    name: str
    vertical: str
    description: str
    prompt: str


# Starter templates offered by list_template_projects and accepted by create_project.
TEMPLATES: tuple[Template, ...] = (
    Template(
        "tpl-coffee-roastery",
        "Coffee roastery",
        "food & drink",
        "Single-origin beans by subscription, with brewing guides.",
        "An online shop for a small coffee roastery selling single-origin beans and subscriptions to home "
        "baristas; warm, knowledgeable tone with brewing guides.",
    ),
    Template(
        "tpl-handmade-ceramics",
        "Handmade ceramics",
        "home & living",
        "One-off studio pottery with stories behind each piece.",
        "A shop for a ceramics studio selling one-off mugs, bowls and vases to design-minded buyers; calm, "
        "crafted tone that tells the story of each piece.",
    ),
    Template(
        "tpl-outdoor-gear",
        "Outdoor gear",
        "sports & outdoors",
        "Technical gear for hikers with size guides and reviews.",
        "An outdoor gear store selling backpacks, shells and camp kitchens to weekend hikers; practical, "
        "confident tone with size guides and reviews.",
    ),
    Template(
        "tpl-skincare",
        "Clean skincare",
        "beauty",
        "Small-batch skincare with ingredient transparency.",
        "A skincare brand selling small-batch cleansers and serums to people with sensitive skin; honest, "
        "reassuring tone with full ingredient lists.",
    ),
    Template(
        "tpl-bookshop",
        "Independent bookshop",
        "books & media",
        "Curated reading lists, signed editions and events.",
        "An independent bookshop selling curated fiction, signed editions and event tickets to local "
        "readers; literary, friendly tone with staff picks.",
    ),
)
TEMPLATES_BY_ID = {t.id: t for t in TEMPLATES}


@dataclass(frozen=True)
class Project:
    id: str
    owner_id: str
    workspace_id: str
    name: str
    slug: str
    vertical: str
    description: str
    prompt: str
    visibility: str
    status: str
    created_at: int
    updated_at: int
    template_id: str | None = None
    knowledge: str = ""
    build_status: str | None = None
    live_url: str | None = None
    last_deploy_at: int | None = None
    last_deploy_id: str | None = None
    repo_host_repo: str | None = None
    repo_host_branch: str | None = None
    last_pushed_sha: str | None = None
    last_pushed_at: int | None = None
    db_project_ref: str | None = None
    db_public_key: str | None = None
    db_privileged_key: str | None = field(default=None, repr=False)  # ciphertext
    static_site_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def value(self, name: str) -> Any:
        """A field or, for one without a field of its own, the recorded attribute (None when absent)."""
        return getattr(self, name) if name in _FIELDS else self.extra.get(name)

    def summary(self, workspace_url: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "slug": self.slug,
            "status": self.status,
            "visibility": self.visibility,
            "live_url": self.live_url,
            "workspace_url": workspace_url,
            "created_at": iso(self.created_at),
        }

    def details(self, workspace_url: str) -> dict[str, Any]:
        return {
            **self.summary(workspace_url),
            "vertical": self.vertical,
            "description": self.description,
            "build_status": self.build_status,
            "last_deploy_at": iso(self.last_deploy_at),
            "repo_host_repo": self.repo_host_repo,
            "repo_host_branch": self.repo_host_branch,
            "last_pushed_sha": self.last_pushed_sha,
            "last_pushed_at": iso(self.last_pushed_at),
            "db_project_ref": self.db_project_ref,
            "deployed_sha": self.extra.get("deployed_sha"),
            "build_error": self.extra.get("build_error"),
        }


_FIELDS = set(Project.__dataclass_fields__) - {"extra"}


def _project(item: dict[str, Any]) -> Project:
    values = {k: item[k] for k in _FIELDS if k in item}
    return Project(**values, extra={k: v for k, v in item.items() if k not in _FIELDS})


def project_of(item: dict[str, Any]) -> Project:
    """A project from its table item, read beside other items (one batch read)."""
    return _project(item)


def derive_name(prompt: str) -> str:
    words = prompt.split()
    name = " ".join(words[:6])
    return (name[:60].rstrip(" ,.;:") or "My shop").capitalize()


@dataclass(eq=False)
class Projects:
    table: Table
    clock: Clock

    def create(
        self,
        *,
        owner_id: str,
        workspace_id: str,
        prompt: str,
        name: str | None = None,
        template_id: str | None = None,
        vertical: str = "",
        description: str = "",
    ) -> Project:
        prompt = prompt.strip()
        if len(prompt) < MIN_PROMPT:
            raise InvalidInput(say("projects.prompt_too_short", minimum=MIN_PROMPT))
        if len(prompt) > MAX_PROMPT:
            raise InvalidInput(say("projects.prompt_too_long", maximum=MAX_PROMPT))
        template = None
        if template_id is not None:
            template = TEMPLATES_BY_ID.get(template_id)
            if template is None:
                raise InvalidInput(say("projects.template_unknown", template_id=template_id))
        project_name = (name or (template.name if template else derive_name(prompt))).strip()[:MAX_NAME]
        now = int(self.clock.now())
        project_id = str(uuid.uuid4())
        slug = f"{slugify(project_name, 40)}-{project_id[:6]}"
        item = {
            "pk": keys.project(project_id),
            "sk": keys.META,
            "gsi1pk": keys.owner(owner_id),
            "gsi1sk": keys.owned_project(now, project_id),
            "id": project_id,
            "owner_id": owner_id,
            "workspace_id": workspace_id,
            "name": project_name,
            "slug": slug,
            "vertical": vertical or (template.vertical if template else ""),
            "description": description or (template.description if template else prompt[:280]),
            "prompt": prompt,
            "template_id": template_id,
            "visibility": "private",
            "status": "draft",
            "created_at": now,
            "updated_at": now,
        }
        self.table.transact(
            [
                self.table.put_action(item, when=item_absent()),
                self.table.update_action(
                    keys.workspace(workspace_id), keys.META, add={"project_count": 1}, when=item_exists()
                ),
            ]
        )
        return _project(item)

    def get(self, project_id: str, *, consistent: bool = False) -> Project:
        if not isinstance(project_id, str) or not project_id or len(project_id) > 64:
            raise NotFound(say("projects.not_found"))
        item = self.table.get(keys.project(project_id), keys.META, consistent=consistent)
        if item is None:
            raise NotFound(say("projects.not_found"))
        return _project(item)

    def owned(self, project_id: str, user_id: str, *, consistent: bool = False) -> Project:
        """The project if `user_id` owns it; not found otherwise (never reveal others' projects)."""
        project = self.get(project_id, consistent=consistent)
        if project.owner_id != user_id:
            raise NotFound(say("projects.not_found"))
        return project

    def visible_to(self, user: User, project: Project, accounts: Accounts) -> str | None:
        """The one visibility rule (pages, tools and the backoffice hand-off all ask it): who may see a project,
        and in which role. Its owner always, as `owner`; a member of its workspace only while its visibility
        is `workspace`, in their workspace role; nobody else (`private`, and `public`, which is reserved and
        behaves like `private`). None means the project must answer exactly as an unknown one."""
        if project.owner_id == user.id:
            return OWNER
        if project.visibility != "workspace":
            return None
        try:
            return accounts.get_workspace(user, project.workspace_id).role
        except NotFound:
            return None

    def viewable(self, user: User, project_id: str, accounts: Accounts) -> tuple[Project, str]:
        """(the project, the user's role on it) if the user may see it; NotFound, the same as for an unknown
        id, otherwise."""
        project = self.get(project_id)
        role = self.visible_to(user, project, accounts)
        if role is None:
            raise NotFound(say("projects.not_found"))
        return project, role

    def list_owned(self, user_id: str) -> list[Project]:
        return [
            _project(i)
            for i in self.table.query(
                keys.owner(user_id), sk_prefix=keys.PROJECT_PREFIX, index="gsi1", newest_first=True
            )
        ]

    def update(
        self,
        project: Project,
        changes: dict[str, Any],
        *,
        when: Cond | None = None,
    ) -> Project:
        """Set fields on a project (None removes the field), optionally under a condition."""
        sets = {k: v for k, v in changes.items() if v is not None}
        try:
            item = self.table.update(
                keys.project(project.id),
                keys.META,
                set={**sets, "updated_at": int(self.clock.now())},
                remove=[k for k, v in changes.items() if v is None],
                when=item_exists() & when if when is not None else item_exists(),
            )
        except ConditionFailed as exc:
            raise Conflict(say("projects.changed_meanwhile")) from exc
        return _project(item)

    def update_changed(self, project: Project, changes: dict[str, Any]) -> Project:
        """`update` with only the fields whose value differs from `project`'s; no write when none does."""
        changed = {k: v for k, v in changes.items() if project.value(k) != v}
        return self.update(project, changed) if changed else project

    def set_visibility(self, project: Project, visibility: str) -> Project:
        if visibility not in VISIBILITIES:
            raise InvalidInput(say("projects.visibility_invalid"))
        # `public` is reserved and behaves like `private`.
        return self.update(project, {"visibility": "private" if visibility == "public" else visibility})

    def remix(self, source: Project, owner: User) -> Project:
        """A new project of `owner`'s default workspace from `source`'s brief (name, vertical, description,
        prompt); its repository, database and assets are not copied."""
        return self.create(
            owner_id=owner.id,
            workspace_id=owner.default_workspace_id,
            prompt=source.prompt,
            name=f"{source.name} (remix)"[:MAX_NAME],
            vertical=source.vertical,
            description=source.description,
        )

    def rename(self, project: Project, name: str) -> Project:
        """The project under a new name (1 to 100 characters, one line). Only the name shown changes: the slug,
        and the repository, database and site named after it at publishing, keep theirs."""
        name = name.strip()
        if not name:
            raise InvalidInput(say("projects.name_empty"), code="name_empty", field="name")
        if len(name) > MAX_NAME:
            raise InvalidInput(
                say("projects.name_too_long", maximum=MAX_NAME, length=len(name)),
                code="name_long",
                field="name",
            )
        if any(ord(c) < 32 or ord(c) == 127 for c in name):
            raise InvalidInput(say("projects.name_one_line"), code="name_one_line", field="name")
        return self.update(project, {"name": name})

    def delete(self, project: Project) -> None:
        """The project's record (with its encrypted database keys) and its analytics go, and its workspace
        counts one project fewer. What publishing made in the owner's own accounts (repository, database,
        site) stays: the platform never deletes those. Refused while a publish run holds the project."""
        if project.extra.get("publish_status") in ("starting", "running"):
            raise Conflict(say("projects.delete_while_publishing"), code="publishing")
        running = attr("publish_status")
        try:
            self.table.transact(
                [
                    self.table.delete_action(
                        keys.project(project.id),
                        keys.META,
                        when=item_exists()
                        & (running.missing() | (running.ne("starting") & running.ne("running"))),
                    ),
                    self.table.update_action(
                        keys.workspace(project.workspace_id),
                        keys.META,
                        add={"project_count": -1},
                        when=item_exists(),
                    ),
                ]
            )
        except ConditionFailed as exc:
            raise Conflict(say("projects.changed_meanwhile")) from exc
        for pk in (keys.project(project.id), keys.stats(project.id), keys.live(project.id)):
            delete_partition(self.table, pk)


def delete_partition(table: Table, pk: str) -> None:
    """Every item of partition `pk`."""
    for item in list(table.query(pk)):
        table.delete(item["pk"], item["sk"])


def check_knowledge(text: str) -> str:
    if len(text.encode("utf-8")) > KNOWLEDGE_MAX_BYTES:
        raise InvalidInput(say("projects.knowledge_too_large", limit=KNOWLEDGE_MAX_BYTES))
    return text
