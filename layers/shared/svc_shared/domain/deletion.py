"""Deleting an account: every session and MCP grant ends, and the data the platform holds about the user goes.

What goes: the profile and its email address (so the address is free again and signing in with it fails as
for any unknown address), the user's memberships, the MCP gate and tool-call log, the credit balance and its
history, every stored provider connection (the encrypted tokens, and any pending connection state), the
personal workspace with every member's membership of it, and each project the user owns (its record with the
encrypted database keys, its builder messages index, its analytics).

What stays: the user's own repositories, databases and sites at the providers (the platform never deletes
them); the credited-checkout records (`CHECKOUT#<id>`: checkout id, amount, date and the opaque user id; the
payment provider's records are the accounting, these only keep a replayed payment event from crediting
twice); a builder message's index item (an id and the project's id, no content) until it expires (90 days).

The order makes a failure safe to retry: sessions and grants end first, the profile and the address go last,
so until the very end the user can sign in again and delete again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from svc_shared.domain.accounts import Accounts
from svc_shared.domain.projects import delete_partition
from svc_shared.storage import keys
from svc_shared.storage.dal import Table


@dataclass(frozen=True)
class Deleted:
    """What a deletion removed (for the command line and the log; never shown with names of others)."""

    projects: int
    connections: int
    grants: int
    members_removed: int


@dataclass(eq=False)
class AccountDeletion:
    table: Table
    tokens: Table
    accounts: Accounts
    revoke_grants: Callable[[str], int]

    def other_members(self, workspace_id: str, user_id: str) -> int:
        """How many people besides the owner belong to the workspace (they lose it with the account)."""
        return sum(
            1
            for m in self.table.query(
                keys.workspace(workspace_id), sk_prefix=keys.MEMBER_PREFIX, index="gsi1"
            )
            if m.get("user_id") != user_id
        )

    def delete(self, user_id: str) -> Deleted:
        user = self.accounts.get_user(user_id)  # NotFound when already gone
        self.accounts.end_sessions(user_id)
        grants = self.revoke_grants(user_id)
        connections = 0
        for row in list(self.tokens.query(user_id)):
            self.tokens.delete(user_id, row["provider"])
            connections += 1
        projects = 0
        for item in list(self.table.query(keys.owner(user_id), sk_prefix=keys.PROJECT_PREFIX, index="gsi1")):
            project_id = str(item["id"])
            for pk in (keys.project(project_id), keys.stats(project_id), keys.live(project_id)):
                delete_partition(self.table, pk)
            projects += 1
        members_removed = 0
        workspace_id = user.default_workspace_id
        for member in list(
            self.table.query(keys.workspace(workspace_id), sk_prefix=keys.MEMBER_PREFIX, index="gsi1")
        ):
            self.table.delete(member["pk"], member["sk"])
            members_removed += member.get("user_id") != user_id
        delete_partition(self.table, keys.workspace(workspace_id))
        delete_partition(self.table, keys.deploy_slots(user_id))
        for item in list(self.table.query(keys.user(user_id))):
            if item["sk"] != keys.PROFILE:
                self.table.delete(item["pk"], item["sk"])
        # Last, together: the address and the profile (so an interrupted deletion can be run again).
        self.table.transact(
            [
                {"Delete": {"TableName": self.table.name, "Key": self.table.key(pk, sk)}}
                for pk, sk in ((keys.email(user.email), keys.EMAIL), (keys.user(user_id), keys.PROFILE))
            ]
        )
        return Deleted(
            projects=projects, connections=connections, grants=grants, members_removed=members_removed
        )
