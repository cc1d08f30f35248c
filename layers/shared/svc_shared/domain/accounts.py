"""Workspace accounts: users, their personal workspace, memberships as collaborator, and sign-in."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from typing import Any, Literal

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock, iso_utc, system_clock
from svc_shared.core.errors import AlreadyExists, InvalidInput, NotFound, Unauthenticated
from svc_shared.core.passwords import DUMMY_HASH, hash_password, verify_password
from svc_shared.domain.credit_history import WELCOME_CREDITS, opening_actions
from svc_shared.storage import keys
from svc_shared.storage.dal import Table, TransactionConflict, item_absent, item_exists

Plan = Literal["free", "paid"]
PLANS: tuple[str, ...] = ("free", "paid")
WorkspaceRole = Literal["owner", "admin", "member"]
WORKSPACE_ROLES: tuple[str, ...] = ("owner", "admin", "member")
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024
# Read in place of an unknown address's records, so sign-in does the same work whether an email exists.
_NO_ADDRESS = "unknown@invalid.invalid"
_NO_USER = "-"


@dataclass(frozen=True)
class User:
    id: str
    email: str
    display_name: str
    plan: str
    default_workspace_id: str
    avatar_url: str | None
    repo_host_connected: bool
    repo_host_username: str | None
    created_at: int
    session_epoch: int = 0  # raised to end every session (svc_shared.domain.sessions)

    def public(self) -> dict[str, Any]:
        """The fields get_me and /api/me show."""
        return {
            "id": self.id,
            "email": self.email,
            "display_name": self.display_name,
            "plan": self.plan,
            "default_workspace_id": self.default_workspace_id,
            "avatar_url": self.avatar_url,
            "repo_host_connected": self.repo_host_connected,
            "repo_host_username": self.repo_host_username,
        }


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    role: str
    project_count: int
    created_at: int
    personal: bool
    owner_id: str = ""

    def public(self) -> dict[str, Any]:
        """What list_workspaces and get_workspace show: every field but the owner's id."""
        shown = {name: value for name, value in asdict(self).items() if name != "owner_id"}
        return {**shown, "created_at": iso_utc(self.created_at)}


def normalize_email(email: str) -> str:
    value = email.strip().lower()
    local, at, domain = value.partition("@")
    if not at or not local or "." not in domain or len(value) > 254 or any(c.isspace() for c in value):
        raise InvalidInput(say("accounts.email_invalid"))
    return value


def _user(item: dict[str, Any]) -> User:
    return User(
        id=item["user_id"],
        email=item["email"],
        display_name=item["display_name"],
        plan=item["plan"],
        default_workspace_id=item["default_workspace_id"],
        avatar_url=item.get("avatar_url"),
        repo_host_connected=bool(item.get("repo_host_connected", False)),
        repo_host_username=item.get("repo_host_username"),
        created_at=int(item["created_at"]),
        session_epoch=int(item.get("session_epoch", 0)),
    )


