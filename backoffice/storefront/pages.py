"""The storefront's pages as HTML bodies: home, catalog, categories, collections, a page per product, cart,
checkout, order confirmation, blog and 404. Every text from the shop is escaped; links carry the site's base
path (empty on the real host, /sites/{name} on the local one)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from shop_data import ShopData

SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "CHF": "CHF ", "CAD": "CA$", "AUD": "A$"}
FEATURED = 8
PER_PAGE = 48
AVAILABILITY = {"in_stock": "In stock", "low_stock": "Only a few left", "out_of_stock": "Sold out"}


@dataclass(frozen=True)
class Page:
    path: str  # under the publish directory: "index.html", "products/x/index.html"
    title: str
    description: str
    body: str
    og_type: str = "website"
    image: str | None = None


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def money(cents: int | None, currency: str) -> str:
    if cents is None:
        return ""
    amount = f"{cents / 100:,.2f}" if currency != "JPY" else f"{cents:,}"
    symbol = SYMBOLS.get(currency.upper())
    return f"{symbol}{amount}" if symbol else f"{amount} {currency.upper()}"


def summary(text: str | None, limit: int = 155) -> str:
    words = " ".join((text or "").split())
    return words if len(words) <= limit else words[: limit - 1].rsplit(" ", 1)[0] + "…"


class Renderer:
    def __init__(self, data: ShopData, base: str, image: Callable[[str | None], str]) -> None:
        self.data = data
        self.base = base
        self.image = image  # a product image URL -> its path on this site
        self.currency = str(data.store.get("currency") or "EUR")
        self.by_slug = {p["slug"]: p for p in data.products}

    def link(self, path: str) -> str:
        return e(f"{self.base}{path}")

    def price(self, product: dict[str, Any]) -> str:
        now = f'<span class="price">{e(money(product.get("price_cents"), self.currency))}</span>'
        was = product.get("compare_at_cents")
        if was and was > (product.get("price_cents") or 0):
            return (
                f'<span class="price price-sale"><span class="sr">Sale price </span>'
                f"{e(money(product.get('price_cents'), self.currency))}</span> "
                f'<s class="price-was"><span class="sr">Regular price </span>{e(money(was, self.currency))}</s>'
            )
        return now

    def badge(self, product: dict[str, Any]) -> str:
        if product.get("availability") == "out_of_stock":
            return '<span class="badge badge-muted">Sold out</span>'
        was = product.get("compare_at_cents")
        if was and was > (product.get("price_cents") or 0):
            return '<span class="badge">Sale</span>'
        return ""

    def card(self, product: dict[str, Any], eager: bool = False) -> str:
        image = product.get("image") or {}
        loading = "eager" if eager else "lazy"
        return (
            f'<li class="card"><a href="{self.link("/products/" + product["slug"] + "/")}">'
            f'<div class="card-media"><img src="{e(self.image(image.get("url")))}" alt="{e(image.get("alt") or "")}"'
            f' width="400" height="400" loading="{loading}" decoding="async">{self.badge(product)}</div>'
            f'<h3 class="card-title">{e(product["title"])}</h3>'
            f'<p class="card-price">{self.price(product)}</p></a></li>'
        )

    def grid(self, products: Iterable[dict[str, Any]], eager: int = 0) -> str:
        cards = [self.card(p, i < eager) for i, p in enumerate(products)]
        if not cards:
            return '<p class="empty">No products here yet. Come back soon.</p>'
        return f'<ul class="grid" role="list">{"".join(cards)}</ul>'

    def filters(self, current: str) -> str:
        links = [("All products", "/products/")]
        links += [
            (c["name"], f"/categories/{c['slug']}/") for c in self.data.categories if c.get("product_count")
        ]
        links += [
            (c["title"], f"/collections/{c['slug']}/")
            for c in self.data.collections
            if c.get("product_count")
        ]
        items = "".join(
            f'<li><a href="{self.link(path)}"{" aria-current=page" if path == current else ""}>{e(name)}</a></li>'
            for name, path in links
        )
        return f'<nav class="filters" aria-label="Browse"><ul role="list">{items}</ul></nav>'

    # ---- pages

    def home(self) -> Page:
        store = self.data.store
        name = str(store.get("name") or "Our shop")
        featured = self.data.products[:FEATURED]
        collections = "".join(
            f'<li><a class="tile" href="{self.link("/collections/" + c["slug"] + "/")}"><span>{e(c["title"])}</span>'
            f"<small>{e(summary(c.get('description'), 90))}</small></a></li>"
            for c in self.data.collections
            if c.get("product_count")
        )
        body = (
            f'<section class="hero"><h1>{e(name)}</h1>'
            f"<p>{e(summary(store.get('tagline') or store.get('description') or '', 200))}</p>"
            f'<a class="button" href="{self.link("/products/")}">Shop all products</a></section>'
            f'<section><div class="section-head"><h2>Featured products</h2>'
            f'<a href="{self.link("/products/")}">View all</a></div>{self.grid(featured, eager=2)}</section>'
        )
        if collections:
            body += f'<section><h2>Collections</h2><ul class="tiles" role="list">{collections}</ul></section>'
        description = summary(f"{name}: " + ", ".join(p["title"] for p in featured)) if featured else name
        return Page("index.html", name, description, body)

    def listing(
        self, path: str, heading: str, intro: str | None, products: list[dict[str, Any]]
    ) -> list[Page]:
        """The listing's pages, PER_PAGE products each: the first at `path`, the next at `path`page/2/."""
        count = f"{len(products)} product" + ("" if len(products) == 1 else "s")
        name = self.data.store.get("name") or ""
        chunks = [products[i : i + PER_PAGE] for i in range(0, len(products), PER_PAGE)] or [[]]
        pages = []
        for number, chunk in enumerate(chunks, start=1):
            here = path if number == 1 else f"{path}page/{number}/"
            pager = ""
            if len(chunks) > 1:
                previous = "" if number == 1 else (path if number == 2 else f"{path}page/{number - 1}/")
                after = f"{path}page/{number + 1}/" if number < len(chunks) else ""
                pager = (
                    '<nav class="pager" aria-label="Pages">'
                    + (f'<a href="{self.link(previous)}" rel="prev">Previous</a>' if previous else "")
                    + f"<span>Page {number} of {len(chunks)}</span>"
                    + (f'<a href="{self.link(after)}" rel="next">Next</a>' if after else "")
                    + "</nav>"
                )
            body = (
                f'<div class="page-head"><h1>{e(heading)}</h1><p class="muted">{count}</p></div>'
                + (f'<p class="intro">{e(intro)}</p>' if intro and number == 1 else "")
                + self.filters(path)
                + self.grid(chunk, eager=2)
                + pager
            )
            titles = ", ".join(p["title"] for p in chunk[:12])
            description = summary(intro or f"{heading} at {name}: {titles}")
            suffix = "" if number == 1 else f" (page {number})"
            pages.append(
                Page(f"{here.strip('/')}/index.html", f"{heading}{suffix} | {name}", description, body)
            )
        return pages

    def catalog_pages(self) -> list[Page]:
        pages = self.listing("/products/", "All products", None, self.data.products)
        for category in self.data.categories:
            inside = [
                p for p in self.data.products if (p.get("category") or {}).get("slug") == category["slug"]
            ]
            path = f"/categories/{category['slug']}/"
            pages += self.listing(path, category["name"], category.get("description"), inside)
        for collection in self.data.collections:
            slugs = self.data.collection_products.get(collection["slug"], [])
            inside = [self.by_slug[s] for s in slugs if s in self.by_slug]
            path = f"/collections/{collection['slug']}/"
            pages += self.listing(path, collection["title"], collection.get("description"), inside)
        return pages

    def product(self, product: dict[str, Any]) -> Page:
        images = product.get("images") or ([product["image"]] if product.get("image") else [])
        gallery = (
            "".join(
                f'<img src="{e(self.image(i.get("url")))}" alt="{e(i.get("alt") or product["title"])}" width="800"'
                f' height="800" {"" if n == 0 else "loading=lazy "}decoding="async">'
                for n, i in enumerate(images)
            )
            or f'<img src="{e(self.image(None))}" alt="" width="800" height="800">'
        )
        availability = str(product.get("availability") or "in_stock")
        sold_out = availability == "out_of_stock"
        attributes = "".join(
            f"<dt>{e(a.get('name'))}</dt><dd>{e(a.get('value'))}</dd>"
            for a in product.get("attributes") or []
        )
        category = product.get("category")
        crumbs = f'<a href="{self.link("/products/")}">Shop</a>' + (
            f' / <a href="{self.link("/categories/" + category["slug"] + "/")}">{e(category["name"])}</a>'
            if category
            else ""
        )
        button = (
            '<button class="button" type="submit" disabled>Sold out</button>'
            if sold_out
            else '<button class="button" type="submit">Add to cart</button>'
        )
        image = (images[0] or {}).get("url") if images else None
        form = (
            f'<form class="add-to-cart" method="get" action="{self.link("/cart/")}" data-slug="{e(product["slug"])}"'
            f' data-title="{e(product["title"])}" data-price="{e(product.get("price_cents"))}"'
            f' data-currency="{e(self.currency)}" data-image="{e(self.image(image))}">'
            f'<label for="qty">Quantity</label><input id="qty" name="quantity" type="number" min="1" max="100"'
            f' value="1" inputmode="numeric"{" disabled" if sold_out else ""}>{button}'
            f'<p class="form-status" role="status" data-status></p></form>'
        )
        description = "".join(
            f"<p>{e(part)}</p>"
            for part in re.split(r"\n\s*\n", product.get("description") or "")
            if part.strip()
        )
        body = (
            f'<p class="crumbs">{crumbs}</p><article class="product"><div class="gallery">{gallery}</div>'
            f'<div class="product-info"><h1>{e(product["title"])}</h1><p class="product-price">{self.price(product)}</p>'
            f'<p class="stock stock-{e(availability)}">{e(AVAILABILITY.get(availability, "In stock"))}</p>'
            f"{form}"
            f'<div class="description">{description}</div>'
            + (f'<dl class="attributes">{attributes}</dl>' if attributes else "")
            + "</div></article>"
        )
        title = product.get("seo_title") or product["title"]
        meta = product.get("seo_description") or summary(
            f"{product['title']}, {money(product.get('price_cents'), self.currency)}. {product.get('description') or ''}"
        )
        return Page(
            f"products/{product['slug']}/index.html",
            f"{title} | {self.data.store.get('name') or ''}",
            meta,
            body,
            "product",
            image,
        )

    def closed_notice(self) -> str:
        store = self.data.store
        if store.get("checkout_open"):
            return ""
        message = store.get("checkout_message") or "Checkout is not open yet."
        return f'<p class="notice" data-checkout-closed>{e(message)}</p>'

    def cart(self) -> Page:
        body = (
            '<h1>Your cart</h1><div class="cart" data-cart>'
            '<noscript><p class="notice">The cart needs JavaScript turned on in your browser.</p></noscript>'
            f'<p class="empty" data-cart-empty>Your cart is empty. <a href="{self.link("/products/")}">Continue shopping</a></p>'
            '<ul class="cart-lines" role="list" data-cart-lines></ul>'
            '<div class="cart-foot" data-cart-foot hidden><p class="subtotal">Subtotal <strong data-cart-subtotal></strong></p>'
            '<p class="muted">Shipping and discounts are worked out at checkout.</p>'
            + self.closed_notice()
            + f'<a class="button" href="{self.link("/checkout/")}" data-checkout-link>Check out</a></div></div>'
        )
        return Page(
            "cart/index.html", f"Cart | {self.data.store.get('name') or ''}", "Your shopping cart.", body
        )

    def checkout(self) -> Page:
        store = self.data.store
        closed = not store.get("checkout_open")
        field = '<div class="field"><label for="{0}">{1}</label><input id="{0}" name="{0}" {2}></div>'
        form = (
            f'<form class="checkout" data-checkout-form{" hidden" if closed else ""} novalidate>'
            + field.format("email", "Email", 'type="email" autocomplete="email" required maxlength="254"')
            + field.format("name", "Full name", 'autocomplete="name" required maxlength="200"')
            + field.format("line1", "Address", 'autocomplete="address-line1" required maxlength="200"')
            + field.format(
                "line2", "Apartment, suite (optional)", 'autocomplete="address-line2" maxlength="200"'
            )
            + field.format("city", "City", 'autocomplete="address-level2" required maxlength="100"')
            + field.format("postal_code", "Postal code", 'autocomplete="postal-code" required maxlength="20"')
            + field.format(
                "country",
                "Country code (e.g. FR)",
                'autocomplete="country" required maxlength="2" pattern="[A-Za-z]{2}"',
            )
            + '<fieldset class="field"><legend>Shipping</legend><div data-shipping-methods>'
            '<p class="muted">Enter your country to see shipping methods.</p></div></fieldset>'
            + field.format("coupon", "Discount code (optional)", 'maxlength="64" autocomplete="off"')
            + '<button class="button" type="submit">Continue to payment</button>'
            '<p class="form-status" role="alert" data-status></p></form>'
        )
        body = (
            '<h1>Checkout</h1><div class="checkout-grid"><section>'
            + self.closed_notice()
            + form
            + '<noscript><p class="notice">Checkout needs JavaScript turned on in your browser.</p></noscript>'
            '</section><aside class="summary"><h2>Order summary</h2><ul class="cart-lines" role="list" data-cart-lines></ul>'
            '<p class="subtotal">Subtotal <strong data-cart-subtotal></strong></p></aside></div>'
        )
        return Page(
            "checkout/index.html", f"Checkout | {store.get('name') or ''}", "Check out your order.", body
        )

    def order(self) -> Page:
        body = (
            '<section class="order" data-order><h1>Thank you</h1>'
            "<p data-order-status>Loading your order…</p><div data-order-detail></div>"
            '<noscript><p class="notice">Your order confirmation needs JavaScript turned on in your browser; '
            "you will also receive it by email.</p></noscript>"
            f'<p><a href="{self.link("/products/")}">Continue shopping</a></p></section>'
        )
        return Page(
            "order/index.html",
            f"Order confirmation | {self.data.store.get('name') or ''}",
            "Your order.",
            body,
        )

    def not_found(self) -> Page:
        body = (
            '<section class="hero"><h1>Page not found</h1><p>The page you were looking for does not exist.</p>'
            f'<a class="button" href="{self.link("/products/")}">Continue shopping</a></section>'
        )
        return Page(
            "404.html", f"Page not found | {self.data.store.get('name') or ''}", "Page not found.", body
        )
