"""The storefront benchmark's client reads answers off a keep-alive connection: one answer by its
Content-Length (what follows is kept for the next), its status, and whether the edge answered from its cache."""

from __future__ import annotations

import socket

import pytest

from bench import run
from bench.harness import REGISTRY
from bench.storefront_load import _read_answer
from bench.storefront_site import photo


def _answer(status: str, cache_status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nCache-Status: {cache_status}\r\n"
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def test_answers_on_one_connection_are_read_one_by_one_with_hit_or_not() -> None:
    first = _answer("200 OK", '"Netlify Edge"; hit', b'{"items": []}')
    second = _answer("200 OK", '"Netlify Edge"; fwd=miss', b"{}")
    third = _answer("404 Not Found", '"Netlify Edge"; fwd=miss', b"")
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(first + second[:20])
        status, hit, rest = _read_answer(ours, b"")
        assert (status, hit, rest) == (200, True, second[:20])
        theirs.sendall(second[20:] + third)
        status, hit, rest = _read_answer(ours, rest)
        assert (status, hit) == (200, False)
        assert _read_answer(ours, rest)[:2] == (404, False)


def test_a_connection_closed_inside_an_answer_is_an_error_not_an_answer() -> None:
    ours, theirs = socket.socketpair()
    with ours:
        theirs.sendall(_answer("200 OK", '"Netlify Edge"; hit', b"0123456789")[:-4])
        theirs.close()
        with pytest.raises(ConnectionError):
            _read_answer(ours, b"")


def test_the_storefront_benchmark_is_registered_and_its_images_are_pngs_of_a_few_kb() -> None:
    run.load_benchmarks()
    assert "storefront" in REGISTRY
    image = photo(3)
    assert image.startswith(b"\x89PNG\r\n\x1a\n") and 2_000 < len(image) < 8_000
    assert photo(3) == image and photo(4) != image
