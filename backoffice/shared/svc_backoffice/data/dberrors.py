"""The database's refusals in the product's words: one mapping, by SQLSTATE and constraint name, from what
PostgreSQL refused to the domain error a client sees (404, 409 or 422 with a message naming the field or the
rule). No PostgreSQL text reaches a client except the messages this application's own functions raise (class
SV, migration 0007), which are written as product text. Unknown refusals are left to the caller (a 500 whose
detail stays in the log).
"""

from __future__ import annotations

import psycopg

from svc_backoffice.core.catalogue import Group, say
from svc_backoffice.core.errors import Conflict, DomainError, NotFound, Unprocessable

# SQLSTATEs the migrations' functions raise; their message is shown as it is.
RAISED: dict[str, type[DomainError]] = {
    "SV001": Unprocessable,  # Illegal transition from <status> to <status>
    "SV002": Conflict,  # Not enough stock for <product>: <n> available, <m> ordered.
    "SV003": Conflict,  # The store must keep at least one owner.
    "SV004": Conflict,  # The default stock location cannot be deleted.
}

# The words of each refusal, in the catalogue (texts/en.json, under `database`): unique violations (23505) by
# table; what a reference names by column (and by table.column where the same column means another thing);
# deleting a row that others still reference (ON DELETE RESTRICT) by constraint; check constraints whose rule
# spans several columns, or whose words matter to a merchant, by constraint.
DUPLICATES = Group("database.duplicate")
NOUNS = Group("database.noun")
IN_USE = Group("database.in_use")
RULES = Group("database.rule")
FOREIGN_KEY_COLUMNS = {"orders_shipping_method_fkey": "shipping_method_id"}

OUT_OF_RANGE = {"22003", "22008", "22007"}  # numeric value out of range, datetime field overflow, bad format


def _column(table: str, constraint: str, suffix: str) -> str:
    """`<table>_<column>_<suffix>`, PostgreSQL's default constraint name, read back."""
    if constraint.startswith(table + "_") and constraint.endswith(suffix):
        return constraint[len(table) + 1 : -len(suffix)]
    return ""


def translate(exc: psycopg.Error) -> DomainError | None:
    """The domain error for a refusal the schema or its functions made on purpose, else None."""
    state = exc.sqlstate or ""
    diag = exc.diag
    table, constraint = diag.table_name or "", diag.constraint_name or ""
    if state in RAISED:
        return RAISED[state](diag.message_primary or say("database.refused"))
    if state == "23505":
        return Conflict(DUPLICATES.get(table) or say("database.duplicate_other"))
    if state == "23503":
        if (diag.message_primary or "").startswith("update or delete"):
            return Conflict(IN_USE.get(constraint) or say("database.in_use_other"))
        column = FOREIGN_KEY_COLUMNS.get(constraint) or _column(table, constraint, "_fkey") or "reference"
        noun = NOUNS.get(f"{table}.{column}") or NOUNS.get(column) or say("database.noun_other")
        return Unprocessable(say("database.no_such", column=column, noun=noun))
    if state == "23514":
        if constraint in RULES:
            return Unprocessable(RULES[constraint])
        column = _column(table, constraint, "_check")
        return Unprocessable(
            say("database.not_allowed", column=column) if column else say("database.rule_other")
        )
    if state == "23502":
        column = diag.column_name or say("database.some_field")
        return Unprocessable(say("database.required", column=column))
    if state == "P0002":  # no_data_found, raised by the functions for a missing row
        return NotFound()
    if state in OUT_OF_RANGE:
        return Unprocessable(say("database.out_of_range"))
    return None
