"""Product attributes (/products/attributes) and stock locations (Settings > Stock locations) on their own
screens, against the real database: listed, added, changed and deleted after asking, each error beside its
field, a location holding stock refused in words; a viewer sees them without a control, an editor changes
attributes but not locations (configuration), and the server refuses a forged post of a role too low."""

from __future__ import annotations

import re

from adminhelpers import error_beside, forms, get, own_token, post, refused_by_role, submit, text

from svc_backoffice.domain import catalog, store
from svc_backoffice.domain.models.catalog import AttributeCreate, ProductCreate

ATTRS = "/products/attributes"
PLACES = "/settings/locations"


def _created_id(answer, path: str) -> str:
    assert answer.status == 303, text(answer)
    found = re.fullmatch(rf"{path}/([0-9a-f-]{{36}})\?notice=created", answer.location)
    assert found, answer.location
    return found.group(1)


# -- attributes ------------------------------------------------------------------------------------------------
def test_an_editor_adds_a_choice_attribute_changes_and_deletes_it(as_role, db):
    editor = as_role("editor")
    assert ATTRS in get(editor, "/products").body  # the Products page leads here
    assert "No attribute yet" in text(get(editor, ATTRS))
    fields = {"name": "Size", "slug": "", "kind": "select", "options": "S, M, L", "position": "0"}
    attribute_id = _created_id(submit(editor, f"{ATTRS}/new", f"{ATTRS}/new", fields), ATTRS)
    stored = catalog.ATTRIBUTES.read(db, attribute_id)
    assert (stored["name"], stored["slug"], stored["kind"], stored["options"]) == (
        "Size",
        "size",
        "select",
        ["S", "M", "L"],
    )
    listed = text(get(editor, ATTRS))
    assert "Size A choice S, M, L" in listed
    path = f"{ATTRS}/{attribute_id}"
    assert 'value="S, M, L"' in get(editor, path).body
    changed = submit(editor, path, path, {**fields, "name": "Shoe size", "options": "38, 39"})
    assert changed.location == f"{path}?notice=saved"
    stored = catalog.ATTRIBUTES.read(db, attribute_id)
    assert (stored["name"], stored["slug"], stored["options"]) == ("Shoe size", "size", ["38", "39"])
    # A product's form now has a field for it.
    product = catalog.create_product(db, ProductCreate(title="Boot"))
    assert f'name="attr_{attribute_id}"' in get(editor, f"/products/{product['id']}").body
    asked = submit(editor, path, f"{path}/delete", {})
    assert "Delete the attribute Shoe size?" in text(asked) and catalog.list_attributes(db) != []
    done = post(editor, f"{path}/delete", {"understood": "on"}, csrf=own_token(editor))
    assert done.location == f"{ATTRS}?notice=removed" and catalog.list_attributes(db) == []


def test_attribute_errors_are_beside_their_fields(as_role, db):
    editor = as_role("editor")
    catalog.create_attribute(db, AttributeCreate(name="Colour"))
    new = f"{ATTRS}/new"
    empty = submit(editor, new, new, {"name": "", "kind": "text", "position": "0"})
    assert empty.status == 400 and error_beside(empty, "name")
    bad = submit(editor, new, new, {"name": "Fit", "slug": "Not A Slug", "kind": "odd", "position": "x"})
    assert bad.status == 400
    assert error_beside(bad, "slug") and error_beside(bad, "kind") and error_beside(bad, "position")
    taken = submit(editor, new, new, {"name": "Colour", "kind": "text", "position": "0"})
    assert taken.status == 400 and "already" in error_beside(taken, "slug")
    assert [a["name"] for a in catalog.list_attributes(db)] == ["Colour"]


def test_a_viewer_reads_attributes_and_a_forged_change_is_refused(as_role, db):
    attribute = catalog.create_attribute(db, AttributeCreate(name="Material"))
    viewer = as_role("viewer")
    listed = get(viewer, ATTRS)
    assert "Material" in text(listed) and "Add attribute" not in text(listed)
    path = f"{ATTRS}/{attribute['id']}"
    page = get(viewer, path)
    assert page.status == 200 and forms(page) == ["/auth/sign-out"] and "Delete" not in text(page)
    token = own_token(viewer)
    assert refused_by_role(
        post(viewer, f"{ATTRS}/new", {"name": "Mine", "kind": "text"}, csrf=token), "viewer"
    )
    assert refused_by_role(post(viewer, path, {"name": "Mine"}, csrf=token), "viewer")
    assert refused_by_role(post(viewer, f"{path}/delete", {"understood": "on"}, csrf=token), "viewer")
    assert post(as_role("editor"), path, {"name": "Mine"}, csrf=None).status == 403
    assert [a["name"] for a in catalog.list_attributes(db)] == ["Material"]


