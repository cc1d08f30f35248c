"""The principals of a template as the SAM transform makes them (roles, their policies resolved to the
local stack's values) and the resource policies they meet (KMS key, S3 bucket)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc_local.state import kept
from svc_local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION, LOCAL_STACK_NAME, Template

# AWS managed policies SAM attaches (their documents as AWS publishes them). Nothing the local stack runs
# calls CloudWatch Logs or X-Ray through the SDK: these grants are listed, never exercised.
MANAGED_POLICIES: dict[str, dict[str, Any]] = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": "*",
            }
        ],
    },
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "xray:PutTraceSegments",
                    "xray:PutTelemetryRecords",
                    "xray:GetSamplingRules",
                    "xray:GetSamplingTargets",
                    "xray:GetSamplingStatisticSummaries",
                ],
                "Resource": "*",
            }
        ],
    },
    "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessage",
                    "sqs:GetQueueAttributes",
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                ],
                "Resource": "*",
            }
        ],
    },
}
# Services whose calls never reach the local stack (no SDK call of ours goes there).
UNEXERCISED_SERVICES = ("logs:", "xray:")


class IamError(RuntimeError):
    """The IAM model of the template cannot be built, or the evaluator failed."""


# ---------------------------------------------------------------- principals from the template


@dataclass(frozen=True)
class Principal:
    """A role session: a function's execution role, or a state machine's role."""

    name: str  # logical id of the function or state machine
    role: str  # logical id of the role (SAM: <Name>Role)
    kind: str  # "function" | "state machine"
    policies: tuple[tuple[str, dict[str, Any]], ...]  # (policy name, document), resolved

    @property
    def role_name(self) -> str:
        """As CloudFormation names a role it creates: <stack>-<logical id>-<suffix>."""
        return f"{LOCAL_STACK_NAME}-{self.role}-local"

    @property
    def role_arn(self) -> str:
        return f"arn:aws:iam::{LOCAL_ACCOUNT_ID}:role/{self.role_name}"

    @property
    def session_arn(self) -> str:
        return f"arn:aws:sts::{LOCAL_ACCOUNT_ID}:assumed-role/{self.role_name}/{self.name}"


def _dummy_locations(template: dict[str, Any]) -> dict[str, Any]:
    """SAM wants code in S3 to transform; where it is makes no difference to the roles."""
    data = copy.deepcopy(template)
    for resource in (data.get("Resources") or {}).values():
        props = resource.get("Properties") or {}
        kind = resource.get("Type")
        if kind == "AWS::Serverless::Function" and "InlineCode" not in props:
            props["CodeUri"] = "s3://svc-local-code/function.zip"
        elif kind == "AWS::Serverless::LayerVersion":
            props["ContentUri"] = "s3://svc-local-code/layer.zip"
        elif kind == "AWS::Serverless::StateMachine" and "DefinitionUri" in props:
            props["DefinitionUri"] = {"Bucket": "svc-local-code", "Key": "definition.json"}
    return data


def expand(template: dict[str, Any], cache_dir: Path | None = None) -> dict[str, Any]:
    """The CloudFormation template SAM makes of `template` (roles and event source mappings included). With
    `cache_dir` (the local stack's state directory), kept there by the hash of the template and the
    translator's version: a restart of the stack skips the transform (a second or more)."""
    import samtranslator

    path = cache_dir / "iam-expanded.json" if cache_dir else None
    return kept(path, [template, samtranslator.__version__], lambda: _expand(template))


def _expand(template: dict[str, Any]) -> dict[str, Any]:
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    from samtranslator.utils.py27hash_fix import (
        to_py27_compatible_template,
        undo_mark_unicode_str_in_template,
    )

    fragment = _dummy_locations(template)
    parameters: dict[str, Any] = {}
    # A session only for the region SAM asks it (it never calls AWS): no credentials, no profile.
    session = boto3.session.Session(
        region_name=LOCAL_REGION,
        aws_access_key_id="x",
        aws_secret_access_key="x",  # noqa: S106 - never used
    )
    try:
        to_py27_compatible_template(fragment, parameters)
        translator = Translator(None, Parser(), boto_session=session)
        translated = translator.translate(
            fragment, parameter_values=parameters, get_managed_policy_map=lambda: {}
        )
        translator.metrics.publish()  # to its offline publisher: no "unpublished metrics" warning at exit
    except Exception as exc:  # the translator raises many kinds; all mean the same here
        raise IamError(f"the SAM transform of the template failed: {exc}") from exc
    return dict(undo_mark_unicode_str_in_template(translated))


def role_documents(expanded: dict[str, Any], role: str) -> list[tuple[str, Any]]:
    """(name, unresolved document) of every policy of a role: inline ones, then managed ones."""
    props = (expanded["Resources"].get(role) or {}).get("Properties") or {}
    policies: list[tuple[str, Any]] = [
        (str(p.get("PolicyName")), p["PolicyDocument"]) for p in props.get("Policies") or []
    ]
    for arn in props.get("ManagedPolicyArns") or []:
        if isinstance(arn, str) and arn in MANAGED_POLICIES:
            policies.append((arn.rsplit("/", 1)[-1], MANAGED_POLICIES[arn]))
        else:
            raise IamError(f"{role}: managed policy {arn!r} has no local document")
    return policies


def _role_of(resource: Mapping[str, Any]) -> str | None:
    role = (resource.get("Properties") or {}).get("Role") or (resource.get("Properties") or {}).get("RoleArn")
    if isinstance(role, dict) and "Fn::GetAtt" in role:
        target = role["Fn::GetAtt"]
        return str(target[0] if isinstance(target, list) else str(target).split(".", 1)[0])
    return None


def local_resolver(
    template_path: Path,
    environment: Mapping[str, str],
    refs: Mapping[str, Any],
    package_root: Path | None = None,
    parameters: Mapping[str, str] | None = None,
) -> Template:
    """A resolver of the template's intrinsics to the local stack's values: what a function's environment
    variable holds is what its Ref yields (the local stack stores the provider secrets under its own names
    and passes their ARNs in the environment), and resources created locally have their local ids."""
    probe = Template(template_path, parameters, refs=refs, package_root=package_root)
    declared = probe.data.get("Parameters") or {}
    overrides: dict[str, str] = {k: v for k, v in (parameters or {}).items() if k in declared}
    resolved_refs = dict(refs)
    for spec in probe.functions():
        for name, raw in spec.environment.items():
            if not (isinstance(raw, dict) and set(raw) == {"Ref"}) or name not in environment:
                continue
            target = str(raw["Ref"])
            if target in declared:
                overrides[target] = environment[name]
            elif target in probe.resources:
                resolved_refs[target] = environment[name]
    return Template(template_path, overrides, refs=resolved_refs, package_root=package_root)


@dataclass
class IamModel:
    """The principals of a template and the resource policies they meet, resolved to local values."""

    principals: dict[str, Principal]
    resource_policies: dict[str, dict[str, Any]]  # resource ARN (KMS key, S3 bucket) -> policy
    table_keys: dict[str, str]  # table name -> partition key attribute

    @classmethod
    def build(cls, resolver: Template, cache_dir: Path | None = None) -> IamModel:
        expanded = expand(resolver.data, cache_dir)
        resources = expanded["Resources"]
        principals: dict[str, Principal] = {}
        for logical, resource in resources.items():
            kind = resource.get("Type")
            if kind not in ("AWS::Lambda::Function", "AWS::StepFunctions::StateMachine"):
                continue
            role = _role_of(resource)
            if role is None or role not in resources:
                raise IamError(f"{logical}: its role is not a role of the template")
            documents = [(name, resolver.resolve(doc)) for name, doc in role_documents(expanded, role)]
            principals[logical] = Principal(
                name=logical,
                role=role,
                kind="function" if kind == "AWS::Lambda::Function" else "state machine",
                policies=tuple(documents),
            )
        policies: dict[str, dict[str, Any]] = {}
        for logical, resource in resolver.resources.items():
            props = resource.get("Properties") or {}
            if resource.get("Type") == "AWS::KMS::Key" and props.get("KeyPolicy"):
                roles = {p.role: p.role_arn for p in principals.values()}
                document = resolver.resolve(_with_role_arns(props["KeyPolicy"], roles))
                policies[str(resolver.get_att(logical, "Arn"))] = document
            if resource.get("Type") == "AWS::S3::BucketPolicy":
                bucket = resolver.resolve(props.get("Bucket"))
                policies[f"arn:aws:s3:::{bucket}"] = resolver.resolve(props["PolicyDocument"])
        table_keys = {
            spec.table_name: next(
                k["AttributeName"] for k in spec.create_kwargs["KeySchema"] if k["KeyType"] == "HASH"
            )
            for spec in resolver.tables()
        }
        return cls(principals, policies, table_keys)


def _with_role_arns(value: Any, roles: Mapping[str, str]) -> Any:
    """`value` with each GetAtt of a role's Arn (roles SAM makes, absent from the template) given its ARN."""
    if isinstance(value, list):
        return [_with_role_arns(v, roles) for v in value]
    if not isinstance(value, dict):
        return value
    target = value.get("Fn::GetAtt") if len(value) == 1 else None
    if target is not None:
        parts = target if isinstance(target, list) else str(target).split(".", 1)
        if len(parts) == 2 and parts[1] == "Arn" and parts[0] in roles:
            return roles[str(parts[0])]
    return {k: _with_role_arns(v, roles) for k, v in value.items()}
