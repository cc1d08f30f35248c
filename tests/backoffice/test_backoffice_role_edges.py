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
    assert (answer.status, answer.json()) == (401, {"ok": False, "error": "not_configured"})
