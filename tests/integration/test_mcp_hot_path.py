"""POST /mcp in one storage round trip: storage calls counted by a botocore hook on every AWS client, and the
guarantees kept (revoked or rotated-away tokens refused at once, 60 per 60 s per user, forged tokens refused
with no I/O)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from unittest.mock import patch

import pytest

from svc_shared.core import aws
from svc_shared.core.aws import AwsClients
from svc_shared.oauth.grants import Grants
from svc_shared.oauth.mcpauth import Gate, issue_access_token, read_access_token
from svc_shared.oauth.metadata import resource_url
from svc_shared.wiring import services

BASE = "http://127.0.0.1:3000"
RESOURCE = resource_url(BASE)


def rpc(api, bearer, payload):
    return api.post("/mcp", body=json.dumps(payload), headers=bearer)


def call(method, id_=1, **params):
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})}


def tool(name, id_=1):
    return call("tools/call", id_, name=name, arguments={})


def tool_result(reply):
    result = reply.json()["result"]
    assert result.get("isError") is not True, result
    return json.loads(result["content"][0]["text"])


def with_token(bearer, token):
    return {**bearer, "Authorization": f"Bearer {token}"}


@pytest.fixture
def storage_calls(app_env, monkeypatch) -> Iterator[list[str]]:
    """Every AWS API call the code under test makes from now on (DynamoDB, Secrets Manager, KMS...): a
    botocore hook on each client the services hand out, whichever wiring they belong to."""
    seen: list[str] = []

    def count(model, **_):
        seen.append(f"{model.service_model.service_name}.{model.name}")

    hooked: list[object] = []
    original = AwsClients.client

    def client(self, service):
        made = original(self, service)
        if made not in hooked:
            made.meta.events.register("before-call", count, unique_id="test-storage-calls")
            hooked.append(made)
        return made

    monkeypatch.setattr(AwsClients, "client", client)
    for name in aws.SERVICES:
        services.current().aws.client(name)
    yield seen
    for made in hooked:
        made.meta.events.unregister("before-call", unique_id="test-storage-calls")


@pytest.fixture
def warm(api, bearer, storage_calls):
    """One request first, as on a warm instance (the signing key is fetched once per instance)."""
    assert rpc(api, bearer, call("ping")).status == 200
    storage_calls.clear()
    return bearer


def claims_of(bearer):
    token = bearer["Authorization"].split(" ", 1)[1]
    claims = read_access_token(token, services.signing_key("mcp-access"), RESOURCE, services.clock().now())
    assert claims is not None
    return claims


def test_tools_list_and_a_trivial_tool_take_one_round_trip(api, warm, storage_calls):
    reply = rpc(api, warm, call("tools/list"))
    assert reply.status == 200 and len(reply.json()["result"]["tools"]) > 20
    assert storage_calls == ["dynamodb.UpdateItem"]
    storage_calls.clear()
    reply = rpc(api, warm, tool("list_library_projects"))
    assert tool_result(reply) == {"projects": []}
    assert storage_calls == ["dynamodb.UpdateItem"]


def test_get_me_takes_two(api, warm, storage_calls):
    reply = rpc(api, warm, tool("get_me"))
    assert tool_result(reply)["email"] == "demo@example.com"
    assert storage_calls == ["dynamodb.UpdateItem", "dynamodb.GetItem"]


def test_malformed_forged_expired_or_foreign_tokens_are_refused_with_no_io(api, clock, warm, storage_calls):
    token = warm["Authorization"].split(" ", 1)[1]
    claims = claims_of(warm)
    key = services.signing_key("mcp-access")
    body, _, mac = token.rpartition(".")
    forged_mac = f"{body}.{'A' if mac[0] != 'A' else 'B'}{mac[1:]}"
    other_user = token.replace(body, body[:-2] + ("xx" if body[-2:] != "xx" else "yy"))
    foreign = issue_access_token(
        key,
        resource="https://elsewhere.example/mcp",
        user_id=claims.user_id,
        grant_id=claims.grant_id,
        client_id=claims.client_id,
        expires_at=claims.expires_at,
    )[0]
    other_key = issue_access_token(
        b"k" * 32,
        resource=RESOURCE,
        user_id=claims.user_id,
        grant_id=claims.grant_id,
        client_id=claims.client_id,
        expires_at=claims.expires_at,
    )[0]
    sent: list[bytes] = []  # any network write at all (AWS, Secrets Manager, anything) shows here
    real_send, real_sendall = socket.socket.send, socket.socket.sendall

    def send(self, data, *args):
        sent.append(data)
        return real_send(self, data, *args)

    def sendall(self, data, *args):
        sent.append(data)
        return real_sendall(self, data, *args)

    with patch.object(socket.socket, "send", send), patch.object(socket.socket, "sendall", sendall):
        for bad in (
            forged_mac,
            other_user,
            foreign,
            other_key,
            "svcat_a.b",
            "svcat_" + "x" * 600,
            "svcat_" + "x" * 1100,
            ".",
        ):
            answer = rpc(api, with_token(warm, bad), call("ping"))
            assert answer.status == 401, bad
            assert 'error="invalid_token"' in answer.header("www-authenticate")
        clock.advance(24 * 3600)  # the token's lifetime
        assert rpc(api, warm, call("ping")).status == 401
    assert storage_calls == [] and sent == []
    clock.advance(-1)
    with patch.object(socket.socket, "send", send), patch.object(socket.socket, "sendall", sendall):
        assert rpc(api, warm, call("ping")).status == 200  # the same token, a second earlier: valid
    assert sent and storage_calls == ["dynamodb.UpdateItem"]  # the hooks do see I/O when there is some


def test_a_revoked_grant_is_refused_at_the_next_request(api, warm, storage_calls):
    claims = claims_of(warm)
    listed = services.mcp_clients().list(claims.user_id)
    assert [c.grant_id for c in listed] == [claims.grant_id]
    assert services.mcp_clients().revoke(claims.user_id, claims.grant_id) is True
    storage_calls.clear()
    answer = rpc(api, warm, call("ping"))
    assert answer.status == 401
    assert 'error="invalid_token"' in answer.header("www-authenticate")
    assert storage_calls == ["dynamodb.UpdateItem"]
    assert services.mcp_clients().list(claims.user_id) == []


def test_revoke_refuses_another_users_grant(api, warm):
    claims = claims_of(warm)
    assert services.mcp_clients().revoke("someone-else", claims.grant_id) is False
    assert rpc(api, warm, call("ping")).status == 200


def test_a_rotated_away_access_token_is_refused_at_once(api, bearer):
    from apiclient import authorize_client, refresh_tokens

    tokens = authorize_client(api, "demo@example.com", "demo-password-1")
    old = with_token(bearer, tokens["access_token"])
    assert rpc(api, old, call("ping")).status == 200
    fresh = refresh_tokens(api, tokens).json()
    assert rpc(api, old, call("ping")).status == 401
    assert rpc(api, with_token(bearer, fresh["access_token"]), call("ping")).status == 200


def test_sixty_per_sixty_seconds_across_a_minute_boundary_and_across_instances(api, clock, bearer):
    clock.advance(60 - clock.now() % 60 - 2)  # two seconds before a calendar minute ends
    for i in range(30):
        assert rpc(api, bearer, call("ping", i)).status == 200
    services.wire(clock=clock)  # another instance: nothing of the count is kept in memory
    clock.advance(1)
    for i in range(30):
        assert rpc(api, bearer, call("ping", i)).status == 200
    clock.advance(2)  # into the next calendar minute
    limited = rpc(api, bearer, call("ping"))
    assert limited.status == 429
    assert limited.header("retry-after") == "57"  # the first 30 leave the window 57 s from now
    assert limited.json()["error"]["message"].endswith("Retry in 57s.")
    clock.advance(56.9)
    assert rpc(api, bearer, call("ping")).status == 429
    clock.advance(0.1)
    assert rpc(api, bearer, [call("ping", i) for i in range(30)]).status == 200
    assert rpc(api, bearer, call("ping")).status == 429


def test_two_instances_racing_on_one_user_accept_sixty_and_see_a_revocation_at_once(api, clock, warm):
    claims = claims_of(warm)
    # Two instances wired apart (their own AWS clients, their own views of the user's log), as two Lambda
    # containers serving one user at once.
    gates = [Gate(services.Services(clock=clock).table, clock) for _ in range(2)]
    for gate in gates:  # each has served the user before: it holds a view of the log
        assert gate.admit(claims.user_id, claims.grant_id, claims.token_id).allowed
    clock.advance(61)  # every earlier request has left the window: 60 free slots
    start = threading.Barrier(2)

    def serve(gate: Gate) -> list:
        start.wait()
        return [gate.admit(claims.user_id, claims.grant_id, claims.token_id) for _ in range(31)]

    with ThreadPoolExecutor(2) as pool:
        answers = [a for batch in pool.map(serve, gates) for a in batch]
    assert sum(a.allowed for a in answers) == 60
    refused = [a for a in answers if not a.allowed]
    assert len(refused) == 2 and not any(a.revoked for a in refused)
    assert [a.retry_after for a in refused] == [60, 60]  # when the first of the 60 leaves the window
    limited = rpc(api, warm, call("ping"))  # the 61st as a client sees it, through a third instance
    assert limited.status == 429 and limited.header("retry-after") == "60"
    clock.advance(60)
    assert gates[1].admit(claims.user_id, claims.grant_id, claims.token_id).allowed
    assert services.mcp_clients().revoke(claims.user_id, claims.grant_id) is True
    for gate in gates:  # neither instance lets the revoked token through, whatever it saw before
        assert gate.admit(claims.user_id, claims.grant_id, claims.token_id).revoked
    assert rpc(api, warm, call("ping")).status == 401


def test_last_use_is_recorded_by_the_request_itself_to_within_a_minute(api, clock, warm, storage_calls):
    claims = claims_of(warm)

    def last_used() -> float | None:
        (listed,) = services.mcp_clients().list(claims.user_id)
        assert listed.public()["client_id"] == claims.client_id
        assert listed.authorized_at <= clock.now()
        return listed.last_used_at

    recorded = last_used()  # by the warm-up request
    assert recorded == pytest.approx(clock.now(), abs=0.001)
    clock.advance(5)
    storage_calls.clear()
    assert rpc(api, warm, call("ping")).status == 200
    assert storage_calls == ["dynamodb.UpdateItem"]  # the count alone: last use is a few seconds old
    assert last_used() == recorded
    clock.advance(55)  # a minute after the recorded use: the next request records it, in the same write
    storage_calls.clear()
    assert rpc(api, warm, call("ping")).status == 200
    assert storage_calls == ["dynamodb.UpdateItem"]
    assert last_used() == pytest.approx(clock.now(), abs=0.001)
    clock.advance(2)
    services.wire(clock=clock)  # another instance records it on its first request
    assert rpc(api, warm, call("ping")).status == 200
    assert last_used() == pytest.approx(clock.now(), abs=0.001)


def test_tokens_of_the_earlier_format_still_work_until_revoked(api, clock, warm, demo_user, storage_calls):
    # The user's gate has been written by this instance (`warm`): the token's hash item costs one GetItem more.
    legacy = Grants(services.table(), clock, RESOURCE)  # issues random tokens looked up by their hash
    pair = legacy._new_family("legacy-family", "legacy-client", demo_user.id, RESOURCE, "mcp:all")
    assert "." not in pair.access_token
    headers = with_token(warm, pair.access_token)
    storage_calls.clear()
    assert rpc(api, headers, call("ping")).status == 200
    assert storage_calls == ["dynamodb.GetItem", "dynamodb.UpdateItem"]
    services.grants().revoke_family("legacy-family")
    assert rpc(api, headers, call("ping")).status == 401


def test_revoking_one_access_token_keeps_its_grant(api, bearer):
    from apiclient import authorize_client, refresh_tokens

    tokens = authorize_client(api, "demo@example.com", "demo-password-1")
    headers = with_token(bearer, tokens["access_token"])
    claims = claims_of(headers)
    assert services.grants().gate.revoke_access_token(claims) is True
    assert rpc(api, headers, call("ping")).status == 401
    assert services.grants().gate.revoke_access_token(claims) is False  # already refused
    assert claims.grant_id in [c.grant_id for c in services.mcp_clients().list(claims.user_id)]
    fresh = refresh_tokens(api, tokens).json()
    assert rpc(api, with_token(bearer, fresh["access_token"]), call("ping")).status == 200


def test_the_gate_item_holds_what_a_request_needs_and_the_list_reads_the_grant(api, warm):
    # Every /mcp request writes the gate item: it holds the grant's current token and last use, not its client
    # (a metadata-document client id is up to 500 characters) nor its authorization time, which the workspace's
    # list reads from the grant's token family item.
    from svc_shared.storage import keys

    claims = claims_of(warm)
    names = keys.gate_attributes(claims.grant_id)
    item = services.table().get(keys.user(claims.user_id), keys.MCP_GATE, consistent=True)
    assert item[names["token"]] == claims.token_id and names["used"] in item
    assert names["client"] not in item and names["authorized"] not in item
    (listed,) = [c for c in services.mcp_clients().list(claims.user_id) if c.grant_id == claims.grant_id]
    family = services.table().get(keys.oauth_family(claims.grant_id), keys.FAMILY)
    assert (listed.client_id, listed.authorized_at) == (claims.client_id, family["created_at"])
    # A gate item written before keeps its own client and time, and is listed as before.
    services.table().update(
        keys.user(claims.user_id),
        keys.MCP_GATE,
        set={names["client"]: "earlier-client", names["authorized"]: 7},
    )
    (listed,) = [c for c in services.mcp_clients().list(claims.user_id) if c.grant_id == claims.grant_id]
    assert (listed.client_id, listed.authorized_at) == ("earlier-client", 7)
    # Revoking the grant takes all of it off the item, and the request is refused.
    assert services.mcp_clients().revoke(claims.user_id, claims.grant_id)
    item = services.table().get(keys.user(claims.user_id), keys.MCP_GATE, consistent=True)
    assert not set(names.values()) & set(item)
    assert rpc(api, warm, call("ping")).status == 401
