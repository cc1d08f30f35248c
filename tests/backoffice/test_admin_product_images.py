"""A product's images by upload, against the real database: a file sent from the product's page is stored in
the shop's database and served back at its address with its type; its alt text is edited, it is moved and
removed (its file with it); a file that is not a PNG, JPEG, WebP or GIF, or too large, is refused in words
beside the field; a viewer sees the images without a control and a forged post changes nothing; the
storefront's API lists the uploaded image's address."""

from __future__ import annotations

import base64
import re

from adminhelpers import csrf_of, forms, get, own_token, post, submit, text, upload
from imagefiles import png

from svc_backoffice.domain import catalog, media
from svc_backoffice.domain.models.catalog import ProductCreate
from svc_backoffice.storefront import catalog as storefront

BASE = "https://shop.example/backoffice"  # the backoffice's public address (HANDOFF_AUDIENCE in the tests)


def _product(db, **fields):
    return catalog.create_product(db, ProductCreate(title="Linen apron", status="active", **fields))


def _add(client, product, data: bytes, alt: str = "", name: str = "apron.png", kind: str = "image/png"):
    path = f"/products/{product['id']}"
    token = csrf_of(get(client, path))
    return upload(
        client, f"{path}/images", {"image_alt": alt}, {"image_file": (name, kind, data)}, csrf=token
    )


def test_an_uploaded_image_is_stored_listed_and_served_with_its_type(as_role, db):
    product, editor, image = _product(db), as_role("editor"), png(3, 2)
    answer = _add(editor, product, image, alt="A blue linen apron")
    assert answer.status == 303 and answer.location.endswith("?notice=image_added")
    [stored] = catalog.get_product(db, product["id"])["images"]
    assert (
        re.fullmatch(rf"{BASE}/media/[0-9a-f-]{{36}}\.png", stored["url"])
        and stored["alt"] == "A blue linen apron"
    )
    page = get(editor, f"/products/{product['id']}?notice=image_added")
    assert "Image added." in text(page)
    assert f'<img src="{stored["url"]}" alt="A blue linen apron"' in page.body
    served = get(as_role(None), "/media/" + stored["url"].rsplit("/", 1)[1])
    assert served.status == 200 and served.headers["Content-Type"] == "image/png"
    assert base64.b64decode(served.body) == image
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert "immutable" in served.headers["Cache-Control"]
    again = as_role(None).get(
        "/media/" + stored["url"].rsplit("/", 1)[1], headers={"If-None-Match": served.headers["ETag"]}
    )
    assert again.status == 304 and again.body == ""
    shown = storefront.product(db, product["slug"])
    assert shown["images"] == [stored] and shown["image"] == stored


def test_a_file_that_is_not_an_image_is_refused_beside_the_field(as_role, db):
    product, editor = _product(db), as_role("editor")
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'
    answer = _add(editor, product, svg, name="photo.png", kind="image/png")
    assert answer.status == 415
    assert 'id="image_file-error"' in answer.body and "not a PNG, JPEG, WebP or GIF image" in text(answer)
    assert catalog.get_product(db, product["id"])["images"] == []
    assert db.one("SELECT count(*) AS n FROM media")["n"] == 0


def test_a_file_over_the_limit_is_refused_in_words(as_role, db):
    product, editor = _product(db), as_role("editor")
    big = png() + b"\x00" * (media.MAX_IMAGE_BYTES - len(png()) + 1)
    answer = _add(editor, product, big)
    assert answer.status == 413 and "larger than 4 MB" in text(answer)
    assert catalog.get_product(db, product["id"])["images"] == []
    just = png() + b"\x00" * (media.MAX_IMAGE_BYTES - len(png()))
    assert _add(editor, product, just).status == 303


def test_nothing_chosen_asks_for_a_file_or_an_address_and_an_address_is_added(as_role, db):
    product, editor = _product(db), as_role("editor")
    path = f"/products/{product['id']}"
    empty = upload(editor, f"{path}/images", {"image_alt": "x"}, {}, csrf=csrf_of(get(editor, path)))
    assert empty.status == 400 and "Choose an image file, or type the address of an image." in text(empty)
    token = csrf_of(get(editor, path))
    fields = {"image_address": "https://cdn.example/apron.jpg", "image_alt": "Apron"}
    assert upload(editor, f"{path}/images", fields, {}, csrf=token).status == 303
    assert catalog.get_product(db, product["id"])["images"] == [
        {"url": "https://cdn.example/apron.jpg", "alt": "Apron"}
    ]


