"""Deploy rehearsal: template.yaml goes through the SAM transform, as `sam deploy` sends it, and the result is
created as a stack in the embedded AWS's CloudFormation; the local stack then runs against the resources that
stack created (tables, queues, secrets, key, roles, functions, state machine) and the functions' environment
is what the created AWS::Lambda::Function resources carry, with local overrides.

moto's CloudFormation lacks some types and gets others wrong for this use; each gap is handled one of two ways,
both recorded in docs/decisions.md ("Deploy rehearsal"):
- a provider of our own registered with moto's CloudFormation (`AWS::SecretsManager::Secret`, which moto cannot
  create; `AWS::StepFunctions::StateMachine`, which moto creates without its DefinitionSubstitutions or
  DefinitionS3Location and out of reach of the executing Step Functions backend; `AWS::DynamoDB::Table`, whose
  TTL and point-in-time recovery moto ignores; `AWS::KMS::Key`, whose KeyPolicy moto stores so that DescribeKey
  fails);
- the resource is stripped from the rehearsal template with its reason (`Rehearsal.stripped`), as is every
  resource that references a stripped one, and checked another way (`Rehearsal.problems`): the routes of a
  stripped API are the local gateway's routes, a stripped event source mapping is the local SQS poller, and
  every reference of a stripped resource resolves against the created stack.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import io
import json
import re
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from botocore.exceptions import ClientError, WaiterError

from svc_local.state import kept
from svc_local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION, LOCAL_STACK_NAME, Template, load_yaml

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
_PSEUDO = {
    "AWS::AccountId",
    "AWS::NotificationARNs",
    "AWS::NoValue",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
}
# The local runtime encrypts with LOCAL_MASTER_KEY (persisted in the state directory); moto's KMS keys do not
# survive a restart, so the created key's id is not handed to the functions (both would be ambiguous).
LOCAL_DROPPED_VARIABLES = ("KMS_KEY_ID",)

_create_lock = threading.Lock()


class RehearsalError(RuntimeError):
    """The built template could not be created as a stack (the message names the resource and the reason)."""


@dataclasses.dataclass(frozen=True)
class CreatedFunction:
    """A function as the created stack has it: what IAM enforcement and the runtime need per function."""

    logical_id: str
    name: str
    arn: str
    role_arn: str
    environment: Mapping[str, str]

    @property
    def role_name(self) -> str:
        return self.role_arn.rsplit("/", 1)[-1]


# ---- the SAM transform, as `sam package` + `sam deploy` would feed it


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

    _install_providers()
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


# ---- the stack


class Rehearsal:
    """Builds template.yaml, creates it as a stack in an embedded AWS, and describes what was created.

    `secret_values` are put into the created secrets after creation (logical id -> value): what an operator
    puts into a secret after the first deploy, or a value the local stack keeps across restarts."""

    def __init__(
        self,
        template_path: str | Path,
        parameters: Mapping[str, str] | None = None,
        *,
        stack_name: str = LOCAL_STACK_NAME,
        secret_values: Mapping[str, str] | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.template_path = Path(template_path).resolve()
        self.parameters = dict(parameters or {})
        self.stack_name = stack_name
        self.secret_values = dict(secret_values or {})
        # The built template is kept here, by the hash of what went into the transform (the same template and
        # parameters build the same template): a restart skips the transform.
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.built: dict[str, Any] = {}
        self.created_template: dict[str, Any] = {}
        self.stripped: dict[str, str] = {}
        self.stack_id = ""
        self.resources: dict[str, tuple[str, str]] = {}  # logical id -> (type, physical id)
        self.refs: dict[str, str] = {}  # what a Ref to each created resource yields (template.Template.refs)
        self.functions: dict[str, CreatedFunction] = {}
        self.state_machines: dict[str, str] = {}  # logical id -> ARN
        self.problems: list[str] = []  # what the checks of stripped resources found
        self.timings: dict[str, float] = {}
        self._local: Template | None = None

    @classmethod
    def for_local_stack(cls, template: Template, state: Any) -> Rehearsal:
        """The rehearsal of the local stack: `template`'s parameter values (PublicBaseUrl, ...); each secret of
        the template gets the value the state directory keeps for it (sessions survive a restart)."""
        declared = template.data.get("Parameters") or {}
        parameters = {
            name: ",".join(value) if isinstance(value, list) else str(value)
            for name, value in template.parameters.items()
            if name in declared
        }
        secrets = {
            logical: state.secret(logical)
            for logical, _ in template.resources_of_type("AWS::SecretsManager::Secret")
        }
        return cls(template.path, parameters, secret_values=secrets, cache_dir=state.path)

    def summary(self) -> str:
        """What the local stack prints at start: the stack, what was stripped and why, what the checks found."""
        lines = [
            f"rehearsal: stack {self.stack_name} created from the built template in {self.timings['total']:.2f}s "
            f"({len(self.resources)} resources; stripped {len(self.stripped)}: "
            + ", ".join(sorted({reason.split(": ", 1)[0] for reason in self.stripped.values()}))
            + "; "
            + ", ".join(f"{step} {seconds:.2f}s" for step, seconds in self.timings.items() if step != "total")
            + ")"
        ]
        lines += [f"rehearsal problem: {problem}" for problem in self.problems]
        return "\n".join(lines)

    # ---- steps

    def run(self, aws: Any) -> Rehearsal:
        """Build, create and inspect the stack in `aws` (a started svc_local.aws.EmbeddedAws); the registry of
        `aws` learns the created functions' names."""
        started = time.perf_counter()
        sam = load_yaml(self.template_path)
        packaged, artifacts = package(sam, self.template_path.parent)
        self.built = self._transform(packaged)
        self.created_template, self.stripped = plan(self.built)
        self.timings["transform"] = time.perf_counter() - started

        mark = time.perf_counter()
        aws.ensure_bucket(ARTIFACT_BUCKET)
        s3 = aws.client("s3")
        for key, data in artifacts.items():
            s3.put_object(Bucket=ARTIFACT_BUCKET, Key=key, Body=data)
        self._create(aws)
        self.timings["create"] = time.perf_counter() - mark

        mark = time.perf_counter()
        self._inspect(aws)
        for logical, value in self.secret_values.items():
            aws.client("secretsmanager").put_secret_value(SecretId=self.refs[logical], SecretString=value)
        self.problems = [*self._check_state_machines(aws), *self.check_stripped()]
        self.timings["inspect"] = time.perf_counter() - mark
        self.timings["total"] = time.perf_counter() - started
        return self

    def _transform(self, packaged: Mapping[str, Any]) -> dict[str, Any]:
        import samtranslator

        path = self.cache_dir / "rehearsal-built.json" if self.cache_dir else None
        inputs = [packaged, self.parameters, samtranslator.__version__]
        return kept(path, inputs, lambda: transform(packaged, self.parameters))

    def _create(self, aws: Any) -> None:
        cfn = aws.client("cloudformation")
        declared = (self.built.get("Parameters") or {}).keys()
        unknown = sorted(set(self.parameters) - set(declared))
        if unknown:
            raise RehearsalError(f"unknown parameter(s): {', '.join(unknown)}")
        try:
            with _cloudformation_hooks():
                self.stack_id = cfn.create_stack(
                    StackName=self.stack_name,
                    TemplateBody=json.dumps(self.created_template),
                    Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in self.parameters.items()],
                    Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
                )["StackId"]
            cfn.get_waiter("stack_create_complete").wait(
                StackName=self.stack_id, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
            )
        except ClientError as exc:
            raise RehearsalError(f"stack {self.stack_name}: {exc.response['Error'].get('Message')}") from exc
        except WaiterError as exc:
            events = cfn.describe_stack_events(StackName=self.stack_name)["StackEvents"]
            failed = [
                f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason', e['ResourceStatus'])}"
                for e in events
                if e["ResourceStatus"].endswith("FAILED")
            ]
            raise RehearsalError(
                f"stack {self.stack_name} did not complete: {'; '.join(failed) or exc}"
            ) from exc

    def _inspect(self, aws: Any) -> None:
        cfn = aws.client("cloudformation")
        for page in cfn.get_paginator("list_stack_resources").paginate(StackName=self.stack_id):
            for summary in page["StackResourceSummaries"]:
                logical, kind = summary["LogicalResourceId"], summary["ResourceType"]
                self.resources[logical] = (kind, summary.get("PhysicalResourceId", ""))
                self.refs[logical] = summary.get("PhysicalResourceId", "")
        lam = aws.client("lambda")
        for logical, (kind, physical) in self.resources.items():
            if kind == "AWS::Lambda::Function":
                config = lam.get_function_configuration(FunctionName=physical)
                self.functions[logical] = CreatedFunction(
                    logical_id=logical,
                    name=config["FunctionName"],
                    arn=config["FunctionArn"],
                    role_arn=config["Role"],
                    environment=dict((config.get("Environment") or {}).get("Variables") or {}),
                )
                spec = aws.registry.find(logical)
                if spec is not None:
                    aws.registry.add(dataclasses.replace(spec, function_name=config["FunctionName"]))
            elif kind == "AWS::StepFunctions::StateMachine":
                self.state_machines[logical] = physical

    # ---- what the local stack takes from it

    def physical_id(self, logical_id: str) -> str:
        return self.resources[logical_id][1]

    def environment(self) -> dict[str, str]:
        """The variables the created functions carry (one environment: the local runtime runs every function
        in this process), minus LOCAL_DROPPED_VARIABLES. A variable two functions set differently is an error:
        the process could give only one of them its value."""
        merged: dict[str, str] = {}
        owner: dict[str, str] = {}
        for logical, function in sorted(self.functions.items()):
            for name, value in function.environment.items():
                if name in merged and merged[name] != value:
                    raise RehearsalError(
                        f"{name} differs between {owner[name]} and {logical}; the local runtime has one "
                        "environment for every function"
                    )
                merged[name], owner[name] = value, logical
        for name in LOCAL_DROPPED_VARIABLES:
            merged.pop(name, None)
        return merged

    def roles(self) -> dict[str, str]:
        """Function logical id -> the ARN of the role the stack created for it."""
        return {logical: function.role_arn for logical, function in self.functions.items()}

    # ---- checks

    def _check_state_machines(self, aws: Any) -> list[str]:
        """Every Lambda a created state machine calls is answered by the local invoke endpoint."""
        problems = []
        sfn = aws.client("stepfunctions")
        for logical, arn in self.state_machines.items():
            definition = json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"])
            for state_name, target in _lambda_targets(definition):
                spec = aws.registry.find(target)
                created = {f.arn for f in self.functions.values()} | {f.name for f in self.functions.values()}
                if spec is None or (target.split(":")[-1] not in created and target not in created):
                    problems.append(
                        f"{logical}.{state_name} calls {target}, which no created function answers"
                    )
        return problems

    def check_stripped(self) -> list[str]:
        """Every reference of a stripped resource resolves against the created stack; a stripped API has the
        local gateway's routes; a stripped SQS event source mapping is the local poller."""
        problems: list[str] = []
        resources = self.built.get("Resources") or {}
        declared = set((self.built.get("Parameters") or {}).keys()) | _PSEUDO
        for logical in sorted(self.stripped):
            for name in sorted(references(resources[logical])):
                if name not in declared and name not in self.resources and name not in self.stripped:
                    problems.append(f"{logical} (stripped) references {name}, which is not in the stack")
            for name, attribute in _get_atts(resources[logical]):
                if name in self.resources and not _has_attribute(self.stack_id, name, attribute):
                    problems.append(f"{logical} (stripped) reads {name}.{attribute}, which the stack lacks")
        problems += self._check_routes()
        problems += self._check_event_sources()
        return problems

    def _local_template(self) -> Template:
        """The template as the local gateway and SQS poller read it (svc_local.template), parsed once."""
        if self._local is None:
            self._local = Template(self.template_path, self.parameters)
        return self._local

    def _check_routes(self) -> list[str]:
        resources = self.built.get("Resources") or {}
        built_routes: set[tuple[str, str, str]] = set()
        for logical in self.stripped:
            body = (resources[logical].get("Properties") or {}).get("Body")
            if not isinstance(body, dict) or "paths" not in body:
                continue
            for path, methods in body["paths"].items():
                for method, operation in methods.items():
                    integration = (operation or {}).get("x-amazon-apigateway-integration") or {}
                    function = next(iter(references(integration.get("uri")) & set(self.functions)), "")
                    verb = "ANY" if method.lower() == "x-amazon-apigateway-any-method" else method.upper()
                    # OpenAPI spells an HTTP API's $default route as the path /$default.
                    built_routes.add(("$default" if path == "/$default" else path, verb, function))
        if not built_routes:
            return []
        local = {(route.path, route.method, route.logical_id) for route in self._local_template().routes()}
        problems = [
            f"the built API has {m} {p} ({f}), the local gateway does not" for p, m, f in built_routes - local
        ]
        problems += [
            f"the local gateway serves {m} {p} ({f}), the built API does not"
            for p, m, f in local - built_routes
        ]
        return sorted(problems)

    def _check_event_sources(self) -> list[str]:
        resources = self.built.get("Resources") or {}
        built = {}
        for logical in self.stripped:
            resource = resources[logical]
            if resource.get("Type") != "AWS::Lambda::EventSourceMapping":
                continue
            props = resource.get("Properties") or {}
            source = next(iter(references(props.get("EventSourceArn"))), "")
            if resources.get(source, {}).get("Type") != "AWS::SQS::Queue":
                continue
            function = next(iter(references(props.get("FunctionName"))), "")
            built[(function, source)] = (
                int(props.get("BatchSize", 10)),
                float(props.get("MaximumBatchingWindowInSeconds", 0)),
                "ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or []),
            )
        local = {
            (s.function.logical_id, s.queue_logical_id): (s.batch_size, s.window_seconds, s.partial_failures)
            for s in self._local_template().sqs_event_sources()
        }
        problems = []
        for key in sorted(set(built) | set(local)):
            if built.get(key) != local.get(key):
                problems.append(
                    f"event source {key[1]} -> {key[0]}: built {built.get(key)}, local poller {local.get(key)} "
                    "(batch size, window, partial failures)"
                )
        return problems


