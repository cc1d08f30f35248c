"""A product's images as the admin screens manage them: files uploaded into the shop's own database (table
`media`, migration 0014) and served back at `/media/<id>.<ext>` under the backoffice's public address, and
the product's `images` list (the address and the alt text of each, in the order the storefront shows them)
edited one image at a time: its alt text, a move up or down, its removal (the file goes with it).

A file is taken only when its first bytes are those of a PNG, JPEG, WebP or GIF image (never from the name
or from what the browser says: an SVG or an HTML page named photo.png is refused) and only up to
MAX_IMAGE_BYTES, which keeps a request and an answer of the function under Lambda's 6 MB payload once
base64-encoded by API Gateway."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.core import config
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound, PayloadTooLarge, Unprocessable, UnsupportedMediaType
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.catalog import ProductImage

MAX_IMAGE_BYTES = 4 * 1024 * 1024
MAX_IMAGES = 20  # ProductFields.images
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
MEDIA_NAME = re.compile(
    r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(png|jpg|webp|gif)$"
)


def sniff(data: bytes) -> str | None:
    """The image type the bytes are, by their signature; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def media_url(media_id: str, content_type: str) -> str:
    return config.own_url(f"/media/{media_id}.{EXTENSIONS[content_type]}")


def _images(db: Database, product_id: str) -> list[dict[str, Any]]:
    row = db.found("SELECT images FROM products WHERE id = %s FOR UPDATE", (product_id,))
    return list(row["images"] or [])


def _save(db: Database, product_id: str, images: list[dict[str, Any]]) -> None:
    db.all("UPDATE products SET images = %s WHERE id = %s", (Jsonb(images), product_id))


def add_image(db: Database, product_id: str, data: bytes, alt: str) -> dict[str, str]:
    """Store an uploaded file as the product's last image; the image as the product now lists it. `alt` is
    valid alt text (ProductImage's rule, checked by the caller with the rest of its form)."""
    if not data:
        raise Unprocessable(say("catalog.image_empty"))
    if len(data) > MAX_IMAGE_BYTES:
        raise PayloadTooLarge(say("catalog.image_too_large", mb=MAX_IMAGE_BYTES // (1024 * 1024)))
    kind = sniff(data)
    if kind is None:
        raise UnsupportedMediaType(say("catalog.image_type"))
    images = _images(db, product_id)
    if len(images) >= MAX_IMAGES:
        raise Unprocessable(say("catalog.image_limit", limit=MAX_IMAGES))
    row = db.one(
        "INSERT INTO media (product_id, content_type, bytes, sha256) VALUES (%s, %s, %s, %s) RETURNING id::text",
        (product_id, kind, data, hashlib.sha256(data).hexdigest()),
    )
    assert row is not None
    image = {"url": media_url(row["id"], kind), "alt": alt}
    _save(db, product_id, [*images, image])
    return image


def add_image_address(db: Database, product_id: str, image: ProductImage) -> dict[str, str]:
    """An image another site serves, by its address, as the product's last image."""
    images = _images(db, product_id)
    if len(images) >= MAX_IMAGES:
        raise Unprocessable(say("catalog.image_limit", limit=MAX_IMAGES))
    _save(db, product_id, [*images, image.model_dump()])
    return image.model_dump()


def change_image(db: Database, product_id: str, url: str, action: str, alt: str = "") -> None:
    """`action` on the product's image at `url`: `alt` (set its alt text), `up`, `down` or `remove` (its
    file removed too when it was uploaded here). The image is named by its address, not its place, so a
    form opened before another change acts on the image it showed; NotFound when it is gone."""
    images = _images(db, product_id)
    at = next((i for i, image in enumerate(images) if image.get("url") == url), None)
    if at is None:
        raise NotFound(say("catalog.image_gone"))
    if action == "alt":
        images[at] = {"url": url, "alt": alt}
    elif action in ("up", "down"):
        other = at - 1 if action == "up" else at + 1
        if 0 <= other < len(images):
            images[at], images[other] = images[other], images[at]
    elif action == "remove":
        del images[at]
        _forget_file(db, product_id, url)
    else:
        raise Unprocessable(say("catalog.image_action"))
    _save(db, product_id, images)


def _forget_file(db: Database, product_id: str, url: str) -> None:
    found = MEDIA_NAME.match(url.rsplit("/", 1)[-1])
    if found and url == config.own_url(f"/media/{found.group(0)}"):
        db.all("DELETE FROM media WHERE id = %s AND product_id = %s", (found.group(1), product_id))


def read(db: Database, name: str) -> Row:
    """The stored file a `/media/<id>.<ext>` name names (its extension must be its type's): bytes,
    content_type, sha256; NotFound otherwise."""
    found = MEDIA_NAME.match(name)
    if not found:
        raise NotFound()
    row = db.one("SELECT bytes, content_type, sha256 FROM media WHERE id = %s", (found.group(1),))
    if row is None or EXTENSIONS[row["content_type"]] != found.group(2):
        raise NotFound()
    return row
