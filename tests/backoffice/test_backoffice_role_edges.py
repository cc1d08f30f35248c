"""Every handler of the route table at its role edges: no session, the role just below the minimum, and the
minimum itself; the webhooks take no session at all."""

from __future__ import annotations

import uuid

import pytest

from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.routers.table import ROUTES

BELOW = {rank: role for role, rank in ROLE_RANK.items()}


def concrete(path: str) -> str:
    return path.replace("[id]", str(uuid.uuid4()))


@pytest.mark.parametrize("route", [r for r in ROUTES if r.role], ids=lambda r: f"{r.method} {r.path}")
def test_gated_route_edges(as_role, route):
    path = concrete(route.path)
    answer = as_role(None).request(route.method, path, body={})
    assert (answer.status, answer.location) == (302, "/auth/signed-out")
    rank = ROLE_RANK[route.role]
    if rank > 1:
        answer = as_role(BELOW[rank - 1]).request(route.method, path, body={})
        assert (answer.status, answer.location) == (302, "/auth/signed-out?reason=insufficient_role")
    answer = as_role(route.role).request(route.method, path, body={})
    assert answer.status != 302 or not (answer.location or "").startswith("/auth/signed-out")
    assert answer.status < 500, answer.body
    assert str(answer.status) in route.answers.split(), (answer.status, answer.body)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.role is None], ids=lambda r: r.path)
def test_webhooks_skip_the_gate(as_role, route):
    answer = as_role(None).post(route.path, {"id": "evt"})
    # No provider is configured: the answer is a refused signature's, as a configured shop would give.
    assert (answer.status, answer.json()) == (400, {"ok": False, "error": "missing_signature"})


# A DELETE needs no body type, so POST and PATCH are where a body check could come first.
WRITES_ABOVE_VIEWER = [r for r in ROUTES if r.role and r.role != "viewer" and r.method in ("POST", "PATCH")]


@pytest.mark.parametrize("route", WRITES_ABOVE_VIEWER, ids=lambda r: f"{r.method} {r.path}")
def test_the_gate_answers_before_the_body_is_looked_at(as_role, route):
    """A member below the route's role who sends no body (no JSON type either) is told about the role, not
    about the body: the gate comes first."""
    below = BELOW[ROLE_RANK[route.role] - 1]
    answer = as_role(below).request(route.method, concrete(route.path), headers={"Content-Type": ""})
    assert (answer.status, answer.location) == (302, "/auth/signed-out?reason=insufficient_role")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/api/products", "GET, POST"),
        ("DELETE", "/api/products", "GET, POST"),
        ("PUT", f"/api/products/{uuid.uuid4()}", "DELETE, GET, PATCH"),
        ("POST", "/api/staff/", None),
        ("GET", "/api/no-such-thing", None),
    ],
)
def test_a_method_a_path_does_not_have_is_405_naming_the_ones_it_has(as_role, method, path, allowed):
    answer = as_role("owner").request(method, path, body={} if method != "GET" else None)
    if allowed is None:
        assert (answer.status, answer.json()) == (404, {"error": "Not found"})
        assert "Allow" not in answer.headers
        return
    assert answer.status == 405
    assert answer.headers["Allow"] == allowed
    assert answer.json() == {"error": f"This address does not answer that method; it answers {allowed}."}
