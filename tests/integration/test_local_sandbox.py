"""Provider sandbox core: health, table-driven provider routes and fault injection over real HTTP."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Iterable, Iterator

import httpx
import pytest

from svc_local.sandbox import Sandbox, SandboxRequest, SandboxResponse, SandboxRoute, json_response


class EchoProvider:
    name = "echo"

    def routes(self) -> Iterable[SandboxRoute]:
        return [
            SandboxRoute("GET", "/echo/{name}", self.hello),
            SandboxRoute("POST", "/echo/{path+}", self.store),
        ]

    def hello(self, request: SandboxRequest) -> SandboxResponse:
        return json_response({"hello": request.params["name"], "q": request.arg("q")})

    def store(self, request: SandboxRequest) -> SandboxResponse:
        return json_response({"path": request.params["path"], "body": request.json()}, 201)


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, [EchoProvider()], log_stream=io.StringIO()) as running:
        yield running


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.url, timeout=5) as http:
        yield http


def test_health_lists_the_mounted_providers(client: httpx.Client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "providers": ["echo"]}


def test_provider_routes_are_served_with_parameters(client: httpx.Client):
    assert client.get("/echo/ada?q=1").json() == {"hello": "ada", "q": "1"}
    created = client.post("/echo/a/b", json={"x": 1})
    assert (created.status_code, created.json()) == (201, {"path": "a/b", "body": {"x": 1}})
    assert client.get("/nothing").status_code == 404
    assert client.delete("/echo/ada").status_code == 405


def test_injected_status_applies_the_given_number_of_times(client: httpx.Client):
    added = client.post(
        "/__admin/faults", json={"method": "GET", "path": "/echo/*", "status": 503, "times": 2}
    )
    assert added.status_code == 201
    assert [client.get("/echo/x").status_code for _ in range(3)] == [503, 503, 200]


def test_faults_are_off_until_asked_and_cleared_on_delete(client: httpx.Client):
    assert client.get("/echo/x").status_code == 200
    client.post("/__admin/faults", json={"method": "*", "path": "/echo/x", "status": 500})
    assert client.get("/echo/x").status_code == 500
    assert client.get("/__admin/faults").json()["faults"][0]["status"] == 500
    assert client.delete("/__admin/faults").status_code == 204
    assert client.get("/echo/x").status_code == 200


def test_delay_slows_the_response_down(client: httpx.Client):
    client.post("/__admin/faults", json={"method": "GET", "path": "/health", "delay_ms": 150, "times": 1})
    started = time.perf_counter()
    assert client.get("/health").status_code == 200
    assert time.perf_counter() - started >= 0.15


def test_drop_closes_the_connection_without_an_answer(sandbox: Sandbox):
    httpx.post(
        f"{sandbox.url}/__admin/faults", json={"method": "GET", "path": "/health", "drop": True, "times": 1}
    )
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{sandbox.url}/health")
    assert httpx.get(f"{sandbox.url}/health").status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"path": "/x", "status": 500},
        {"method": "GET", "path": "x", "status": 500},
        {"method": "GET", "path": "/x"},
        {"method": "GET", "path": "/x", "status": 1000},
        {"method": "GET", "path": "/x", "status": 500, "times": 0},
        {"method": "GET", "path": "/x", "drop": "yes"},
        {"method": "GET", "path": "/x", "status": 500, "colour": "red"},
    ],
)
def test_invalid_fault_is_refused(client: httpx.Client, body: dict):
    response = client.post("/__admin/faults", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


@pytest.mark.parametrize("length", ["-5", "ten", "1e3"])
def test_a_content_length_that_is_not_a_length_is_a_400(sandbox: Sandbox, length: str):
    host, port = sandbox.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(f"POST /echo/x HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\n\r\n".encode())
        status_line = conn.makefile("rb").readline().decode()
    assert status_line.split()[1] == "400", status_line
