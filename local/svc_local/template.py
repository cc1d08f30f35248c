"""Read a SAM template (CloudFormation short tags included) into what the local stack needs: routes, tables,
functions, state machines and environment, with parameters and intrinsic functions resolved."""

from __future__ import annotations

import base64
import copy
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

LOCAL_REGION = "us-east-1"
LOCAL_ACCOUNT_ID = "123456789012"
LOCAL_STACK_NAME = "svc-local"

_FUNCTION_TYPES = {"AWS::Serverless::Function", "AWS::Lambda::Function"}
_STATE_MACHINE_TYPES = {"AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine"}
_TABLE_KEYS = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput")
_NO_VALUE = object()
_API_EVENT_KINDS = {"Api": "rest", "HttpApi": "http"}


class TemplateError(ValueError):
    """The template cannot be read or resolved for local use."""


def _substitute(text: str, values: Mapping[str, Any]) -> str:
    """DefinitionSubstitutions: ${Name} becomes values[Name]; unknown names stay as they are."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: str(values.get(m.group(1), m.group(0))), text)


class _CfnLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader (libyaml's when PyYAML has it: several times faster on a template) that turns CloudFormation
    short tags (!Ref, !Sub, ...) into their long form."""


def _construct_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if tag_suffix in ("Ref", "Condition"):
        return {tag_suffix: value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{tag_suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct_tag)


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Parse a CloudFormation/SAM YAML file, short tags included. A file is parsed once per version of it
    (its modification time and size): the stack reads template.yaml several times as it starts; each caller
    gets its own copy."""
    stat = os.stat(path)
    return copy.deepcopy(_parsed(str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=16)
def _parsed(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=_CfnLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: not a template")
    return data


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    function_name: str
    code_uri: str
    handler: str
    module: str
    attribute: str
    timeout: int = 3
    memory_size: int = 128
    environment: Mapping[str, Any] = field(default_factory=dict)

    @property
    def arn(self) -> str:
        return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{self.function_name}"


@dataclass(frozen=True)
class Route:
    path: str
    method: str  # upper case; ANY matches every method
    function: FunctionSpec
    event_name: str
    api_id: str
    binary_media_types: tuple[str, ...] = ()
    # "rest": an Api event (REST API, its proxy event); "http": an HttpApi event (HTTP API, payload format 1.0).
    kind: str = "rest"

    @property
    def logical_id(self) -> str:
        return self.function.logical_id

    @property
    def module(self) -> str:
        return self.function.module

    @property
    def attribute(self) -> str:
        return self.function.attribute


@dataclass(frozen=True)
class QueueSpec:
    logical_id: str
    name: str
    attributes: Mapping[str, str]
    dead_letter: str | None  # logical id of its dead-letter queue


@dataclass(frozen=True)
class SqsEventSource:
    function: FunctionSpec
    event_name: str
    queue_logical_id: str
    batch_size: int
    window_seconds: float
    partial_failures: bool


@dataclass(frozen=True)
class TableSpec:
    logical_id: str
    create_kwargs: Mapping[str, Any]
    ttl_attribute: str | None

    @property
    def table_name(self) -> str:
        return str(self.create_kwargs["TableName"])


@dataclass(frozen=True)
class StateMachineSpec:
    logical_id: str
    name: str
    definition: Mapping[str, Any]
    role_arn: str
    type: str = "STANDARD"

    @property
    def arn(self) -> str:
        return f"arn:aws:states:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:stateMachine:{self.name}"


class Template:
    """A SAM template resolved for the local stack. `refs` overrides what a Ref to a resource yields."""

    def __init__(
        self,
        path: str | Path,
        overrides: Mapping[str, str] | None = None,
        *,
        package_root: str | Path | None = None,
        refs: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path).resolve()
        self.root = self.path.parent
        self.package_root = Path(package_root).resolve() if package_root else self.root
        self.data = load_yaml(self.path)
        self.resources: dict[str, dict[str, Any]] = self.data.get("Resources") or {}
        self.globals: dict[str, Any] = self.data.get("Globals") or {}
        self.refs: dict[str, Any] = dict(refs or {})
        self.parameters = self._parameters(overrides or {})
        self._conditions: dict[str, bool] = {}

    # ---- parameters and intrinsic functions

    def _parameters(self, overrides: Mapping[str, str]) -> dict[str, Any]:
        declared: dict[str, Any] = self.data.get("Parameters") or {}
        unknown = set(overrides) - set(declared)
        if unknown:
            raise TemplateError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        for name, spec in declared.items():
            if name in overrides:
                values[name] = overrides[name]
            elif "Default" in spec:
                values[name] = spec["Default"]
            kind = str(spec.get("Type", ""))
            if name in values and (kind.startswith("List<") or kind == "CommaDelimitedList"):
                raw = values[name]
                values[name] = raw if isinstance(raw, list) else [p.strip() for p in str(raw).split(",")]
        values.update(
            {
                "AWS::Region": LOCAL_REGION,
                "AWS::AccountId": LOCAL_ACCOUNT_ID,
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackName": LOCAL_STACK_NAME,
                "AWS::StackId": f"arn:aws:cloudformation:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:stack/"
                f"{LOCAL_STACK_NAME}/00000000-0000-0000-0000-000000000000",
                "AWS::NoValue": _NO_VALUE,
            }
        )
        return values

    def resolve(self, value: Any) -> Any:
        """Resolve intrinsic functions in `value`; AWS::NoValue entries are dropped."""
        out = self._resolve(value)
        return None if out is _NO_VALUE else out

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self._resolve(v) for v in value]
            return [v for v in items if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self.ref(str(arg))
            if key.startswith("Fn::") or key == "Condition":
                return self._intrinsic(key, arg)
        resolved = {k: self._resolve(v) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not _NO_VALUE}

    def _intrinsic(self, key: str, arg: Any) -> Any:
        if key == "Fn::Sub":
            if isinstance(arg, list):
                text, variables = arg[0], self._resolve(arg[1])
            else:
                text, variables = arg, {}
            return self._sub(str(text), variables)
        if key == "Fn::GetAtt":
            parts = arg.split(".", 1) if isinstance(arg, str) else [self._resolve(a) for a in arg]
            return self.get_att(str(parts[0]), str(parts[1]))
        if key == "Fn::Join":
            sep, items = arg[0], self._resolve(arg[1])
            return str(sep).join(str(i) for i in items)
        if key == "Fn::If":
            name, when_true, when_false = arg
            return self._resolve(when_true if self.condition(name) else when_false)
        if key == "Fn::Select":
            index, items = self._resolve(arg[0]), self._resolve(arg[1])
            return items[int(index)]
        if key == "Fn::Split":
            sep, text = arg[0], self._resolve(arg[1])
            return str(text).split(sep)
        if key == "Fn::FindInMap":
            name, top, second = (self._resolve(a) for a in arg[:3])
            return self.data["Mappings"][name][top][second]
        if key == "Fn::Base64":
            return base64.b64encode(str(self._resolve(arg)).encode()).decode()
        if key == "Fn::GetAZs":
            return [f"{LOCAL_REGION}{z}" for z in "abc"]
        if key == "Fn::ToJsonString":
            return json.dumps(self._resolve(arg), separators=(",", ":"))
        if key in ("Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or", "Condition"):
            return self._evaluate({key: arg})
        raise TemplateError(f"{key} is not supported locally")

    def _sub(self, text: str, variables: Mapping[str, Any]) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(variables[name])
            if "." in name and name.split(".", 1)[0] in self.resources:
                logical, attr = name.split(".", 1)
                return str(self.get_att(logical, attr))
            return str(self.ref(name))

        return re.sub(r"\$\{([^}]+)\}", replace, text)

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            conditions = self.data.get("Conditions") or {}
            if name not in conditions:
                raise TemplateError(f"unknown condition {name}")
            self._conditions[name] = bool(self._evaluate(conditions[name]))
        return self._conditions[name]

    def _evaluate(self, expr: Any) -> Any:
        if isinstance(expr, dict) and len(expr) == 1:
            ((key, arg),) = expr.items()
            if key == "Fn::Equals":
                left, right = (self._resolve(a) for a in arg)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self._evaluate(arg[0])
            if key == "Fn::And":
                return all(self._evaluate(a) for a in arg)
            if key == "Fn::Or":
                return any(self._evaluate(a) for a in arg)
            if key == "Condition":
                return self.condition(str(arg))
        return self._resolve(expr)

    def ref(self, name: str) -> Any:
        if name in self.refs:
            return self.refs[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.resources:
            return self.physical_id(name)
        if name in (self.data.get("Parameters") or {}):
            raise TemplateError(f"parameter {name} has no default; pass it as an override")
        raise TemplateError(f"Ref to unknown name {name}")

    def physical_id(self, logical_id: str) -> str:
        """What Ref yields for a resource in the local stack (CloudFormation's rules, local names)."""
        if logical_id in self.refs:
            return str(self.refs[logical_id])
        resource = self.resources[logical_id]
        kind = resource.get("Type", "")
        props = resource.get("Properties") or {}
        if kind == "AWS::DynamoDB::Table":
            return str(self.resolve(props.get("TableName")) or f"{LOCAL_STACK_NAME}-{logical_id}")
        if kind == "AWS::S3::Bucket":
            return str(self.resolve(props.get("BucketName")) or f"{LOCAL_STACK_NAME}-{logical_id}".lower())
        if kind in _FUNCTION_TYPES:
            return str(self.resolve(props.get("FunctionName")) or logical_id)
        if kind in _STATE_MACHINE_TYPES:
            name = self.resolve(props.get("Name") or props.get("StateMachineName")) or logical_id
            return f"arn:aws:states:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:stateMachine:{name}"
        if kind == "AWS::SQS::Queue":
            return str(self.resolve(props.get("QueueName")) or f"{LOCAL_STACK_NAME}-{logical_id}")
        if kind == "AWS::SecretsManager::Secret":
            name = self.resolve(props.get("Name")) or f"{LOCAL_STACK_NAME}-{logical_id}"
            return f"arn:aws:secretsmanager:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:secret:{name}"
        return logical_id

    def get_att(self, logical_id: str, attribute: str) -> Any:
        key = f"{logical_id}.{attribute}"
        if key in self.refs:
            return self.refs[key]
        if logical_id not in self.resources:
            raise TemplateError(f"GetAtt of unknown resource {logical_id}")
        kind = self.resources[logical_id].get("Type", "")
        physical = self.physical_id(logical_id)
        if attribute == "Arn":
            if kind in _FUNCTION_TYPES:
                return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{physical}"
            if kind == "AWS::DynamoDB::Table":
                return f"arn:aws:dynamodb:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:table/{physical}"
            if kind == "AWS::S3::Bucket":
                return f"arn:aws:s3:::{physical}"
            if kind in _STATE_MACHINE_TYPES or physical.startswith("arn:"):
                return physical
            if kind == "AWS::SQS::Queue":
                return f"arn:aws:sqs:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:{physical.rsplit('/', 1)[-1]}"
            if kind == "AWS::KMS::Key":
                return f"arn:aws:kms:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:key/{physical}"
            if kind == "AWS::IAM::Role":
                return f"arn:aws:iam::{LOCAL_ACCOUNT_ID}:role/{physical}"
        if attribute == "QueueName" and kind == "AWS::SQS::Queue":
            return physical.rsplit("/", 1)[-1]
        if attribute == "QueueUrl" and kind == "AWS::SQS::Queue":
            return physical
        if attribute == "Name" and kind in _STATE_MACHINE_TYPES:
            return physical.rsplit(":", 1)[-1]
        if attribute == "ApiEndpoint" and kind in ("AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api"):
            return f"https://{physical}.execute-api.{LOCAL_REGION}.amazonaws.com"
        if attribute in ("DomainName", "RegionalDomainName") and kind == "AWS::S3::Bucket":
            return f"{physical}.s3.amazonaws.com"
        raise TemplateError(f"GetAtt {key} is not supported locally")

    # ---- what the local stack needs

    def resources_of_type(self, *kinds: str) -> list[tuple[str, dict[str, Any]]]:
        """(logical id, resource) of the given types whose Condition (if any) holds."""
        return [
            (logical, res)
            for logical, res in self.resources.items()
            if res.get("Type") in kinds and ("Condition" not in res or self.condition(res["Condition"]))
        ]

    def functions(self) -> list[FunctionSpec]:
        glob = self.globals.get("Function") or {}
        specs = []
        for logical, res in self.resources_of_type(*_FUNCTION_TYPES):
            props = {**glob, **(res.get("Properties") or {})}
            code_uri = props.get("CodeUri") or props.get("Code") or "."
            handler = props.get("Handler")
            if not isinstance(code_uri, str) or not isinstance(handler, str):
                raise TemplateError(f"{logical}: CodeUri and Handler must be plain strings for local runs")
            module, attribute = self._module_of(code_uri, handler)
            env_vars = {
                **((glob.get("Environment") or {}).get("Variables") or {}),
                **(((res.get("Properties") or {}).get("Environment") or {}).get("Variables") or {}),
            }
            specs.append(
                FunctionSpec(
                    logical_id=logical,
                    function_name=self.physical_id(logical),
                    code_uri=code_uri,
                    handler=handler,
                    module=module,
                    attribute=attribute,
                    timeout=int(self.resolve(props.get("Timeout", 3))),
                    memory_size=int(self.resolve(props.get("MemorySize", 128))),
                    environment=env_vars,
                )
            )
        return specs

    def _module_of(self, code_uri: str, handler: str) -> tuple[str, str]:
        # functions/accounts/ + app.handler -> functions.accounts.app : handler
        code_dir = (self.root / code_uri).resolve()
        try:
            rel = code_dir.relative_to(self.package_root)
        except ValueError as exc:
            raise TemplateError(f"CodeUri {code_uri} is outside {self.package_root}") from exc
        module_part, _, attribute = handler.rpartition(".")
        if not module_part:
            raise TemplateError(f"Handler {handler!r} must be module.function")
        return ".".join([*rel.parts, module_part]), attribute

    def routes(self) -> list[Route]:
        """Every Api and HttpApi event of every function, in template order."""
        routes = []
        for fn in self.functions():
            events = (self.resources[fn.logical_id].get("Properties") or {}).get("Events") or {}
            for event_name, event in events.items():
                kind = _API_EVENT_KINDS.get(str(event.get("Type")))
                if kind is None:
                    continue
                props = event.get("Properties") or {}
                if kind == "http":
                    version = str(self.resolve(props.get("PayloadFormatVersion", "2.0")))
                    if version != "1.0":
                        raise TemplateError(
                            f"{fn.logical_id}.{event_name}: the local gateway serves HttpApi payload format "
                            f"1.0 only (PayloadFormatVersion is {version})"
                        )
                api_ref = props.get("RestApiId" if kind == "rest" else "ApiId")
                default_api = "ServerlessRestApi" if kind == "rest" else "ServerlessHttpApi"
                api_id = api_ref["Ref"] if isinstance(api_ref, dict) and "Ref" in api_ref else default_api
                method = str(props.get("Method", "ANY")).upper()
                routes.append(
                    Route(
                        # No Path and no Method: SAM makes the API's `$default` route (HTTP APIs).
                        path=str(self.resolve(props["Path"])) if "Path" in props else "$default",
                        method="ANY" if method in ("ANY", "X-AMAZON-APIGATEWAY-ANY-METHOD") else method,
                        function=fn,
                        event_name=event_name,
                        api_id=api_id,
                        # An HTTP API has no binary media types: it decides per request (svc_local.gateway).
                        binary_media_types=self.binary_media_types(api_id) if kind == "rest" else (),
                        kind=kind,
                    )
                )
        return routes

    def queues(self) -> list[QueueSpec]:
        """SQS queues, dead-letter queues first (a queue's redrive policy names its dead-letter queue)."""
        specs = []
        for logical, res in self.resources_of_type("AWS::SQS::Queue"):
            props = res.get("Properties") or {}
            attributes = {}
            for name in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds"):
                if name in props:
                    attributes[name] = str(self.resolve(props[name]))
            redrive = props.get("RedrivePolicy")
            dead_letter = None
            if redrive:
                target = redrive.get("deadLetterTargetArn")
                if isinstance(target, dict) and "Fn::GetAtt" in target:
                    dead_letter = str(target["Fn::GetAtt"][0])
                attributes["RedrivePolicy"] = json.dumps(
                    {
                        "deadLetterTargetArn": self.resolve(target),
                        "maxReceiveCount": int(redrive["maxReceiveCount"]),
                    }
                )
            name = self.physical_id(logical).rsplit("/", 1)[-1]
            specs.append(QueueSpec(logical, name, attributes, dead_letter))
        return sorted(specs, key=lambda q: q.dead_letter is not None)

    def sqs_event_sources(self) -> list[SqsEventSource]:
        """Every SQS event of every function (the event source mappings)."""
        sources = []
        for fn in self.functions():
            events = (self.resources[fn.logical_id].get("Properties") or {}).get("Events") or {}
            for event_name, event in events.items():
                if event.get("Type") != "SQS":
                    continue
                props = event.get("Properties") or {}
                queue = props.get("Queue")
                if not (isinstance(queue, dict) and "Fn::GetAtt" in queue):
                    raise TemplateError(
                        f"{fn.logical_id}.{event_name}: Queue must be !GetAtt Queue.Arn locally"
                    )
                sources.append(
                    SqsEventSource(
                        function=fn,
                        event_name=event_name,
                        queue_logical_id=str(queue["Fn::GetAtt"][0]),
                        batch_size=int(self.resolve(props.get("BatchSize", 10))),
                        window_seconds=float(self.resolve(props.get("MaximumBatchingWindowInSeconds", 0))),
                        partial_failures="ReportBatchItemFailures"
                        in (self.resolve(props.get("FunctionResponseTypes")) or []),
                    )
                )
        return sources

    def _api_properties(self, api_id: str) -> dict[str, Any]:
        """A REST API's properties over Globals' Api section, as SAM merges them."""
        props: dict[str, Any] = {**(self.globals.get("Api") or {})}
        if api_id in self.resources:
            props.update(self.resources[api_id].get("Properties") or {})
        return props

    def gateway_responses(self, api_id: str) -> dict[str, dict[str, Any]]:
        """A REST API's GatewayResponses (response type -> StatusCode, ResponseTemplates,
        ResponseParameters), resolved."""
        return dict(self.resolve(self._api_properties(api_id).get("GatewayResponses")) or {})

    def binary_media_types(self, api_id: str) -> tuple[str, ...]:
        types = self.resolve(self._api_properties(api_id).get("BinaryMediaTypes")) or []
        # SAM escapes "/" as "~1" in media types.
        return tuple(str(t).replace("~1", "/") for t in types)

    def tables(self) -> list[TableSpec]:
        """DynamoDB tables as boto3 create_table kwargs (plus the TTL attribute), from the template."""
        specs = []
        for logical, res in self.resources_of_type("AWS::DynamoDB::Table"):
            props = self.resolve(res.get("Properties") or {})
            kwargs: dict[str, Any] = {
                "TableName": self.physical_id(logical),
                "KeySchema": props["KeySchema"],
                "AttributeDefinitions": props["AttributeDefinitions"],
                "BillingMode": props.get("BillingMode", "PROVISIONED"),
            }
            if kwargs["BillingMode"] == "PROVISIONED":
                kwargs["ProvisionedThroughput"] = props.get(
                    "ProvisionedThroughput", {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
                )
            for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                if props.get(key):
                    kwargs[key] = [{k: v for k, v in ix.items() if k in _TABLE_KEYS} for ix in props[key]]
            if props.get("StreamSpecification"):
                kwargs["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
            ttl = props.get("TimeToLiveSpecification") or {}
            ttl_attribute = (
                ttl.get("AttributeName") if str(ttl.get("Enabled", "")).lower() == "true" else None
            )
            specs.append(TableSpec(logical_id=logical, create_kwargs=kwargs, ttl_attribute=ttl_attribute))
        return specs

    def buckets(self) -> list[str]:
        return [self.physical_id(logical) for logical, _ in self.resources_of_type("AWS::S3::Bucket")]

    def state_machines(self) -> list[StateMachineSpec]:
        """State machines with DefinitionSubstitutions applied (ARNs point at the local functions)."""
        specs = []
        for logical, res in self.resources_of_type(*_STATE_MACHINE_TYPES):
            props = res.get("Properties") or {}
            definition = props.get("Definition")
            if definition is None and isinstance(props.get("DefinitionUri"), str):
                text = (self.root / props["DefinitionUri"]).read_text(encoding="utf-8")
                subs = self.resolve(props.get("DefinitionSubstitutions") or {})
                text = _substitute(text, subs)
                definition = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
            elif isinstance(props.get("DefinitionString"), str | dict):
                resolved = self.resolve(props["DefinitionString"])
                definition = json.loads(resolved) if isinstance(resolved, str) else resolved
            else:
                definition = self.resolve(definition)
            if not isinstance(definition, dict):
                raise TemplateError(f"{logical}: no readable state machine definition")
            arn = self.physical_id(logical)
            role = self.resolve(props.get("Role") or props.get("RoleArn"))
            specs.append(
                StateMachineSpec(
                    logical_id=logical,
                    name=arn.rsplit(":", 1)[-1],
                    definition=definition,
                    role_arn=str(role or f"arn:aws:iam::{LOCAL_ACCOUNT_ID}:role/{logical}Role"),
                    type=str(props.get("Type", "STANDARD")),
                )
            )
        return specs

    def outputs(self) -> dict[str, Any]:
        """The template's Outputs, resolved (an output whose Condition does not hold is left out)."""
        found = {}
        for name, output in (self.data.get("Outputs") or {}).items():
            if "Condition" in output and not self.condition(str(output["Condition"])):
                continue
            found[name] = self.resolve(output.get("Value"))
        return found

    def env_var_names(self) -> list[str]:
        """Names of the functions' environment variables: Globals, then each function's own."""
        names = dict.fromkeys(
            ((self.globals.get("Function") or {}).get("Environment") or {}).get("Variables") or {}
        )
        for function in self.functions():
            names.update(dict.fromkeys(function.environment))
        return list(names)

    def environment(
        self, function: FunctionSpec | None = None, *, skip: set[str] | None = None
    ) -> dict[str, str]:
        """`function`'s environment resolved (Globals and its own variables); without one, that of the process
        serving every function in the local stack: Globals and every function's variables (each function
        sees only its own: svc_local.iam scopes it). Variables that cannot be resolved locally or resolve to
        nothing are left out, as are the names in `skip`."""
        if function is not None:
            variables: dict[str, Any] = dict(function.environment)
        else:
            variables = dict(
                ((self.globals.get("Function") or {}).get("Environment") or {}).get("Variables") or {}
            )
            for spec in self.functions():
                variables.update(spec.environment)
        env = {}
        for name, raw in variables.items():
            if skip and name in skip:
                continue
            try:
                value = self.resolve(raw)
            except TemplateError:
                continue
            if value is not None:
                env[name] = str(value)
        return env
