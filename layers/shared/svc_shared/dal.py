"""Data access over the single DynamoDB table: plain-dict items in, plain-dict items out.

AWS errors become domain-level exceptions here (`ConditionFailed`), so callers never see botocore.
Key patterns and access patterns are listed in docs/data-model.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from svc_shared import aws
from svc_shared.dynamo_types import deserialize, serialize


class ConditionFailed(Exception):
    """A conditional write found the item in a state other than the one required; `item` is that state when
    the write asked for it (`old_on_failure`), else None (also when there was no item)."""

    def __init__(self, message: str = "", item: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.item = item


class TransactionConflict(Exception):
    """A transaction was cancelled; `reasons` lists the cancellation code of each action."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(", ".join(reasons))
        self.reasons = reasons


def _to_dynamo(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_dynamo(v) for v in value]
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    if isinstance(value, set):
        return {_from_dynamo(v) for v in value}
    return value


class Table:
    """One DynamoDB table with a partition and a sort key (`pk`/`sk` unless named otherwise), used through
    the low-level client."""

    def __init__(self, name: str, client: Any = None, *, pk: str = "pk", sk: str = "sk") -> None:
        self.name = name
        self._client = client
        self._pk, self._sk = pk, sk

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = aws.AwsClients().client("dynamodb")
        return self._client

    # -- (de)serialisation -------------------------------------------------------------------------------
    def _item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return {k: serialize(_to_dynamo(v)) for k, v in item.items() if v is not None}

    def _plain(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {k: _from_dynamo(deserialize(v)) for k, v in raw.items()}

    def _values(self, values: Mapping[str, Any] | None) -> dict[str, Any] | None:
        return {k: serialize(_to_dynamo(v)) for k, v in values.items()} if values else None

    def key(self, pk: str, sk: str) -> dict[str, Any]:
        return {self._pk: {"S": pk}, self._sk: {"S": sk}}

    def _expr(
        self, condition: str | None, names: Mapping[str, str] | None, values: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if condition:
            kwargs["ConditionExpression"] = condition
        if names:
            kwargs["ExpressionAttributeNames"] = dict(names)
        if values:
            kwargs["ExpressionAttributeValues"] = self._values(values)
        return kwargs

    def _conditional(self, call: Any, **kwargs: Any) -> Any:
        try:
            return call(**kwargs)
        except self.client.exceptions.ConditionalCheckFailedException as exc:
            raw = getattr(exc, "response", {}).get("Item")
            raise ConditionFailed(str(exc), self._plain(raw) if raw else None) from exc
        except self.client.exceptions.TransactionConflictException as exc:
            # A transaction is writing the same item at this moment (DynamoDB refuses the plain write).
            raise TransactionConflict(["TransactionConflict"]) from exc

    # -- single items -------------------------------------------------------------------------------------
    def get(self, pk: str, sk: str, *, consistent: bool = False) -> dict[str, Any] | None:
        out = self.client.get_item(TableName=self.name, Key=self.key(pk, sk), ConsistentRead=consistent)
        raw = out.get("Item")
        return self._plain(raw) if raw else None

    def put(
        self,
        item: Mapping[str, Any],
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> None:
        self._conditional(
            self.client.put_item,
            TableName=self.name,
            Item=self._item(item),
            **self._expr(condition, names, values),
        )

    def update(
        self,
        pk: str,
        sk: str,
        update: str,
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
        returns: str = "ALL_NEW",
        old_on_failure: bool = False,
    ) -> dict[str, Any]:
        """Apply an update expression; returns the item as it is afterwards (or what `returns` asks for:
        "NONE" keeps the answer small). With `old_on_failure`, a failed condition carries the item."""
        extra = {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"} if old_on_failure else {}
        out = self._conditional(
            self.client.update_item,
            TableName=self.name,
            Key=self.key(pk, sk),
            UpdateExpression=update,
            ReturnValues=returns,
            **extra,
            **self._expr(condition, names, values),
        )
        return self._plain(out.get("Attributes", {}))

    def delete(
        self,
        pk: str,
        sk: str,
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Delete an item; returns what was deleted (None when there was nothing)."""
        out = self._conditional(
            self.client.delete_item,
            TableName=self.name,
            Key=self.key(pk, sk),
            ReturnValues="ALL_OLD",
            **self._expr(condition, names, values),
        )
        raw = out.get("Attributes")
        return self._plain(raw) if raw else None

    # -- collections --------------------------------------------------------------------------------------
    def query(
        self,
        pk: str,
        *,
        sk_prefix: str | None = None,
        sk_between: tuple[str, str] | None = None,
        index: str | None = None,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Items under one partition key (of the table or of `index`), optionally by sort-key prefix."""
        pk_name, sk_name = ("gsi1pk", "gsi1sk") if index == "gsi1" else (self._pk, self._sk)
        expr = "#pk = :pk"
        names = {"#pk": pk_name}
        values: dict[str, Any] = {":pk": pk}
        if sk_prefix:
            expr += " AND begins_with(#sk, :prefix)"
            names["#sk"] = sk_name
            values[":prefix"] = sk_prefix
        elif sk_between:
            expr += " AND #sk BETWEEN :low AND :high"
            names["#sk"] = sk_name
            values[":low"], values[":high"] = sk_between
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "KeyConditionExpression": expr,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": self._values(values),
            "ScanIndexForward": not newest_first,
        }
        if index:
            kwargs["IndexName"] = index
        returned = 0
        while True:
            if limit is not None:
                kwargs["Limit"] = limit - returned
            out = self.client.query(**kwargs)
            for raw in out.get("Items", []):
                returned += 1
                yield self._plain(raw)
            if "LastEvaluatedKey" not in out or (limit is not None and returned >= limit):
                return
            kwargs["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    def batch_get(self, keys: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """Up to 100 items by key, in no particular order (missing keys are skipped)."""
        found: list[dict[str, Any]] = []
        pending: dict[str, Any] = {self.name: {"Keys": [self.key(pk, sk) for pk, sk in dict.fromkeys(keys)]}}
        while pending and pending[self.name]["Keys"]:
            out = self.client.batch_get_item(RequestItems=pending)
            found.extend(self._plain(raw) for raw in out.get("Responses", {}).get(self.name, []))
            pending = out.get("UnprocessedKeys") or {}
        return found

    # -- transactions -------------------------------------------------------------------------------------
    def put_action(
        self,
        item: Mapping[str, Any],
        *,
        condition: str | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        action: dict[str, Any] = {"TableName": self.name, "Item": self._item(item)}
        if condition:
            action["ConditionExpression"] = condition
        if values:
            action["ExpressionAttributeValues"] = self._values(values)
        return {"Put": action}

    def update_action(
        self,
        pk: str,
        sk: str,
        update: str,
        *,
        condition: str | None = None,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        action = {"TableName": self.name, "Key": self.key(pk, sk), "UpdateExpression": update}
        action.update(self._expr(condition, names, values))
        return {"Update": action}

    def transact_get(self, keys: list[tuple[str, str]]) -> list[dict[str, Any] | None]:
        """Up to 100 items by key in one serializable read (each as it is now), in the order asked, None
        where missing; TransactionConflict when a transaction is writing one of them. Authorized as GetItem
        on each item (no BatchGetItem permission needed)."""
        try:
            out = self.client.transact_get_items(
                TransactItems=[{"Get": {"TableName": self.name, "Key": self.key(pk, sk)}} for pk, sk in keys]
            )
        except self.client.exceptions.TransactionCanceledException as exc:
            reasons = [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]
            raise TransactionConflict(reasons) from exc
        return [self._plain(r["Item"]) if r.get("Item") else None for r in out.get("Responses", [])]

    def transact(self, actions: list[dict[str, Any]]) -> None:
        """All-or-nothing write of up to 100 actions built with the *_action helpers."""
        try:
            self.client.transact_write_items(TransactItems=actions)
        except self.client.exceptions.TransactionCanceledException as exc:
            reasons = [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]
            raise TransactionConflict(reasons) from exc
