"""HTML of the admin screens: Jinja2 templates with autoescaping, money and dates in the store's currency,
locale and time zone, the static files (one style sheet, one script) and the headers every page carries (a
Content-Security-Policy allowing only those two files: no inline script or style)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from svc_backoffice.core.pagefiles import folder_version, read_static, template_environment

HERE = Path(__file__).parent
STATIC = HERE / "static"
STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}

# How a language writes numbers: (decimal mark, thousands separator, symbol after the amount).
NUMBER_STYLE = {
    "en": (".", ",", False),
    "de": (",", ".", True),
    "fr": (",", "\u202f", True),
    "es": (",", ".", True),
    "it": (",", ".", True),
    "nl": (",", ".", False),
    "pt": (",", ".", True),
}
SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹", "CAD": "CA$", "AUD": "A$"}
ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "ISK", "XOF", "XAF"}
DATE_STYLE = {"en": "%d %b %Y, %H:%M", "de": "%d.%m.%Y %H:%M", "nl": "%d-%m-%Y %H:%M"}


@functools.lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _group(digits: str, separator: str) -> str:
    head, rest = digits[: len(digits) % 3 or 3], digits[len(digits) % 3 or 3 :]
    return separator.join([head, *(rest[i : i + 3] for i in range(0, len(rest), 3))])


def money(cents: int | None, currency: str = "EUR", locale: str = "en") -> str:
    """1950 EUR in `en` -> '€19.50'; in `fr` -> '19,50 €'; JPY has no minor unit."""
    if cents is None:
        return ""
    mark, separator, after = NUMBER_STYLE.get(locale[:2], NUMBER_STYLE["en"])
    sign, value = ("-" if cents < 0 else ""), abs(int(cents))
    if currency in ZERO_DECIMAL:
        number = _group(str(value), separator)
    else:
        number = _group(str(value // 100), separator) + mark + f"{value % 100:02d}"
    symbol = SYMBOLS.get(currency, currency)
    return f"{sign}{number}\u00a0{symbol}" if after else f"{sign}{symbol}{number}"


def amount(cents: int | None, currency: str = "EUR") -> str:
    """Cents as a person types them back into a form: 1950 -> '19.50' (no symbol, no separators)."""
    if cents is None:
        return ""
    if currency in ZERO_DECIMAL:
        return str(cents)
    return str((Decimal(int(cents)) / 100).quantize(Decimal("0.01")))


def when(value: datetime | str | None, timezone: str = "UTC", locale: str = "en") -> str:
    """A moment in the store's time zone, written the store's language's way."""
    if value is None or value == "":
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(zone(timezone))
    return local.strftime(DATE_STYLE.get(locale[:2], "%d/%m/%Y %H:%M"))


def _pair(value: Any) -> tuple[Any, str]:
    """A select's (value, label)."""
    return value, str(value).capitalize()


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The template environment (built once per container; templates compiled on first use)."""
    return template_environment(HERE / "templates", {"amount": amount, "pair": _pair})


def render(template: str, **context: Any) -> str:
    return str(environment().get_template(template).render(**context))


@functools.lru_cache(maxsize=8)
def static_file(name: str) -> tuple[bytes, str, str] | None:
    """(content, content type, etag) of a file of static/, or None for anything else."""
    return read_static(STATIC, STATIC_TYPES, name)


@functools.lru_cache(maxsize=1)
def asset_version() -> str:
    """Part of the static URLs, so a new deployment's files are fetched afresh."""
    return folder_version(STATIC, static_file)
