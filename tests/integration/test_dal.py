"""The storage layer's writes against DynamoDB (the embedded AWS): what domain modules ask for (set, add,
remove, set where missing; on conditions built from attr/item_exists/item_absent) is what the item becomes."""

from __future__ import annotations

import pytest

from svc_shared.storage.dal import (
    ConditionFailed,
    TransactionConflict,
    all_of,
    attr,
    item_absent,
    item_exists,
)
from svc_shared.wiring import services


@pytest.fixture
def table(app_env):
    return services.current().table


def test_a_create_only_put_refuses_a_second_write(table) -> None:
    table.put({"pk": "T#1", "sk": "A", "status": "new"}, when=item_absent())
    with pytest.raises(ConditionFailed):
        table.put({"pk": "T#1", "sk": "A", "status": "other"}, when=item_absent())
    assert table.get("T#1", "A") == {"pk": "T#1", "sk": "A", "status": "new"}


def test_an_update_sets_adds_removes_and_fills_what_is_missing(table) -> None:
    table.put({"pk": "T#2", "sk": "A", "count": 1, "note": "x", "expires_at": 5})
    item = table.update(
        "T#2",
        "A",
        set={"status": "active", "last": 1.5},  # both reserved words: placeholders all the way
        add={"count": 2},
        remove=["note"],
        set_missing={"expires_at": 99, "created_at": 7},
        when=item_exists(),
    )
    assert item == {
        "pk": "T#2",
        "sk": "A",
        "status": "active",
        "last": 1.5,
        "count": 3,
        "expires_at": 5,
        "created_at": 7,
    }


def test_an_update_that_requires_the_item_does_not_create_it(table) -> None:
    with pytest.raises(ConditionFailed):
        table.update("T#3", "A", set={"status": "x"}, when=item_exists())
    assert table.get("T#3", "A") is None


def test_conditions_combine_and_a_failure_carries_the_item(table) -> None:
    table.put({"pk": "T#4", "sk": "A", "status": "active", "n": 3})
    either = attr("missing_one").exists() | attr("n").gt(2)
    table.update("T#4", "A", set={"ok": True}, when=attr("status").eq("active") & either)
    with pytest.raises(ConditionFailed) as failed:
        table.update(
            "T#4",
            "A",
            set={"ok": False},
            when=attr("status").ne("active") | attr("n").lt(3),
            old_on_failure=True,
        )
    assert failed.value.item is not None and failed.value.item["ok"] is True
    every = all_of(attr(f"t{i}").missing() | attr(f"t{i}").le(10) for i in range(3))
    assert every is not None
    table.update("T#4", "A", set={"t0": 11, "t1": 11}, when=every)
    with pytest.raises(ConditionFailed):
        table.update("T#4", "A", set={"t0": 12}, when=every)


def test_an_update_must_change_something(table) -> None:
    with pytest.raises(ValueError, match="at least one attribute"):
        table.update("T#5", "A")


def test_a_transaction_writes_all_or_nothing(table) -> None:
    table.put({"pk": "T#6", "sk": "A", "v": 1})
    table.put({"pk": "T#6", "sk": "B", "v": 1})
    refused = [
        table.update_action("T#6", "A", add={"v": 1}, when=attr("v").eq(1)),
        table.delete_action("T#6", "B"),
        table.put_action({"pk": "T#6", "sk": "C"}, when=item_absent()),
        table.put_action({"pk": "T#6", "sk": "A2"}, when=item_exists()),  # not there: the whole lot fails
    ]
    with pytest.raises(TransactionConflict):
        table.transact(refused)
    assert table.get("T#6", "A")["v"] == 1 and table.get("T#6", "B") is not None
    table.transact(refused[:3])
    assert table.get("T#6", "A")["v"] == 2 and table.get("T#6", "B") is None and table.get("T#6", "C")
