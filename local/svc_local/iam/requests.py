"""botocore calls as IAM requests: the action, the resource ARN and the condition keys a call carries."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from svc_local.iam.model import IamModel
from svc_local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION


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