def _lambda_targets(definition: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(state name, function) of every Task that invokes Lambda, nested states (Parallel, Map) included."""
    for name, state in (definition.get("States") or {}).items():
        if state.get("Type") == "Task":
            resource = str(state.get("Resource", ""))
            if resource.startswith("arn:aws:states:::lambda:invoke"):
                yield name, str((state.get("Parameters") or {}).get("FunctionName", ""))
            elif resource.startswith("arn:aws:lambda:"):
                yield name, resource
        for branch in state.get("Branches") or []:
            yield from _lambda_targets(branch)
        for key in ("Iterator", "ItemProcessor"):
            if isinstance(state.get(key), dict):
                yield from _lambda_targets(state[key])


def _get_atts(value: Any) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    if isinstance(value, list):
        for item in value:
            found |= _get_atts(item)
    elif isinstance(value, dict):
        if len(value) == 1 and "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            parts = target.split(".", 1) if isinstance(target, str) else target
            return {(str(parts[0]), str(parts[1]))}
        if len(value) == 1 and "Fn::Sub" in value:
            arg = value["Fn::Sub"]
            text = arg[0] if isinstance(arg, list) else arg
            for match in re.findall(r"\$\{([^!}][^}]*)\}", str(text)):
                if "." in match:
                    name, attribute = match.split(".", 1)
                    found.add((name, attribute))
            if isinstance(arg, list):
                found |= _get_atts(arg[1])
            return found
        for item in value.values():
            found |= _get_atts(item)
    return found


def _has_attribute(stack_id: str, logical: str, attribute: str) -> bool:
    """Does the created resource answer Fn::GetAtt for this attribute (moto's model, in this process)?"""
    from moto.cloudformation.models import cloudformation_backends

    stack = cloudformation_backends[LOCAL_ACCOUNT_ID][LOCAL_REGION].get_stack(stack_id)
    resource: Any = stack.resource_map[logical]
    try:
        resource.get_cfn_attribute(attribute)
    except Exception:  # noqa: BLE001 - moto raises its own exception types for unknown attributes
        return False
    return True


# ---- moto's CloudFormation: providers for what it lacks, names and errors as CloudFormation gives them


@contextmanager
def _cloudformation_hooks() -> Iterator[None]:
    """While a stack is created: generated physical names are stable for a stack name and logical id (a
    deployed stack keeps its names across updates; the local stack is created anew at each start), and a
    resource that fails names itself in the error."""
    from moto.cloudformation import parsing as moto_parsing
    from moto.cloudformation.exceptions import ValidationError

    parsing: Any = moto_parsing  # patched for the time of one create_stack

    generate, create = parsing.generate_resource_name, parsing.parse_and_create_resource

    def stable_name(resource_type: str, stack_name: str, logical_id: str) -> str:
        suffix = hashlib.sha256(f"{stack_name}/{logical_id}".encode()).hexdigest()[:12].upper()
        if resource_type == "AWS::S3::Bucket":
            tail = f"-{logical_id}-{suffix}"
            return f"{stack_name[: 63 - len(tail)]}{tail}".lower()
        if resource_type == "AWS::IAM::Policy":
            return f"{stack_name[:5]}-{logical_id[:4]}-{suffix}"
        # IAM role names are at most 64 characters, CloudFormation shortens the prefix to fit.
        return f"{stack_name}-{logical_id}"[: 64 - len(suffix) - 1] + f"-{suffix}"

    def named_failure(logical_id: str, resource_json: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return create(logical_id, resource_json, *args, **kwargs)
        except ValidationError:
            raise
        except Exception as exc:  # any failure of a resource is reported with its name
            reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise ValidationError(
                message=f"{logical_id} ({resource_json.get('Type')}) failed to create: {reason}"
            ) from exc

    with _create_lock:
        _install_providers()
        parsing.generate_resource_name = stable_name
        parsing.parse_and_create_resource = named_failure
        try:
            yield
        finally:
            parsing.generate_resource_name = generate
            parsing.parse_and_create_resource = create


_installed = False


def _install_providers() -> None:
    """Register the providers below with moto's CloudFormation (its type -> model map)."""
    global _installed
    if _installed:
        return
    from moto.cloudformation.parsing import get_model_map

    models = get_model_map()
    for provider in _providers():
        models[provider.cloudformation_type()] = provider
    _installed = True


@functools.cache
def _providers() -> list[Any]:
    """CloudFormation models of our own for moto (built on first use: moto is imported only then)."""
    from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
    from moto.core.common_models import CloudFormationModel
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.table import Table as MotoTable
    from moto.kms.models import Key as MotoKey
    from moto.kms.models import kms_backends
    from moto.s3.models import s3_backends
    from moto.secretsmanager.models import secretsmanager_backends
    from moto.stepfunctions.responses import get_backend

    class FromProperties:
        """moto's call to create a resource, handed to `create` as the resource's name and its Properties."""

        @classmethod
        def create_from_cloudformation_json(
            cls,
            resource_name: str,
            cloudformation_json: dict[str, Any],
            account_id: str,
            region_name: str,
            **kwargs: Any,
        ) -> Any:
            props = cloudformation_json.get("Properties") or {}
            return cls.create(resource_name, props, account_id, region_name)

        @classmethod
        def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
            raise NotImplementedError

    class CreatedOnly(FromProperties, CloudFormationModel):
        """What the rehearsal's own types share: a stack is created (and deleted), never updated in place; the
        type, the property that names a resource and the attributes Fn::GetAtt reads are class attributes."""

        TYPE: ClassVar[str]
        NAME_PROPERTY: ClassVar[str]
        ATTRIBUTES: ClassVar[frozenset[str]]

        @classmethod
        def cloudformation_type(cls) -> str:
            return cls.TYPE

        @classmethod
        def cloudformation_name_type(cls) -> str:
            return cls.NAME_PROPERTY

        @classmethod
        def has_cfn_attr(cls, attr: str) -> bool:
            return attr in cls.ATTRIBUTES

        @classmethod
        def update_from_cloudformation_json(
            cls,
            original_resource: Any,
            new_resource_name: str,
            cloudformation_json: dict[str, Any],
            account_id: str,
            region_name: str,
        ) -> Any:
            raise NotImplementedError("the rehearsal creates stacks; it does not update them")

        @classmethod
        def delete_from_cloudformation_json(
            cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str
        ) -> None:
            cls.delete(resource_name, account_id, region_name)

        @classmethod
        def delete(cls, name: str, account_id: str, region_name: str) -> None:
            raise NotImplementedError

        def is_created(self) -> bool:
            return True

    class Secret(CreatedOnly):
        """AWS::SecretsManager::Secret, which moto's CloudFormation lacks: SecretString or
        GenerateSecretString (a random value, with SecretStringTemplate and GenerateStringKey), Description,
        KmsKeyId and Tags. Ref and Fn::GetAtt Id give the ARN, as CloudFormation does."""

        TYPE, NAME_PROPERTY, ATTRIBUTES = "AWS::SecretsManager::Secret", "Name", frozenset({"Id"})

        def __init__(self, arn: str, name: str, account_id: str, region_name: str) -> None:
            self.arn, self.name = arn, name
            self.account_id, self.region_name = account_id, region_name

        @property
        def physical_resource_id(self) -> str:
            return self.arn

        def get_cfn_attribute(self, attribute_name: str) -> str:
            if attribute_name == "Id":
                return self.arn
            raise UnformattedGetAttTemplateException()

        @classmethod
        def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
            backend = secretsmanager_backends[account_id][region_name]
            value = props.get("SecretString")
            generate = props.get("GenerateSecretString")
            if value is None and generate is not None:
                password = json.loads(
                    backend.get_random_password(
                        password_length=int(generate.get("PasswordLength", 32)),
                        exclude_characters=str(generate.get("ExcludeCharacters", "")),
                        exclude_numbers=_true(generate.get("ExcludeNumbers")),
                        exclude_punctuation=_true(generate.get("ExcludePunctuation")),
                        exclude_uppercase=_true(generate.get("ExcludeUppercase")),
                        exclude_lowercase=_true(generate.get("ExcludeLowercase")),
                        include_space=_true(generate.get("IncludeSpace")),
                        require_each_included_type=_true(generate.get("RequireEachIncludedType", True)),
                    )
                )["RandomPassword"]
                if generate.get("SecretStringTemplate"):
                    document = json.loads(generate["SecretStringTemplate"])
                    document[generate["GenerateStringKey"]] = password
                    value = json.dumps(document)
                else:
                    value = password
            created = json.loads(
                backend.create_secret(
                    name=name,
                    secret_string=value,
                    secret_binary=None,
                    description=props.get("Description"),
                    tags=props.get("Tags"),
                    kms_key_id=props.get("KmsKeyId"),
                    client_request_token=None,
                    replica_regions=[],
                    force_overwrite=False,
                )
            )
            return cls(created["ARN"], created["Name"], account_id, region_name)

        @classmethod
        def delete(cls, name: str, account_id: str, region_name: str) -> None:
            secretsmanager_backends[account_id][region_name].delete_secret(
                name, recovery_window_in_days=None, force_delete_without_recovery=True
            )

    class StateMachine(CreatedOnly):
        """AWS::StepFunctions::StateMachine as CloudFormation creates it: DefinitionString, Definition or
        DefinitionS3Location (read from the embedded S3), DefinitionSubstitutions applied, type, tags and
        tracing. Created in the Step Functions backend the API serves (the executing one when executions
        run), so that StartExecution on its ARN runs it. Returns moto's own state machine model."""

        TYPE, NAME_PROPERTY = "AWS::StepFunctions::StateMachine", "StateMachineName"
        ATTRIBUTES = frozenset({"Arn", "Name", "StateMachineRevisionId"})

        @classmethod
        def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
            if "DefinitionString" in props:
                definition = str(props["DefinitionString"])
            elif "Definition" in props:
                definition = json.dumps(props["Definition"])
            elif "DefinitionS3Location" in props:
                location = props["DefinitionS3Location"]
                obj = s3_backends[account_id]["aws"].get_object(
                    location["Bucket"], location["Key"], version_id=location.get("Version")
                )
                if obj is None:
                    raise ValueError(f"no definition at s3://{location['Bucket']}/{location['Key']}")
                definition = obj.value.decode()
            else:
                raise ValueError("one of DefinitionString, Definition, DefinitionS3Location is required")
            substitutions = props.get("DefinitionSubstitutions") or {}
            definition = re.sub(
                r"\$\{([^}]+)\}",
                lambda m: str(substitutions[m.group(1)]) if m.group(1) in substitutions else m.group(0),
                definition,
            )
            tracing = props.get("TracingConfiguration")
            return get_backend(account_id, region_name).create_state_machine(
                name=props.get("StateMachineName", name),
                definition=definition,
                roleArn=props["RoleArn"],
                tags=[{k.lower(): v for k, v in tag.items()} for tag in props.get("Tags") or []],
                tracingConfiguration={"enabled": _true(tracing.get("Enabled"))} if tracing else None,
                sm_type=props.get("StateMachineType", "STANDARD"),
            )

        @classmethod
        def delete(cls, name: str, account_id: str, region_name: str) -> None:
            get_backend(account_id, region_name).delete_state_machine(name)

    class Table(FromProperties, MotoTable):
        """moto's AWS::DynamoDB::Table plus the two properties it ignores: TimeToLiveSpecification and
        PointInTimeRecoverySpecification."""

        @classmethod
        def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
            table = MotoTable.create_from_cloudformation_json(
                name, {"Properties": props}, account_id, region_name
            )
            backend = dynamodb_backends[account_id][region_name]
            ttl = props.get("TimeToLiveSpecification")
            if ttl:
                backend.update_time_to_live(
                    table.name, {"Enabled": _true(ttl.get("Enabled")), "AttributeName": ttl["AttributeName"]}
                )
            recovery = props.get("PointInTimeRecoverySpecification")
            if recovery:
                backend.update_continuous_backups(
                    table.name,
                    {"PointInTimeRecoveryEnabled": _true(recovery.get("PointInTimeRecoveryEnabled"))},
                )
            return table

    class Key(FromProperties, MotoKey):
        """moto's AWS::KMS::Key keeps a KeyPolicy given as a JSON object (as templates give it) unserialised,
        and DescribeKey then fails; it also ignores KeyUsage and KeySpec. This one serialises the policy and
        passes both."""

        @classmethod
        def create(cls, name: str, props: dict[str, Any], account_id: str, region_name: str) -> Any:
            policy = props.get("KeyPolicy")
            key = kms_backends[account_id][region_name].create_key(
                policy=policy if isinstance(policy, str) or policy is None else json.dumps(policy),
                key_usage=str(props.get("KeyUsage", "ENCRYPT_DECRYPT")),
                key_spec=str(props.get("KeySpec", "SYMMETRIC_DEFAULT")),
                description=str(props.get("Description", "")),
                tags=props.get("Tags", []),
            )
            key.key_rotation_status = _true(props.get("EnableKeyRotation", False))
            key.enabled = _true(props.get("Enabled", True))
            return key

    return [Secret, StateMachine, Table, Key]


def _true(value: Any) -> bool:
    return str(value).lower() == "true"
