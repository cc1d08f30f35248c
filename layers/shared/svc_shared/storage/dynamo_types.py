"""DynamoDB's typed JSON (AttributeValue) to Python values and back: what boto3's TypeSerializer does,
without importing boto3 in the functions. Numbers travel as Decimal."""

from __future__ import annotations

from collections.abc import Mapping, Set
from decimal import Decimal
from typing import Any


def serialize(value: Any) -> dict[str, Any]:
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | Decimal):
        return {"N": str(value)}
    if isinstance(value, float):
        return {"N": str(Decimal(str(value)))}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes | bytearray):
        return {"B": bytes(value)}
    if isinstance(value, Mapping):
        return {"M": {str(k): serialize(v) for k, v in value.items()}}
    if isinstance(value, Set):
        members = list(value)
        if all(isinstance(m, str) for m in members):
            return {"SS": members}
        if all(isinstance(m, int | Decimal) and not isinstance(m, bool) for m in members):
            return {"NS": [str(m) for m in members]}
        if all(isinstance(m, bytes | bytearray) for m in members):
            return {"BS": [bytes(m) for m in members]}
        raise TypeError("a set must hold only strings, only numbers or only bytes")
    if isinstance(value, list | tuple):
        return {"L": [serialize(v) for v in value]}
    raise TypeError(f"cannot store a {type(value).__name__} in DynamoDB")


def deserialize(value: Mapping[str, Any]) -> Any:
    ((kind, data),) = value.items()
    if kind == "S":
        return data
    if kind == "N":
        return Decimal(data)
    if kind == "BOOL":
        return bool(data)
    if kind == "NULL":
        return None
    if kind == "B":
        return bytes(data)
    if kind == "M":
        return {k: deserialize(v) for k, v in data.items()}
    if kind == "L":
        return [deserialize(v) for v in data]
    if kind == "SS":
        return set(data)
    if kind == "NS":
        return {Decimal(n) for n in data}
    if kind == "BS":
        return {bytes(b) for b in data}
    raise TypeError(f"unknown DynamoDB type {kind}")
