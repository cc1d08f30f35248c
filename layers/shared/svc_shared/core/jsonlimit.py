"""JSON text from outside, decoded with a nesting limit: the one decoder of every platform body (the routes'
bodies, OAuth messages, MCP messages, client metadata documents, the checkout webhook).

Python's decoder recurses once per array or object level, so `[[[[...]]]]` 100,000 deep raises RecursionError
(a 500 where it was not caught); anything deeper than MAX_DEPTH is refused before decoding instead, as a
client's mistake. No body of the platform nests more than a few levels; 64 leaves room for tool arguments.
"""

from __future__ import annotations

import json
import re
from typing import Any

from svc_shared.core.catalogue import say

MAX_DEPTH = 64

# A JSON string (its escapes included), and anything that is not a bracket, so only the structure is left.
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


class TooDeep(ValueError):
    """The text nests arrays and objects deeper than MAX_DEPTH."""

    def __init__(self) -> None:
        super().__init__(too_deep())


def too_deep() -> str:
    """What a text nested past MAX_DEPTH is refused with."""
    return say("json.too_deep", max_depth=MAX_DEPTH)


def depth_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the brackets of `text` (outside strings) nest deeper than `limit`. Each pass removes the
    innermost empty pairs, so a well-formed text empties after as many passes as it is deep; a malformed one
    stops early and is left to the decoder to refuse."""
    shape = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    for _ in range(limit):
        if not shape:
            return False
        reduced = shape.replace("[]", "").replace("{}", "")
        if reduced == shape:
            return False
        shape = reduced
    return bool(shape) and shape.replace("[]", "").replace("{}", "") != shape


def loads(text: str | bytes) -> Any:
    """`json.loads` for text from outside: TooDeep (a ValueError) past MAX_DEPTH, ValueError if not JSON."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")
    if depth_exceeds(text):
        raise TooDeep
    try:
        return json.loads(text)
    except RecursionError:  # not reached below MAX_DEPTH; kept so no input can become a 500
        raise TooDeep from None
