"""Analytics end to end on the running local stack: 5,000 beacons from concurrent clients go through the
collect route and the queue; the aggregator (the local event source mapping, batching window included)
writes them; get_project_analytics over MCP reads back the exact pageview count and the unique visitors."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
from stackproc import create_user
from test_journeys import connect, signed_in
from test_workspace_browser import access_token, tool

BEACONS = 5000
VISITORS = 1800
CLIENTS = 16


def test_5000_concurrent_beacons_are_counted_exactly_and_visitors_within_3_percent(stack, gateway):
    create_user(stack, "analytics@example.com", "analytics-pass-1")
    with signed_in(gateway, "analytics@example.com", "analytics-pass-1") as browser:
        for provider in ("repo_host", "db_host"):
            connect(browser, provider)
    token = access_token(gateway, "analytics@example.com", "analytics-pass-1", "Analytics Client")
    project = tool(gateway, token, "create_project", prompt="Linen tea towels printed by hand, cheerful tone")

    # The shop's visitors come from many networks: 16 client addresses (127.0.1.1-16, all loopback), so each
    # sends about 313 beacons, within the per-address limit (600 a minute, docs/decisions.md).
    clients = [
        httpx.Client(timeout=30, transport=httpx.HTTPTransport(local_address=f"127.0.1.{k + 1}"))
        for k in range(CLIENTS)
    ]

    def send(n: int) -> int:
        return (
            clients[n % CLIENTS]
            .post(
                f"{gateway}/api/analytics/collect",
                json={
                    "site": project["project_id"],
                    "path": f"/products/p{n % 40}",
                    "visitor": f"visitor-{n % VISITORS:06d}",
                    "session": f"session-{n % 2500:06d}",
                    "referrer": "https://www.example.org/" if n % 3 else "",
                    "country": "FR" if n % 2 else "DE",
                },
                headers={"Origin": "https://shop.example"},
            )
            .status_code
        )

    try:
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(send, range(BEACONS)))
    finally:
        for client in clients:
            client.close()
    assert statuses.count(204) == BEACONS, {s: statuses.count(s) for s in set(statuses)}

    day = datetime.now(UTC).date().isoformat()
    deadline = time.monotonic() + 60  # the freshness target: a beacon shows within 60 s
    report: dict = {}
    while time.monotonic() < deadline:
        report = tool(
            gateway,
            token,
            "get_project_analytics",
            project_id=project["project_id"],
            start_date=day,
            end_date=day,
        )
        if report["pageviews"] >= BEACONS:
            break
        time.sleep(1)
    assert report["pageviews"] == BEACONS
    assert abs(report["unique_visitors"] - VISITORS) / VISITORS <= 0.03, report["unique_visitors"]
    assert report["top_pages"][0]["pageviews"] == BEACONS // 40
    assert {c["country"] for c in report["countries"]} == {"FR", "DE"}
