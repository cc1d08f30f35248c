"""make iam: the calls per principal and the grants no call used; and the before/after table of grants."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from svc_local.iam.evaluation import _as_list, _resource_policy, simulation
from svc_local.iam.evaluator import Evaluator
from svc_local.iam.model import UNEXERCISED_SERVICES, IamModel, Principal, _role_of, expand
from svc_local.iam.requests import Request


@dataclass
class _Recorded:
    principals: dict[tuple[str, str], Principal] = field(default_factory=dict)  # (run, name)
    resource_policies: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (run, arn)
    decisions: list[dict[str, Any]] = field(default_factory=list)


def read_record(path: Path) -> _Recorded:
    record = _Recorded()
    seen: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        run = str(entry.get("run", ""))
        if "principal" in entry and "policies" in entry:
            record.principals[(run, entry["principal"])] = Principal(
                name=entry["principal"],
                role=entry["role"],
                kind=entry["kind"],
                policies=tuple((name, doc) for name, doc in entry["policies"]),
            )
        elif "resource_policy" in entry:
            record.resource_policies[(run, entry["resource_policy"])] = entry["policy"]
        elif "decision" in entry:
            key = json.dumps(entry, sort_keys=True)
            if key not in seen:
                seen.add(key)
                record.decisions.append(entry)
    return record


def grants_of(principal: Principal) -> list[tuple[tuple[str, int, str], str, dict[str, Any]]]:
    """Each Allow statement of the role split into one grant per action: (key, label, one-statement policy)."""
    grants = []
    for name, doc in principal.policies:
        statements = doc.get("Statement") or []
        for index, statement in enumerate(statements if isinstance(statements, list) else [statements]):
            if statement.get("Effect") != "Allow":
                continue
            for action in _as_list(statement.get("Action")):
                single = {**statement, "Action": action}
                resources = ", ".join(str(r) for r in _as_list(statement.get("Resource")))
                condition = " (with conditions)" if statement.get("Condition") else ""
                grants.append(
                    (
                        (name, index, str(action)),
                        f"{action} on {resources}{condition} [{name}]",
                        {"Version": "2012-10-17", "Statement": [single]},
                    )
                )
    return grants


def resource_grants_of(
    principal: Principal, resource_policies: Mapping[str, dict[str, Any]]
) -> list[tuple[tuple[str, int, str], str, str, dict[str, Any]]]:
    """Each Allow statement of a resource policy (a key policy) that names the principal's role, one grant per
    action: (key, label, the resource's ARN, one-statement resource policy)."""
    grants = []
    for arn, doc in sorted(resource_policies.items()):
        statements = doc.get("Statement") or []
        for index, statement in enumerate(statements if isinstance(statements, list) else [statements]):
            named = _as_list(
                (statement.get("Principal") or {}).get("AWS")
                if isinstance(statement.get("Principal"), dict)
                else None
            )
            if statement.get("Effect") != "Allow" or principal.role_arn not in named:
                continue
            for action in _as_list(statement.get("Action")):
                single = {**statement, "Action": action}
                sid = statement.get("Sid") or index
                grants.append(
                    (
                        (arn, index, str(action)),
                        f"{action} in the resource policy of {arn} [{sid}]",
                        arn,
                        {"Version": "2012-10-17", "Statement": [single]},
                    )
                )
    return grants


def _request(call: Mapping[str, Any]) -> Request:
    context = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in call["context"])
    return Request(call["action"], call["resource"], context)


def _unused(
    record: _Recorded, runs: Mapping[str, Principal], calls: list[dict[str, Any]], evaluator: Evaluator
) -> list[str]:
    """The labels of the principal's grants (its role's, and resource policies' naming it) no call used."""
    used: set[tuple[str, int, str]] = set()
    labels: dict[tuple[str, int, str], str] = {}
    for run, principal in runs.items():
        allowed = [_request(d) for d in calls if d["decision"] == "Allowed" and d.get("run", "") == run]
        policies = {arn: doc for (r, arn), doc in record.resource_policies.items() if r == run}
        # A call the resource policy allows alone (a key policy naming the role) uses no identity grant.
        needing = [
            r
            for r in allowed
            if evaluator.evaluate(
                simulation(principal, r, r.context, _recorded_resource_policy(record, run, r.resource), [])
            )
            != "Allowed"
        ]
        for key, label, policy in grants_of(principal):
            labels[key] = label
            for request in needing if key not in used else []:
                resource_policy = _recorded_resource_policy(record, run, request.resource)
                sim = simulation(principal, request, request.context, resource_policy, [("grant", policy)])
                if evaluator.evaluate(sim) == "Allowed":
                    used.add(key)
                    break
        for key, label, arn, policy in resource_grants_of(principal, policies):
            labels[key] = label
            for request in allowed if key not in used else []:
                if request.resource != arn:
                    continue
                if (
                    evaluator.evaluate(simulation(principal, request, request.context, policy, []))
                    == "Allowed"
                ):
                    used.add(key)
                    break
    return [
        label
        for key, label in labels.items()
        if key not in used and not label.startswith(UNEXERCISED_SERVICES)
    ]


