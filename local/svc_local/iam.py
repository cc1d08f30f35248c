"""IAM in the local stack, enforced as AWS enforces it.

Every AWS call a function makes in the local stack is checked against that function's execution role, as
the SAM transform expands it from template.yaml (`aws-sam-translator`, with dummy code locations: managed
policy templates such as DynamoDBCrudPolicy expand there), by a real policy evaluator: `@cloud-copilot/
iam-simulate` (npm), run as one long-lived node process (iam_eval.mjs) that answers over a pipe; decisions
are cached per (principal, action, resource, the request's values of the condition keys its policies use).

- Calls are seen in botocore (`before-parameter-build`, which presigned URLs go through as well) and
  attributed to the function whose instance makes them (`runtime.current_function`). A denied call raises
  botocore's ClientError AccessDeniedException (S3: AccessDenied), naming the role session, the action and
  the resource, as AWS does.
- Each function is its own container: its own `services` wiring, secrets cache and settings, read from its
  own environment (template Globals plus its own variables, with the local stack's values): a value cached
  by one function never spares another the call (and its grant).
- Beyond the functions' own calls: the SQS event source mapping polls and deletes with the consumer's role;
  Step Functions invokes its Lambda tasks with the state machine's role; a presigned S3 PUT is authorized
  when it arrives, with the permissions of the function that signed it; KMS calls meet the key policy and
  S3 calls the bucket policy as resource policies.

SVC_IAM=enforce (default) | record (decide and record, never refuse: diagnosis) | off.
SVC_IAM_RECORD=<file>: every distinct decision is appended there as a JSON line (`make iam` reads it:
`python -m svc_local.iam report <file>`). `python -m svc_local.iam grants` writes docs/iam-grants.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from svc_local.runtime import current_function
from svc_local.serving import close_child
from svc_local.state import kept
from svc_local.template import (
    LOCAL_ACCOUNT_ID,
    LOCAL_REGION,
    LOCAL_STACK_NAME,
    FunctionSpec,
    Template,
    load_yaml,
)

MODE_ENV = "SVC_IAM"
RECORD_ENV = "SVC_IAM_RECORD"
EVALUATOR = Path(__file__).with_name("iam_eval.mjs")

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
                policies[str(resolver.get_att(logical, "Arn"))] = resolver.resolve(props["KeyPolicy"])
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


# ---------------------------------------------------------------- the evaluator


class Evaluator:
    """iam-simulate in one node process; requests go over its stdin, answers come back by id."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise IamError("node is not installed: the IAM evaluator needs it (make install-node)")
        self._process = subprocess.Popen(
            [node, str(EVALUATOR)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, name="svc-iam-evaluator", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            answer = json.loads(line)
            with self._lock:
                future = self._pending.pop(int(answer["id"]), None)
            if future is not None:
                future.set_result(answer)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(IamError("the IAM evaluator stopped"))

    def evaluate(self, simulation: dict[str, Any]) -> str:
        """'Allowed', 'ExplicitlyDenied' or 'ImplicitlyDenied'."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._next += 1
            ident = self._next
            self._pending[ident] = future
            assert self._process.stdin is not None
            try:
                self._process.stdin.write(json.dumps({"id": ident, "simulation": simulation}) + "\n")
                self._process.stdin.flush()
            except (OSError, ValueError) as exc:
                self._pending.pop(ident, None)
                raise IamError("the IAM evaluator is not running") from exc
        answer = future.result(timeout=30)
        if answer.get("result") == "Error":
            raise IamError(f"the IAM evaluator refused the request: {json.dumps(answer.get('errors'))}")
        return str(answer["result"])

    def close(self) -> None:
        if self._process.poll() is None:
            close_child(self._process, 5)
        self._reader.join(timeout=5)
        if self._process.stdout is not None:
            self._process.stdout.close()


# ---------------------------------------------------------------- botocore calls as IAM requests


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: tuple[tuple[str, str | tuple[str, ...]], ...] = ()


def _arn(service: str, rest: str) -> str:
    return f"arn:aws:{service}:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:{rest}"


def table_arn(name: str, index: str | None = None) -> str:
    return _arn("dynamodb", f"table/{name}" + (f"/index/{index}" if index else ""))


def queue_arn(url: str) -> str:
    return _arn("sqs", url.rstrip("/").rsplit("/", 1)[-1])


def secret_arn(secret_id: str) -> str:
    return secret_id if secret_id.startswith("arn:") else _arn("secretsmanager", f"secret:{secret_id}")


def key_arn(key_id: str) -> str:
    if key_id.startswith("arn:"):
        return key_id
    if key_id.startswith("alias/"):
        return _arn("kms", key_id)
    return _arn("kms", f"key/{key_id}")


def _string(value: Any) -> str | None:
    """A DynamoDB attribute value as the condition key sees it (S and N)."""
    if isinstance(value, dict) and len(value) == 1:
        ((kind, inner),) = value.items()
        if kind in ("S", "N"):
            return str(inner)
    return None


_EQUALS = re.compile(r"(#?[\w.]+)\s*=\s*(:\w+)")


def _leading_keys(model: IamModel, table: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    """dynamodb:LeadingKeys: the partition key values the request touches (single items and table queries)."""
    pk = model.table_keys.get(table)
    if pk is None:
        return ()
    for item_key in ("Key", "Item"):
        if isinstance(params.get(item_key), dict):
            value = _string(params[item_key].get(pk))
            return (value,) if value is not None else ()
    expression = params.get("KeyConditionExpression")
    if isinstance(expression, str) and not params.get("IndexName"):
        names = params.get("ExpressionAttributeNames") or {}
        values = params.get("ExpressionAttributeValues") or {}
        for name, placeholder in _EQUALS.findall(expression):
            if names.get(name, name) == pk:
                value = _string(values.get(placeholder))
                return (value,) if value is not None else ()
    return ()


def _dynamodb(model: IamModel, action: str, table: str, params: Mapping[str, Any]) -> Request:
    keys = _leading_keys(model, table, params)
    context: list[tuple[str, str | tuple[str, ...]]] = []
    if keys:
        context.append(("dynamodb:LeadingKeys", keys))
    if isinstance(params.get("ReturnValues"), str):
        context.append(("dynamodb:ReturnValues", params["ReturnValues"]))
    return Request(f"dynamodb:{action}", table_arn(table, params.get("IndexName")), tuple(context))


_TRANSACT_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


def requests_for(
    model: IamModel, service: str, operation: str, params: Mapping[str, Any]
) -> list[Request] | None:
    """The IAM requests a botocore call makes (one per table of a batch or transaction); None when the
    operation has no mapping here (the caller refuses it: an unmapped call would pass unchecked)."""
    if service == "dynamodb":
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [
                Request(f"dynamodb:{operation}", table_arn(table))
                for table in (params.get("RequestItems") or {})
            ]
        if operation in ("TransactWriteItems", "TransactGetItems"):
            requests = []
            for item in params.get("TransactItems") or []:
                ((kind, body),) = item.items()
                requests.append(_dynamodb(model, _TRANSACT_ACTIONS[kind], str(body["TableName"]), body))
            return requests
        if "TableName" in params:
            return [_dynamodb(model, operation, str(params["TableName"]), params)]
        if operation == "ListTables":
            return [Request("dynamodb:ListTables", "*")]
        return None
    if service == "secretsmanager" and "SecretId" in params:
        secret = str(params["SecretId"])
        return [
            Request(f"secretsmanager:{operation}", secret_arn(secret), (("secretsmanager:SecretId", secret),))
        ]
    if service == "kms" and operation in ("Decrypt", "GenerateDataKey", "Encrypt", "DescribeKey"):
        context: list[tuple[str, str | tuple[str, ...]]] = [("kms:CallerAccount", LOCAL_ACCOUNT_ID)]
        encryption = params.get("EncryptionContext") or {}
        for name, value in sorted(encryption.items()):
            context.append((f"kms:EncryptionContext:{name}", str(value)))
        if encryption:
            context.append(("kms:EncryptionContextKeys", tuple(sorted(encryption))))
        key = params.get("KeyId")
        if not key:
            return None  # Decrypt without KeyId: the key is in the ciphertext; ours always names it
        return [Request(f"kms:{operation}", key_arn(str(key)), tuple(context))]
    if service == "sqs" and "QueueUrl" in params:
        action = {"DeleteMessageBatch": "DeleteMessage", "SendMessageBatch": "SendMessage"}.get(
            operation, operation
        )
        return [Request(f"sqs:{action}", queue_arn(str(params["QueueUrl"])))]
    if service == "states":
        if "stateMachineArn" in params:
            return [Request(f"states:{operation}", str(params["stateMachineArn"]))]
        if "executionArn" in params:
            return [Request(f"states:{operation}", str(params["executionArn"]))]
        return None
    if service == "s3" and "Bucket" in params:
        bucket = str(params["Bucket"])
        if "Key" in params:
            return [Request(f"s3:{operation}", f"arn:aws:s3:::{bucket}/{params['Key']}", _S3_CONTEXT)]
        action = {"ListObjectsV2": "ListBucket", "ListObjects": "ListBucket"}.get(operation, operation)
        return [Request(f"s3:{action}", f"arn:aws:s3:::{bucket}", _S3_CONTEXT)]
    if service == "lambda" and "FunctionName" in params and operation == "Invoke":
        return [Request("lambda:InvokeFunction", _lambda_arn(str(params["FunctionName"])))]
    return None


# Deployed, every SDK call goes over TLS (the bucket policy refuses any that does not).
_S3_CONTEXT: tuple[tuple[str, str | tuple[str, ...]], ...] = (("aws:SecureTransport", "true"),)


def _lambda_arn(name: str) -> str:
    return name if name.startswith("arn:") else _arn("lambda", f"function:{name}")


# ---------------------------------------------------------------- decisions


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
        "identityPolicies": [{"name": name, "policy": doc} for name, doc in (policies or principal.policies)],
        "serviceControlPolicies": [],
        "resourceControlPolicies": [],
    }
    if request.resource == "*":
        out["request"]["resource"] = {"resource": "*", "accountId": LOCAL_ACCOUNT_ID}
    if resource_policy is not None:
        out["resourcePolicy"] = resource_policy
    return out


# ---------------------------------------------------------------- hooks into the local stack


class _Active:
    iam: Iam | None = None
    installed = False


def active() -> Iam | None:
    return _Active.iam


def _before_parameter_build(params: Mapping[str, Any], model: Any, context: Any = None, **_: Any) -> None:
    iam = _Active.iam
    spec = current_function.get()
    if iam is None or spec is None:
        return
    service = model.service_model.signing_name
    requests = requests_for(iam.model, service, model.name, params)
    if requests is None:
        raise _client_error(
            "AccessDeniedException",
            f"svc_local.iam has no IAM mapping for {service}:{model.name} (called by {spec.logical_id}); "
            "add it to requests_for so the call is checked",
            model.name,
        )
    if isinstance(context, dict) and context.get("is_presign_request"):
        # The signer's permissions are checked when the URL is used, as S3 does.
        if service == "s3" and "Key" in params:
            iam.presigned(spec.logical_id, str(params["Bucket"]), str(params["Key"]))
            for request in requests:
                iam.decide(spec.logical_id, request)  # recorded: the grant the URL will need
        return
    for request in requests:
        try:
            iam.check(spec.logical_id, request)
        except AccessDenied as denied:
            code = "AccessDenied" if service == "s3" else "AccessDeniedException"
            raise _client_error(code, denied.message, model.name) from None


def _client_error(code: str, message: str, operation: str) -> Exception:
    from botocore.exceptions import ClientError

    status = 403 if code == "AccessDenied" else 400
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        operation,
    )


def _install_botocore_hook() -> None:
    """Every botocore client made from now on reports its calls (and presigned URLs) to the hook."""
    if _Active.installed:
        return
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        client.meta.events.register("before-parameter-build", _before_parameter_build)
        return client

    botocore.session.Session.create_client = create_client
    _Active.installed = True


class _ScopedCache(MutableMapping[str, Any]):
    """A module-level cache of svc_shared, one per function (its container), one outside any function."""

    def __init__(self, initial: Mapping[str, Any]) -> None:
        self._scopes: dict[str | None, dict[str, Any]] = {None: dict(initial)}

    def _scope(self) -> dict[str, Any]:
        spec = current_function.get()
        return self._scopes.setdefault(spec.logical_id if spec else None, {})

    def __getitem__(self, key: str) -> Any:
        return self._scope()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._scope()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._scope()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._scope()))

    def __len__(self) -> int:
        return len(self._scope())

    def clear(self) -> None:
        self._scopes.clear()


class _FunctionContainers:
    """The holder of the shipped code's Services (svc_shared.wiring.container.hold_services_in) while IAM is
    enforced: inside a function, the function's own Services (settings from its own environment; clock and HTTP
    pool those of the wiring outside); outside, those of the `original` holder."""

    def __init__(self, environ: Callable[[FunctionSpec], dict[str, str]]) -> None:
        self.original: Any = None
        self._environ = environ
        self._containers: dict[str, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    @property
    def services(self) -> Any:
        spec = current_function.get()
        if spec is None:
            return self.original.services
        from svc_shared.wiring import services as wiring

        base = self.original.services
        if base is None:
            base = self.original.services = wiring.Services()
        with self._lock:
            found = self._containers.get(spec.logical_id)
            if found is not None and found[0] is base:
                return found[1]
            own = wiring.Services(
                settings=_settings(spec, self._environ(spec)), clock=base.clock, http=base.http
            )
            self._containers[spec.logical_id] = (base, own)
            return own

    @services.setter
    def services(self, value: Any) -> None:
        spec = current_function.get()
        if spec is None:
            self.original.services = value
            return
        with self._lock:
            self._containers[spec.logical_id] = (self.original.services, value)


def _settings(spec: FunctionSpec, environment: Mapping[str, str]) -> Any:
    from pydantic import ValidationError

    from svc_shared.core.config import ConfigurationError, Settings

    try:
        return Settings.model_validate(dict(environment))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'environment'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(f"invalid configuration of {spec.logical_id}: {problems}") from None


def function_environment(
    template: Template, spec: FunctionSpec, environ: Mapping[str, str]
) -> dict[str, str]:
    """What the function's process environment would hold: the local stack's own variables, and of the
    template's variables (which the local stack sets, with its own values, for every function at once)
    only those the function declares (Globals and its own)."""
    declared: set[str] = set(template.env_var_names())
    return {k: v for k, v in environ.items() if k not in declared or k in spec.environment}


class _Installed:
    """What install() replaced (the shipped code's own holder of its Services and secret cache), to put back."""

    container: Any = None
    cache: Any = None


def install(iam: Iam, template: Template) -> None:
    """Enforce `iam` on the functions of this process; each function gets a container of its own."""
    from svc_shared.core import secrets
    from svc_shared.wiring import container

    _install_botocore_hook()
    _Active.iam = iam
    if _Installed.container is None:
        scoped = _FunctionContainers(lambda spec: function_environment(template, spec, os.environ))
        scoped.original = _Installed.container = container.hold_services_in(scoped)
        shared_cache = _ScopedCache({})
        _Installed.cache = secrets.use_cache(shared_cache)
        shared_cache.update(_Installed.cache)


def uninstall() -> None:
    from svc_shared.core import secrets
    from svc_shared.wiring import container

    iam, _Active.iam = _Active.iam, None
    if _Installed.container is not None:
        container.hold_services_in(_Installed.container)
        secrets.use_cache(_Installed.cache)
        _Installed.container = _Installed.cache = None
    if iam is not None:
        iam.close()


def mode_from_env() -> str:
    return os.environ.get(MODE_ENV, "enforce").strip().lower() or "enforce"


def for_template(template: Template, refs: Mapping[str, Any], cache_dir: Path | None = None) -> Iam | None:
    """The IAM of the local stack serving `template` (None when SVC_IAM=off); resolved on first use, when
    the local stack has set the functions' environment (the SAM transform it needs kept in `cache_dir`)."""
    mode = mode_from_env()
    if mode == "off":
        return None

    def model() -> IamModel:
        declared = template.data.get("Parameters") or {}
        resolver = local_resolver(
            template.path,
            os.environ,
            {**template.refs, **refs},
            template.package_root,
            {k: str(v) for k, v in template.parameters.items() if k in declared},
        )
        return IamModel.build(resolver, cache_dir)

    iam = Iam(model, mode=mode, record_path=os.environ.get(RECORD_ENV) or None)
    iam.set_machine_targets(
        {
            machine.logical_id: {
                spec.logical_id for spec in template.functions() if spec.arn in json.dumps(machine.definition)
            }
            for machine in template.state_machines()
        }
    )
    return iam


# ---------------------------------------------------------------- make iam: the report


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


def report(path: Path, out: Any = sys.stdout) -> int:
    """Per principal: the calls made, and the grants no recorded call used (each call weighed against the
    policies of its own run of the stack). 1 when any call was denied."""
    record = read_record(path)
    names = sorted({name for _, name in record.principals})
    denied = [d for d in record.decisions if d["decision"] != "Allowed"]
    evaluator = Evaluator()
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
            used: set[tuple[str, int, str]] = set()
            labels: dict[tuple[str, int, str], str] = {}
            for run, policies in runs.items():
                grants = grants_of(policies)
                labels.update({key: label for key, label, _ in grants})
                allowed = [d for d in calls if d["decision"] == "Allowed" and d.get("run", "") == run]
                for key, _, policy in grants:
                    if key in used:
                        continue
                    for call in allowed:
                        request = Request(
                            call["action"],
                            call["resource"],
                            tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in call["context"]),
                        )
                        resource_policy = _recorded_resource_policy(record, run, request.resource)
                        sim = simulation(
                            policies, request, request.context, resource_policy, policies=[("grant", policy)]
                        )
                        if evaluator.evaluate(sim) == "Allowed":
                            used.add(key)
                            break
            for key, label in labels.items():
                if key not in used and not label.startswith(UNEXERCISED_SERVICES):
                    print(f"  unused grant  {label}", file=out)
    finally:
        evaluator.close()
    if denied:
        print(f"\n{len(denied)} denied call(s):", file=out)
        for d in denied:
            print(f"  {d['principal']}: {d['action']} on {d['resource']} ({d['decision']})", file=out)
        return 1
    print(f"\nno denied call ({len(record.decisions)} distinct decisions recorded)", file=out)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m svc_local.iam")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="calls per function, unused grants; exit 1 on any denial")
    rep.add_argument("record", type=Path)
    grants = sub.add_parser("grants", help="write the before/after table of granted actions")
    grants.add_argument("--before", default="HEAD", help="git revision of the 'before' template")
    grants.add_argument("--template", type=Path, default=Path("template.yaml"))
    grants.add_argument("--out", type=Path, default=Path("docs/iam-grants.md"))
    args = parser.parse_args(argv)
    if args.command == "report":
        if not args.record.is_file():
            print(f"no record at {args.record}", file=sys.stderr)
            return 2
        return report(args.record)
    old_text = subprocess.run(
        ["git", "show", f"{args.before}:template.yaml"], check=True, capture_output=True, text=True
    ).stdout
    old_path = args.out.parent / ".template-before.yaml"
    old_path.parent.mkdir(parents=True, exist_ok=True)
    old_path.write_text(old_text, encoding="utf-8")
    try:
        before = load_yaml(old_path)
    finally:
        old_path.unlink()
    args.out.write_text(grants_markdown(before, load_yaml(args.template), args.before), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
