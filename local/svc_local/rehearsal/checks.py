"""The rehearsal's checks of what it stripped: every reference resolves against the created stack, a stripped API
has the local gateway's routes, a stripped event source mapping is the local SQS poller, and every Lambda a
state machine calls is a created function."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from svc_local.rehearsal.build import references
from svc_local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION, Template

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


def state_machine_problems(
    aws: Any, state_machines: Mapping[str, str], created: Collection[str]
) -> list[str]:
    """Every Lambda a created state machine (logical id -> ARN) calls is answered by the local invoke endpoint
    and is one of the `created` functions (their names and ARNs)."""
    problems = []
    sfn = aws.client("stepfunctions")
    for logical, arn in state_machines.items():
        definition = json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"])
        for state_name, target in _lambda_targets(definition):
            spec = aws.registry.find(target)
            if spec is None or (target.split(":")[-1] not in created and target not in created):
                problems.append(f"{logical}.{state_name} calls {target}, which no created function answers")
    return problems


class StrippedChecks:
    """The checks of the resources a rehearsal stripped from the built template, against the created stack
    (`resources`: logical id -> (type, physical id); `functions`: the created functions' logical ids) and the
    template as the local gateway and SQS poller read it."""

    def __init__(
        self,
        built: Mapping[str, Any],
        stripped: Mapping[str, str],
        resources: Mapping[str, tuple[str, str]],
        functions: Collection[str],
        stack_id: str,
        local: Template,
    ) -> None:
        self.built, self.stripped, self.resources = built, stripped, resources
        self.functions, self.stack_id, self.local = set(functions), stack_id, local

    def problems(self) -> list[str]:
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
        problems += self._routes()
        problems += self._event_sources()
        return problems

    def _routes(self) -> list[str]:
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
        local = {(route.path, route.method, route.logical_id) for route in self.local.routes()}
        problems = [
            f"the built API has {m} {p} ({f}), the local gateway does not" for p, m, f in built_routes - local
        ]
        problems += [
            f"the local gateway serves {m} {p} ({f}), the built API does not"
            for p, m, f in local - built_routes
        ]
        return sorted(problems)

    def _event_sources(self) -> list[str]:
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
            for s in self.local.sqs_event_sources()
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
