"""`make iam`'s report weighs each grant against the recorded calls: a grant is used only by a call that needs
it, so a call a key policy allows on its own (the data key names the role) uses no identity grant."""

from __future__ import annotations

import io
import json
from pathlib import Path

from svc_local.iam.report import report

ROLE = "arn:aws:iam::123456789012:role/svc-local-WorkspaceFunctionRole-local"
KEY = "arn:aws:kms:us-east-1:123456789012:key/k1"
START = "arn:aws:states:us-east-1:123456789012:stateMachine:svc-dev-publish"


def _record(path: Path, calls: list[tuple[str, str]]) -> Path:
    identity = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "states:StartExecution", "Resource": START}],
    }
    key_policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Use",
                "Effect": "Allow",
                "Principal": {"AWS": [ROLE]},
                "Action": "kms:Decrypt",
                "Resource": "*",
            }
        ],
    }
    lines = [
        {
            "principal": "WorkspaceFunction",
            "role": "WorkspaceFunctionRole",
            "kind": "function",
            "policies": [["WorkspaceFunctionRolePolicy0", identity]],
            "run": "r",
        },
        {"resource_policy": KEY, "policy": key_policy, "run": "r"},
        *(
            {
                "decision": "Allowed",
                "principal": "WorkspaceFunction",
                "action": action,
                "resource": resource,
                "context": [],
                "run": "r",
            }
            for action, resource in calls
        ),
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_a_call_the_key_policy_allows_alone_uses_no_identity_grant(tmp_path: Path):
    out = io.StringIO()
    assert report(_record(tmp_path / "r.jsonl", [("kms:Decrypt", KEY)]), out) == 1
    text = out.getvalue()
    assert "unused grant  states:StartExecution" in text
    assert "kms:Decrypt in the resource policy" not in text  # the key policy's grant is used


def test_every_grant_used_passes(tmp_path: Path):
    out = io.StringIO()
    calls = [("kms:Decrypt", KEY), ("states:StartExecution", START)]
    assert report(_record(tmp_path / "r.jsonl", calls), out) == 0, out.getvalue()
    assert "0 unused grants" in out.getvalue()