def report(path: Path, out: Any = sys.stdout) -> int:
    """Per principal: the calls made, and the grants no recorded call used (each call weighed against the
    policies of its own run of the stack). 1 when any call was denied or any grant unused."""
    record = read_record(path)
    names = sorted({name for _, name in record.principals})
    denied = [d for d in record.decisions if d["decision"] != "Allowed"]
    evaluator = Evaluator()
    unused = 0
    try:
        for name in names:
            runs = {run: p for (run, n), p in record.principals.items() if n == name}
            principal = next(iter(runs.values()))
            calls = [d for d in record.decisions if d["principal"] == name]
            print(f"\n== {principal.kind} {name} (role {principal.role})", file=out)
            made = sorted({(d["action"], d["resource"], d["decision"]) for d in calls})
            if not made:
                print("  calls: none recorded", file=out)
            for action, resource, result in made:
                mark = "" if result == "Allowed" else f"   <-- {result.upper()}"
                print(f"  call  {action} {resource}{mark}", file=out)
            for label in _unused(record, runs, calls, evaluator):
                unused += 1
                print(f"  unused grant  {label}", file=out)
    finally:
        evaluator.close()
    if denied:
        print(f"\n{len(denied)} denied call(s):", file=out)
        for d in denied:
            print(f"  {d['principal']}: {d['action']} on {d['resource']} ({d['decision']})", file=out)
        return 1
    print(f"\nno denied call ({len(record.decisions)} distinct decisions recorded)", file=out)
    if unused:
        print(f"{unused} unused grant(s): a journey makes the call, or the grant goes", file=out)
        return 1
    print("0 unused grants", file=out)
    return 0


def _recorded_resource_policy(record: _Recorded, run: str, resource: str) -> dict[str, Any] | None:
    policies = {arn: doc for (r, arn), doc in record.resource_policies.items() if r == run}
    return _resource_policy(IamModel({}, policies, {}), resource)


# ---------------------------------------------------------------- the grants table


def _render(value: Any) -> str:
    """An unresolved resource of a policy, readable: logical names in place of their values."""
    if isinstance(value, str):
        return (
            value.replace("arn:${AWS::Partition}:", "arn:")
            .replace("${AWS::Region}", "")
            .replace("${AWS::AccountId}", "")
        )
    if isinstance(value, dict) and len(value) == 1:
        ((key, arg),) = value.items()
        if key == "Ref":
            return f"{{{arg}}}"
        if key == "Fn::GetAtt":
            parts = arg if isinstance(arg, list) else str(arg).split(".")
            return f"{{{'.'.join(str(p) for p in parts)}}}"
        if key == "Fn::Sub":
            text, variables = (arg[0], arg[1]) if isinstance(arg, list) else (arg, {})
            text = _render(text)
            for name, inner in variables.items():
                text = text.replace(f"${{{name}}}", _render(inner))
            return re.sub(r"\$\{([^}]+)\}", r"{\1}", text)
    return json.dumps(value)


def granted_actions(template: dict[str, Any]) -> dict[str, list[str]]:
    """Per function and state machine: 'action on resource' lines of its role (managed policies by name)."""
    expanded = expand(template)
    out: dict[str, list[str]] = {}
    for logical, resource in expanded["Resources"].items():
        if resource.get("Type") not in ("AWS::Lambda::Function", "AWS::StepFunctions::StateMachine"):
            continue
        role = _role_of(resource)
        if role is None:
            continue
        props = expanded["Resources"][role].get("Properties") or {}
        lines = []
        for policy in props.get("Policies") or []:
            statements = policy["PolicyDocument"].get("Statement") or []
            for statement in statements if isinstance(statements, list) else [statements]:
                actions = ", ".join(sorted(str(a) for a in _as_list(statement.get("Action"))))
                resources = ", ".join(_render(r) for r in _as_list(statement.get("Resource")))
                condition = ""
                if statement.get("Condition"):
                    condition = " if " + _render_condition(statement["Condition"])
                effect = "" if statement.get("Effect") == "Allow" else "DENY "
                lines.append(f"{effect}{actions} on {resources}{condition}")
        for arn in props.get("ManagedPolicyArns") or []:
            lines.append(f"managed {str(arn).rsplit('/', 1)[-1]}")
        out[logical] = lines
    return out


def _render_condition(condition: Mapping[str, Any]) -> str:
    parts = []
    for operator, tests in condition.items():
        for key, value in tests.items():
            values = ", ".join(_render(v) for v in _as_list(value))
            parts.append(f"{key} {operator} [{values}]")
    return "; ".join(parts)


def grants_markdown(before: dict[str, Any], after: dict[str, Any], before_label: str) -> str:
    old, new = granted_actions(before), granted_actions(after)
    lines = [
        "# IAM grants per function: before and after least privilege",
        "",
        "Generated by `python -m svc_local.iam grants` from the SAM expansion of template.yaml "
        f"(before: `{before_label}`; after: the working tree). Resources are shown by logical id "
        "(`{AppTable}`); `managed X` is an AWS managed policy SAM attaches (CloudWatch Logs, X-Ray, the SQS "
        "event source's polling).",
        "",
        "| Function | Before | After |",
        "|---|---|---|",
    ]
    for name in sorted(set(old) | set(new)):
        cell_old = "<br>".join(_md(line) for line in old.get(name, [])) or "(none)"
        cell_new = "<br>".join(_md(line) for line in new.get(name, [])) or "(none)"
        lines.append(f"| {name} | {cell_old} | {cell_new} |")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")
