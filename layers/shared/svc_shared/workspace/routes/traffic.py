"""A project's traffic: pageviews and unique visitors per day as a chart drawn on the server, the top pages,
referrers and countries, and the visitors of the last 5 minutes, over a chosen range of at most 90 days.

The figures come from the same reads as the get_project_analytics and get_project_analytics_trend tools
(Analytics.report and Analytics.trend, for the project's owner), so the page and a tool never disagree."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.wiring import services
from svc_shared.workspace import chart, site

router = Router()

DEFAULT_DAYS = 30
PRESETS = (7, 30, 90)


def _range(query: dict[str, str], today: date) -> tuple[date, date, str | None]:
    """(start, end, a message in words when the asked range cannot be shown: the last 30 days instead)."""
    default = (today - timedelta(days=DEFAULT_DAYS - 1), today)
    if query.get("days"):
        days = query["days"]
        if days.isdecimal() and int(days) in PRESETS:
            return today - timedelta(days=int(days) - 1), today, None
        return (*default, say("workspace.days_choice", presets=", ".join(map(str, PRESETS))))
    if not (query.get("start") or query.get("end")):
        return (*default, None)
    try:
        start = date.fromisoformat(query.get("start", ""))
        end = date.fromisoformat(query.get("end", ""))
    except ValueError:
        return (*default, say("workspace.bad_date"))
    return start, end, None


def traffic_context(project_id: str, start: date, end: date) -> dict[str, Any]:
    """The whole range's report, each day's pageviews and visitors for the chart (as the MCP Apps traffic
    view reads them), and the last 5 minutes."""
    analytics = services.analytics()
    report = analytics.report(
        project_id, start, end
    )  # checks the range (at most 90 days) in the tool's words
    series = [
        {"day": d["date"], "pageviews": d["pageviews"], "visitors": d["unique_visitors"]}
        for d in analytics.daily(project_id, start, end)["days"]
    ]
    return {
        "report": report,
        "series": series,
        "chart": chart.daily_chart(series),
        "trend": analytics.trend(project_id),
    }


@router.get("/workspace/projects/<projectId>/traffic")
def traffic(projectId: str) -> Response:
    user = site.current_user(router)
    project = services.projects().owned(projectId, user.id)  # as the analytics tools: the owner's figures
    query = router.current_event.query_string_parameters or {}
    today = datetime.fromtimestamp(services.clock().now(), UTC).date()
    start, end, problem = _range(query, today)
    status = 400 if problem else 200
    try:
        context = traffic_context(project.id, start, end)
    except errors.InvalidInput as exc:
        problem, status = f"{exc.message[0].upper()}{exc.message[1:]}.", 400
        start, end = today - timedelta(days=DEFAULT_DAYS - 1), today
        context = traffic_context(project.id, start, end)
    preset = next((n for n in PRESETS if start == today - timedelta(days=n - 1) and end == today), None)
    return site.page(
        router,
        status,
        "traffic.html",
        user,
        nav="home",
        project=project,
        start=start.isoformat(),
        end=end.isoformat(),
        asked={"start": query.get("start", ""), "end": query.get("end", "")} if problem else None,
        preset=preset,
        presets=PRESETS,
        problem=problem,
        **context,
    )
