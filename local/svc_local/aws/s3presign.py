"""Presigned S3 requests checked the way S3 checks them, in front of moto (which checks no signature).

A request that carries a query-string signature (``X-Amz-Signature``) is verified with Signature Version 4 over
its method, path, query, signed headers and ``UNSIGNED-PAYLOAD`` before moto sees it. S3's answers are kept:
a wrong signature, or a signed header sent with another value (a PUT of 11 MB on a URL signed for
``Content-Length: 1000``), is 403 ``SignatureDoesNotMatch``; an expired URL is 403 ``AccessDenied``; an unknown
access key is 403 ``InvalidAccessKeyId``. Requests signed in the Authorization header (the SDK's own calls) pass
as before.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, quote, unquote
from xml.sax.saxutils import escape

StartResponse = Callable[..., Any]

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_EXPIRES = 7 * 24 * 3600  # S3: a presigned URL lives at most 7 days
# WSGI keeps two headers outside the HTTP_ prefix.
_UNPREFIXED = {"content-type": "CONTENT_TYPE", "content-length": "CONTENT_LENGTH"}


class PresignError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def is_presigned(environ: Mapping[str, Any]) -> bool:
    return "X-Amz-Signature=" in environ.get("QUERY_STRING", "")


def _uri_encode(value: str) -> str:
    return quote(value, safe="-_.~")


def _header(environ: Mapping[str, Any], name: str) -> str | None:
    key = _UNPREFIXED.get(name) or "HTTP_" + name.upper().replace("-", "_")
    value = environ.get(key)
    return None if value is None else " ".join(str(value).split())


def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = f"AWS4{secret}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def verify(environ: Mapping[str, Any], secrets: Mapping[str, str], now: datetime | None = None) -> None:
    """Raise PresignError unless the request's query-string signature is valid and current."""
    pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    params = dict(pairs)
    try:
        algorithm = params["X-Amz-Algorithm"]
        credential = params["X-Amz-Credential"]
        amz_date = params["X-Amz-Date"]
        expires = int(params["X-Amz-Expires"])
        signed_headers = params["X-Amz-SignedHeaders"]
        signature = params["X-Amz-Signature"]
        access_key, date, region, service, terminal = credential.split("/")
        issued = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except (KeyError, ValueError) as exc:
        raise PresignError(
            "AuthorizationQueryParametersError",
            "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
            "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.",
        ) from exc
    if algorithm != ALGORITHM or terminal != "aws4_request" or not 0 < expires <= MAX_EXPIRES:
        raise PresignError(
            "AuthorizationQueryParametersError", "X-Amz-Algorithm or X-Amz-Expires is invalid."
        )
    secret = secrets.get(access_key)
    if secret is None:
        raise PresignError(
            "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
        )
    if (now or datetime.now(UTC)) > issued + timedelta(seconds=expires):
        raise PresignError("AccessDenied", "Request has expired")

    names = sorted(signed_headers.split(";"))
    headers = []
    for name in names:
        value = _header(environ, name)
        if value is None:
            raise PresignError(
                "AccessDenied", f"There were headers present in the request which were not signed: {name}"
            )
        headers.append(f"{name}:{value}\n")
    query = sorted((_uri_encode(key), _uri_encode(value)) for key, value in pairs if key != "X-Amz-Signature")
    path = environ.get("RAW_URI") or environ.get("REQUEST_URI") or environ.get("PATH_INFO", "/")
    path = path.split("?", 1)[0]
    canonical = "\n".join(
        [
            environ.get("REQUEST_METHOD", "GET"),
            quote(unquote(path), safe="/~"),
            "&".join(f"{key}={value}" for key, value in query),
            "".join(headers),
            ";".join(names),
            "UNSIGNED-PAYLOAD",
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    expected = hmac.new(
        _signing_key(secret, date, region, service), to_sign.encode(), hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise PresignError(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. "
            "Check your key and signing method.",
        )


def refuse(error: PresignError, start_response: StartResponse) -> Iterable[bytes]:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(error.code)}</Code><Message>{escape(error.message)}</Message></Error>"
    ).encode()
    status = "400 Bad Request" if error.code == "AuthorizationQueryParametersError" else "403 Forbidden"
    start_response(
        status,
        [("Content-Type", "application/xml"), ("Content-Length", str(len(body))), ("Connection", "close")],
    )
    return [body]
