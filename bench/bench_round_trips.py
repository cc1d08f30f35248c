"""The choice behind /mcp's one round trip, measured: the token lookup and the rate-limit write as two calls in
a row, the same two issued concurrently, and the single conditional UpdateItem on the user's gate item that
replaces them (svc_shared.oauth.mcpauth), each against embedded AWS in a process of its own; and the gate write
beside the cheapest conditional write there is (a counter), on the items as the platform stores them."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.harness import Context, Result, Target, benchmark, median, ms, percentile

REQUESTS = 300
QUICK_REQUESTS = 20
WARMUP = 20


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
        slots = {f"t{i}": {"N": f"{1764041174.5 + i:.3f}"} for i in range(60)}
        client.put_item(
            TableName=table,
            Item={
                **gate_key,
                names["token"]: {"S": "j" * 16},
                names["client"]: token_item["client_id"],
                names["authorized"]: {"N": "1764041000"},
                names["used"]: {"N": "1764041233.5"},
                **slots,
            },
        )
        small_key = {"pk": {"S": keys.user("v" * 22)}, "sk": {"S": keys.MCP_GATE}}
        client.put_item(TableName=table, Item={**small_key, names["token"]: {"S": "j" * 16}})
        turn = [0]

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

        def gate_write(key: dict[str, Any], slot: str, now: float, last_use: bool) -> None:
            # exactly what the gate sends (svc_shared.oauth.mcpauth.Gate.admit through svc_shared.storage.dal.Table.update)
            client.update_item(
                TableName=table,
                Key=key,
                UpdateExpression=f"SET {slot} = :now" + (", #u = :now" if last_use else ""),
                ConditionExpression=f"#j = :token AND (attribute_not_exists({slot}) OR {slot} <= :cutoff)",
                ExpressionAttributeNames={
                    "#j": names["token"],
                    **({"#u": names["used"]} if last_use else {}),
                },
                ExpressionAttributeValues={
                    ":now": {"N": f"{now:.3f}"},
                    ":cutoff": {"N": f"{now - 60:.3f}"},
                    ":token": {"S": "j" * 16},
                },
                ReturnValues="NONE",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )

        def gate(last_use: bool = False) -> None:
            turn[0] += 1  # each slot comes round again 60 turns (6000 s) later: free
            gate_write(gate_key, f"t{turn[0] % 60}", 1764041234.5 + turn[0] * 100, last_use)

        def gate_small() -> None:  # the same write on a gate item whose log holds one slot
            turn[0] += 1
            gate_write(small_key, "t0", 1764041234.5 + turn[0] * 100, False)

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
                lambda: gate(True),
            ),
            ("ours on a gate item holding one slot", 1, gate_small),
        ]
        samples: dict[str, list[float]] = {name: [] for name, _, _ in designs}
        for _, _, run in designs:
            for _ in range(WARMUP):
                run()
        for _ in range(requests // 50 or 1):  # blocks of 50, alternating, so drift hits every design
            for name, _, run in designs:
                for _ in range(min(50, requests)):
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
        "server stores, the gate item of a user with one grant and a full log of 60 slots. Every write "
        "succeeds (a slot comes round long after its time left the window). Percentiles nearest-rank.",
        "Ours is the gate's write of a request: one slot (`SET t<k> = :now`) under the token and slot "
        "condition. The grant's last use (a second SET) rides on it at most once a minute per grant and "
        "instance; that row shows what the second SET clause costs here (moto sums the item's size for every "
        "SET clause and deep-copies the item on every update; DynamoDB bills an item under 1 KB the same "
        "whatever it holds), and the one-slot row what the log's size costs.",
        "Issuing the two calls concurrently saves little from Python: both still pay a connection, signing "
        "and parsing under one GIL, and they cost two requests (and two WCU/RCU on DynamoDB). The single "
        "conditional write is one call whatever the load.",
        "Target (issue 26): our gate write as cheap as the peer's counter write at the median: "
        + "; ".join(f"{t.measured} ({'met' if t.met else 'not met'})" for t in result.targets)
        + ". Recorded, not asserted.",
    ]
    return result
