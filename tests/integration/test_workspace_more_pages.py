"""The workspace's traffic, credits and settings pages through real API Gateway proxy events: each shows what
the matching MCP tool answers (same domain functions), refuses bad input in words, and stays the owner's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from test_workspace_pages import csrf_of, sign_in

from svc_shared.wiring import services


@pytest.fixture
def project(api, demo_user):
    sign_in(api)
    return services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Hand-dyed wool for patient knitters, friendly tone",
        name="Wool Shed",
    )


def beacons(project_id: str, when: datetime, count: int, path: str = "/", country: str = "FR") -> None:
    from svc_shared.domain.analytics import Beacon

    services.analytics().apply(
        [
            (
                f"{when.isoformat()}-{path}-{k}",
                Beacon(
                    project_id, path, "https://news.example/", f"v-{k}", f"s-{k}", country, when.timestamp()
                ),
            )
            for k in range(count)
        ]
    )


def test_traffic_draws_each_day_and_agrees_with_the_tool(api, project):
    now = datetime.fromtimestamp(services.clock().now(), UTC)
    beacons(project.id, now, 3, "/shop")
    beacons(project.id, now - timedelta(days=2), 5, "/about", "DE")
    page = api.get(f"/workspace/projects/{project.id}/traffic")
    assert page.status == 200, page.text
    report = services.analytics().report(project.id, (now - timedelta(days=29)).date(), now.date())
    assert f'<dd id="pageviews">{report["pageviews"]}</dd>' in page.text and report["pageviews"] == 8
    assert f'<dd id="visitors">{report["unique_visitors"]}</dd>' in page.text
    bars = re.findall(r'<rect class="bar"[^>]*data-day="([0-9-]+)" data-pageviews="(\d+)"', page.text)
    assert len(bars) == 30
    counts = dict(bars)
    assert counts[now.date().isoformat()] == "3"
    assert counts[(now - timedelta(days=2)).date().isoformat()] == "5"
    assert "<td>/about</td><td>5</td>" in page.text and "<td>news.example</td>" in page.text
    assert 'id="live-sessions">3<' in page.text  # the last 5 minutes: the 3 sessions of now
    assert "<script" not in page.text.split("</head>")[1]  # the chart is drawn by the server

    week = api.get(f"/workspace/projects/{project.id}/traffic", params={"days": "7"})
    assert len(re.findall(r'<rect class="bar"', week.text)) == 7


def test_the_chart_labels_its_axes_and_every_date_reads_one_way(api, project):
    now = datetime.fromtimestamp(services.clock().now(), UTC)
    page = api.get(f"/workspace/projects/{project.id}/traffic")
    labels = re.findall(r'<text class="axis day"[^>]*>([^<]+)</text>', page.text)
    # 30 days: a label every fifth day, under its bar, never only the two ends.
    assert len(labels) == 6
    assert labels[0] == f"{(now - timedelta(days=29)).day} {(now - timedelta(days=29)):%b}"
    assert re.search(r'<text class="axis title"[^>]*>Per day</text>', page.text)
    start = now - timedelta(days=29)
    assert f"{start.day} {start:%b %Y} to {now.day} {now:%b %Y}</h2>" in page.text
    assert f"<td>{now.day} {now:%b %Y}</td>" in page.text
    assert not re.search(r">\d{4}-\d{2}-\d{2}<", page.text)  # no ISO date left for a person to read
    week = api.get(f"/workspace/projects/{project.id}/traffic", params={"days": "7"})
    assert len(re.findall(r'<text class="axis day"', week.text)) == 7


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"start": "2025-01-01", "end": "2025-04-30"}, "The date range is at most 90 days."),
        ({"start": "2025-03-02", "end": "2025-03-01"}, "End_date must not be before start_date."),
        ({"start": "yesterday", "end": "2025-03-01"}, "Dates are written YYYY-MM-DD"),
        ({"days": "365"}, "Choose one of the last 7, 30, 90 days"),
    ],
)
def test_a_range_the_page_cannot_show_is_explained_in_words(api, project, params, words):
    page = api.get(f"/workspace/projects/{project.id}/traffic", params=params)
    assert page.status == 400
    assert words in page.text and "Showing the last 30 days instead." in page.text
    assert len(re.findall(r'<rect class="bar"', page.text)) == 30


def test_ninety_days_is_the_edge_of_the_range(api, project):
    ok = api.get(
        f"/workspace/projects/{project.id}/traffic", params={"start": "2025-01-01", "end": "2025-03-31"}
    )
    assert ok.status == 200 and len(re.findall(r'<rect class="bar"', ok.text)) == 90
    over = api.get(
        f"/workspace/projects/{project.id}/traffic", params={"start": "2025-01-01", "end": "2025-04-01"}
    )
    assert over.status == 400


def test_traffic_and_settings_are_the_owners_only(api, project):
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(project.workspace_id, member.id)
    services.projects().set_visibility(project, "workspace")
    sign_in(api, "m@example.com", "member-password-1")
    assert api.get(f"/workspace/projects/{project.id}").status == 200
    refused = api.get(f"/workspace/projects/{project.id}/traffic")
    assert refused.status == 404 and "not shared with you" in refused.text
    # The member sees the project, so Settings says whose it is rather than pretending it does not exist.
    refused = api.get(f"/workspace/projects/{project.id}/settings")
    assert refused.status == 403 and "can change its settings, rename it or delete it" in refused.text


def test_visibility_and_remix_from_the_settings_page(api, project, demo_user):
    page = api.get(f"/workspace/projects/{project.id}/settings")
    assert page.status == 200 and 'id="visibility-now">Private<' in page.text
    assert "Public is reserved" in page.text
    saved = api.post(
        f"/workspace/projects/{project.id}/visibility",
        form={"csrf": csrf_of(page), "visibility": "workspace"},
    )
    assert saved.status == 303
    assert services.projects().get(project.id).visibility == "workspace"
    after = api.get(saved.header("location").split("3000", 1)[1])
    assert "Members of its workspace can see it now." in after.text
    assert 'id="visibility-now">Workspace<' in after.text
    public = api.post(
        f"/workspace/projects/{project.id}/visibility", form={"csrf": csrf_of(page), "visibility": "public"}
    )
    assert public.status == 400 and "Choose who can see the project" in public.text
    assert services.projects().get(project.id).visibility == "workspace"

    remixed = api.post(f"/workspace/projects/{project.id}/remix", form={"csrf": csrf_of(page)})
    assert remixed.status == 303
    new_id = remixed.header("location").rsplit("/", 1)[1].split("?")[0]
    copy = services.projects().get(new_id)
    assert (copy.name, copy.prompt, copy.owner_id) == ("Wool Shed (remix)", project.prompt, demo_user.id)
    assert copy.visibility == "private" and copy.repo_host_repo is None
    opened = api.get(remixed.header("location").split("3000", 1)[1])
    assert "<h1>Wool Shed (remix)</h1>" in opened.text and "Remixed:" in opened.text
    forged = api.post(f"/workspace/projects/{project.id}/remix", form={"csrf": "0" * 40})
    assert forged.status == 400 and "did not come from the workspace" in forged.text


def test_credits_page_shows_the_tools_figures_and_a_pending_payment(api, demo_user):
    from svc_shared.domain.credit_history import WELCOME_CREDITS
    from svc_shared.domain.credits import next_renewal
    from svc_shared.workspace.chart import day_label

    sign_in(api)
    page = api.get("/workspace/billing")
    assert page.status == 200
    assert f'<dd id="balance">{WELCOME_CREDITS} credits</dd>' in page.text
    assert '<dd id="plan">Paid</dd>' in page.text
    renewal = next_renewal(demo_user.created_at, services.clock().now())
    assert f'<dd id="renewal">{day_label(renewal)}</dd>' in page.text
    assert 'href="http://127.0.0.1:3000/workspace/billing"' in api.get("/").text  # Home's credits link here

    back = api.get("/workspace/billing", params={"checkout": "success", "session": "cs_test_abc"})
    assert "your credits are pending" in back.text and 'data-refresh="2"' in back.text
    services.credits().grant_once(
        user_id=demo_user.id, checkout_session_id="cs_test_abc", amount_cents=2550, event_id="evt_1"
    )
    arrived = api.get("/workspace/billing", params={"checkout": "success", "session": "cs_test_abc"})
    assert "2,550 credits added to your balance." in arrived.text and "pending" not in arrived.text
    assert f'<dd id="balance">{WELCOME_CREDITS + 2550:,} credits</dd>' in arrived.text
    cancelled = api.get("/workspace/billing", params={"checkout": "cancelled"})
    assert "Checkout cancelled: nothing was charged." in cancelled.text


def test_another_users_checkout_session_is_never_shown_as_credited(api, demo_user):
    other = services.accounts().create_user(email="o@example.com", password="other-password-1")
    services.credits().grant_once(
        user_id=other.id, checkout_session_id="cs_test_other", amount_cents=500, event_id="evt_2"
    )
    sign_in(api)
    page = api.get("/workspace/billing", params={"checkout": "success", "session": "cs_test_other"})
    assert "pending" in page.text and "500 credits added" not in page.text


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        ("4.99", "Amount must be between $5 and $1000."),
        ("1000.01", "Amount must be between $5 and $1000."),
        ("5.001", "Amount has at most two decimals (cents)."),
        ("lots", "Enter an amount in US dollars between 5 and 1000"),
        ("NaN", "Enter an amount in US dollars between 5 and 1000"),
        # Numbers too large to take to cents: words, never a 500.
        ("1E1000", "Amount must be between $5 and $1000."),
        ("9" * 60, "Amount must be between $5 and $1000."),
        ("-1E1000", "Amount must be between $5 and $1000."),
        ("9" * 60 + ".001", "Amount must be between $5 and $1000."),
    ],
)
def test_a_top_up_outside_5_to_1000_dollars_is_refused_next_to_the_field(api, demo_user, amount, words):
    sign_in(api)
    page = api.get("/workspace/billing")
    refused = api.post("/workspace/billing/top-up", form={"csrf": csrf_of(page), "amount": amount})
    assert refused.status == 400
    assert f'<p class="field-error" id="amount-error">{words}' in refused.text
    assert 'aria-invalid="true"' in refused.text


@pytest.mark.parametrize("amount", ["5", "$1000"])
def test_a_top_up_at_the_edges_opens_the_hosted_checkout(api, demo_user, provider_env, amount):
    sign_in(api)
    page = api.get("/workspace/billing")
    ready = api.post("/workspace/billing/top-up", form={"csrf": csrf_of(page), "amount": amount})
    assert ready.status == 200, ready.text
    link = re.search(r'id="checkout-link" data-go="yes" href="([^"]+)"', ready.text)
    assert link and link[1].startswith(provider_env["sandbox"].url + "/stripe/pay/cs_test_")


def test_the_favicon_is_served_where_browsers_ask(api):
    icon = api.get("/favicon.ico")
    assert icon.status == 200 and icon.header("content-type") == "image/svg+xml"
    assert icon.text.startswith("<svg")
