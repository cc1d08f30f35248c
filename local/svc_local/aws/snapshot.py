"""The embedded AWS's state across restarts: every DynamoDB item (binary values as base64) and S3 object written to
the state directory, each file replaced atomically, and read back at the next start."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from svc_local.state import atomic_write

_DUMP_VERSION = 1


log = logging.getLogger("svc_local.aws")


def save_dynamodb(ddb: Any, file: Path) -> None:
    tables = []
    for page in ddb.get_paginator("list_tables").paginate():
        for name in page["TableNames"]:
            description = ddb.describe_table(TableName=name)["Table"]
            ttl = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            items = [
                {k: _encode_value(v) for k, v in item.items()}
                for scan in ddb.get_paginator("scan").paginate(TableName=name)
                for item in scan["Items"]
            ]
            tables.append(
                {
                    "create": _create_kwargs(description),
                    "ttl_attribute": ttl.get("AttributeName")
                    if ttl.get("TimeToLiveStatus") == "ENABLED"
                    else None,
                    "items": items,
                }
            )
    atomic_write(file, json.dumps({"version": _DUMP_VERSION, "tables": tables}).encode())


def restore_dynamodb(ddb: Any, file: Path) -> None:
    if not file.is_file():
        return
    existing = set(ddb.list_tables()["TableNames"])
    for table in json.loads(file.read_bytes()).get("tables", []):
        name = table["create"]["TableName"]
        if name not in existing:
            ddb.create_table(**table["create"])
            if table.get("ttl_attribute"):
                ddb.update_time_to_live(
                    TableName=name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": table["ttl_attribute"]},
                )
        for chunk in _chunks(table["items"], 25):
            requests = [{"PutRequest": {"Item": {k: _decode_value(v) for k, v in i.items()}}} for i in chunk]
            try:
                ddb.batch_write_item(RequestItems={name: requests})
            except ClientError as exc:
                # A template change (new key schema) can make old items invalid: keep going.
                log.warning("could not restore items into %s: %s", name, exc)


def save_s3(s3: Any, manifest: Path, blobs: Path) -> None:
    previous: dict[tuple[str, str, str], dict[str, Any]] = {}
    if manifest.is_file():
        for bucket in json.loads(manifest.read_bytes()).get("buckets", []):
            for obj in bucket["objects"]:
                previous[(bucket["name"], obj["key"], obj["etag"])] = obj
    buckets = []
    for bucket in s3.list_buckets()["Buckets"]:
        name = bucket["Name"]
        objects = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
            for listed in page.get("Contents", []):
                known = previous.get((name, listed["Key"], listed["ETag"]))
                if known and (blobs / known["sha256"]).is_file():
                    objects.append(known)  # unchanged since the last snapshot: no download
                    continue
                got = s3.get_object(Bucket=name, Key=listed["Key"])
                body = got["Body"].read()
                digest = hashlib.sha256(body).hexdigest()
                if not (blobs / digest).is_file():
                    atomic_write(blobs / digest, body)
                objects.append(
                    {
                        "key": listed["Key"],
                        "etag": listed["ETag"],
                        "sha256": digest,
                        "content_type": got.get("ContentType"),
                        "metadata": got.get("Metadata") or {},
                    }
                )
        buckets.append({"name": name, "objects": objects})
    atomic_write(manifest, json.dumps({"version": _DUMP_VERSION, "buckets": buckets}).encode())
    referenced = {obj["sha256"] for bucket in buckets for obj in bucket["objects"]}
    if blobs.is_dir():
        for blob in blobs.iterdir():
            if blob.name not in referenced and not blob.name.startswith("."):
                blob.unlink(missing_ok=True)


def restore_s3(s3: Any, manifest: Path, blobs: Path, ensure_bucket: Callable[[str], Any]) -> None:
    if not manifest.is_file():
        return
    for bucket in json.loads(manifest.read_bytes()).get("buckets", []):
        ensure_bucket(bucket["name"])
        for obj in bucket["objects"]:
            blob = blobs / obj["sha256"]
            if not blob.is_file():
                log.warning("missing blob for s3://%s/%s", bucket["name"], obj["key"])
                continue
            extra = {"ContentType": obj["content_type"]} if obj.get("content_type") else {}
            s3.put_object(
                Bucket=bucket["name"],
                Key=obj["key"],
                Body=blob.read_bytes(),
                Metadata=obj["metadata"],
                **extra,
            )


# ---- DynamoDB JSON <-> plain JSON (binary values as base64)


def _map_binary(value: dict[str, Any], convert: Callable[[Any], Any]) -> dict[str, Any]:
    """A DynamoDB JSON value with `convert` applied to every binary in it (B, BS, inside M and L)."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": convert(inner)}
    if kind == "BS":
        return {"BS": [convert(v) for v in inner]}
    if kind == "M":
        return {"M": {k: _map_binary(v, convert) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_map_binary(v, convert) for v in inner]}
    return value


def _encode_value(value: dict[str, Any]) -> dict[str, Any]:
    return _map_binary(value, lambda raw: base64.b64encode(raw).decode("ascii"))


def _decode_value(value: dict[str, Any]) -> dict[str, Any]:
    return _map_binary(value, base64.b64decode)


def _create_kwargs(table: dict[str, Any]) -> dict[str, Any]:
    """create_table kwargs that rebuild a table from its describe_table answer."""
    billing = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    kwargs: dict[str, Any] = {
        "TableName": table["TableName"],
        "KeySchema": table["KeySchema"],
        "AttributeDefinitions": table["AttributeDefinitions"],
        "BillingMode": billing,
    }
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    if billing == "PROVISIONED":
        kwargs["ProvisionedThroughput"] = throughput
    for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        indexes = []
        for index in table.get(key) or []:
            spec = {k: index[k] for k in ("IndexName", "KeySchema", "Projection")}
            if billing == "PROVISIONED" and key == "GlobalSecondaryIndexes":
                spec["ProvisionedThroughput"] = throughput
            indexes.append(spec)
        if indexes:
            kwargs[key] = indexes
    return kwargs


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
