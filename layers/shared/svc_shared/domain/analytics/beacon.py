"""The analytics beacon: what a live site sends per pageview, validated, and its queue message."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from svc_shared.core.catalogue import say
from svc_shared.core.errors import InvalidInput

# What a beacon may carry, and how many a client and a site may send (docs/decisions.md, Analytics): the path
# and the referrer are visitor-supplied text, kept to printable URL characters so nothing else (control
# characters, markup, words with spaces) can reach a report or a tool result.
MAX_PATH = 512
MAX_REFERRER = 1024
_PATH_TEXT = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%|^\[\]]*")
_URL_TEXT = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%|^\[\]?#]+")
_ENCODED_CONTROL = re.compile(r"%(?:[01][0-9A-Fa-f]|7[Ff])")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}")
_COUNTRY = re.compile(r"[A-Z]{2}")
INVALID = "(invalid)"


def clean_path(path: str) -> str:
    """The page path of a beacon without its query or fragment ("/" when empty), or InvalidInput: a path of
    printable URL characters (percent-encoded beyond them, as browsers send it) of at most 512."""
    path = path.split("?", 1)[0].split("#", 1)[0] or "/"
    if len(path) > MAX_PATH or not _PATH_TEXT.fullmatch(path) or _ENCODED_CONTROL.search(path):
        raise InvalidInput(say("analytics.path_invalid", limit=MAX_PATH), code="invalid_beacon")
    return path


def clean_referrer(referrer: str) -> str:
    """An http(s) URL of printable URL characters of at most 1,024 (or empty), or InvalidInput."""
    if not referrer:
        return ""
    try:
        parts = urlsplit(referrer)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if (
        len(referrer) > MAX_REFERRER
        or not _URL_TEXT.fullmatch(referrer)
        or _ENCODED_CONTROL.search(referrer)
        or parts is None
        or parts.scheme not in ("http", "https")
        or not _HOST.fullmatch(host)
    ):
        raise InvalidInput(say("analytics.referrer_invalid", limit=MAX_REFERRER), code="invalid_beacon")
    return referrer


def _valid(check: Callable[[str], str], value: str) -> bool:
    try:
        check(value)
    except InvalidInput:
        return False
    return True


@dataclass(frozen=True)
class Beacon:
    project_id: str
    path: str
    referrer: str
    visitor: str
    session: str
    country: str
    at: float = 0.0  # when the collect route received it

    def message(self) -> str:
        """The queue message body."""
        return json.dumps(
            {
                "p": self.project_id,
                "u": self.path,
                "r": self.referrer,
                "v": self.visitor,
                "s": self.session,
                "c": self.country,
                "t": self.at,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_message(cls, body: str) -> Beacon:
        data = json.loads(body)
        try:
            path, referrer = clean_path(str(data["u"])), clean_referrer(str(data["r"]))
        except InvalidInput as exc:
            raise ValueError(exc.message) from None
        return cls(
            project_id=str(data["p"]),
            path=path,
            referrer=referrer,
            visitor=str(data["v"]),
            session=str(data["s"]),
            country=str(data["c"]),
            at=float(data["t"]),
        )
