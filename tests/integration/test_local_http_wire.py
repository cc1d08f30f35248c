"""The request handler the local gateway and the provider sandbox share (svc_local.serving): the request's
headers as its lean parser reads them, keep-alive and Connection: close, Expect: 100-continue, HEAD, and the
refusals of malformed or oversized headers, as a client sees them on the socket."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import BinaryIO

import pytest

from svc_local.serving import MAX_HEADERS, BackgroundServer, DispatchingHandler, OwnedServer


class _Echo(DispatchingHandler):
    """Answers with the request as the handler read it: method, path, headers (in order) and body."""

    server_version = "echo"

    def log_line(self, line: str) -> None:
        pass

    def _dispatch(self) -> None:
        body = self.read_body(1024 * 1024)
        seen = {
            "method": self.command,
            "path": self.path,
            "headers": [[k, v] for k, v in self.headers.items()],
            "host": self.headers.get("HOST"),
            "body": body.decode(),
        }
        self.send_answer(200, [("Content-Type", "application/json")], json.dumps(seen).encode())


class _Server(BackgroundServer):
    def make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        return OwnedServer(address, _Echo, self)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with _Server("127.0.0.1", 0) as server:
        yield server.port


def _read(stream: BinaryIO) -> tuple[str, dict[str, str], bytes]:
    """One answer off the connection: its status line, headers (lower-case names) and body."""
    status = stream.readline().decode("latin-1").rstrip("\r\n")
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, stream.read(int(headers.get("content-length", "0")))


def _exchange(port: int, raw: bytes) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        return _read(sock.makefile("rb"))


def test_headers_are_read_by_name_whatever_the_case_with_their_values_trimmed(port: int) -> None:
    status, headers, body = _exchange(
        port,
        b"GET /a?b=1 HTTP/1.1\r\nHost:  shop.test:8080 \r\nReferer: http://x.test:1/p\r\n"
        b"X-Tag: one\r\nx-tag: two\r\n\r\n",
    )
    seen = json.loads(body)
    assert status == "HTTP/1.1 200 OK"
    assert (seen["method"], seen["path"], seen["host"]) == ("GET", "/a?b=1", "shop.test:8080")
    assert seen["headers"] == [
        ["Host", "shop.test:8080"],
        ["Referer", "http://x.test:1/p"],  # a colon in the value stays in the value
        ["X-Tag", "one"],
        ["x-tag", "two"],  # repeated headers are all kept
    ]
    assert headers["content-type"] == "application/json" and headers["server"].startswith("echo")
    assert headers["date"].endswith(" GMT") and int(headers["content-length"]) == len(body)


def test_one_connection_serves_requests_in_turn_until_the_client_says_close(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        stream = sock.makefile("rb")
        sock.sendall(b"GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\n")
        first, second = _read(stream), _read(stream)
        assert [json.loads(a[2])["path"] for a in (first, second)] == ["/one", "/two"]
        assert "connection" not in first[1]
        sock.sendall(
            b"POST /three HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
        )
        _, headers, body = _read(stream)
        assert (json.loads(body)["body"], headers["connection"]) == ("hello", "close")
        assert stream.read(1) == b""  # and the server closed it


def test_an_http_1_0_request_is_answered_then_the_connection_closes(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        stream = sock.makefile("rb")
        sock.sendall(b"GET /old HTTP/1.0\r\n\r\n")
        status, headers, _ = _read(stream)
        assert (status, headers["connection"]) == ("HTTP/1.1 200 OK", "close")
        assert stream.read(1) == b""


def test_a_head_request_gets_the_length_without_the_body(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\n\r\n")
        data = b""
        while data.count(b"\r\n\r\n") < 2:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        assert b"Content-Length: " in head and int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) > 0
        assert rest.startswith(b"HTTP/1.1 200 OK")  # the next answer follows at once: no body was sent


def test_a_client_expecting_100_continue_is_told_to_go_on(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"PUT /up HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        interim = b""
        while b"\r\n\r\n" not in interim:
            interim += sock.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(b"data")
        assert json.loads(_read(sock.makefile("rb"))[2])["body"] == "data"


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (b"No colon here\r\n", "400"),
        (b"Host : a\r\n", "400"),  # space before the colon
        (b"X-A: 1\r\n folded on\r\n", "400"),  # obsolete line folding
        (b": no name\r\n", "400"),
        (b"X-Long: " + b"a" * 70_000 + b"\r\n", "431"),
        (b"".join(b"X-H%d: v\r\n" % n for n in range(MAX_HEADERS + 1)), "431"),
    ],
)
def test_malformed_or_oversized_headers_are_refused_in_words(port: int, header: bytes, status: str) -> None:
    line, headers, body = _exchange(port, b"GET / HTTP/1.1\r\nHost: a\r\n" + header + b"\r\n")
    assert line.split(" ")[1] == status
    assert headers["connection"] == "close"
    assert any(words in body for words in (b"Malformed header line", b"Line too long", b"Too many headers"))


def test_as_many_headers_as_allowed_are_read(port: int) -> None:
    extra = b"".join(b"X-H%d: v\r\n" % n for n in range(MAX_HEADERS - 1))
    _, _, body = _exchange(port, b"GET / HTTP/1.1\r\nHost: a\r\n" + extra + b"\r\n")
    assert len(json.loads(body)["headers"]) == MAX_HEADERS


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"GET / HTTP/2.0", b"Invalid HTTP version (2.0)"),
        (b"GET / HTTX/1.1", b"Bad request version ('HTTX/1.1')"),
        (b"GET / x HTTP/1.1", b"Bad request syntax ('GET / x HTTP/1.1')"),
        (b"POST /", b"Bad HTTP/0.9 request type ('POST')"),
    ],
)
def test_a_malformed_request_line_is_refused_in_words(port: int, line: bytes, words: bytes) -> None:
    """As the standard library answers them (no status line before the version is known: HTTP/0.9)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(line + b"\r\nHost: a\r\n\r\n")
        answer = sock.makefile("rb").read()
    assert words in answer
