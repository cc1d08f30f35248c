"""Catalog changes reach the storefront site: a change a shopper could see asks the site host to rebuild (a
POST to the shop's build hook), a burst of edits costs one build at once and one at the end of the debounce
window, and a change no shopper sees (a stock figure alone) asks for nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from localhttp import PostRecorder
from storefronthelpers import LIVE, StoreShop, fresh_database, make_shop

from svc_backoffice.core import tenancy
from svc_backoffice.data import db
from svc_backoffice.domain import site_builds as rebuilds

WINDOW = 5


@pytest.fixture(scope="module")
def shop_url() -> Iterator[str]:
    yield from fresh_database("bo_sf_builds")


@pytest.fixture
def hook() -> Iterator[PostRecorder]:
    """A site host's build hook: records the POSTs it receives."""
    with PostRecorder("/build_hooks/site") as running:
        yield running


@pytest.fixture
def store(hosted_env, shop_url, hook) -> StoreShop:
    hosted_env.setenv("BACKOFFICE_STOREFRONT_BUILD_DEBOUNCE_SECONDS", str(WINDOW))
    made = make_shop(
        hosted_env, shop_url, base="https://api.example.com", storefront_url=LIVE, build_hook_url=hook.url
    )
    # Start from a built site: what earlier tests changed is behind us.
    made.sql(
        "UPDATE storefront_builds SET built_through = coalesce((SELECT max(id) FROM storefront_changes), 0), "
        "requested_at = now() - interval '1 hour'"
    )
    return made


def pending(store: StoreShop) -> bool:
    (row,) = store.sql(
        "SELECT coalesce((SELECT max(id) FROM storefront_changes), 0) > built_through FROM storefront_builds"
    )
    return bool(row[0])


def test_a_burst_of_edits_costs_one_build_now_and_one_at_the_end_of_the_window(store, hook):
    created = store.call("POST", "/api/products", cookie=store.admin_cookie, body={"title": "Burst bean"})
    assert created.status == 201, created.body
    assert hook.wait_for(1, 10) == 1  # the first change of a quiet spell is built at once
    product = created.json()["id"]
    for price in (100, 200, 300, 400):
        edited = store.call(
            "PATCH", f"/api/products/{product}", cookie=store.admin_cookie, body={"price_cents": price}
        )
        assert edited.status == 200, edited.body
    assert len(hook.received) == 1 and pending(store)  # inside the window: waiting for its end
    assert hook.wait_for(2, 10 * WINDOW) == 2  # the window's end builds the four edits together
    assert not pending(store)
    assert rebuilds.pending_timers() == 0


def adjust(store, product: str, delta: int, reason: str):
    """The stock of `product` adjusted by `delta` through the backoffice API, as its admin."""
    body = {"product_id": product, "delta": delta, "reason": reason}
    return store.call("POST", "/api/inventory/adjust", cookie=store.admin_cookie, body=body)


def test_a_stock_figure_alone_asks_for_no_build_but_running_out_does(store, hook):
    product = store.product("stocked-bean", stock=40)
    store.sql(
        "UPDATE storefront_builds SET built_through = (SELECT max(id) FROM storefront_changes), "
        "requested_at = now() - interval '1 hour'"
    )
    adjusted = adjust(store, product, -3, "Broken bags")
    assert adjusted.status == 201, adjusted.body
    assert not pending(store) and hook.received == []
    emptied = adjust(store, product, -37, "Sold at the market")
    assert emptied.status == 201, emptied.body
    assert hook.wait_for(1, 10) == 1 and not pending(store)


def test_a_refused_hook_is_asked_again_later(store, hook):

    broken = dataclasses.replace(store.shop, build_hook_url="http://127.0.0.1:9/hook")
    store.product("unbuilt-bean")
    with tenancy.serving(broken), db.POOL.lease(store.url) as database:
        assert rebuilds.flush(database) is not None  # not taken: still to build
    assert pending(store)
    with tenancy.serving(store.shop), db.POOL.lease(store.url) as database:
        assert rebuilds.flush(database) is None
    assert hook.wait_for(1, 10) == 1 and not pending(store)
