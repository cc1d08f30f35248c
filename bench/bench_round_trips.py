"""The choice behind /mcp's one round trip, measured: the token lookup and the rate-limit write as two calls in
a row, the same two issued concurrently, and the single conditional UpdateItem on the user's gate item that
replaces them (svc_shared.oauth.mcpauth), each against embedded AWS in a process of its own; and the gate write
beside the cheapest conditional write there is (a counter), on the items as the platform stores them."""

from __future__ import annotations

import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.harness import Context, Result, Target, benchmark, median, ms, percentile

REQUESTS = 1000
QUICK_REQUESTS = 20
WARMUP = 20


class GateWrite:
    """Our gate's steady-state write for one request, raw (svc_shared.oauth.mcpauth.Gate.admit through
    svc_shared.storage.ratelimit.SlidingLog and svc_shared.storage.dal.Table.update send exactly this): one
    group of the log rewritten (`SET l<g> = :new`) under the token and group condition (`TOKEN#<grant> =
    :token AND l<g> = :seen`), on a gate item whose log is full (60 places in 6 groups). Each write puts its
    time in the oldest place of the next group in turn, so every write succeeds."""

    def __init__(self, client: Any, table: str, key: dict[str, Any], token_name: str, token: str, now: float):
        from svc_shared.storage.ratelimit import _encode, _ms

        self._client, self._table, self._key = client, table, key
        self._token_name, self._token = token_name, token
        self._encode, self._ms = _encode, _ms
        self._now = now
        from svc_shared.oauth.mcpauth import RATE_LIMIT, RATE_WINDOW
        from svc_shared.storage.ratelimit import SlidingLog

        sizes = SlidingLog(RATE_LIMIT, RATE_WINDOW).sizes  # the gate log's layout: places per group
        self.count = len(sizes)
        self.groups = {
            f"l{g}": [_ms(now - 3600 + g * size + i) for i in range(size)] for g, size in enumerate(sizes)
        }
        self._turn = 0

    def item(self) -> dict[str, Any]:
        """The log's attributes, to put on the item before the first write."""
        return {name: {"S": self._encode(places)} for name, places in self.groups.items()} | {
            "lg": {"N": str(self.count)}
        }

    def __call__(self, last_use: str | None = None, check_token: bool = True) -> None:
        self._turn += 1
        name = f"l{self._turn % self.count}"
        self._now += 2
        places = sorted(self.groups[name], reverse=True)
        seen = self._encode(places)
        places[-1] = self._ms(self._now)  # the oldest place, long out of the window
        self.groups[name] = places
        names = {"#n0": name, "#n1": self._token_name}
        values = {":v0": {"S": self._encode(places)}, ":v1": {"S": self._token}, ":v2": {"S": seen}}
        update, condition = "SET #n0 = :v0", "#n1 = :v1 AND #n0 = :v2"
        if not check_token:  # a detail row: the group's comparison alone, no revocation check
            condition = "#n0 = :v2"
            del names["#n1"], values[":v1"]
        if last_use:
            names["#n3"], values[":v3"] = last_use, {"N": f"{self._now:.3f}"}
            update += ", #n3 = :v3"
        self._client.update_item(
            TableName=self._table,
            Key=self._key,
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="NONE",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )


