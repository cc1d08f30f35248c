"""The traffic chart drawn on the server: the geometry of an SVG of pageviews (bars) and unique visitors (a
line) per day, for a template to write out. No script draws it; its figures are also given as a table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 60, 8, 12, 28  # room for the axis labels and the vertical axis's title
MAX_DAY_LABELS = 7  # labels under the bars: every n-th day, so they never overlap


def day_label(day: str, *, year: bool = True) -> str:
    """A day as every page of the workspace writes it: 27 Nov 2026 (27 Nov under the chart's bars)."""
    moment = date.fromisoformat(day)
    return f"{moment.day} {moment:%b %Y}" if year else f"{moment.day} {moment:%b}"


@dataclass(frozen=True)
class Bar:
    day: str
    pageviews: int
    visitors: int
    x: float
    y: float
    width: float
    height: float


def nice_ceiling(value: int) -> int:
    """The axis top: 1, 2 or 5 times a power of ten, at least `value` (and at least 5)."""
    top = 5
    step = 1
    while top < value:
        for factor in (1, 2, 5):
            top = factor * step * 10
            if top >= value:
                break
        step *= 10
    return top


def daily_chart(days: list[dict[str, Any]]) -> dict[str, Any]:
    """`days` ({day, pageviews, visitors}, oldest first) as bars, a visitors polyline and axis labels in a
    WIDTH x HEIGHT view box."""
    top = nice_ceiling(max([d["pageviews"] for d in days] + [d["visitors"] for d in days] + [0]))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(days), 1)
    gap = min(slot * 0.2, 4.0)
    bars = []
    points = []
    for index, d in enumerate(days):
        height = plot_h * d["pageviews"] / top
        x = LEFT + index * slot
        bars.append(
            Bar(
                d["day"],
                d["pageviews"],
                d["visitors"],
                round(x + gap / 2, 2),
                round(TOP + plot_h - height, 2),
                round(slot - gap, 2),
                round(height, 2),
            )
        )
        vy = TOP + plot_h - plot_h * d["visitors"] / top
        points.append(f"{x + slot / 2:.2f},{vy:.2f}")
    parts = 4 if top % 4 == 0 else 2 if top % 2 == 0 else 1  # gridlines at whole numbers only
    ticks = [
        {"value": top * k // parts, "y": round(TOP + plot_h - plot_h * k / parts, 2)}
        for k in range(parts + 1)
    ]
    step = -(-len(days) // MAX_DAY_LABELS) if days else 1  # ceiling division
    labels = [
        {"x": round(LEFT + index * slot + slot / 2, 2), "text": day_label(days[index]["day"], year=False)}
        for index in range(0, len(days), step)
    ]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "baseline": TOP + plot_h,
        "bars": bars,
        "line": " ".join(points),
        "ticks": ticks,
        "first": day_label(days[0]["day"]) if days else "",
        "last": day_label(days[-1]["day"]) if days else "",
        "labels": labels,
        "label_y": HEIGHT - 8,
        "axis_title_x": 14,
        "axis_title_y": TOP + plot_h / 2,
    }
