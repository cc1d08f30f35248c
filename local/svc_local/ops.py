"""`svc` of a development install: the operator command line of svc_shared.wiring.cli plus `--local`, the running
local stack (`make dev`), whose table and state machine names come from template.yaml."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from svc_shared.wiring import cli

LOCAL_AWS_PORT = "4566"


def local_environment() -> dict[str, str]:
    """Point boto3 at the local stack's AWS endpoint; name its app table, publish state machine and data key."""
    os.environ.setdefault(
        "AWS_ENDPOINT_URL", f"http://127.0.0.1:{os.environ.get('SVC_AWS_PORT', LOCAL_AWS_PORT)}"
    )
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    os.environ.setdefault("AWS_DEFAULT_REGION", os.environ["AWS_REGION"])
    from svc_local.template import Template

    template = Template(Path(__file__).resolve().parents[2] / "template.yaml")
    tables = {t.logical_id: t.table_name for t in template.tables()}
    machines = template.state_machines()
    # The key the stack's functions encrypt with, by its alias (its id is the embedded KMS's).
    aliases = [
        template.resolve(r["Properties"]["AliasName"])
        for _, r in template.resources_of_type("AWS::KMS::Alias")
    ]
    return {
        "table": tables["AppTable"],
        "state_machine": machines[0].arn if machines else "",
        **({"kms_key_id": str(aliases[0])} if aliases else {}),
    }


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main(argv, local=local_environment)


if __name__ == "__main__":
    raise SystemExit(main())