@benchmark(
    "mcp-round-trips", "/mcp storage designs: two calls in a row, two concurrently, one conditional write"
)
def round_trips(ctx: Context) -> Result:
    from bench.bench_stack import AwsProcess
    from svc_local.template import Template
    from svc_shared.core.aws import AwsClients
    from svc_shared.storage import keys

    requests = QUICK_REQUESTS if ctx.quick else ctx.option("requests", REQUESTS)
    template_path = ctx.root / "template.yaml"
    aws = AwsProcess(template_path)
    aws.start()
    saved = dict(os.environ)
    try:
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": aws.endpoint_url,
            }
        )
        client = AwsClients().client("dynamodb")
        table = Template(template_path).tables()[0].table_name
        # The token item as the OAuth server stores it (svc_shared.oauth.grants), with values of real sizes
        token_key = {"pk": {"S": keys.oauth_access("a" * 64)}, "sk": {"S": keys.ACCESS}}
        token_item = {
            **token_key,
            "family_id": {"S": "f" * 22},
            "client_id": {"S": "https://client.example/.well-known/oauth-client"},
            "user_id": {"S": "u" * 22},
            "resource": {"S": "https://api.example.com/mcp"},
            "scope": {"S": "mcp:all"},
            "created_at": {"N": "1764041234"},
            "token_id": {"S": "j" * 16},
            "expires_at": {"N": "1764127634"},
        }
        client.put_item(TableName=table, Item=token_item)
        # The gate item of a user with one grant and a full log (the item as a busy user's)
        gate_key = {"pk": {"S": keys.user("u" * 22)}, "sk": {"S": keys.MCP_GATE}}
        names = keys.gate_attributes("g" * 22)
        gate = GateWrite(client, table, gate_key, names["token"], "j" * 16, 1764041234.5)
        client.put_item(
            TableName=table,
            Item={
                **gate_key,
                names["token"]: {"S": "j" * 16},
                names["used"]: {"N": "1764041233.5"},
                **gate.item(),
            },
        )

        def lookup() -> None:
            client.get_item(TableName=table, Key=token_key)

        def count() -> None:
            client.update_item(
                TableName=table,
                Key={"pk": {"S": "RATE#mcp#u"}, "sk": {"S": "W#60"}},
                UpdateExpression="ADD #n :one",
                ConditionExpression="attribute_not_exists(#n) OR #n < :limit",
                ExpressionAttributeNames={"#n": "count"},
                ExpressionAttributeValues={":one": {"N": "1"}, ":limit": {"N": "1000000000"}},
            )

        pool = ThreadPoolExecutor(2)

        def in_a_row() -> None:
            lookup()
            count()

        def concurrently() -> None:
            first, second = pool.submit(lookup), pool.submit(count)
            first.result()
            second.result()

        designs: list[tuple[str, int, Any]] = [
            ("GetItem (token) then UpdateItem (rate limit), in a row", 2, in_a_row),
            ("the same two calls issued concurrently (2 threads)", 2, concurrently),
            ("one conditional UpdateItem on the user's gate item (ours)", 1, gate),
            ("the peer's GetItem alone (the token item)", 1, lookup),
            ("the peer's conditional counter UpdateItem alone", 1, count),
            (
                "ours with the grant's last use (at most once a minute per grant and instance)",
                1,
                lambda: gate(names["used"]),
            ),
            (
                "ours without the token comparison (the group's alone: what immediate revocation costs here)",
                1,
                lambda: gate(check_token=False),
            ),
        ]
        samples: dict[str, list[float]] = {name: [] for name, _, _ in designs}
        for _, _, run in designs:
            for _ in range(WARMUP):
                run()
        # Request by request, every design once per round, in a new order each round (a fixed seed): drift on
        # the machine hits every design alike, and no design always runs right after the same other one (a
        # rotated start would keep every design's neighbours)
        shuffled = random.Random(26)
        order = list(designs)
        for _ in range(requests):
            shuffled.shuffle(order)
            for name, _, run in order:
                started = time.perf_counter()
                run()
                samples[name].append(time.perf_counter() - started)
        pool.shutdown()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        aws.stop()
    base = median(samples[designs[0][0]])
    result = Result(columns=["design", "calls", "n", "p50 ms", "p99 ms", "vs in a row (p50)"])
    for name, calls, _ in designs:
        values = samples[name]
        result.rows.append(
            [
                name,
                str(calls),
                str(len(values)),
                ms(median(values)),
                ms(percentile(values, 99)),
                f"{median(values) / base:.2f}",
            ]
        )
    ours, counter = samples[designs[2][0]], samples[designs[4][0]]
    ratio = median(ours) / median(counter)
    result.targets.append(
        Target(
            "the gate write (full log) vs the peer's conditional counter write, median, same run",
            "as cheap: at most 1.05x",
            f"{ratio:.2f}x ({median(ours) * 1000:.2f} ms vs {median(counter) * 1000:.2f} ms)",
            ratio <= 1.05,
        )
    )
    result.notes += [
        "Embedded AWS (moto behind werkzeug) in a child process, the lean botocore client of svc_shared.core.aws in "
        "this one; the items as the platform writes them: the access-token item with the attributes the OAuth "
        "server stores, the gate item of a user with one grant (its current token and last use) and a full log (60 "
        "places in 6 groups of 10, `l0`..`l5`). Every write succeeds (it overwrites a place long out of the window). Percentiles "
        "nearest-rank.",
        f"{WARMUP} warm-up calls per design, then {requests} rounds: each round runs every design once, request by "
        "request, in an order shuffled each round (seeded): a design's neighbours change from round to round. "
        "In blocks of 50 in a fixed order, or with a rotated start, a design always ran right after the same "
        "other one and carried what that one left behind in the server.",
        "Ours is the gate's write of a request: one group of the log rewritten (`SET l<g> = :new`) under "
        "`TOKEN#<grant> = :token AND l<g> = :seen` (svc_shared.storage.ratelimit: a group as the instance "
        "last saw it). The grant's last use (a second SET) rides on it at most once a minute per grant and "
        "instance; that row shows what the second SET clause costs here. moto deep-copies and re-serialises "
        "the whole item on every update, so here an item's attribute count is part of a write's cost (the "
        "log in one number attribute per place cost 1.29x the counter on this machine, 6.10 vs 4.73 ms, and in "
        "twelve groups of five 1.05x-1.06x, on 2026-11-27); DynamoDB bills both writes one write unit (items "
        "under 1 KB).",
        "The row without the token comparison is not a design the gate may use: it shows what the comparison "
        "that makes a revoked or rotated-away token fail its very next request costs here, beside the "
        "counter write, which checks no token (the peer reads the token item in its GetItem for that).",
        "Issuing the two calls concurrently saves little from Python: both still pay a connection, signing "
        "and parsing under one GIL, and they cost two requests (and two WCU/RCU on DynamoDB). The single "
        "conditional write is one call whatever the load.",
        "Target (issue 26): our gate write as cheap as the peer's counter write at the median: "
        + "; ".join(f"{t.measured} ({'met' if t.met else 'not met'})" for t in result.targets)
        + ". Recorded, not asserted.",
    ]
    return result
