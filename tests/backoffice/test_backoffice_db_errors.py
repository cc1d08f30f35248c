"""The database's refusals as a client sees them: every constraint of the schema has words in the product's
language (svc_backoffice.data.dberrors), and no PostgreSQL text reaches a client."""

from __future__ import annotations

import uuid

import pytest

from svc_backoffice.data import dberrors

RAW = ("violates", "constraint", "relation", "duplicate key", "foreign key", "SQLSTATE")


def constraints(db, kind: str) -> list[dict]:
    return db.all(
        "SELECT conrelid::regclass::text AS table_name, conname, "
        "(SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY(conkey)) "
        "AS columns FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype = %s",
        (kind,),
    )


def test_every_unique_rule_of_the_schema_has_its_words(db):
    tables = {c["table_name"] for c in constraints(db, "u")}
    tables |= {
        r["table_name"]
        for r in db.all(
            "SELECT indrelid::regclass::text AS table_name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE indisunique AND NOT indisprimary AND c.relnamespace = 'public'::regnamespace"
        )
    }
    tables -= {"sso_handoffs", "order_transitions", "schema_migrations"}  # never written by a request
    assert sorted(tables - set(dberrors.DUPLICATES)) == []


def test_every_reference_names_its_field_and_what_it_refers_to(db):
    for c in constraints(db, "f"):
        column = dberrors.FOREIGN_KEY_COLUMNS.get(c["conname"]) or dberrors._column(
            c["table_name"], c["conname"], "_fkey"
        )
        assert column in c["columns"], c
        assert f"{c['table_name']}.{column}" in dberrors.NOUNS or column in dberrors.NOUNS, c


def test_every_check_rule_names_a_real_field_or_has_its_words(db):
    for c in constraints(db, "c"):
        if c["conname"] in dberrors.RULES:
            continue
        column = dberrors._column(c["table_name"], c["conname"], "_check")
        assert column in c["columns"], f"{c['conname']} needs words in dberrors.RULES"


@pytest.fixture
def admin(as_role):
    return as_role("admin")


def test_refusals_read_as_the_product_speaks(editor, admin):
    cases = [
        (
            editor.post("/api/products", {"title": "X", "category_id": str(uuid.uuid4())}),
            422,
            "category_id: no such category.",
        ),
        (
            admin.post("/api/shipping/methods", {"zone_id": str(uuid.uuid4()), "name": "X"}),
            422,
            "zone_id: no such shipping zone.",
        ),
    ]
    editor.post("/api/categories", {"name": "Shirts", "slug": "shirts-db"})
    cases.append(
        (
            editor.post("/api/categories", {"name": "Shirts 2", "slug": "shirts-db"}),
            409,
            "A category with that slug already exists.",
        )
    )
    editor.post("/api/attributes", {"name": "Material", "slug": "material-db"})
    cases.append(
        (
            editor.post("/api/attributes", {"name": "Material 2", "slug": "material-db"}),
            409,
            "An attribute with that slug already exists.",
        )
    )
    for answer, status, message in cases:
        assert (answer.status, answer.json()) == (status, {"error": message})
        assert not any(word in answer.body for word in RAW)
