"""The admin screens' frame: Home's figures, the navigation with who is signed in, the pages for a person
without a session, a role too low or a missing page (HTML in words, never JSON), and the headers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adminhelpers import PAGE, get, text
from bohelpers import Client, invoke

from svc_backoffice.admin import render

NAV = ("Home", "Orders", "Products", "Customers", "Discounts", "Content", "Settings")


def _order(db, status: str, total: int, placed: datetime) -> None:
    db.all(
        "INSERT INTO orders (email, status, currency, subtotal_cents, placed_at) "
        "VALUES ('buyer@example.com', 'pending', 'EUR', %s, %s) RETURNING id",
        (total, placed),
    )
    if status != "pending":
        db.all("UPDATE orders SET status = 'paid' WHERE placed_at = %s", (placed,))


def test_home_shows_the_store_who_is_signed_in_and_the_navigation(as_role, db):
    db.all("UPDATE settings SET store_name = %s", ("<b>Lena's</b> shop",))
    answer = get(as_role("admin"), "/")
    assert answer.status == 200 and answer.headers["Content-Type"].startswith("text/html")
    words = text(answer)
    assert "<b>Lena's</b> shop" in words and "&lt;b&gt;Lena&#39;s&lt;/b&gt; shop" in answer.body
    assert "admin@shop.example" in words and '<strong id="role">admin</strong>' in answer.body
    for item in NAV:
        assert f">{item}</a>" in answer.body
    assert "Sign out" in words
    csp = answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "<script>" not in answer.body


def test_home_counts_todays_and_this_weeks_paid_orders_in_the_store_currency(as_role, db):
    now = datetime.now(UTC)
    _order(db, "paid", 1950, now - timedelta(minutes=5))
    _order(db, "pending", 700, now - timedelta(minutes=4))
    db.all("UPDATE settings SET currency = 'EUR', locale = 'fr', timezone = 'UTC'")
    words = text(get(as_role("viewer"), "/"))
    assert "19,50 €" in words  # today's revenue counts the paid order only, in the store's locale
    assert "2 orders" in words
    assert "Paid orders waiting" in words


def test_money_and_dates_follow_the_store_locale():
    assert render.money(1950, "EUR", "en") == "€19.50"
    assert render.money(123456789, "USD", "en") == "$1,234,567.89"
    assert render.money(1950, "EUR", "de") == "19,50\u00a0€"
    assert render.money(500, "JPY", "en") == "¥500"
    assert render.amount(1950) == "19.50"
    moment = datetime(2026, 11, 27, 23, 30, tzinfo=UTC)
    assert render.when(moment, "Europe/Paris", "en") == "28 Nov 2026, 00:30"
    assert render.when(moment, "Europe/Berlin", "de") == "28.11.2026 00:30"


def test_without_a_session_a_page_says_so_in_words(db):
    answer = invoke("GET", "/", headers=PAGE)
    assert answer.status == 401 and answer.headers["Content-Type"].startswith("text/html")
    assert "Open the backoffice again from your workspace" in text(answer)


def test_an_expired_session_is_the_signed_out_page(db, staff):
    db.all("UPDATE staff SET session_epoch = session_epoch + 1 WHERE email = 'owner@shop.example'")
    answer = get(Client(staff["owner"]["cookie"]), "/")
    assert answer.status == 401 and "Your session has ended" in text(answer)


def test_a_missing_page_is_a_404_in_words_inside_the_layout(as_role):
    answer = get(as_role("viewer"), "/no/such/page")
    assert answer.status == 404 and "There is no such page" in text(answer)
    assert ">Products</a>" in answer.body
    signed_out = invoke("GET", "/nothing-here", headers=PAGE)
    assert signed_out.status == 404 and "There is no such page" in text(signed_out)
    # The API keeps its JSON answers.
    assert invoke("GET", "/api/nothing", headers=PAGE).json() == {"error": "Not found"}


def test_static_files_are_served_and_nothing_else(db):
    css = invoke("GET", f"/static/admin.css?v={render.asset_version()}")
    assert css.status == 200 and css.headers["Content-Type"].startswith("text/css")
    assert invoke("GET", "/static/admin.js").headers["Content-Type"].startswith("text/javascript")
    assert invoke("GET", "/static/..%2Fpages.py", headers=PAGE).status == 404


def test_home_links_to_the_live_storefront_from_the_deployment_settings(as_role, db, monkeypatch):
    from svc_backoffice.domain import storefront_settings

    monkeypatch.delenv("STOREFRONT_URL", raising=False)
    storefront_settings.reset()
    assert "set STOREFRONT_URL" in text(get(as_role("viewer"), "/"))
    monkeypatch.setenv("STOREFRONT_URL", "https://lena.example/")
    storefront_settings.reset()
    try:
        answer = get(as_role("viewer"), "/")
    finally:
        storefront_settings.reset()
    assert 'href="https://lena.example" rel="noopener" target="_blank" id="storefront-link"' in answer.body
    assert "Your storefront is live at https://lena.example" in text(answer)
