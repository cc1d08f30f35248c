"""A threaded HTTP server running in a background thread: what the gateway and the sandbox share (the server
and its request handler), the with-block of what starts and stops (the embedded AWS too), and the end of a
child process."""

from __future__ import annotations

import email.utils
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from http import HTTPStatus
from http.client import HTTPMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from typing import Any, Generic, Self, TypeVar

Owner = TypeVar("Owner")


def close_child(process: subprocess.Popen[Any], timeout: float) -> None:
    """End a child process that runs until its stdin closes: close it, wait `timeout` seconds, then kill it."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class StartStop(ABC):
    """Started on entering a with block, stopped on leaving it."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


MAX_HEADER_LINE = 65536  # as http.client: a longer header line is refused (431)
MAX_HEADERS = 100


class _Clock:
    """The Date header's value, formatted once a second rather than once an answer."""

    def __init__(self) -> None:
        self.second = -1
        self.text = ""

    def now(self) -> str:
        second = int(time.time())
        if second != self.second:
            self.text, self.second = email.utils.formatdate(second, usegmt=True), second
        return self.text


_CLOCK = _Clock()


class DispatchingHandler(BaseHTTPRequestHandler):
    """A request handler that sends every method to `_dispatch`, which logs each request once (with its
    timing); protocol errors (malformed request lines, timeouts) go to `log_line`, the owner's log. The
    request's headers are read by a lean parser (the standard library's goes through the email package, a few
    hundred microseconds a request) and an answer leaves in one write (`send_answer`)."""

    server: OwnedServer[Any]
    protocol_version = "HTTP/1.1"
    # Headers and body may go out in separate writes; with Nagle's algorithm on, the body would wait for the
    # client's delayed ACK (~40 ms on Linux) on every keep-alive request.
    disable_nagle_algorithm = True
    timeout = 60  # seconds a socket may stall (slow body, idle keep-alive) before the thread gives up

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def parse_request(self) -> bool:
        """The request line as the standard library reads it, then the headers (`Name: value` lines up to
        an empty line; a folded line continues the previous value): 400 for a line that is not a header,
        431 past MAX_HEADERS headers or a line over MAX_HEADER_LINE bytes."""
        self.command = ""  # until the request line is read
        self.request_version = self.default_request_version
        self.close_connection = True
        raw: bytes = self.raw_requestline  # type: ignore[attr-defined]  # set by handle_one_request
        self.requestline = str(raw, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if not words:
            return False
        if len(words) >= 3:
            version = words[-1]
            numbers = version[5:].split(".") if version.startswith("HTTP/") else []
            if len(numbers) != 2 or not all(n.isdigit() and len(n) <= 10 for n in numbers):
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request version ({version!r})")
                return False
            major, minor = int(numbers[0]), int(numbers[1])
            if major >= 2:
                self.send_error(
                    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"Invalid HTTP version ({version[5:]})"
                )
                return False
            self.close_connection = (major, minor) < (1, 1)
            self.request_version = version
        if not 2 <= len(words) <= 3:
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({self.requestline!r})")
            return False
        command, path = words[:2]
        if len(words) == 2:
            self.close_connection = True
            if command != "GET":
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad HTTP/0.9 request type ({command!r})")
                return False
        self.command, self.path = command, "/" + path.lstrip("/") if path.startswith("//") else path
        headers = self._read_headers()
        if headers is None:
            return False
        self.headers = headers
        connection = headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if headers.get("Expect", "").lower() == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()  # False: it has answered already
        return True

    def _read_headers(self) -> HTTPMessage | None:
        message = HTTPMessage()
        while True:
            line = self.rfile.readline(MAX_HEADER_LINE + 1)
            if len(line) > MAX_HEADER_LINE:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long")
                return None
            if line in (b"\r\n", b"\n", b""):
                return message
            name, colon, value = line.decode("iso-8859-1").partition(":")
            # no name, space before the colon, or an obsolete folded line: refused, as RFC 9112 allows
            if not colon or not name or name != name.strip():
                self.send_error(HTTPStatus.BAD_REQUEST, "Malformed header line")
                return None
            if len(message) >= MAX_HEADERS:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers")
                return None
            message[name] = value.strip(" \t\r\n")

    def send_answer(self, status: int, headers: Iterable[tuple[str, str]], body: bytes) -> None:
        """The whole answer in one write: status line, Server, Date, `headers` (Content-Length and
        Connection are set here), then the body (none for HEAD)."""
        reason = self.responses[status][0] if status in self.responses else ""
        lines = [
            f"{self.protocol_version} {status} {reason}",
            f"Server: {self.server_version} {self.sys_version}",
            f"Date: {_CLOCK.now()}",
        ]
        lines += [f"{k}: {v}" for k, v in headers if k.lower() not in ("content-length", "connection")]
        lines.append(f"Content-Length: {len(body)}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")
        self.wfile.write(head if self.command == "HEAD" else head + body)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Requests are logged once, with timing, by _dispatch."""

    def log_message(self, format: str, *args: Any) -> None:
        self.log_line(f"{self.client_address[0]} {format % args}")

    def _dispatch(self) -> None:
        raise NotImplementedError

    def read_body(self, limit: int, *, drain_limit: int = 0) -> bytes:
        """The request body, chunked or of its Content-Length: BodyTooLarge past `limit` bytes (the connection
        then closes; a body of at most `drain_limit` bytes is read first, so the client gets the answer rather
        than a reset), ValueError when its framing is malformed."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            try:
                return read_chunked(self.rfile, limit)
            except BodyTooLarge:
                self.close_connection = True
                raise
        declared = (self.headers.get("Content-Length") or "0").strip()
        if not declared.isdecimal():
            raise ValueError("Content-Length is not a length")
        length = int(declared)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length > limit:
            if length <= drain_limit:
                self._discard(length)
            self.close_connection = True
            raise BodyTooLarge
        return self.rfile.read(length) if length else b""

    def _discard(self, length: int) -> None:
        while length > 0:
            got = self.rfile.read(min(length, 1 << 20))
            if not got:
                break
            length -= len(got)

    def log_line(self, line: str) -> None:
        """A line for the log of the object serving (the gateway's, the sandbox's)."""
        self.server.owner.log(line)


class OwnedServer(ThreadingHTTPServer, Generic[Owner]):
    """A threaded server whose request handlers reach the object that serves through it (`owner`)."""

    daemon_threads = True
    allow_reuse_address = True
    # The listen backlog (socketserver's default is 5): past it, parallel clients' connections are refused
    # or reset before a thread can accept them.
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: Owner) -> None:
        self.owner = owner
        super().__init__(address, handler)


