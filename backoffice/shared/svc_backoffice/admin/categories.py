"""Categories in display order, product categories and blog categories alike (`Ordered` declares one kind's
pages once): the list, a new category, renaming one (its slug, in the storefront's addresses, stays),
deleting one after asking (its products or posts stay, without a category), and moving one up or down with a
button per row (works from the keyboard, without script), through the domain's functions behind the API
routes' roles."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.forms import FormInvalid, written
from svc_backoffice.admin.pages import form, nav_of, page, router, see_other
from svc_backoffice.admin.removal import confirmed
from svc_backoffice.core.errors import Conflict, NotFound
from svc_backoffice.data.db import Database, Row, database
from svc_backoffice.domain import blog, catalog
from svc_backoffice.domain.rows import Table
from svc_backoffice.edge.requests import path_id


@dataclass(frozen=True)
class Ordered:
    """One kind of category: the domain's `table` (with the request models creating and renaming one), its
    list and its reorder; its page `path`, its API (`POST <api>`, `PATCH <api>/[id]`, `DELETE <api>/[id]`,
    `POST <api>/reorder`), and what a category groups (`items`)."""

    table: Table[Any, Any]
    listed: Callable[[Database], list[Row]]
    reorder: Callable[[Database, list[Any]], None]
    path: str
    api: str
    title: str
    items: str  # what a category groups: "product", "post"
    back: tuple[str, str]  # the link beside the title: (path, words)

    @property
    def nav(self) -> str:
        return nav_of(self.path)

    @property
    def count(self) -> str:
        """The row's column counting its items (`product_count`)."""
        return f"{self.items}_count"

    def render(self, status: int = 200, **context: object) -> Response:
        return page(
            "categories.html",
            status,
            nav=self.nav,
            title=self.title,
            kind=self,
            categories=self.listed(database()),
            **context,
        )

    def create_one(self) -> Response:
        fields = form()
        position = len(self.listed(database()))
        try:
            written(
                self.table.create_model,
                {"name": fields.get("name", "").strip(), "position": position},
                self.table.create,
            )
        except FormInvalid as exc:
            return self.render(400, values=fields, errors=exc.fields)
        except Conflict as exc:
            return self.render(409, values=fields, errors={"name": exc.message})
        return see_other(self.path, notice="created")

    def move(self, id: str) -> Response:
        """Swap the category with its neighbour above (`up`) or below, and store the whole order."""
        moved = path_id(id)
        ids = [str(c["id"]) for c in self.listed(database())]
        if moved not in ids:
            raise NotFound()
        at = ids.index(moved)
        other = at - 1 if form().get("to") == "up" else at + 1
        if 0 <= other < len(ids):
            ids[at], ids[other] = ids[other], ids[at]
            self.reorder(database(), ids)
        return see_other(self.path, notice="saved")

    def rename(self, id: str) -> Response:
        category_id = path_id(id)
        name_field = f"name_{category_id}"  # each row's own field, so an error shows beside the right one
        typed = form().get(name_field, "")
        try:
            written(
                self.table.update_model,
                {"name": typed.strip()},
                lambda db, body: self.table.update(db, category_id, body),
                {"name": name_field},
            )
        except FormInvalid as exc:
            return self.render(400, values={name_field: typed}, errors=exc.fields)
        except Conflict as exc:
            return self.render(409, values={name_field: typed}, errors={name_field: exc.message})
        return see_other(self.path, notice="saved")

    def remove(self, id: str) -> Response:
        category_id = path_id(id)
        found = next((c for c in self.listed(database()) if str(c["id"]) == category_id), None)
        if found is None:
            raise NotFound()
        return confirmed(
            lambda: self.table.delete(database(), category_id),
            what=f"the category {found['name']}",
            back=self.path,
            consequence=f"Its {self.items}s stay, without a category.",
        )

    def declare(self) -> Ordered:
        router.page("GET", self.path, api=f"GET {self.api}")(self.render)
        router.page("POST", self.path, api=f"POST {self.api}")(self.create_one)
        router.page("POST", f"{self.path}/<id>/move", api=f"POST {self.api}/reorder")(self.move)
        router.page("POST", f"{self.path}/<id>/delete", api=f"DELETE {self.api}/[id]")(self.remove)
        router.page("POST", f"{self.path}/<id>", api=f"PATCH {self.api}/[id]")(self.rename)
        return self


PRODUCT_CATEGORIES = Ordered(
    table=catalog.CATEGORIES,
    listed=catalog.list_categories,
    reorder=catalog.reorder_categories,
    path="/products/categories",
    api="/api/categories",
    title="Categories",
    items="product",
    back=("/products", "All products"),
).declare()

BLOG_CATEGORIES = Ordered(
    table=blog.CATEGORIES,
    listed=blog.list_categories,
    reorder=blog.reorder_categories,
    path="/content/categories",
    api="/api/blog/categories",
    title="Blog categories",
    items="post",
    back=("/content", "All posts"),
).declare()
