"""Helpers of the admin screens' tests: a page read as a person reads it (its words, its forms' controls) and
a form sent as the browser sends it (urlencoded, with the page's CSRF token)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from html import unescape
from typing import Any
from urllib.parse import urlencode

from bohelpers import Answer, Client, LambdaContext, answer_of, build_event

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
PAGE = {"Accept": "text/html"}


def text(answer: Answer) -> str:
    """The page's words: tags, script and style removed, entities decoded, spaces collapsed."""
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", answer.body, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def csrf_of(answer: Answer) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', answer.body)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def forms(answer: Answer) -> list[str]:
    """The actions of the page's POST forms (sign-out included)."""
    return re.findall(r'<form[^>]*method="post"[^>]*action="([^"]+)"', answer.body)


def get(client: Client, path: str) -> Answer:
    return client.get(path, headers=PAGE)


def post(client: Client, path: str, fields: dict[str, Any], *, csrf: str | None, **headers: str) -> Answer:
    """A form post; `csrf` None sends none (a forged form)."""
    pairs: list[tuple[str, Any]] = []
    for name, value in fields.items():
        pairs.extend((name, v) for v in value) if isinstance(value, list) else pairs.append((name, value))
    if csrf is not None:
        pairs.append(("csrf", csrf))
    return client.request("POST", path, raw_body=urlencode(pairs), headers={**FORM, **PAGE, **headers})


def submit(client: Client, page_path: str, action: str, fields: dict[str, Any]) -> Answer:
    """Open `page_path`, then send its form to `action` with its token, as a person filling it would."""
    return post(client, action, fields, csrf=csrf_of(get(client, page_path)))


def multipart(fields: dict[str, str], files: dict[str, tuple[str, str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body as a browser sends it: (body, its Content-Type); `files` name ->
    (file name, the type the browser says, bytes)."""
    boundary = "----formboundary7MA4YWxkTrZu0gW"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    for name, (filename, kind, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            f"Content-Type: {kind}\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(
    client: Client,
    path: str,
    fields: dict[str, str],
    files: dict[str, tuple[str, str, bytes]],
    *,
    csrf: str | None,
) -> Answer:
    """A form with files posted as API Gateway hands it over: multipart/form-data being one of the API's
    binary media types, the body arrives base64-encoded."""
    body, kind = multipart({**fields, **({"csrf": csrf} if csrf is not None else {})}, files)
    event = build_event(
        "POST", path, raw_body=base64.b64encode(body).decode(), headers={"Content-Type": kind, **PAGE}
    )
    event["isBase64Encoded"] = True
    if client.cookie:
        event["headers"]["Cookie"] = client.cookie
        event["multiValueHeaders"]["Cookie"] = [client.cookie]
    from backoffice.functions.admin.app import handler

    return answer_of(handler(event, LambdaContext()))


def own_token(client: Client) -> str:
    """The CSRF token of `client`'s own session, as the server mints it: what a member whose pages show no
    form (a viewer) would need to forge a post the role gate alone must refuse."""
    from svc_backoffice.admin import pages

    assert client.cookie is not None
    session = client.cookie.split("=", 1)[1]
    return hmac.new(pages._csrf_key(), session.encode(), hashlib.sha256).hexdigest()[:40]


def error_beside(answer: Answer, name: str) -> str:
    """The words shown beside the form field `name` (an AssertionError when there are none)."""
    found = re.search(rf'<p class="field-error" id="{name}-error">([^<]*)</p>', answer.body)
    assert found, f"no error beside {name}"
    return unescape(found.group(1))


def refused_by_role(answer: Answer, role: str) -> bool:
    """Whether `answer` is the page refusing what `role` may not do (not a CSRF or origin refusal)."""
    return answer.status == 403 and f"Your role ({role}) cannot do this" in text(answer)
