"""`svc`: operator command line for a deployed stack's table (the `svc` script of a development install adds
`--local`, the local stack, from svc_local.ops: this layer never imports the local stack).

svc --local users create --email a@b.c --password ... --plan paid
svc --stack svc-platform users set-plan --email a@b.c --plan free
svc --table svc-prod-app users show --email a@b.c
svc --stack svc-platform handoff-keys rotate
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from svc_shared.core.clock import system_clock
from svc_shared.core.errors import DomainError
from svc_shared.domain.accounts import PLANS, Accounts
from svc_shared.domain.signin import user_grant_revoker
from svc_shared.storage.dal import Table

if TYPE_CHECKING:
    from svc_shared.core.crypto import Envelope

# Resolves the local stack's environment: {"table": ..., "state_machine": ...} and, for commands that encrypt,
# "kms_key_id" or "local_master_key" (else KMS_KEY_ID or LOCAL_MASTER_KEY from the process environment).
LocalEnvironment = Callable[[], dict[str, str]]


def _environment(args: argparse.Namespace, local: LocalEnvironment | None) -> dict[str, str]:
    """The app table and the publish state machine of the chosen environment."""
    if getattr(args, "local", False) and local is not None:
        return local()
    if args.stack:
        from svc_shared.core import aws

        stack = aws.AwsClients().client("cloudformation").describe_stacks(StackName=args.stack)["Stacks"][0]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        if "AppTableName" not in outputs:
            raise SystemExit(f"stack {args.stack} has no AppTableName output")
        return {
            "table": outputs["AppTableName"],
            "state_machine": outputs.get("PublishStateMachineArn", ""),
            "kms_key_id": outputs.get("DataKeyArn", ""),
        }
    name = args.table or os.environ.get("TABLE_NAME")
    if not name:
        raise SystemExit(
            f"say which environment: {'--local, ' if local else ''}--stack NAME, --table NAME or TABLE_NAME"
        )
    return {"table": name, "state_machine": os.environ.get("PUBLISH_STATE_MACHINE_ARN", "")}


def _parser(*, local: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svc", description="Manage the svc platform.")
    where = parser.add_mutually_exclusive_group()
    if local:
        where.add_argument("--local", action="store_true", help="the running local stack (make dev)")
    where.add_argument("--stack", help="a deployed CloudFormation stack name")
    where.add_argument("--table", help="a DynamoDB table name")
    groups = parser.add_subparsers(dest="group", required=True)
    users = groups.add_parser("users", help="workspace users").add_subparsers(dest="action", required=True)

    create = users.add_parser("create", help="create a user and their personal workspace")
    create.add_argument("--email", required=True)
    create.add_argument("--password", help="prompted for when omitted")
    create.add_argument("--plan", choices=PLANS, default="free")
    create.add_argument("--name", help="display name")
    create.add_argument(
        "--credits", type=int, help="opening credit balance (default: the welcome credits, 500)"
    )

    set_plan = users.add_parser("set-plan", help="move a user to another plan")
    set_plan.add_argument("--email", required=True)
    set_plan.add_argument("--plan", choices=PLANS, required=True)

    show = users.add_parser("show", help="print a user")
    show.add_argument("--email", required=True)

    set_password = users.add_parser(
        "set-password", help="set a user's password; ends every session and MCP grant of the user"
    )
    set_password.add_argument("--email", required=True)
    set_password.add_argument("--password", help="prompted for when omitted")

    everywhere = users.add_parser(
        "sign-out-everywhere", help="end every workspace session and revoke every MCP grant of a user"
    )
    everywhere.add_argument("--email", required=True)

    publish = groups.add_parser("publish", help="the publish sequence of a project").add_subparsers(
        dest="action", required=True
    )
    status = publish.add_parser("status", help="the recorded stage, status and error")
    status.add_argument("project_id")
    resume = publish.add_parser(
        "resume", help="start the state machine again: it resumes at the recorded stage"
    )
    resume.add_argument("project_id")

    handoff = groups.add_parser(
        "handoff-keys", help="the keys that sign backoffice sign-in hand-offs"
    ).add_subparsers(dest="action", required=True)
    handoff.add_parser("show", help="the keys: kid, created and retired times, which signs and which verify")
    handoff.add_parser(
        "rotate",
        help="make a new current key; the previous one keeps verifying for HANDOFF_KEY_GRACE_SECONDS "
        "(default 24 h)",
    )
    return parser


def _envelope(env: dict[str, str]) -> Envelope:
    """The environment's envelope encryption: the stack's KMS key, or the local stack's master key."""
    import base64

    from svc_shared.core.crypto import Envelope, KmsKeyProvider, LocalKeyProvider

    # A key the environment names (the stack's, or the local stack's by alias) wins over the process's.
    master = env.get("local_master_key") or (
        None if env.get("kms_key_id") else os.environ.get("LOCAL_MASTER_KEY")
    )
    if master:
        return Envelope(LocalKeyProvider(base64.b64decode(master)))
    kms_key_id = env.get("kms_key_id") or os.environ.get("KMS_KEY_ID")
    if not kms_key_id:
        raise SystemExit("no key to encrypt with: --stack NAME, or KMS_KEY_ID (or LOCAL_MASTER_KEY locally)")
    return Envelope(KmsKeyProvider(kms_key_id))


