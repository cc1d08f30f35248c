"""A template's parameters and intrinsic functions (Ref, Fn::GetAtt, Fn::Sub, conditions...) resolved as
CloudFormation resolves them, with the local stack's names for its resources."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

from svc_local.template.loading import LOCAL_ACCOUNT_ID, LOCAL_REGION, LOCAL_STACK_NAME, TemplateError

FUNCTION_TYPES = {"AWS::Serverless::Function", "AWS::Lambda::Function"}
STATE_MACHINE_TYPES = {"AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine"}
NO_VALUE = object()


class Resolver:
    """The parameters and intrinsic functions of the template `data`, with `overrides` for its parameters; `refs`
    overrides what a Ref to a resource yields."""

    def __init__(
        self, data: dict[str, Any], overrides: Mapping[str, str], refs: Mapping[str, Any] | None
    ) -> None:
        self.data = data
        self.resources: dict[str, dict[str, Any]] = self.data.get("Resources") or {}
        self.refs: dict[str, Any] = dict(refs or {})
        self.parameters = self._parameters(overrides)
        self._conditions: dict[str, bool] = {}

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
                "AWS::NoValue": NO_VALUE,
            }
        )
        return values

    def resolve(self, value: Any) -> Any:
        """Resolve intrinsic functions in `value`; AWS::NoValue entries are dropped."""
        out = self._resolve(value)
        return None if out is NO_VALUE else out

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self._resolve(v) for v in value]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self.ref(str(arg))
            if key.startswith("Fn::") or key == "Condition":
                return self._intrinsic(key, arg)
        resolved = {k: self._resolve(v) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}

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
        if kind in FUNCTION_TYPES:
            return str(self.resolve(props.get("FunctionName")) or logical_id)
        if kind in STATE_MACHINE_TYPES:
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
            if kind in FUNCTION_TYPES:
                return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{physical}"
            if kind == "AWS::DynamoDB::Table":
                return f"arn:aws:dynamodb:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:table/{physical}"
            if kind == "AWS::S3::Bucket":
                return f"arn:aws:s3:::{physical}"
            if kind in STATE_MACHINE_TYPES or physical.startswith("arn:"):
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
        if attribute == "Name" and kind in STATE_MACHINE_TYPES:
            return physical.rsplit(":", 1)[-1]
        if attribute == "ApiEndpoint" and kind in ("AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api"):
            return f"https://{physical}.execute-api.{LOCAL_REGION}.amazonaws.com"
        if attribute in ("DomainName", "RegionalDomainName") and kind == "AWS::S3::Bucket":
            return f"{physical}.s3.amazonaws.com"
        raise TemplateError(f"GetAtt {key} is not supported locally")
