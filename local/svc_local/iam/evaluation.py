"""Decisions: a role session's request weighed by the evaluator against its policies, cached; enforced or
recorded (SVC_IAM, SVC_IAM_RECORD)."""

from __future__ import annotations

import json
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc_local.iam.evaluator import Evaluator
from svc_local.iam.model import IamError, IamModel, Principal
from svc_local.iam.requests import _S3_CONTEXT, Request
from svc_local.template import LOCAL_ACCOUNT_ID, FunctionSpec

MODE_ENV = "SVC_IAM"
RECORD_ENV = "SVC_IAM_RECORD"


@dataclass(frozen=True)
class Decision:
    principal: str
    action: str
    resource: str
    context: tuple[tuple[str, str | tuple[str, ...]], ...]
    result: str

    @property
    def allowed(self) -> bool:
        return self.result == "Allowed"


def _condition_keys(policies: Iterable[Mapping[str, Any]]) -> set[str]:
    keys: set[str] = set()
    for policy in policies:
        statements = policy.get("Statement") or []
        for statement in statements if isinstance(statements, list) else [statements]:
            for operator in (statement.get("Condition") or {}).values():
                keys.update(k.lower() for k in operator)
    return keys


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resource_policy(model: IamModel, resource: str) -> dict[str, Any] | None:
    if resource in model.resource_policies:
        return model.resource_policies[resource]
    if resource.startswith("arn:aws:s3:::"):
        bucket = resource[len("arn:aws:s3:::") :].split("/", 1)[0]
        return model.resource_policies.get(f"arn:aws:s3:::{bucket}")
    return None


class AccessDenied(Exception):
    """A request the role does not allow (the botocore hook turns it into a ClientError)."""

    def __init__(self, decision: Decision, principal: Principal) -> None:
        because = (
            "with an explicit deny"
            if decision.result == "ExplicitlyDenied"
            else f"because no identity-based policy allows the {decision.action} action"
        )
        message = (
            f"User: {principal.session_arn} is not authorized to perform: {decision.action} on resource: "
            f"{decision.resource} {because} ({principal.kind} {principal.name}, role {principal.role})"
        )
        super().__init__(message)
        self.decision = decision
        self.message = message