# -- stock locations -------------------------------------------------------------------------------------------
def test_an_admin_adds_a_location_makes_it_the_default_and_deletes_an_empty_one(as_role, db):
    admin = as_role("admin")
    listed = text(get(admin, PLACES))
    assert "Main warehouse MAIN Default · In use" in listed and "Stock locations" in listed
    fields = {
        "name": "Shop",
        "code": "shop-1",
        "address": "3 rue Neuve, Lyon",
        "is_default": "",
        "active": "on",
    }
    shop_id = _created_id(submit(admin, f"{PLACES}/new", f"{PLACES}/new", fields), PLACES)
    shop = store.get_location(db, shop_id)
    assert (shop["code"], shop["address"], shop["is_default"]) == ("SHOP-1", "3 rue Neuve, Lyon", False)
    path = f"{PLACES}/{shop_id}"
    assert submit(admin, path, path, {**fields, "is_default": "on"}).location == f"{path}?notice=saved"
    defaults = [loc["name"] for loc in store.list_locations(db) if loc["is_default"]]
    assert defaults == ["Shop"]  # one default: the new one replaced the old
    assert "Shop SHOP-1 Default · In use" in text(get(admin, PLACES))
    main = next(loc for loc in store.list_locations(db) if loc["code"] == "MAIN")
    main_path = f"{PLACES}/{main['id']}"
    done = post(admin, f"{main_path}/delete", {"understood": "on"}, csrf=own_token(admin))
    assert done.location == f"{PLACES}?notice=removed"
    assert [loc["name"] for loc in store.list_locations(db)] == ["Shop"]


def test_a_location_holding_stock_is_not_deleted_and_says_why(as_role, db, staff):
    admin = as_role("admin")
    main = store.list_locations(db)[0]
    product = catalog.create_product(db, ProductCreate(title="Candle"))
    db.all(
        "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason, staff_id) "
        "VALUES (%s, %s, 5, 'received', %s)",
        (product["id"], main["id"], staff["owner"]["id"]),
    )
    path = f"{PLACES}/{main['id']}"
    refused = post(admin, f"{path}/delete", {"understood": "on"}, csrf=own_token(admin))
    assert refused.status == 409 and "That did not work" in text(refused)
    assert len(store.list_locations(db)) == 1


def test_location_errors_are_beside_their_fields(as_role, db):
    admin = as_role("admin")
    new = f"{PLACES}/new"
    bad = submit(admin, new, new, {"name": "", "code": "no spaces", "active": "on"})
    assert bad.status == 400 and error_beside(bad, "name") and error_beside(bad, "code")
    taken = submit(admin, new, new, {"name": "Again", "code": "MAIN", "active": "on"})
    assert taken.status == 400 and "already" in error_beside(taken, "code")
    assert len(store.list_locations(db)) == 1


def test_an_editor_reads_locations_and_a_forged_change_is_refused(as_role, db):
    editor = as_role("editor")
    main = store.list_locations(db)[0]
    listed = get(editor, PLACES)
    assert "Main warehouse" in text(listed) and "Add stock location" not in text(listed)
    path = f"{PLACES}/{main['id']}"
    page = get(editor, path)
    assert page.status == 200 and forms(page) == ["/auth/sign-out"]
    token = own_token(editor)
    assert refused_by_role(post(editor, f"{PLACES}/new", {"name": "X", "code": "X"}, csrf=token), "editor")
    assert refused_by_role(post(editor, path, {"name": "Mine"}, csrf=token), "editor")
    assert refused_by_role(post(editor, f"{path}/delete", {"understood": "on"}, csrf=token), "editor")
    assert post(as_role("admin"), path, {"name": "Mine"}, csrf=None).status == 403
    assert store.get_location(db, str(main["id"]))["name"] == "Main warehouse"
