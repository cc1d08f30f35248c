"""The rehearsal's build: template.yaml packaged as `sam package` would, through the SAM transform, and split into
what the embedded CloudFormation creates and what is stripped with its reason."""

from __future__ import annotations

import copy
import hashlib
import io
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from svc_local.rehearsal.hooks import install_models
from svc_local.template import LOCAL_REGION

# What `sam package --s3-bucket` would upload to: the functions' and layers' code (placeholders: the functions
# run in-process, Lambda Invoke is answered by the local runtime) and the state machine definitions (real).
ARTIFACT_BUCKET = "svc-local-artifacts"

# Types moto's CloudFormation has a model for but that cannot stand in for the cloud's here.
_STRIP_REASONS = {
    "AWS::ApiGateway::RestApi": (
        "moto's RestApi ignores Body, the OpenAPI document SAM writes the routes into, so the API would have "
        "no methods; the local gateway serves the routes; checked: the built API's paths, methods and "
        "functions are the gateway's routes"
    ),
    "AWS::ApiGateway::Deployment": "moto refuses to deploy a REST API without methods (see the RestApi)",
    "AWS::Lambda::EventSourceMapping": (
        "moto's SQS would consume the queue and run the function itself (in Docker) on every SendMessage; "
        "the local SQS poller is the mapping; checked: its queue, function, batch size, window and response "
        "types are the poller's"
    ),
}
_UNSUPPORTED = "moto's CloudFormation has no model of this type (it would skip it silently)"
# What must come from the stack: a rehearsal that had to strip one of these is refused.
REQUIRED_TYPES = (
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::SecretsManager::Secret",
    "AWS::KMS::Key",
    "AWS::IAM::Role",
    "AWS::Lambda::Function",
    "AWS::StepFunctions::StateMachine",
)


class RehearsalError(RuntimeError):
    """The built template could not be created as a stack (the message names the resource and the reason)."""


def _placeholder_zip() -> bytes:
    """The same bytes every time (fixed timestamps): a code package that says where the code really runs."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("README.txt", date_time=(2020, 1, 1, 0, 0, 0))
        archive.writestr(info, "Placeholder: the local stack runs this function in-process (svc_local).\n")
    return buffer.getvalue()


def package(sam: Mapping[str, Any], root: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Rewrite local code and definition locations to S3 URIs in ARTIFACT_BUCKET, as `sam package` does;
    returns the packaged template and the objects to upload (key -> bytes)."""
    template = copy.deepcopy(dict(sam))
    artifacts: dict[str, bytes] = {}
    placeholder = _placeholder_zip()

    def upload(logical: str, data: bytes, suffix: str) -> str:
        key = f"{logical}/{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
        artifacts[key] = data
        return f"s3://{ARTIFACT_BUCKET}/{key}"

    for logical, resource in (template.get("Resources") or {}).items():
        props = resource.get("Properties")
        if not isinstance(props, dict):
            continue
        kind = resource.get("Type")
        if kind == "AWS::Serverless::Function" and isinstance(props.get("CodeUri", "."), str):
            if not str(props.get("CodeUri", "")).startswith("s3://") and "InlineCode" not in props:
                props["CodeUri"] = upload(logical, placeholder, ".zip")
        elif kind == "AWS::Serverless::LayerVersion" and isinstance(props.get("ContentUri"), str):
            if not props["ContentUri"].startswith("s3://"):
                props["ContentUri"] = upload(logical, placeholder, ".zip")
        elif kind == "AWS::Serverless::StateMachine" and isinstance(props.get("DefinitionUri"), str):
            path = root / props["DefinitionUri"]
            if not props["DefinitionUri"].startswith("s3://"):
                props["DefinitionUri"] = upload(logical, path.read_bytes(), path.suffix)
    glob = (template.get("Globals") or {}).get("Function") or {}
    if isinstance(glob.get("CodeUri"), str) and not glob["CodeUri"].startswith("s3://"):
        glob["CodeUri"] = upload("Globals", placeholder, ".zip")
    return template, artifacts


def transform(sam: Mapping[str, Any], parameters: Mapping[str, str]) -> dict[str, Any]:
    """The SAM transform (aws-sam-translator) of a packaged template: the CloudFormation template the cloud
    creates. Managed policies resolve from the translator's bundled map, never from IAM."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    session = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - the transform calls no AWS API
        region_name=LOCAL_REGION,
    )
    translator = Translator(None, Parser(), boto_session=session)
    built = translator.translate(
        copy.deepcopy(dict(sam)), dict(parameters), get_managed_policy_map=lambda: {}
    )
    translator.metrics.publish()  # to its offline publisher: no "unpublished metrics" warning at exit
    return dict(built)


# ---- what the embedded CloudFormation can create


def references(value: Any) -> set[str]:
    """Names a template fragment refers to: Ref, Fn::GetAtt and the variables of Fn::Sub (its own variable
    map excluded)."""
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= references(item)
    elif isinstance(value, dict):
        if len(value) == 1 and "Ref" in value and isinstance(value["Ref"], str):
            return {value["Ref"]}
        if len(value) == 1 and "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            name = target.split(".", 1)[0] if isinstance(target, str) else target[0]
            return {str(name)}
        if len(value) == 1 and "Fn::Sub" in value:
            arg = value["Fn::Sub"]
            text, variables = (arg[0], arg[1]) if isinstance(arg, list) else (arg, {})
            names = {m.split(".", 1)[0] for m in re.findall(r"\$\{([^!}][^}]*)\}", str(text))}
            return (names - set(variables)) | references(variables)
        for item in value.values():
            found |= references(item)
    return found


def plan(built: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Split the built template into what the embedded CloudFormation creates and what is stripped (logical
    id -> reason). A resource or output that references a stripped resource is stripped with it."""
    from moto.cloudformation.parsing import get_model_map

    install_models()
    models = get_model_map()
    resources: dict[str, Any] = dict(built.get("Resources") or {})
    stripped: dict[str, str] = {}
    for logical, resource in resources.items():
        kind = str(resource.get("Type"))
        if kind in _STRIP_REASONS:
            stripped[logical] = f"{kind}: {_STRIP_REASONS[kind]}"
        elif kind not in models and not kind.startswith("Custom::"):
            stripped[logical] = f"{kind}: {_UNSUPPORTED}"
    changed = True
    while changed:
        changed = False
        for logical, resource in resources.items():
            if logical in stripped:
                continue
            depends = resource.get("DependsOn") or []
            names = references(resource) | set([depends] if isinstance(depends, str) else depends)
            hit = sorted(names & set(stripped))
            if hit:
                stripped[logical] = f"{resource.get('Type')}: references {', '.join(hit)}, stripped"
                changed = True
    missing = sorted(
        f"{logical} ({resources[logical]['Type']}: {stripped[logical]})"
        for logical in stripped
        if resources[logical].get("Type") in REQUIRED_TYPES
    )
    if missing:
        raise RehearsalError(
            "resources that must come from the stack cannot be created: " + "; ".join(missing)
        )
    kept = {k: v for k, v in resources.items() if k not in stripped}
    outputs = {
        name: output
        for name, output in (built.get("Outputs") or {}).items()
        if not references(output) & set(stripped)
    }
    template = {**built, "Resources": kept, "Outputs": outputs}
    if not outputs:
        template.pop("Outputs", None)
    return template, stripped
