"""Data access over the single DynamoDB table: plain-dict items in, plain-dict items out.

AWS errors become domain-level exceptions here (`ConditionFailed`), so callers never see botocore.
DynamoDB expressions are spelled here and nowhere else: callers say what to change (`set`, `add`, `remove`,
`set_missing`) and on which condition (`when`, built from `attr`, `item_exists`, `item_absent` with & and |);
every attribute name and value travels as a placeholder, so reserved words need no care.
Key patterns and access patterns are listed in docs/data-model.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypedDict, Unpack

from svc_shared.core import aws
from svc_shared.storage.dynamo_types import deserialize, serialize


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


# -- conditions and updates ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cond:
    """A condition on the item as it is before a write. Combine with `&` (both) and `|` (either)."""

    op: str  # "exists", "missing", "item_exists", "item_absent", a comparison, "AND" or "OR"
    name: str = ""
    value: Any = None
    parts: tuple[Cond, ...] = ()

    def __and__(self, other: Cond) -> Cond:
        return Cond("AND", parts=(self, other))

    def __or__(self, other: Cond) -> Cond:
        return Cond("OR", parts=(self, other))


@dataclass(frozen=True)
class attr:
    """One attribute of the item, to build conditions on."""

    name: str

    def exists(self) -> Cond:
        return Cond("exists", self.name)

    def missing(self) -> Cond:
        return Cond("missing", self.name)

    def eq(self, value: Any) -> Cond:
        return Cond("=", self.name, value)

    def ne(self, value: Any) -> Cond:
        return Cond("<>", self.name, value)

    def lt(self, value: Any) -> Cond:
        return Cond("<", self.name, value)

    def le(self, value: Any) -> Cond:
        return Cond("<=", self.name, value)

    def gt(self, value: Any) -> Cond:
        return Cond(">", self.name, value)


def item_exists() -> Cond:
    """The item is there (its partition key attribute exists)."""
    return Cond("item_exists")


def item_absent() -> Cond:
    """There is no such item yet (a create-only write)."""
    return Cond("item_absent")


def all_of(conditions: Iterable[Cond]) -> Cond | None:
    """Every one of the conditions (None for none)."""
    out: Cond | None = None
    for cond in conditions:
        out = cond if out is None else out & cond
    return out


class Changes(TypedDict, total=False):
    """What an update does to an item's attributes (Table.update, Table.update_action): `set` them to values,
    `add` numbers to them, `remove` them, or set them only where they are missing (`set_missing`)."""

    set: Mapping[str, Any] | None
    add: Mapping[str, Any] | None
    remove: Iterable[str]
    set_missing: Mapping[str, Any] | None


class _Placeholders:
    """Names and values of one request's expressions, each behind a placeholder."""

    def __init__(self, table_pk: str) -> None:
        self._pk = table_pk
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        for placeholder, known in self.names.items():
            if known == attribute:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def condition(self, cond: Cond) -> str:
        if cond.op in ("AND", "OR"):
            # Parentheses only where precedence needs them (an OR inside an AND, an AND inside an OR, kept for
            # the reader): the service parses a shorter expression.
            return f" {cond.op} ".join(
                f"({self.condition(part)})"
                if part.op in ("AND", "OR") and part.op != cond.op
                else self.condition(part)
                for part in cond.parts
            )
        if cond.op == "item_exists":
            return f"attribute_exists({self.name(self._pk)})"
        if cond.op == "item_absent":
            return f"attribute_not_exists({self.name(self._pk)})"
        if cond.op == "exists":
            return f"attribute_exists({self.name(cond.name)})"
        if cond.op == "missing":
            return f"attribute_not_exists({self.name(cond.name)})"
        return f"{self.name(cond.name)} {cond.op} {self.value(cond.value)}"

    def update(self, changes: Changes) -> str:
        assignments = [f"{self.name(k)} = {self.value(v)}" for k, v in (changes.get("set") or {}).items()]
        for k, v in (changes.get("set_missing") or {}).items():
            n = self.name(k)
            assignments.append(f"{n} = if_not_exists({n}, {self.value(v)})")
        clauses = []
        if assignments:
            clauses.append("SET " + ", ".join(assignments))
        if add := changes.get("add"):
            clauses.append("ADD " + ", ".join(f"{self.name(k)} {self.value(v)}" for k, v in add.items()))
        removed = [self.name(k) for k in changes.get("remove", ())]
        if removed:
            clauses.append("REMOVE " + ", ".join(removed))
        if not clauses:
            raise ValueError("an update must set, add or remove at least one attribute")
        return " ".join(clauses)


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

    def _expressions(self, when: Cond | None, changes: Changes | None = None) -> dict[str, Any]:
        """The expression arguments of one request: its update (when it makes `changes`), its condition, and
        the names and values they use."""
        ph = _Placeholders(self._pk)
        kwargs: dict[str, Any] = {}
        if changes is not None:
            kwargs["UpdateExpression"] = ph.update(changes)
        if when is not None:
            kwargs["ConditionExpression"] = ph.condition(when)
        if ph.names:
            kwargs["ExpressionAttributeNames"] = ph.names
        if ph.values:
            kwargs["ExpressionAttributeValues"] = self._values(ph.values)
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

    def put(self, item: Mapping[str, Any], *, when: Cond | None = None) -> None:
        """Write the whole item (None values left out), if `when` holds."""
        self._conditional(
            self.client.put_item, TableName=self.name, Item=self._item(item), **self._expressions(when)
        )

    def update(
        self,
        pk: str,
        sk: str,
        *,
        returns: str = "ALL_NEW",
        old_on_failure: bool = False,
        when: Cond | None = None,
        **changes: Unpack[Changes],
    ) -> dict[str, Any]:
        """Make `changes` to an item's attributes (creating it when there is none, unless `when` says it must
        exist). Returns the item as it is afterwards (or what `returns` asks for: "NONE" keeps the answer
        small). With `old_on_failure`, a failed condition carries the item."""
        extra = {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"} if old_on_failure else {}
        out = self._conditional(
            self.client.update_item,
            TableName=self.name,
            Key=self.key(pk, sk),
            ReturnValues=returns,
            **extra,
            **self._expressions(when, changes),
        )
        return self._plain(out.get("Attributes", {}))

    def delete(self, pk: str, sk: str, *, when: Cond | None = None) -> dict[str, Any] | None:
        """Delete an item; returns what was deleted (None when there was nothing)."""
        out = self._conditional(
            self.client.delete_item,
            TableName=self.name,
            Key=self.key(pk, sk),
            ReturnValues="ALL_OLD",
            **self._expressions(when),
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

    def batch_get(self, keys: list[tuple[str, str]], *, consistent: bool = False) -> list[dict[str, Any]]:
        """Up to 100 items by key, in no particular order (missing keys are skipped)."""
        found: list[dict[str, Any]] = []
        wanted = [self.key(pk, sk) for pk, sk in dict.fromkeys(keys)]
        pending: dict[str, Any] = {self.name: {"Keys": wanted, "ConsistentRead": consistent}}
        while pending and pending[self.name]["Keys"]:
            out = self.client.batch_get_item(RequestItems=pending)
            found.extend(self._plain(raw) for raw in out.get("Responses", {}).get(self.name, []))
            pending = out.get("UnprocessedKeys") or {}
        return found

    # -- transactions -------------------------------------------------------------------------------------
    def put_action(self, item: Mapping[str, Any], *, when: Cond | None = None) -> dict[str, Any]:
        return {"Put": {"TableName": self.name, "Item": self._item(item), **self._expressions(when)}}

    def update_action(
        self, pk: str, sk: str, *, when: Cond | None = None, **changes: Unpack[Changes]
    ) -> dict[str, Any]:
        expressions = self._expressions(when, changes)
        return {"Update": {"TableName": self.name, "Key": self.key(pk, sk), **expressions}}

    def delete_action(self, pk: str, sk: str, *, when: Cond | None = None) -> dict[str, Any]:
        return {"Delete": {"TableName": self.name, "Key": self.key(pk, sk), **self._expressions(when)}}

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