def test_images_are_described_reordered_and_removed_with_their_file(as_role, db):
    product, editor = _product(db), as_role("editor")
    for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255)):
        assert _add(editor, product, png(rgb=colour), alt=str(colour)).status == 303
    first, second, third = (i["url"] for i in catalog.get_product(db, product["id"])["images"])
    path = f"/products/{product['id']}"
    change = f"{path}/images/change"
    assert submit(editor, path, change, {"url": third, "do": "up"}).status == 303
    assert submit(editor, path, change, {"url": first, "do": "down"}).status == 303
    assert submit(editor, path, change, {"url": second, "do": "alt", "alt": "Green apron"}).status == 303
    images = catalog.get_product(db, product["id"])["images"]
    assert [i["url"] for i in images] == [third, first, second] and images[2]["alt"] == "Green apron"
    removed = submit(editor, path, change, {"url": third, "do": "remove"})
    assert removed.status == 303 and removed.location.endswith("notice=image_removed")
    assert [i["url"] for i in catalog.get_product(db, product["id"])["images"]] == [first, second]
    assert get(as_role(None), "/media/" + third.rsplit("/", 1)[1]).status == 404
    stale = submit(editor, path, change, {"url": third, "do": "up"})
    assert stale.status == 409 and "no longer on the product" in text(stale)
    long_alt = submit(editor, path, change, {"url": second, "do": "alt", "alt": "x" * 301})
    assert (
        long_alt.status == 400 and catalog.get_product(db, product["id"])["images"][1]["alt"] == "Green apron"
    )


def test_the_edit_form_leaves_the_images_as_they_are(as_role, db):
    product, editor = _product(db), as_role("editor")
    _add(editor, product, png(), alt="Kept")
    fields = {"title": "Linen apron, long", "price": "30", "status": "active", "type": "physical"}
    assert submit(editor, f"/products/{product['id']}", f"/products/{product['id']}", fields).status == 303
    saved = catalog.get_product(db, product["id"])
    assert saved["title"] == "Linen apron, long" and [i["alt"] for i in saved["images"]] == ["Kept"]


def test_a_viewer_sees_the_images_without_a_control_and_a_forged_upload_changes_nothing(as_role, db):
    product, editor = _product(db), as_role("editor")
    _add(editor, product, png(), alt="Apron")
    page = get(as_role("viewer"), f"/products/{product['id']}")
    assert "Image 1: Apron" in text(page) and 'type="file"' not in page.body
    assert not [f for f in forms(page) if "/images" in f]
    path = f"/products/{product['id']}/images"
    viewer = as_role("viewer")  # with a valid token of the viewer's own session: the role is what refuses
    refused = upload(viewer, path, {}, {"image_file": ("a.png", "image/png", png())}, csrf=own_token(viewer))
    assert refused.status == 403 and "Your role (viewer) cannot do this" in text(refused)
    forged = upload(editor, path, {}, {"image_file": ("a.png", "image/png", png())}, csrf=None)
    assert forged.status == 403
    assert len(catalog.get_product(db, product["id"])["images"]) == 1


def test_a_media_address_names_one_stored_file_or_is_a_404(as_role, db):
    product = _product(db)
    _add(as_role("editor"), product, png())
    name = catalog.get_product(db, product["id"])["images"][0]["url"].rsplit("/", 1)[1]
    anyone = as_role(None)
    assert get(anyone, "/media/" + name.replace(".png", ".gif")).status == 404
    assert get(anyone, "/media/not-a-file.png").status == 404
    assert get(anyone, "/media/00000000-0000-0000-0000-000000000000.png").status == 404
    catalog.delete_product(db, product["id"])
    assert get(anyone, "/media/" + name).status == 404


def test_an_upload_body_over_the_limit_is_refused_before_it_is_read(as_role, db):
    product, editor = _product(db), as_role("editor")
    path = f"/products/{product['id']}"
    huge = png() + b"\x00" * (media.MAX_IMAGE_BYTES + 100 * 1024)
    answer = upload(
        editor,
        f"{path}/images",
        {},
        {"image_file": ("huge.png", "image/png", huge)},
        csrf=csrf_of(get(editor, path)),
    )
    assert answer.status == 413 and "This upload is too large: an image file may be at most 4 MB." in text(
        answer
    )
    assert catalog.get_product(db, product["id"])["images"] == []


def test_an_upload_address_takes_only_a_multipart_form(as_role, db):
    product, editor = _product(db), as_role("editor")
    path = f"/products/{product['id']}"
    fields = {"image_address": "https://cdn.example/a.jpg"}
    answer = post(editor, f"{path}/images", fields, csrf=csrf_of(get(editor, path)))
    assert answer.status == 403 and "takes a form sent from the backoffice's own pages" in text(answer)
    assert catalog.get_product(db, product["id"])["images"] == []
