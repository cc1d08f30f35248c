"""The local stack under parallel clients (MCP clients do send requests in parallel): every request gets its
own outcome, connections are kept alive and never reset."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from svc_shared.oauth.clients import REGISTRATIONS_PER_MINUTE

# Registrations are limited per client address: this test sends from an address of its own on loopback, so
# other tests' registrations do not count against it.
SOURCE = "127.0.0.75"
INVALID = [
    ({"client_name": "no uris"}, "redirect_uris is required"),
    ({"redirect_uris": ["http://example.com/cb"]}, "must be https"),
    ({"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]}, "response_types"),
]


def request_for(number: int) -> tuple[dict[str, Any], str | None]:
    """(metadata, expected error text or None for a valid registration)."""
    if number % 2 == 0:
        uri = f"https://client-{number}.example/callback"
        return {"redirect_uris": [uri], "client_name": f"client {number}"}, None
    return INVALID[number % len(INVALID)]


def test_parallel_registrations_each_get_their_own_outcome(gateway: str):
    total, connections = 75, 32
    transport_args = {"local_address": SOURCE, "limits": httpx.Limits(max_connections=1)}

    def one_connection(slot: int) -> list[tuple[int, httpx.Response]]:
        # One keep-alive connection sends the registrations slot, slot+32, slot+64...
        with httpx.Client(transport=httpx.HTTPTransport(**transport_args), timeout=20) as http:
            return [
                (number, http.post(f"{gateway}/oauth/register", json=request_for(number)[0]))
                for number in range(slot, total, connections)
            ]

    with ThreadPoolExecutor(connections) as pool:
        answers = [pair for result in pool.map(one_connection, range(connections)) for pair in result]

    assert sorted(number for number, _ in answers) == list(range(total))
    limited = [number for number, answer in answers if answer.status_code == 429]
    # The limit counts every registration attempt, valid or not: exactly the allowance passes.
    assert len(limited) == total - REGISTRATIONS_PER_MINUTE
    for number, answer in answers:
        if answer.status_code == 429:
            assert answer.json()["error"] == "rate_limited"
            assert int(answer.headers["Retry-After"]) >= 1
            continue
        metadata, expected_error = request_for(number)
        if expected_error is None:
            assert answer.status_code == 201, (number, answer.text)
            body = answer.json()
            assert body["client_name"] == metadata["client_name"]
            assert body["redirect_uris"] == metadata["redirect_uris"]
        else:
            assert answer.status_code == 400, (number, answer.text)
            assert expected_error in answer.json()["error_description"], (number, answer.text)


def test_thirty_two_keep_alive_connections_are_served_without_resets(gateway: str):
    rounds = 8

    def one_connection(slot: int) -> list[tuple[int, str]]:
        seen = []
        with httpx.Client(base_url=gateway, timeout=20, limits=httpx.Limits(max_connections=1)) as http:
            for turn in range(rounds):
                answer = http.post("/mcp", json={"jsonrpc": "2.0", "id": f"{slot}-{turn}", "method": "ping"})
                seen.append((answer.status_code, answer.headers.get("connection", "keep-alive")))
        return seen

    with ThreadPoolExecutor(32) as pool:
        outcomes = [o for result in pool.map(one_connection, range(32)) for o in result]
    # Every request answered (a reset connection raises), each as an unauthenticated call, none closed.
    assert outcomes == [(401, "keep-alive")] * (32 * rounds)
