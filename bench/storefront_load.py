"""The storefront benchmark's load: client processes, each with threads holding one keep-alive HTTP/1.1
connection apiece, sending `GET <path>` paced to a share of the aimed rate (as fast as they can when behind).
A raw socket client (a request written once, the answer read by its Content-Length): httpx costs about a
millisecond of CPU a request, which on a 2-core machine would be taken from the server measured."""

from __future__ import annotations

import multiprocessing
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Tally:
    sent: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    hits: int = 0  # answers with `Cache-Status: "Netlify Edge"; hit`
    errors: int = 0  # connections that failed (reset, refused, closed mid-answer)
    latencies: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.sent += other.sent
        for status, n in other.statuses.items():
            self.statuses[status] = self.statuses.get(status, 0) + n
        self.hits += other.hits
        self.errors += other.errors
        self.latencies += other.latencies


def _read_answer(sock: socket.socket, buffer: bytes) -> tuple[int, bool, bytes]:
    """One answer's status and whether the edge answered from its cache; returns what was read past it."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer's headers")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the answer's body")
        rest += chunk
    hit = headers.get("cache-status", "").lower().endswith("; hit")
    return status, hit, rest[length:]


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _thread(url: str, start: float, seconds: float, interval: float, tally: Tally) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = (
        f"GET {parts.path}{'?' + parts.query if parts.query else ''} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    )
    data = request.encode()
    sock: socket.socket | None = None
    buffer = b""
    due = start
    while time.time() < start:
        time.sleep(0.001)
    end = start + seconds
    while (now := time.time()) < end:
        if now < due:
            time.sleep(due - now)
        due += interval
        try:
            if sock is None:
                sock, buffer = _connect(host, port), b""
            sent = time.perf_counter()
            sock.sendall(data)
            status, hit, buffer = _read_answer(sock, buffer)
            tally.latencies.append(time.perf_counter() - sent)
        except OSError:
            tally.errors += 1
            if sock is not None:
                sock.close()
            sock = None
            continue
        tally.sent += 1
        tally.statuses[status] = tally.statuses.get(status, 0) + 1
        tally.hits += hit
    if sock is not None:
        sock.close()


def _process(url: str, start: float, seconds: float, threads: int, interval: float, out: Any) -> None:
    tallies = [Tally() for _ in range(threads)]
    workers = [
        threading.Thread(target=_thread, args=(url, start + i * interval / threads, seconds, interval, t))
        for i, t in enumerate(tallies)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    total = Tally()
    for tally in tallies:
        total.add(tally)
    out.put(total)


def drive(url: str, *, rate: int, seconds: float, processes: int, threads: int) -> tuple[Tally, float, float]:
    """`GET url` at `rate` requests/s in all from processes x threads connections for `seconds`.
    Returns the tally, the time the load started (time.time()) and how long it ran."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    interval = processes * threads / rate  # each connection's share of the rate
    start = (
        time.time() + 1.5 + 0.3 * processes
    )  # every process started and connected before the first request
    children = [
        ctx.Process(target=_process, args=(url, start, seconds, threads, interval, out))
        for _ in range(processes)
    ]
    for child in children:
        child.start()
    total = Tally()
    for _ in children:
        total.add(out.get(timeout=seconds + 120))
    for child in children:
        child.join(timeout=30)
    return total, start, seconds