class BackgroundServer(StartStop):
    """Bind, start, stop, port and URL of one ThreadingHTTPServer. Port 0 picks a free port."""

    thread_name = "svc-server"

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.requested_port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @abstractmethod
    def make_server(self, address: tuple[str, int]) -> ThreadingHTTPServer:
        """The server object, bound to `address`."""

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    def bind(self) -> int:
        """Bind the listening socket (connections queue until start()); returns the port."""
        if self._server is None:
            self._server = self.make_server((self.host, self.requested_port))
        return self.port

    def start(self) -> None:
        self.bind()
        assert self._server is not None
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        if self._thread is not None:  # shutdown() would wait forever for a loop that never ran
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        self._server = None
        self.stopped()

    def stopped(self) -> None:
        """Called once the server has stopped serving."""


# ---- what the gateway and the sandbox share: API Gateway's resource paths, chunked request bodies

_SEGMENT_EXACT, _SEGMENT_PARAM, _SEGMENT_PROXY = 2, 1, 0


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def match_resource(resource: str, path: str) -> tuple[tuple[int, ...], dict[str, str]] | None:
    """Match a decoded request path against a resource path: (precedence score, path parameters) or None.
    Scores compare segment by segment: exact beats {param} beats {proxy+}."""
    pattern, actual = _segments(resource), _segments(path)
    score: list[int] = []
    params: dict[str, str] = {}
    for index, part in enumerate(pattern):
        if part.startswith("{") and part.endswith("+}"):
            rest = actual[index:]
            if index != len(pattern) - 1 or not rest:
                return None
            params[part[1:-2]] = "/".join(rest)
            score.append(_SEGMENT_PROXY)
            return tuple(score), params
        if index >= len(actual):
            return None
        if part.startswith("{") and part.endswith("}"):
            params[part[1:-1]] = actual[index]
            score.append(_SEGMENT_PARAM)
        elif part == actual[index]:
            score.append(_SEGMENT_EXACT)
        else:
            return None
    if len(actual) != len(pattern):
        return None
    return tuple(score), params


class BodyTooLarge(Exception):
    """A request body over the server's limit."""


def read_chunked(rfile: BufferedIOBase, limit: int) -> bytes:
    """A chunked request body (git sends large pack negotiations this way); BodyTooLarge past `limit` bytes,
    ValueError when the framing is not chunked encoding."""
    parts: list[bytes] = []
    size = 0
    while True:
        line = rfile.readline(1024)
        chunk = int(line.split(b";", 1)[0].strip() or b"0", 16)
        if chunk == 0:
            while rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        size += chunk
        if size > limit:
            raise BodyTooLarge
        parts.append(rfile.read(chunk))
        rfile.readline(1024)
