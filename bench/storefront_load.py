"""The storefront benchmark's load: client processes, each one thread driving its keep-alive HTTP/1.1
connections with a selector (no thread per connection: on a 2-core machine every microsecond the clients spend
is taken from the server measured), sending `GET <path>` paced to a share of the aimed rate (as fast as they can
when behind). A request is written once; its answer is read off the connection by its Content-Length and
checked: status, ETag and body against the expected answer (every answer: a bytes comparison)."""

from __future__ import annotations

import heapq
import multiprocessing
import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Expected:
    """What every answer must be: the first answer's status, ETag and body."""

    status: int
    etag: str | None
    body: bytes


@dataclass
class Tally:
    sent: int = 0  # requests answered
    statuses: dict[int, int] = field(default_factory=dict)
    hits: int = 0  # answers with `Cache-Status: "Netlify Edge"; hit`
    errors: int = 0  # connections that failed (reset, refused, closed mid-answer)
    wrong: int = 0  # answers whose status, ETag or body differ from the expected answer
    latencies: list[float] = field(default_factory=list)
    finished: float = 0.0  # seconds from the load's start to its last answer
    scheduled: int | None = None  # requests a paced load sends (None: unpaced)

    def add(self, other: Tally) -> None:
        self.sent += other.sent
        for status, n in other.statuses.items():
            self.statuses[status] = self.statuses.get(status, 0) + n
        self.hits += other.hits
        self.errors += other.errors
        self.wrong += other.wrong
        self.latencies += other.latencies
        self.finished = max(self.finished, other.finished)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def hit(self) -> bool:
        return self.headers.get("cache-status", "").lower().endswith("; hit")


def parse_answer(buffer: bytes) -> tuple[Answer, bytes] | None:
    """The first whole answer in `buffer` and what follows it; None while it is incomplete."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buffer[:end].decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    start = end + 4
    length = int(headers.get("content-length", "0"))
    if len(buffer) < start + length:
        return None
    status = int(lines[0].split(" ", 2)[1])
    return Answer(status, headers, buffer[start : start + length]), buffer[start + length :]


@dataclass
class _Connection:
    index: int
    sock: socket.socket | None = None
    buffer: bytes = b""
    sent_at: float = 0.0


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _check(answer: Answer, expected: Expected | None, tally: Tally) -> None:
    tally.sent += 1
    tally.statuses[answer.status] = tally.statuses.get(answer.status, 0) + 1
    tally.hits += answer.hit
    if expected is not None and (
        answer.status != expected.status
        or answer.headers.get("etag") != expected.etag
        or answer.body != expected.body
    ):
        tally.wrong += 1


def _process(
    url: str,
    start: float,
    seconds: float,
    connections: int,
    interval: float,
    offset: float,
    count: int | None,
    expected: Expected | None,
    out: Any,
) -> None:
    """One client process: `connections` connections, each sending a request every `interval` seconds from
    `start` (time.time()): `count` requests each (late ones sent as soon as they can be), or, with no count,
    as many as `seconds` allow."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = parts.path + ("?" + parts.query if parts.query else "")
    request = f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    tally = Tally()
    selector = selectors.DefaultSelector()
    pool = [_Connection(i) for i in range(connections)]

    def open_(conn: _Connection) -> None:
        conn.sock, conn.buffer = _connect(host, port), b""
        selector.register(conn.sock, selectors.EVENT_READ, conn)

    def fail(conn: _Connection) -> None:
        tally.errors += 1
        if conn.sock is not None:
            selector.unregister(conn.sock)
            conn.sock.close()
        conn.sock = None

    for conn in pool:
        open_(conn)
    # the wall clock's start in this process's perf_counter, so that every process starts together
    begin = time.perf_counter() + (start - time.time())
    end = begin + seconds
    due = [(begin + offset + i * interval / connections, i) for i in range(connections)] if count != 0 else []
    heapq.heapify(due)
    busy: dict[int, float] = {}  # connection -> the due time of its request in flight
    answered = [0] * connections
    while True:
        now = time.perf_counter()
        while due and due[0][0] <= now and (count is not None or now < end):
            turn, i = heapq.heappop(due)
            conn = pool[i]
            try:
                if conn.sock is None:
                    open_(conn)
                assert conn.sock is not None
                conn.sent_at = time.perf_counter()
                conn.sock.send(request)  # a few dozen bytes: the socket's buffer takes them whole
            except OSError:
                fail(conn)
                heapq.heappush(due, (turn, i))  # sent again once connected again
                continue
            busy[i] = turn
        if not busy and (not due or (count is None and now >= end)):
            break
        if now > end + 30:  # answers that never came
            tally.errors += len(busy)
            break
        wait = min(max(due[0][0] - now, 0.0), 0.05) if due else 0.05
        for key, _ in selector.select(wait):
            conn = key.data
            try:
                chunk = conn.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                fail(conn)
                heapq.heappush(due, (busy.pop(conn.index), conn.index))
                continue
            conn.buffer += chunk
            parsed = parse_answer(conn.buffer)
            if parsed is None:
                continue
            answer, conn.buffer = parsed
            tally.latencies.append(time.perf_counter() - conn.sent_at)
            tally.finished = max(tally.finished, time.perf_counter() - begin)
            _check(answer, expected, tally)
            turn = busy.pop(conn.index)
            answered[conn.index] += 1
            if count is None or answered[conn.index] < count:
                heapq.heappush(due, (turn + interval, conn.index))
    for conn in pool:
        if conn.sock is not None:
            conn.sock.close()
    out.put(tally)


def drive(
    url: str,
    *,
    rate: int | None,
    seconds: float,
    processes: int,
    connections: int,
    expected: Expected | None = None,
) -> Tally:
    """`GET url` from processes x connections connections, every answer checked against `expected`: paced at
    `rate` requests/s in all, rate x seconds requests on a schedule over `seconds` (late ones sent as soon
    as they can be, so a server that cannot keep up finishes late: `Tally.finished`), or with no rate, each
    connection's next request sent as soon as its answer is read, for `seconds`."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    share = processes * connections
    interval = share / rate if rate else 0.0  # each connection's share of the rate
    count = round(rate * seconds / share) if rate else None
    start = (
        time.time() + 1.5 + 0.3 * processes
    )  # every process started and connected before the first request
    children = [
        ctx.Process(
            target=_process,
            args=(url, start, seconds, connections, interval, n * interval / share, count, expected, out),
        )
        for n in range(processes)
    ]
    for child in children:
        child.start()
    total = Tally()
    for _ in children:
        total.add(out.get(timeout=seconds + 120))
    for child in children:
        child.join(timeout=30)
    total.scheduled = count * share if count is not None else None
    return total
