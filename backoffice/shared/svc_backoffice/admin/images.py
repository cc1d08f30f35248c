"""A product's images on its page: upload a file (or give an image's address) with its alt text, change the
alt text, move an image up or down (the storefront shows them in this order; the first is the product's
card), remove one; and the uploaded files served back at /media/<id>.<ext> to anyone (the storefront's build
copies them into the site, shoppers' browsers load them), with their type, a long cache and no sniffing.
Every change goes through domain/media.py behind the role of PATCH /api/products/[id]."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.forms import FormInvalid, validated
from svc_backoffice.admin.pages import files, form, not_found_page, page, router, see_other
from svc_backoffice.admin.products import form_context, values_of
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import (
    Conflict,
    DomainError,
    NotFound,
    PayloadTooLarge,
    Unprocessable,
    UnsupportedMediaType,
)
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog, media
from svc_backoffice.domain.models.catalog import ProductImage
from svc_backoffice.edge.app import STATUS_BY_ERROR
from svc_backoffice.edge.requests import lower_headers, path_id

MEDIA_HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",  # a file's address never names other bytes
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cross-Origin-Resource-Policy": "cross-origin",
}
UPLOAD_FIELDS = {"url": "image_address", "alt": "image_alt"}


def _refused(product_id: str, problem: FormInvalid | DomainError, field: str = "image_file") -> Response:
    """The product's page again, the image form's problem beside its field (or above the images)."""
    product = catalog.get_product(database(), product_id)
    if isinstance(problem, FormInvalid):
        status, errors = 400, problem.fields
    else:
        status = next((STATUS_BY_ERROR[c] for c in type(problem).__mro__ if c in STATUS_BY_ERROR), 400)
        errors = {field: problem.message}
    return page(
        "product.html",
        status,
        title=product["title"],
        **form_context(product, values_of(product), None),
        image_errors=errors,
        image_values=form(),
    )


@router.page("POST", "/products/<id>/images", api="PATCH /api/products/[id]", upload=True)
def add_image(id: str) -> Response:
    """A file uploaded (or else an image's address) with its alt text, as the product's last image."""
    product_id = path_id(id)
    fields, uploaded = form(), files().get("image_file")
    address, alt = fields.get("image_address", "").strip(), fields.get("image_alt", "").strip()
    try:
        if uploaded and uploaded[1]:
            validated(ProductImage, {"url": "upload", "alt": alt}, UPLOAD_FIELDS)
            with database().transaction():
                media.add_image(database(), product_id, uploaded[1], alt)
        elif address:
            image = validated(ProductImage, {"url": address, "alt": alt}, UPLOAD_FIELDS)
            with database().transaction():
                media.add_image_address(database(), product_id, image)
        else:
            raise FormInvalid({"image_file": say("catalog.image_or_address")})
    except (FormInvalid, PayloadTooLarge, UnsupportedMediaType, Unprocessable) as exc:
        return _refused(product_id, exc)
    return see_other(f"/products/{product_id}", notice="image_added")


@router.page("POST", "/products/<id>/images/change", api="PATCH /api/products/[id]")
def change_image(id: str) -> Response:
    """One image's alt text saved, or the image moved up, down, or removed (`do`), named by its address."""
    product_id = path_id(id)
    fields = form()
    url, action, alt = fields.get("url", ""), fields.get("do", ""), fields.get("alt", "").strip()
    try:
        if action == "alt":
            validated(ProductImage, {"url": url or "-", "alt": alt}, {"alt": "image_change"})
        with database().transaction():
            media.change_image(database(), product_id, url, action, alt)
    except (FormInvalid, Unprocessable) as exc:
        return _refused(product_id, exc, "image_change")
    except NotFound:
        catalog.get_product(database(), product_id)  # the product itself gone: the 404 page
        return _refused(product_id, Conflict(say("catalog.image_gone")), "image_change")
    return see_other(
        f"/products/{product_id}", notice="image_removed" if action == "remove" else "image_saved"
    )


@router.page("GET", "/media/<name>", role=None)
def media_file(name: str) -> Response:
    """An uploaded file, to anyone who has its address (as a storefront's images are)."""
    try:
        found = media.read(database(), name)
    except NotFound:
        return not_found_page()
    etag = f'"{found["sha256"][:32]}"'
    if lower_headers(router).get("if-none-match") == etag:
        return Response(status_code=304, headers={**MEDIA_HEADERS, "ETag": etag})
    return Response(
        status_code=200,
        content_type=found["content_type"],
        body=bytes(found["bytes"]),  # base64-encoded for API Gateway (isBase64Encoded), as image/* is binary
        headers={**MEDIA_HEADERS, "ETag": etag},
    )