class Unattributed(Exception):
    """A call no function's role can answer for (the botocore hook turns it into a ClientError)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Iam:
    """Decisions for the principals of one template, cached; enforced or recorded."""

    def __init__(
        self,
        model_factory: Callable[[], IamModel],
        *,
        mode: str = "enforce",
        record_path: str | Path | None = None,
        evaluator: Evaluator | None = None,
    ) -> None:
        if mode not in ("enforce", "record"):
            raise IamError(f"{MODE_ENV} must be enforce, record or off, not {mode!r}")
        self.mode = mode
        self._model_factory = model_factory
        self._model: IamModel | None = None
        self._evaluator = evaluator
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], str] = {}
        self._keys: dict[tuple[str, str], set[str]] = {}
        self.decisions: dict[tuple[str, str, str, str], int] = {}
        self.denied: list[str] = []
        self._record_path = Path(record_path) if record_path else None
        self._recorded: set[Any] = set()
        self._presigned: dict[tuple[str, str], str] = {}
        self._targets: dict[str, set[str]] = {}
        self.run = uuid.uuid4().hex  # one local stack run: its secrets' ARNs are its own

    @property
    def model(self) -> IamModel:
        with self._lock:
            if self._model is None:
                self._model = self._model_factory()
                for principal in self._model.principals.values():
                    self._write(
                        {
                            "principal": principal.name,
                            "role": principal.role,
                            "kind": principal.kind,
                            "policies": [list(p) for p in principal.policies],
                        }
                    )
                for resource, policy in self._model.resource_policies.items():
                    self._write({"resource_policy": resource, "policy": policy})
            return self._model

    @property
    def evaluator(self) -> Evaluator:
        with self._lock:
            if self._evaluator is None:
                self._evaluator = Evaluator()
            return self._evaluator

    def close(self) -> None:
        if self._evaluator is not None:
            self._evaluator.close()
            self._evaluator = None

    def principal(self, name: str) -> Principal:
        found = self.model.principals.get(name)
        if found is None:
            raise IamError(f"{name} has no role in the template")
        return found

    def decide(self, principal_name: str, request: Request) -> Decision:
        principal = self.principal(principal_name)
        resource_policy = _resource_policy(self.model, request.resource)
        keys = self._keys.get((principal.name, request.resource))
        if keys is None:
            documents = [doc for _, doc in principal.policies]
            keys = _condition_keys([*documents, *([resource_policy] if resource_policy else [])])
            self._keys[(principal.name, request.resource)] = keys
        # Only the keys the policies test can change the decision: the cache key holds only those.
        relevant = tuple((k, v) for k, v in request.context if k.lower() in keys)
        cache_key = (principal.name, request.action, request.resource, relevant)
        result = self._cache.get(cache_key)
        if result is None:
            result = self.evaluator.evaluate(simulation(principal, request, relevant, resource_policy))
            self._cache[cache_key] = result
        decision = Decision(principal.name, request.action, request.resource, relevant, result)
        self._note(decision)
        return decision

    def check(self, principal_name: str, request: Request) -> None:
        """Raise AccessDenied (in enforce mode) unless the principal may make the request."""
        decision = self.decide(principal_name, request)
        if not decision.allowed:
            principal = self.principal(principal_name)
            denied = AccessDenied(decision, principal)
            print(f"svc-iam: DENIED {denied.message}", file=sys.stderr, flush=True)
            with self._lock:
                self.denied.append(denied.message)
            if self.mode == "enforce":
                raise denied

    def refuse_unattributed(self, origin: str, request: Request) -> None:
        """A call made while no function is current, by code of `origin` (a thread it started, a client it
        made): there is no role to weigh it against, so it is refused (fail closed), never let through."""
        message = (
            f"no function is current for {request.action} on resource: {request.resource}: the call comes "
            f"from {origin}'s code outside its context (a thread it started? run the thread's work in "
            "contextvars.copy_context())"
        )
        print(f"svc-iam: DENIED {message}", file=sys.stderr, flush=True)
        with self._lock:
            self.denied.append(message)
        self._write(
            {
                "decision": "ImplicitlyDenied",
                "principal": f"(no function current; code of {origin})",
                "action": request.action,
                "resource": request.resource,
                "context": [],
            }
        )
        if self.mode == "enforce":
            raise Unattributed(message)

    def _note(self, decision: Decision) -> None:
        key = (decision.principal, decision.action, decision.resource, decision.result)
        with self._lock:
            self.decisions[key] = self.decisions.get(key, 0) + 1
            first = self.decisions[key] == 1 or (key, decision.context) not in self._recorded
            self._recorded.add((key, decision.context))
        if first:
            self._write(
                {
                    "decision": decision.result,
                    "principal": decision.principal,
                    "action": decision.action,
                    "resource": decision.resource,
                    "context": [[k, list(v) if isinstance(v, tuple) else v] for k, v in decision.context],
                }
            )

    def _write(self, entry: dict[str, Any]) -> None:
        if self._record_path is None:
            return
        self._record_path.parent.mkdir(parents=True, exist_ok=True)
        with self._record_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({**entry, "run": self.run}, sort_keys=True) + "\n")

    # ---- what the embedded AWS asks

    def presigned(self, principal_name: str, bucket: str, key: str) -> None:
        """A function signed a URL for (bucket, key): S3 authorizes the request with its permissions."""
        with self._lock:
            self._presigned[(bucket, key)] = principal_name

    def presigned_denial(self, method: str, bucket: str, key: str) -> str | None:
        """The refusal of a presigned request, or None (unknown signers are outside the template)."""
        with self._lock:
            signer = self._presigned.get((bucket, key))
        if signer is None:
            return None
        action = {"PUT": "s3:PutObject", "GET": "s3:GetObject", "HEAD": "s3:GetObject"}.get(method)
        if action is None:
            return None
        request = Request(action, f"arn:aws:s3:::{bucket}/{key}", _S3_CONTEXT)
        try:
            self.check(signer, request)
        except AccessDenied as denied:
            return denied.message
        return None

    def invoke_denial(self, function: FunctionSpec) -> str | None:
        """Step Functions invoking a Lambda task with the role of the template's state machine whose task it
        is (the request does not say which execution calls: the task names the machine)."""
        machines = [
            p
            for p in self.model.principals.values()
            if p.kind == "state machine" and function.logical_id in self._machine_targets(p.name)
        ]
        if not machines:
            return (
                None  # a machine made outside the template (tests): its role is not the template's to judge
            )
        for machine in machines:
            try:
                self.check(machine.name, Request("lambda:InvokeFunction", function.arn))
            except AccessDenied as denied:
                return denied.message
        return None

    def _machine_targets(self, machine: str) -> set[str]:
        return self._targets.get(machine, set())

    def set_machine_targets(self, targets: Mapping[str, set[str]]) -> None:
        self._targets = {k: set(v) for k, v in targets.items()}


def simulation(
    principal: Principal,
    request: Request,
    context: Iterable[tuple[str, str | tuple[str, ...]]],
    resource_policy: dict[str, Any] | None,
    policies: Iterable[tuple[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The iam-simulate Simulation of a request by a role session."""
    variables: dict[str, Any] = {
        "aws:PrincipalArn": principal.role_arn,
        "aws:PrincipalAccount": LOCAL_ACCOUNT_ID,
        "aws:PrincipalType": "AssumedRole",
    }
    for name, value in context:
        variables[name] = list(value) if isinstance(value, tuple) else value
    out: dict[str, Any] = {
        "request": {
            "principal": principal.session_arn,
            "action": request.action,
            "resource": {"resource": request.resource, "accountId": LOCAL_ACCOUNT_ID},
            "contextVariables": variables,
        },
        "identityPolicies": [
            {"name": name, "policy": doc}
            for name, doc in (principal.policies if policies is None else policies)
        ],
        "serviceControlPolicies": [],
        "resourceControlPolicies": [],
    }
    if request.resource == "*":
        out["request"]["resource"] = {"resource": "*", "accountId": LOCAL_ACCOUNT_ID}
    if resource_policy is not None:
        out["resourcePolicy"] = resource_policy
    return out
