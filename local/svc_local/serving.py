"""A threaded HTTP server running in a background thread: what the gateway and the sandbox share."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from http.server import ThreadingHTTPServer


class BackgroundServer(ABC):
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

    def stopped(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Called once the server has stopped serving."""
