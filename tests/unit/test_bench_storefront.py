"""The storefront benchmark's client reads answers off a keep-alive connection: one answer by its
Content-Length (what follows is kept for the next), its status, whether the edge answered from its cache, and
whether it is the answer expected (status, ETag, body)."""

from __future__ import annotations

from bench import run
from bench.harness import REGISTRY
from bench.storefront_load import Expected, Tally, _check, parse_answer
from bench.storefront_site import photo


def _answer(status: str, cache_status: str, body: bytes, etag: str = '"v1"') -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nCache-Status: {cache_status}\r\n"
    return (head + f"ETag: {etag}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def test_answers_on_one_connection_are_read_one_by_one_with_hit_or_not() -> None:
    first = _answer("200 OK", '"Netlify Edge"; hit', b'{"items": []}')
    second = _answer("200 OK", '"Netlify Edge"; fwd=miss', b"{}")
    third = _answer("404 Not Found", '"Netlify Edge"; fwd=miss', b"")
    parsed = parse_answer(first + second[:20])
    assert parsed is not None
    answer, rest = parsed
    assert (answer.status, answer.hit, answer.body, rest) == (200, True, b'{"items": []}', second[:20])
    assert parse_answer(rest) is None  # headers not all there yet
    parsed = parse_answer(rest + second[20:] + third)
    assert parsed is not None
    answer, rest = parsed
    assert (answer.status, answer.hit, answer.body) == (200, False, b"{}")
    assert rest == third
    parsed = parse_answer(rest)
    assert parsed is not None and (parsed[0].status, parsed[0].hit, parsed[1]) == (404, False, b"")


def test_an_answer_whose_body_is_not_all_there_is_not_read_yet() -> None:
    whole = _answer("200 OK", '"Netlify Edge"; hit', b"0123456789")
    assert parse_answer(whole[:-4]) is None
    parsed = parse_answer(whole)
    assert parsed is not None and parsed[0].body == b"0123456789"


def test_an_answer_other_than_the_expected_one_is_counted_wrong() -> None:
    expected = Expected(200, '"v1"', b'{"items": []}')
    tally = Tally()
    for raw in (
        _answer("200 OK", '"Netlify Edge"; hit', b'{"items": []}'),
        _answer("200 OK", '"Netlify Edge"; hit', b'{"items": [1]}'),  # another body
        _answer("200 OK", '"Netlify Edge"; hit', b'{"items": []}', etag='"v2"'),  # another ETag
        _answer("502 Bad Gateway", '"Netlify Edge"; fwd=miss', b'{"items": []}'),
    ):
        parsed = parse_answer(raw)
        assert parsed is not None
        _check(parsed[0], expected, tally)
    assert (tally.sent, tally.wrong, tally.hits, tally.statuses) == (4, 3, 3, {200: 3, 502: 1})


def test_the_storefront_benchmark_is_registered_and_its_images_are_pngs_of_a_few_kb() -> None:
    run.load_benchmarks()
    assert "storefront" in REGISTRY
    image = photo(3)
    assert image.startswith(b"\x89PNG\r\n\x1a\n") and 2_000 < len(image) < 8_000
    assert photo(3) == image and photo(4) != image