def _handoff_keys(args: argparse.Namespace, env: dict[str, str]) -> int:
    from svc_shared.core.clock import system_clock
    from svc_shared.domain.handoff_keys import CACHE_SECONDS, HandoffKeys

    grace = int(os.environ.get("HANDOFF_KEY_GRACE_SECONDS") or 24 * 3600)
    keys = HandoffKeys(Table(env["table"]), lambda: _envelope(env), system_clock, grace_seconds=grace)
    report: dict[str, object] = {}
    if args.action == "rotate":
        key = keys.rotate()
        report = {"rotated": key.kid, "signs_from": key.created_at + CACHE_SECONDS}
    report["keys"] = keys.listing()
    print(json.dumps(report, indent=2))
    return 0


def _publish(args: argparse.Namespace, env: dict[str, str]) -> int:
    from svc_shared.core import aws
    from svc_shared.core.clock import system_clock
    from svc_shared.domain.projects import Projects
    from svc_shared.domain.publish_state import PublishState

    project = Projects(Table(env["table"]), system_clock).get(args.project_id, consistent=True)
    state = PublishState.of(project)
    report: dict[str, object] = {
        "project_id": project.id,
        "stage": state.stage,
        "status": state.status,
        "error": state.error,
        "execution": state.execution_arn or state.execution,
    }
    if args.action == "resume":
        if not env["state_machine"]:
            raise SystemExit("no publish state machine in this environment (PUBLISH_STATE_MACHINE_ARN)")
        started = (
            aws.AwsClients()
            .client("stepfunctions")
            .start_execution(
                stateMachineArn=env["state_machine"],
                name=f"{project.id}-manual-{int(system_clock.now())}",
                input=json.dumps({"projectId": project.id}),
            )
        )
        report["execution"] = started["executionArn"]
        report["resumed"] = True
    print(json.dumps(report, indent=2))
    return 0


def main(argv: Sequence[str] | None = None, *, local: LocalEnvironment | None = None) -> int:
    args = _parser(local=local is not None).parse_args(argv)
    env = _environment(args, local)
    if args.group in ("publish", "handoff-keys"):
        try:
            return (_publish if args.group == "publish" else _handoff_keys)(args, env)
        except DomainError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
    table = Table(env["table"])
    accounts = Accounts(table)
    revoke_grants = user_grant_revoker(table, system_clock)
    try:
        if args.action == "create":
            password = args.password or getpass.getpass("Password: ")
            user = accounts.create_user(
                email=args.email,
                password=password,
                display_name=args.name,
                plan=args.plan,
                credits=args.credits,
            )
        elif args.action == "set-plan":
            user = accounts.set_plan(accounts.get_user_by_email(args.email).id, args.plan)
        elif args.action == "set-password":
            user = accounts.get_user_by_email(args.email)
            accounts.set_password(user.id, args.password or getpass.getpass("New password: "))
            revoke_grants(user.id)
        elif args.action == "sign-out-everywhere":
            user = accounts.get_user_by_email(args.email)
            accounts.end_sessions(user.id)
            revoke_grants(user.id)
        else:
            user = accounts.get_user_by_email(args.email)
    except DomainError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(json.dumps(user.public(), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