@dataclass(eq=False)
class Accounts:
    table: Table
    clock: Clock = system_clock

    # -- users --------------------------------------------------------------------------------------------
    def create_user(
        self,
        *,
        email: str,
        password: str,
        display_name: str | None = None,
        plan: str = "free",
        credits: int | None = None,
    ) -> User:
        """A user with a personal workspace and an opening credit balance (WELCOME_CREDITS unless `credits`
        says otherwise), created atomically; AlreadyExists when the email is taken."""
        email = normalize_email(email)
        if plan not in PLANS:
            raise InvalidInput(say("accounts.plan_invalid", plans=", ".join(PLANS)))
        if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
            raise InvalidInput(
                say("accounts.password_length", minimum=MIN_PASSWORD_LENGTH, maximum=MAX_PASSWORD_LENGTH)
            )
        name = (display_name or email.split("@")[0]).strip()[:100] or email
        user_id, workspace_id = str(uuid.uuid4()), str(uuid.uuid4())
        now = int(self.clock.now())
        absent = item_absent()
        try:
            self.table.transact(
                [
                    self.table.put_action(
                        {"pk": keys.email(email), "sk": keys.EMAIL, "user_id": user_id}, when=absent
                    ),
                    self.table.put_action(
                        {
                            "pk": keys.user(user_id),
                            "sk": keys.PROFILE,
                            "user_id": user_id,
                            "email": email,
                            "display_name": name,
                            "plan": plan,
                            "default_workspace_id": workspace_id,
                            "password_hash": hash_password(password),
                            "repo_host_connected": False,
                            "created_at": now,
                        },
                        when=absent,
                    ),
                    self.table.put_action(
                        {
                            "pk": keys.workspace(workspace_id),
                            "sk": keys.META,
                            "workspace_id": workspace_id,
                            "name": f"{name}'s workspace",
                            "owner_id": user_id,
                            "personal": True,
                            "project_count": 0,
                            "created_at": now,
                        },
                        when=absent,
                    ),
                    self.table.put_action(self._membership(user_id, workspace_id, "owner", now), when=absent),
                    *opening_actions(
                        self.table, user_id, WELCOME_CREDITS if credits is None else credits, now
                    ),
                ]
            )
        except TransactionConflict as exc:
            if exc.reasons and exc.reasons[0] == "ConditionalCheckFailed":
                raise AlreadyExists(say("accounts.email_taken", email=email)) from exc
            raise
        return self.get_user(user_id)

    def get_user(self, user_id: str) -> User:
        item = self.table.get(keys.user(user_id), keys.PROFILE)
        if item is None:
            raise NotFound(say("accounts.user_not_found"))
        return _user(item)

    def find_user_id(self, email: str) -> str | None:
        try:
            key = normalize_email(email)
        except InvalidInput:
            return None
        item = self.table.get(keys.email(key), keys.EMAIL)
        return item["user_id"] if item else None

    def get_user_by_email(self, email: str) -> User:
        user_id = self.find_user_id(email)
        if user_id is None:
            raise NotFound(say("accounts.no_user_with_email", email=email))
        return self.get_user(user_id)

    def authenticate(self, email: str, password: str) -> User:
        """The user with these credentials; one message for an unknown email and a wrong password, and the
        same work for both: two reads (the address, then a profile: a key no user has when the address is
        unknown or malformed) and one scrypt verification (against a dummy hash of the same cost)."""
        try:
            address, valid = normalize_email(email), True
        except InvalidInput:
            address, valid = _NO_ADDRESS, False
        owner = self.table.get(keys.email(address), keys.EMAIL) if valid else None
        if not valid:
            self.table.get(keys.email(address), keys.EMAIL)
        item = self.table.get(keys.user(owner["user_id"] if owner else _NO_USER), keys.PROFILE)
        stored = item["password_hash"] if item else DUMMY_HASH
        if not verify_password(password[:MAX_PASSWORD_LENGTH], stored) or item is None or not valid:
            raise Unauthenticated(say("accounts.invalid_credentials"), code="invalid_credentials")
        return _user(item)

    def set_plan(self, user_id: str, plan: str) -> User:
        if plan not in PLANS:
            raise InvalidInput(say("accounts.plan_invalid", plans=", ".join(PLANS)))
        from svc_shared.storage.dal import ConditionFailed

        try:
            item = self.table.update(
                keys.user(user_id),
                keys.PROFILE,
                set={"plan": plan},
                when=item_exists(),
            )
        except ConditionFailed as exc:
            raise NotFound(say("accounts.user_not_found")) from exc
        return _user(item)

    def set_password(self, user_id: str, password: str) -> None:
        """A new password; every session of the user ends (the session epoch is raised in the same write)."""
        if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
            raise InvalidInput(
                say("accounts.password_length", minimum=MIN_PASSWORD_LENGTH, maximum=MAX_PASSWORD_LENGTH)
            )
        from svc_shared.storage.dal import ConditionFailed

        try:
            self.table.update(
                keys.user(user_id),
                keys.PROFILE,
                set={"password_hash": hash_password(password)},
                add={"session_epoch": 1},
                when=item_exists(),
            )
        except ConditionFailed as exc:
            raise NotFound(say("accounts.user_not_found")) from exc

    def end_sessions(self, user_id: str) -> None:
        """End every workspace session of the user (svc_shared.domain.sessions): raise the session epoch."""
        from svc_shared.storage.dal import ConditionFailed

        try:
            self.table.update(
                keys.user(user_id),
                keys.PROFILE,
                add={"session_epoch": 1},
                when=item_exists(),
            )
        except ConditionFailed as exc:
            raise NotFound(say("accounts.user_not_found")) from exc

    def set_repo_host(self, user_id: str, *, connected: bool, username: str | None) -> None:
        """The profile flags that say whether (and as whom) a repo_host account is connected."""
        from svc_shared.storage.dal import ConditionFailed

        try:
            self.table.update(
                keys.user(user_id),
                keys.PROFILE,
                set={"repo_host_connected": connected, "repo_host_username": username},
                when=item_exists(),
            )
        except ConditionFailed as exc:
            raise NotFound(say("accounts.user_not_found")) from exc

    def workspace_knowledge(self, workspace_id: str) -> str:
        item = self.table.get(keys.workspace(workspace_id), keys.META)
        if item is None:
            raise NotFound(say("accounts.workspace_not_found"))
        return str(item.get("knowledge", ""))

    def set_workspace_knowledge(self, workspace_id: str, text: str) -> None:
        """Save (or with an empty text, clear) the builder instructions of a workspace."""
        from svc_shared.storage.dal import ConditionFailed

        try:
            self.table.update(
                keys.workspace(workspace_id),
                keys.META,
                set={"knowledge": text} if text else None,
                remove=() if text else ("knowledge",),
                when=item_exists(),
            )
        except ConditionFailed as exc:
            raise NotFound(say("accounts.workspace_not_found")) from exc

    # -- workspaces ---------------------------------------------------------------------------------------
    @staticmethod
    def _membership(user_id: str, workspace_id: str, role: str, now: int) -> dict[str, Any]:
        return {
            "pk": keys.user(user_id),
            "sk": keys.member(workspace_id),
            "gsi1pk": keys.workspace(workspace_id),
            "gsi1sk": keys.member(user_id),
            "user_id": user_id,
            "workspace_id": workspace_id,
            "role": role,
            "joined_at": now,
        }

    def add_collaborator(self, workspace_id: str, user_id: str, role: str = "member") -> None:
        """Join `user_id` to a workspace with a role (idempotent: a second call updates the role)."""
        if role not in WORKSPACE_ROLES or role == "owner":
            raise InvalidInput(say("accounts.role_invalid"))
        if self.table.get(keys.workspace(workspace_id), keys.META) is None:
            raise NotFound(say("accounts.workspace_not_found"))
        self.get_user(user_id)
        self.table.put(self._membership(user_id, workspace_id, role, int(self.clock.now())))

    def list_workspaces(self, user_id: str) -> list[Workspace]:
        """Workspaces the user belongs to: the personal one first, then the others by name."""
        memberships = list(self.table.query(keys.user(user_id), sk_prefix=keys.MEMBER_PREFIX))
        metas = {
            m["workspace_id"]: m
            for m in self.table.batch_get(
                [(keys.workspace(m["workspace_id"]), keys.META) for m in memberships]
            )
        }
        spaces = [
            Workspace(
                id=m["workspace_id"],
                name=meta["name"],
                role=m["role"],
                project_count=int(meta.get("project_count", 0)),
                created_at=int(meta["created_at"]),
                personal=bool(meta.get("personal")) and meta.get("owner_id") == user_id,
                owner_id=str(meta.get("owner_id", "")),
            )
            for m in memberships
            if (meta := metas.get(m["workspace_id"])) is not None
        ]
        return sorted(spaces, key=lambda w: (not w.personal, w.name.lower(), w.id))

    def get_workspace(self, user: User, workspace_id: str | None = None) -> Workspace:
        """One workspace the user belongs to (default: the personal one); NotFound for any other."""
        wanted = workspace_id or user.default_workspace_id
        member = self.table.get(keys.user(user.id), keys.member(wanted))
        meta = self.table.get(keys.workspace(wanted), keys.META) if member else None
        if member is None or meta is None:
            raise NotFound(say("accounts.workspace_not_found"))
        return Workspace(
            id=wanted,
            name=meta["name"],
            role=member["role"],
            project_count=int(meta.get("project_count", 0)),
            created_at=int(meta["created_at"]),
            personal=bool(meta.get("personal")) and meta.get("owner_id") == user.id,
            owner_id=str(meta.get("owner_id", "")),
        )
