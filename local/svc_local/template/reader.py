"""Read a SAM template (CloudFormation short tags included) into what the local stack needs: routes, tables,
functions, state machines and environment, with parameters and intrinsic functions resolved."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from svc_local.template.intrinsics import FUNCTION_TYPES, STATE_MACHINE_TYPES, Resolver
from svc_local.template.loading import LOCAL_ACCOUNT_ID, TemplateError, load_yaml
from svc_local.template.specs import (
    FunctionSpec,
    QueueSpec,
    Route,
    SqsEventSource,
    StateMachineSpec,
    TableSpec,
)

_TABLE_KEYS = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput")
_API_EVENT_KINDS = {"Api": "rest", "HttpApi": "http"}


def _substitute(text: str, values: Mapping[str, Any]) -> str:
    """DefinitionSubstitutions: ${Name} becomes values[Name]; unknown names stay as they are."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: str(values.get(m.group(1), m.group(0))), text)


class Template(Resolver):
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
        super().__init__(load_yaml(self.path), overrides or {}, refs)
        self.globals: dict[str, Any] = self.data.get("Globals") or {}

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
        for logical, res in self.resources_of_type(*FUNCTION_TYPES):
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
        for logical, res in self.resources_of_type(*STATE_MACHINE_TYPES):
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
