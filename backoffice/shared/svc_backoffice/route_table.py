"""The backoffice route table: every route file (`api/<path>/route`) with its handlers, minimum role, body
model and answers. docs/routes.md, the OpenAPI document and the role gate are all derived from it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROLE_RANK = {"viewer": 1, "editor": 2, "admin": 3, "owner": 4}

# Resources whose routers are implemented, by the function (template CodeUri functions/<name>/) serving them.
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "catalog": ("products", "categories", "attributes", "collections"),
    "inventory": ("inventory",),
    "settings": ("settings", "staff"),
    "search": ("search", "ai"),
    "commerce": ("orders", "customers", "coupons"),
    "shipping": ("shipping", "payments"),
    "blog": ("blog",),
    "integrations": ("integrations", "gsc"),
}


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # /api/... with [id] / [slug] segments, as the route file's folder
    role: str | None  # minimum role; None = no role gate (signature-authenticated webhooks)
    resource: str
    body: str | None = None  # request model name in svc_backoffice.models
    query: str | None = None  # query model name in svc_backoffice.models
    answers: str = "200"
    summary: str = ""

    @property
    def rule(self) -> str:
        """The path as API Gateway and Powertools write it: [id] -> {id} / <id>."""
        return self.path.replace("[", "{").replace("]", "}")


_R = Route
# fmt: off
ROUTES: tuple[Route, ...] = (
    # -- catalog
    _R("GET", "/api/products", "viewer", "products", query="ProductListQuery", answers="200 302 400 500", summary="List products with filters, sort and paging"),
    _R("POST", "/api/products", "editor", "products", body="ProductCreate", answers="201 302 400 409 422 500", summary="Create a product"),
    _R("GET", "/api/products/[id]", "viewer", "products", answers="200 302 404 500", summary="A product with its relations"),
    _R("PATCH", "/api/products/[id]", "editor", "products", body="ProductUpdate", answers="200 302 400 404 409 422 500", summary="Update a product"),
    _R("DELETE", "/api/products/[id]", "editor", "products", answers="200 302 404 500", summary="Delete a product"),
    _R("GET", "/api/categories", "viewer", "categories", answers="200 302 500", summary="Category tree in display order"),
    _R("POST", "/api/categories", "editor", "categories", body="CategoryCreate", answers="201 302 400 409 422 500", summary="Create a category"),
    _R("PATCH", "/api/categories/[id]", "editor", "categories", body="CategoryUpdate", answers="200 302 400 404 409 422 500", summary="Update a category"),
    _R("DELETE", "/api/categories/[id]", "editor", "categories", answers="200 302 404 500", summary="Delete a category (products keep no category)"),
    _R("POST", "/api/categories/reorder", "editor", "categories", body="ReorderBody", answers="200 302 400 422 500", summary="Set category positions from an ordered id list"),
    _R("GET", "/api/attributes", "viewer", "attributes", answers="200 302 500", summary="Product attributes"),
    _R("POST", "/api/attributes", "editor", "attributes", body="AttributeCreate", answers="201 302 400 409 500", summary="Create an attribute"),
    _R("PATCH", "/api/attributes/[id]", "editor", "attributes", body="AttributeUpdate", answers="200 302 400 404 409 500", summary="Update an attribute"),
    _R("DELETE", "/api/attributes/[id]", "editor", "attributes", answers="200 302 404 500", summary="Delete an attribute and its values"),
    _R("GET", "/api/collections", "viewer", "collections", answers="200 302 500", summary="Collections with product counts"),
    _R("POST", "/api/collections", "editor", "collections", body="CollectionCreate", answers="201 302 400 409 422 500", summary="Create a collection"),
    _R("GET", "/api/collections/[id]", "viewer", "collections", answers="200 302 404 500", summary="A collection with its products in order"),
    _R("PATCH", "/api/collections/[id]", "editor", "collections", body="CollectionUpdate", answers="200 302 400 404 409 422 500", summary="Update a collection"),
    _R("DELETE", "/api/collections/[id]", "editor", "collections", answers="200 302 404 500", summary="Delete a collection"),
    _R("POST", "/api/collections/[id]/products/reorder", "editor", "collections", body="ReorderBody", answers="200 302 400 404 422 500", summary="Set the collection's products and their order"),
    # -- inventory
    _R("GET", "/api/inventory/locations", "viewer", "inventory", answers="200 302 500", summary="Stock locations"),
    _R("POST", "/api/inventory/locations", "admin", "inventory", body="LocationCreate", answers="201 302 400 409 500", summary="Create a stock location"),
    _R("PATCH", "/api/inventory/locations/[id]", "admin", "inventory", body="LocationUpdate", answers="200 302 400 404 409 500", summary="Update a stock location"),
    _R("DELETE", "/api/inventory/locations/[id]", "admin", "inventory", answers="200 302 404 422 500", summary="Delete an empty, non-default stock location"),
    _R("POST", "/api/inventory/adjust", "editor", "inventory", body="InventoryAdjust", answers="201 302 400 404 422 500", summary="Write a stock delta with its reason"),
    # -- commerce
    _R("GET", "/api/orders", "viewer", "orders", query="OrderListQuery", answers="200 302 400 500", summary="List orders with filters and paging"),
    _R("POST", "/api/orders", "editor", "orders", body="OrderCreate", answers="201 302 400 404 409 422 500", summary="Create an order from items (prices from the catalog), coupon and shipping"),
    _R("GET", "/api/orders/[id]", "viewer", "orders", answers="200 302 404 500", summary="An order with items, notes, status history and customer"),
    _R("PATCH", "/api/orders/[id]", "editor", "orders", body="OrderUpdate", answers="200 302 400 404 500", summary="Update contact, addresses or tracking (status moves by transition only)"),
    _R("POST", "/api/orders/[id]/transition", "editor", "orders", body="OrderTransition", answers="200 302 400 404 422 500", summary="Move the order to another status (rules in order_transition())"),
    _R("POST", "/api/orders/[id]/notes", "editor", "orders", body="OrderNoteCreate", answers="201 302 400 404 500", summary="Add a note to an order"),
    _R("GET", "/api/customers", "viewer", "customers", query="CustomerListQuery", answers="200 302 400 500", summary="List customers with search and paging"),
    _R("POST", "/api/customers", "editor", "customers", body="CustomerCreate", answers="201 302 400 409 500", summary="Create a customer"),
    _R("GET", "/api/customers/[id]", "viewer", "customers", answers="200 302 404 500", summary="A customer with order totals and recent orders"),
    _R("PATCH", "/api/customers/[id]", "editor", "customers", body="CustomerUpdate", answers="200 302 400 404 409 500", summary="Update a customer"),
    _R("GET", "/api/coupons", "viewer", "coupons", answers="200 302 500", summary="Coupons"),
    _R("POST", "/api/coupons", "editor", "coupons", body="CouponCreate", answers="201 302 400 409 422 500", summary="Create a coupon"),
    _R("GET", "/api/coupons/[id]", "viewer", "coupons", answers="200 302 404 500", summary="A coupon"),
    _R("PATCH", "/api/coupons/[id]", "editor", "coupons", body="CouponUpdate", answers="200 302 400 404 409 422 500", summary="Update a coupon"),
    _R("DELETE", "/api/coupons/[id]", "editor", "coupons", answers="200 302 404 500", summary="Delete a coupon"),
    _R("GET", "/api/coupons/[id]/stats", "viewer", "coupons", answers="200 302 404 500", summary="Redemption figures of a coupon"),
    # -- shipping, payments
    _R("GET", "/api/shipping/zones", "viewer", "shipping", answers="200 302 500", summary="Shipping zones with their methods"),
    _R("POST", "/api/shipping/zones", "admin", "shipping", body="ShippingZoneCreate", answers="201 302 400 409 500", summary="Create a shipping zone"),
    _R("PATCH", "/api/shipping/zones/[id]", "admin", "shipping", body="ShippingZoneUpdate", answers="200 302 400 404 409 500", summary="Update a shipping zone"),
    _R("DELETE", "/api/shipping/zones/[id]", "admin", "shipping", answers="200 302 404 500", summary="Delete a shipping zone and its methods"),
    _R("GET", "/api/shipping/methods", "viewer", "shipping", answers="200 302 500", summary="Shipping methods"),
    _R("POST", "/api/shipping/methods", "admin", "shipping", body="ShippingMethodCreate", answers="201 302 400 409 422 500", summary="Create a shipping method in a zone"),
    _R("PATCH", "/api/shipping/methods/[id]", "admin", "shipping", body="ShippingMethodUpdate", answers="200 302 400 404 409 422 500", summary="Update a shipping method"),
    _R("DELETE", "/api/shipping/methods/[id]", "admin", "shipping", answers="200 302 404 500", summary="Delete a shipping method"),
    _R("GET", "/api/shipping/carriers", "viewer", "shipping", answers="200 302 500", summary="Shipping carriers"),
    _R("POST", "/api/shipping/carriers", "admin", "shipping", body="CarrierCreate", answers="201 302 400 409 500", summary="Create a carrier"),
    _R("PATCH", "/api/shipping/carriers/[id]", "admin", "shipping", body="CarrierUpdate", answers="200 302 400 404 409 500", summary="Update a carrier"),
    _R("DELETE", "/api/shipping/carriers/[id]", "admin", "shipping", answers="200 302 404 500", summary="Delete a carrier (methods keep no carrier)"),
    _R("GET", "/api/payments/providers", "admin", "payments", answers="200 302 500", summary="Payment providers (webhook_secret is write-only)"),
    _R("POST", "/api/payments/providers", "admin", "payments", body="PaymentProviderCreate", answers="201 302 400 409 500", summary="Configure a payment provider; webhook_secret is stored encrypted"),
    _R("PATCH", "/api/payments/providers/[id]", "admin", "payments", body="PaymentProviderUpdate", answers="200 302 400 404 500", summary="Update a payment provider or replace its webhook secret"),
    _R("DELETE", "/api/payments/providers/[id]", "admin", "payments", answers="200 302 404 500", summary="Remove a payment provider"),
    _R("POST", "/api/payments/webhooks/card", None, "payments", answers="200 400 401 500", summary="Card provider webhook: `card-signature: t=..,v1=..` over `{t}.{raw body}`"),
    _R("POST", "/api/payments/webhooks/wallet-a", None, "payments", answers="200 400 401 500", summary="Wallet A webhook: `wallet-a-signature: sha256=..` over `{timestamp}:{raw body}`"),
    _R("POST", "/api/payments/webhooks/wallet-b", None, "payments", answers="200 400 401 500", summary="Wallet B webhook: `wallet-b-signature`, base64 HMAC-SHA256 of the raw body"),
    _R("POST", "/api/payments/webhooks/mobile-money", None, "payments", answers="200 400 401 500", summary="Mobile-money webhook: `mobile-money-signature`, hex HMAC-SHA512 of the raw body"),
    # -- blog
    _R("GET", "/api/blog/posts", "viewer", "blog", query="BlogPostListQuery", answers="200 302 400 500", summary="Blog posts with filters and paging"),
    _R("POST", "/api/blog/posts", "editor", "blog", body="BlogPostCreate", answers="201 302 400 409 422 500", summary="Create a draft post"),
    _R("GET", "/api/blog/posts/[id]", "viewer", "blog", answers="200 302 404 500", summary="A blog post"),
    _R("PATCH", "/api/blog/posts/[id]", "editor", "blog", body="BlogPostUpdate", answers="200 302 400 404 409 422 500", summary="Update a blog post"),
    _R("DELETE", "/api/blog/posts/[id]", "editor", "blog", answers="200 302 404 500", summary="Delete a blog post and its comments"),
    _R("POST", "/api/blog/posts/[id]/publish", "editor", "blog", answers="200 302 404 422 500", summary="Publish now"),
    _R("POST", "/api/blog/posts/[id]/unpublish", "editor", "blog", answers="200 302 404 422 500", summary="Back to draft"),
    _R("POST", "/api/blog/posts/[id]/schedule", "editor", "blog", body="BlogPostSchedule", answers="200 302 400 404 422 500", summary="Schedule publication at a future time"),
    _R("GET", "/api/blog/categories", "viewer", "blog", answers="200 302 500", summary="Blog categories in display order"),
    _R("POST", "/api/blog/categories", "editor", "blog", body="BlogCategoryCreate", answers="201 302 400 409 500", summary="Create a blog category"),
    _R("PATCH", "/api/blog/categories/[id]", "editor", "blog", body="BlogCategoryUpdate", answers="200 302 400 404 409 500", summary="Update a blog category"),
    _R("DELETE", "/api/blog/categories/[id]", "editor", "blog", answers="200 302 404 500", summary="Delete a blog category (posts keep no category)"),
    _R("POST", "/api/blog/categories/reorder", "editor", "blog", body="ReorderBody", answers="200 302 400 422 500", summary="Set blog category positions from an ordered id list"),
    _R("GET", "/api/blog/comments", "viewer", "blog", query="BlogCommentListQuery", answers="200 302 400 500", summary="Comments with filters and paging"),
    _R("PATCH", "/api/blog/comments/[id]", "editor", "blog", body="BlogCommentUpdate", answers="200 302 400 404 500", summary="Moderate one comment"),
    _R("POST", "/api/blog/comments/bulk", "editor", "blog", body="BlogCommentBulk", answers="200 207 302 400 500", summary="Approve, mark as spam or delete many comments (207 on partial success)"),
    _R("POST", "/api/blog/comments/approve-all", "editor", "blog", answers="200 302 500", summary="Approve every pending comment"),
    # -- settings, staff, integrations
    _R("GET", "/api/settings", "viewer", "settings", answers="200 302 500", summary="Store settings"),
    _R("PATCH", "/api/settings", "admin", "settings", body="SettingsUpdate", answers="200 302 400 422 500", summary="Update store settings"),
    _R("GET", "/api/staff", "admin", "staff", answers="200 302 500", summary="Staff members and their roles"),
    _R("POST", "/api/staff", "admin", "staff", body="StaffCreate", answers="201 302 400 403 409 500", summary="Add a staff member (only an owner grants owner)"),
    _R("PATCH", "/api/staff", "admin", "staff", body="StaffUpdate", answers="200 302 400 403 404 422 500", summary="Change a staff member's role or name (only an owner grants owner)"),
    _R("DELETE", "/api/staff", "admin", "staff", body="StaffDelete", answers="200 302 400 403 404 422 500", summary="Remove a staff member (only an owner removes an owner)"),
    _R("GET", "/api/integrations", "admin", "integrations", answers="200 302 500", summary="Integrations (secrets are write-only)"),
    _R("POST", "/api/integrations", "admin", "integrations", body="IntegrationCreate", answers="201 302 400 409 500", summary="Add an integration"),
    _R("PATCH", "/api/integrations/[id]", "admin", "integrations", body="IntegrationUpdate", answers="200 302 400 404 500", summary="Update an integration"),
    _R("DELETE", "/api/integrations/[id]", "admin", "integrations", answers="200 302 404 500", summary="Remove an integration"),
    # -- search, ai, gsc (search and gsc/* are always dynamic)
    _R("GET", "/api/search", "viewer", "search", query="SearchQuery", answers="200 302 400 500", summary="Command-palette search across entities"),
    _R("POST", "/api/ai/suggest", "viewer", "ai", body="AiSuggest", answers="200 302 400 500", summary="Deterministic placeholder suggestions, cached by SHA-256 of the request (x-cache)"),
    _R("POST", "/api/gsc/connect", "admin", "gsc", answers="200 302 422 500", summary="Start the search-console OAuth flow (authorize URL with state and PKCE)"),
    _R("GET", "/api/gsc/callback", "admin", "gsc", answers="302 400 500", summary="Search-console OAuth callback: exchange the code, store tokens encrypted"),
    _R("GET", "/api/gsc/status", "admin", "gsc", answers="200 302 500", summary="Search-console connection and verified sites"),
    _R("POST", "/api/gsc/disconnect", "admin", "gsc", answers="200 302 500", summary="Revoke and forget the search-console tokens"),
)
# fmt: on

# Non-API routes served by the auth function (no role gate: they establish or end the session).
AUTH_ROUTES: tuple[Route, ...] = (
    _R(
        "GET",
        "/auth/sso",
        None,
        "auth",
        query="HandoffQuery",
        answers="302",
        summary="Hand-off from the platform; sets svc_session",
    ),
    _R("GET", "/auth/signed-out", None, "auth", answers="200", summary="Signed-out page; clears svc_session"),
    _R("GET", "/openapi.json", None, "auth", answers="200", summary="This API's OpenAPI document"),
)


def route_files() -> list[str]:
    """Distinct route-file paths, in table order."""
    return list(dict.fromkeys(r.path for r in ROUTES))


def routes_of(resources: tuple[str, ...]) -> list[Route]:
    return [r for r in ROUTES if r.resource in resources]


def implemented(route: Route) -> bool:
    return any(route.resource in resources for resources in FUNCTIONS.values())


def function_of(route: Route) -> str | None:
    return next((name for name, resources in FUNCTIONS.items() if route.resource in resources), None)


def render_markdown() -> str:
    counts = {m: sum(r.method == m for r in ROUTES) for m in ("POST", "GET", "PATCH", "DELETE")}
    gated = sum(1 for p in route_files() if any(r.role for r in ROUTES if r.path == p))
    lines = [
        "# Backoffice routes",
        "",
        "Generated from `shared/svc_backoffice/route_table.py` by `python -m svc_backoffice.route_table`;",
        "do not edit by hand. A route file at `api/<path>/route` answers `/api/<path>`.",
        "",
        f"{len(route_files())} route files; handlers: "
        + ", ".join(f"{n} {m}" for m, n in counts.items())
        + f"; {gated} route files are behind the role gate (the others authenticate by signature).",
        "",
        "Minimum role: viewer 1 < editor 2 < admin 3 < owner 4. A missing or expired session redirects (302) to",
        "`/auth/signed-out`, an insufficient role to `/auth/signed-out?reason=insufficient_role`.",
        "",
        "| Method | Path | Minimum role | Body | Query | Answers | Function | Summary |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in (*ROUTES, *AUTH_ROUTES):
        fn = "auth" if r.resource == "auth" else (function_of(r) or "_(later issue)_")
        lines.append(
            f"| {r.method} | `{r.path}` | {r.role or 'none'} | {r.body or ''} | {r.query or ''} | "
            f"{r.answers} | {fn} | {r.summary} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "docs/routes.md"
    )
    target.write_text(render_markdown())


if __name__ == "__main__":
    main()
