"""Our MCP endpoint (functions/mcp/app.py) against the official MCP Python SDK's own server (mcp 2.x MCPServer,
stateless streamable HTTP with JSON responses) serving the same tools/list and a trivial tools/call: per-request
time in-process, cold start in a fresh interpreter, and the DynamoDB calls of one authenticated tools/call."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from typing import Any

from bench.bench_cold_import import _IMPORTTIME, function_env
from bench.harness import Context, Result, benchmark, median, ms, percentile

REQUESTS = 400  # per case and per server
QUICK_REQUESTS = 20
BLOCK = 50  # requests of one case on one server before switching (and moving our rate-limit clock)
WARMUP = 20
COLD_RUNS = 9
QUICK_COLD_RUNS = 2
PROTOCOL_VERSION = "2025-11-25"  # the newest version both servers negotiate (the SDK's 2025 stateless path)
TOOL = "list_library_projects"
DDB_TARGET = 3
MCP_FUNCTION = "McpFunction"

HEADERS = {
    "Host": "127.0.0.1:3000",
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
}
MESSAGES = {
    "tools/list": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    f"tools/call {TOOL}": {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": {}},
    },
}

# The peer: the SDK's documented high-level server with the same trivial tool. Its default log level (INFO)
# writes two lines per request to stderr; WARNING keeps logging out of the figures, as ours logs nothing
# per request at INFO. Used as-is both in this process and in the cold-start children.
PEER_SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("peer", log_level="WARNING")


@server.tool()
def list_library_projects() -> dict:
    """Projects shared in the public library. Kept for parity with other builders: always an empty list."""
    return {"projects": []}


app = server.streamable_http_app(stateless_http=True, json_response=True)
'''


async def asgi_post(app: Any, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """One POST /mcp straight into an ASGI app: no client library, no socket (the mirror of calling our
    Lambda handler with a proxy event)."""
    done = asyncio.Event()
    delivered = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        + [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 3000),
        "state": {},
    }
    await app(scope, receive, send)
    done.set()
    return status, b"".join(chunks)


# Cold start children. Each prints {"ready": s, "first": s, "status": n, "body": str} on its last line:
# ready = from the first line of the script to the server being importable/built; first = serving one request.
OURS_CHILD = """
import time
started = time.perf_counter()
import json, sys
sys.path[:0] = {paths!r}
import app
ready = time.perf_counter()


class Context:  # the attributes of the Lambda context object Powertools reads
    function_name = {function_name!r}
    memory_limit_in_mb = {memory!r}
    invoked_function_arn = {arn!r}
    aws_request_id = "cold-start"


result = app.handler(json.loads({event!r}), Context())
first = time.perf_counter()
print(json.dumps({{"ready": ready - started, "first": first - ready, "status": result["statusCode"],
                  "body": result["body"]}}))
"""

PEER_CHILD = """
from __future__ import annotations  # asgi_post's annotations name typing.Any
import time
started = time.perf_counter()
import asyncio, json
{server}
ready = time.perf_counter()
{asgi_post}

async def main():
    async with app.router.lifespan_context(app):
        return await asgi_post(app, {body!r}, {headers!r})

status, body = asyncio.run(main())
first = time.perf_counter()
print(json.dumps({{"ready": ready - started, "first": first - ready, "status": status, "body": body.decode()}}))
"""


def _check(status: int, body: bytes | str, what: str) -> None:
    """A 200 with a JSON-RPC result that is not a tool error, or the benchmark fails."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    ok = (
        status == 200
        and isinstance(payload, dict)
        and "result" in payload
        and not (isinstance(payload["result"], dict) and payload["result"].get("isError"))
    )
    if not ok:
        raise RuntimeError(f"{what}: HTTP {status}: {str(body)[:300]}")


@contextlib.contextmanager
def _root_logging() -> Iterator[None]:
    """MCPServer calls logging.basicConfig: put the root logger back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _child(
    script: str, env: dict[str, str], cwd: str, extra: tuple[str, ...] = ()
) -> tuple[float, dict[str, Any], str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *extra, "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"cold-start child failed: {done.stderr.strip()[-1500:]}")
    return took, json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _imports_after(importtime: str, module: str, count: int = 6) -> list[tuple[str, int]]:
    """From `python -X importtime` output: the largest top-level imports made after `module` was imported,
    i.e. those the first request made lazily (cumulative microseconds)."""
    entries = []
    for line in importtime.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            entries.append((len(match.group(3)), match.group(4), int(match.group(2))))
    try:
        index = max(i for i, (depth, name, _) in enumerate(entries) if name == module and depth == 1)
    except ValueError:
        return []
    late = [(name, us) for depth, name, us in entries[index + 1 :] if depth == 1]
    return sorted(late, key=lambda item: -item[1])[:count]


def _replayed(dynamodb: Any, ours: Any, requests: int) -> dict[str, dict[str, list[float]]]:
    """Per-request times of our handler with each DynamoDB call answered from a recording of the answer the
    embedded AWS gave to the same call of the same request (recorded first, outside the timing), two ways:
    `stubber` (botocore's Stubber at before-call: botocore's request-side work still runs) and `code` (the
    client's call itself answered: our code alone)."""
    from botocore import xform_name
    from botocore.stub import Stubber

    answers: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    current: list[tuple[str, str, dict[str, Any]]] = []

    def record(model: Any, parsed: dict[str, Any], **_: Any) -> None:
        answer = {k: v for k, v in parsed.items() if k != "ResponseMetadata"}
        current.append((model.name, xform_name(model.name), answer))

    dynamodb.meta.events.register("after-call.dynamodb", record)
    try:
        for case, message in MESSAGES.items():
            current.clear()
            ours(message)
            answers[case] = list(current)
    finally:
        dynamodb.meta.events.unregister("after-call.dynamodb", record)
    times: dict[str, dict[str, list[float]]] = {"stubber": {}, "code": {}}
    with Stubber(dynamodb) as stub:
        for case, message in MESSAGES.items():
            for n in range(WARMUP + requests):
                for _operation, method, answer in answers[case]:
                    stub.add_response(method, answer)
                took = ours(message)
                if n >= WARMUP:
                    times["stubber"].setdefault(case, []).append(took)
            stub.assert_no_pending_responses()
    pending: list[tuple[str, dict[str, Any]]] = []

    def answered(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        expected, answer = pending.pop(0)
        if operation != expected:
            raise RuntimeError(f"replay expected {expected}, the handler called {operation}")
        return answer

    dynamodb._make_api_call = answered  # this client instance only, removed below
    try:
        for case, message in MESSAGES.items():
            for n in range(WARMUP + requests):
                pending[:] = [(operation, answer) for operation, _method, answer in answers[case]]
                took = ours(message)
                if pending:
                    raise RuntimeError(f"replay: {case} made fewer DynamoDB calls than recorded")
                if n >= WARMUP:
                    times["code"].setdefault(case, []).append(took)
    finally:
        del dynamodb._make_api_call
    return times


def _summary(samples: list[float]) -> tuple[str, str]:
    def fmt(seconds: float) -> str:  # sub-millisecond figures keep three decimals
        return f"{seconds * 1000:.3f}" if seconds < 0.01 else ms(seconds)

    return fmt(median(samples)), fmt(percentile(samples, 90))


@benchmark("mcp-vs-sdk", "Our /mcp handler vs the official MCP Python SDK server: per request, cold start")
def mcp_vs_sdk(ctx: Context) -> Result:
    try:
        from mcp.server.mcpserver import MCPServer  # noqa: F401
    except ImportError as exc:
        return Result.unavailable(f"the MCP Python SDK (mcp>=2) is not importable ({exc})")
    from bench.bench_stack import SkewedClock, platform
    from svc_local.gateway import build_event
    from svc_local.runtime import LambdaContext

    quick = ctx.quick
    requests = QUICK_REQUESTS if quick else max(300, ctx.option("requests", REQUESTS))
    # The children's requests count against the user's real 60/min rate limit: at most 45 runs.
    cold_runs = QUICK_COLD_RUNS if quick else min(45, max(7, ctx.option("cold_runs", COLD_RUNS)))
    sdk_version = metadata.version("mcp")

    with platform(ctx.root, aws_in_child=True) as stack, _root_logging():
        from svc_shared import services

        spec = next(f for f in stack.template.functions() if f.logical_id == MCP_FUNCTION)
        token = stack.bearer_token()
        our_headers = {**HEADERS, "Authorization": f"Bearer {token}"}

        def our_event(message: dict[str, Any]) -> dict[str, Any]:
            return build_event(
                "POST", "/mcp", "/mcp", list(our_headers.items()), json.dumps(message).encode()
            )

        # ---- (b) cold start: a fresh interpreter imports the server and serves one tools/call
        code_dir = (ctx.root / spec.code_uri).resolve()
        our_env = function_env(ctx.root, spec)
        our_env.update(stack.env)
        for name in ("KMS_KEY_ID", "AWS_SESSION_TOKEN"):
            our_env.pop(name, None)
        our_env.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
        call = MESSAGES[f"tools/call {TOOL}"]
        our_script = OURS_CHILD.format(
            paths=[str(code_dir), str((ctx.root / "layers" / "shared").resolve())],
            function_name=spec.function_name,
            memory=spec.memory_size,
            arn=spec.arn,
            event=json.dumps(our_event(call)),
        )
        peer_script = PEER_CHILD.format(
            server=PEER_SERVER,
            asgi_post=inspect.getsource(asgi_post),
            body=json.dumps(call).encode(),
            headers=HEADERS,
        )
        peer_env = {k: our_env[k] for k in ("PATH", "HOME", "LANG", "TZ") if k in our_env}
        children = {
            "ours": (our_script, our_env, str(code_dir)),
            "sdk": (peer_script, peer_env, str(ctx.root)),
        }
        cold: dict[str, dict[str, list[float]]] = {
            name: {"process": [], "ready": [], "first": [], "total": []} for name in children
        }
        for script, env, cwd in children.values():
            _child(script, env, cwd)  # uncounted: writes the bytecode caches
        for _ in range(cold_runs):  # alternating, so drift on the machine hits both
            for name, (script, env, cwd) in children.items():
                took, data, _ = _child(script, env, cwd)
                _check(int(data["status"]), data["body"], f"{name} cold start")
                runs = cold[name]
                runs["process"].append(took)
                runs["ready"].append(float(data["ready"]))
                runs["first"].append(float(data["first"]))
                runs["total"].append(float(data["ready"]) + float(data["first"]))
        late_imports = _imports_after(
            _child(our_script, our_env, str(code_dir), ("-X", "importtime"))[2], "app"
        )

        # ---- (a) per request, in-process; the rate limit (60 requests/min per user) is real, so the clock
        # moves a minute ahead between blocks of requests
        clock = SkewedClock()
        clock.advance(120)  # past the window the cold-start children used
        services.wire(clock=clock)
        handler = importlib.import_module(spec.module).handler

        # Time inside DynamoDB client calls (botocore's first event of a call, provide-client-params, to its
        # after-call: parameter validation, serialisation, signing, the loopback round trip to moto and the
        # parsing of the answer), to split our per-request time into the handler's own work and its storage.
        dynamodb = services.current().aws.client("dynamodb")
        marks: list[float] = []

        def mark(**_: Any) -> None:
            marks.append(time.perf_counter())

        dynamodb.meta.events.register("provide-client-params.dynamodb", mark)
        dynamodb.meta.events.register("after-call.dynamodb", mark)
        in_dynamodb: dict[str, list[float]] = {}

        def ours(message: dict[str, Any], case: str = "") -> float:
            event = our_event(message)
            context = LambdaContext.for_function(spec)
            marks.clear()
            started = time.perf_counter()
            result = handler(event, context)
            took = time.perf_counter() - started
            _check(result["statusCode"], result["body"], f"ours {message['method']}")
            if case:
                if len(marks) % 2:
                    raise RuntimeError(f"unpaired DynamoDB call marks for {case}")
                in_dynamodb.setdefault(case, []).append(sum(marks[1::2]) - sum(marks[0::2]))
            return took

        namespace: dict[str, Any] = {}
        exec(compile(PEER_SERVER, "<peer-server>", "exec"), namespace)  # noqa: S102 - our own constant
        peer_app = namespace["app"]

        async def measure() -> dict[tuple[str, str], list[float]]:
            samples: dict[tuple[str, str], list[float]] = {}
            async with peer_app.router.lifespan_context(peer_app):

                async def sdk(message: dict[str, Any]) -> float:
                    body = json.dumps(message).encode()
                    started = time.perf_counter()
                    status, out = await asgi_post(peer_app, body, HEADERS)
                    took = time.perf_counter() - started
                    _check(status, out, f"sdk {message['method']}")
                    return took

                for message in MESSAGES.values():  # warm-up, not counted
                    for _ in range(WARMUP):
                        ours(message)
                        await sdk(message)
                    clock.advance(61)
                done = 0
                while done < requests:
                    size = min(BLOCK, requests - done)
                    for case, message in MESSAGES.items():
                        samples.setdefault(("ours", case), []).extend(
                            ours(message, case) for _ in range(size)
                        )
                        clock.advance(61)
                        for _ in range(size):
                            samples.setdefault(("sdk", case), []).append(await sdk(message))
                    done += size
            return samples

        samples = asyncio.run(measure())
        dynamodb.meta.events.unregister("provide-client-params.dynamodb", mark)
        dynamodb.meta.events.unregister("after-call.dynamodb", mark)

        # ---- (a') the same requests with DynamoDB's answers replayed in this process by botocore's Stubber:
        # our code plus botocore's client-side work (validation, serialisation), without the I/O and the
        # scheduler wake-ups after it, which the subtraction above still counts as ours
        replayed = _replayed(dynamodb, ours, requests)

        # ---- (c) DynamoDB calls of one authenticated get_me tools/call (and of the two measured requests)
        calls: list[str] = []

        def count(model: Any, **_: Any) -> None:
            calls.append(model.name)

        ddb_rows = []
        get_me = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_me", "arguments": {}},
        }
        dynamodb.meta.events.register("before-call.dynamodb", count)
        try:
            for label, message in (("tools/call get_me", get_me), *MESSAGES.items()):
                calls.clear()
                ours(message)
                ddb_rows.append((label, list(calls)))
        finally:
            dynamodb.meta.events.unregister("before-call.dynamodb", count)

    result = Result(
        columns=[
            "measure",
            "case",
            "n",
            "ours median ms",
            "ours p90 ms",
            "SDK median ms",
            "SDK p90 ms",
            "ours / SDK (median)",
            "target < 0.5",
        ],
    )
    verdicts = []

    def row(measure: str, case: str, n: int, a: list[float], b: list[float]) -> None:
        ratio = median(a) / median(b)
        met = ratio < 0.5
        verdicts.append(met)
        result.rows.append(
            [
                measure,
                case,
                str(n),
                *_summary(a),
                *_summary(b),
                f"{ratio:.2f}",
                "met" if met else "**not met**",
            ]
        )

    for case in MESSAGES:
        row("per request (in-process)", case, requests, samples[("ours", case)], samples[("sdk", case)])
    for how, label in (
        ("code", "per request, ours with the DynamoDB client's calls answered from a recording (our code)"),
        (
            "stubber",
            "per request, ours with DynamoDB answered by botocore's Stubber (+ botocore request side)",
        ),
    ):
        for case in MESSAGES:
            ratio = median(replayed[how][case]) / median(samples[("sdk", case)])
            result.rows.append(
                [
                    label,
                    case,
                    str(requests),
                    *_summary(replayed[how][case]),
                    *_summary(samples[("sdk", case)]),
                    f"{ratio:.2f}",
                    ("met" if ratio < 0.5 else "**not met**") + " (own work)",
                ]
            )
    for case in MESSAGES:
        own = [t - d for t, d in zip(samples[("ours", case)], in_dynamodb[case], strict=True)]
        result.rows.append(
            [
                "per request, ours minus its DynamoDB calls (own work)",
                case,
                str(requests),
                *_summary(own),
                *_summary(samples[("sdk", case)]),
                f"{median(own) / median(samples[('sdk', case)]):.2f}",
                "(detail)",
            ]
        )
        result.rows.append(
            [
                "per request, ours: time in DynamoDB calls",
                case,
                str(requests),
                *_summary(in_dynamodb[case]),
                "-",
                "-",
                "-",
                "(detail)",
            ]
        )
    row(
        "cold start: import + first request",
        f"tools/call {TOOL}",
        cold_runs,
        cold["ours"]["total"],
        cold["sdk"]["total"],
    )
    for part, label in (
        ("ready", "import/build only"),
        ("first", "first request only"),
        ("process", "whole process"),
    ):
        a, b = cold["ours"][part], cold["sdk"][part]
        result.rows.append(
            [
                "cold start: " + label,
                f"tools/call {TOOL}",
                str(cold_runs),
                *_summary(a),
                *_summary(b),
                f"{median(a) / median(b):.2f}",
                "(detail)",
            ]
        )
    for label, ops in ddb_rows:
        met = len(ops) <= DDB_TARGET if label.endswith("get_me") else None
        result.rows.append(
            [
                "DynamoDB calls (ours)",
                label,
                "1",
                str(len(ops)),
                "-",
                "-",
                "-",
                "-",
                ("met (≤ 3)" if met else "**not met** (≤ 3)") if met is not None else "-",
            ]
        )
    result.notes += [
        f"Peer: the official MCP Python SDK mcp {sdk_version}, `MCPServer(...).streamable_http_app("
        'stateless_http=True, json_response=True)` with one tool returning {"projects": []} (source in '
        "bench/bench_mcp.py, PEER_SERVER), log_level=WARNING (its default INFO logs two lines per request). "
        f"Ours: functions/mcp/app.py `handler`, its {TOOL} tool (returns the same constant).",
        "Per request is in-process on both sides, and not the same boundary: ours = `handler(event, context)` "
        "with a real API Gateway REST proxy event (svc_local.gateway.build_event, Bearer token from the real "
        "OAuth flow) against embedded AWS (moto over HTTP on loopback, in a process of its own, as DynamoDB is a "
        "service apart: in this process its server threads would take the GIL in the middle of the timed code); the SDK = its "
        "Starlette ASGI app called directly with a raw ASGI scope/receive/send (no client library, no socket), "
        "inside its lifespan (the session manager's task group), on one asyncio loop. Building the event or "
        "scope is outside the timing.",
        "Ours does real work the peer does not: Bearer verification (a DynamoDB GetItem), DNS-rebinding "
        "check, the per-user rate limit (a DynamoDB UpdateItem) — each a loopback HTTP round trip to moto "
        "(a new TCP connection per call: moto's werkzeug server closes every connection) here; the peer has no auth and no rate limit. On Lambda those calls go to DynamoDB instead "
        "(typically a few ms each), so the in-process figures here are not Lambda latency.",
        "`ours minus its DynamoDB calls (own work)`: per request, the time inside each DynamoDB client call "
        "(from botocore's first event of the call, `provide-client-params`, to its `after-call`: parameter "
        "validation, serialisation, SigV4 signing, the round trip, parsing) is subtracted; what is left is "
        "the handler's own work (Powertools logging decorator, the Host check, token hashing, JSON-RPC, the "
        "tool, the JSON response). It still counts, as ours, the wake-up after each blocking call (the "
        "scheduler, cold caches on this VM), which sleeping 3 ms in place of each call showed to be about "
        "0.3 ms per request here.",
        "Replayed rows: the same requests, each DynamoDB call answered with the answer embedded AWS gave to "
        "the same call, recorded first; no I/O. `our code`: the client's call itself is answered (the "
        "client instance's `_make_api_call`, for this measurement only), so what is timed is the handler's "
        "own work: the like-for-like comparison with the peer, which has no storage client. `Stubber`: "
        "botocore's Stubber answers at `before-call`, so botocore's request side (parameter validation, "
        "endpoint resolution, serialisation, events) is timed too; the response parsing and signing are not.",
        f"Protocol: MCP-Protocol-Version {PROTOCOL_VERSION} on both (the SDK's 2025 stateless path: no "
        "initialize needed, a fresh transport per request). Every response is checked: 200 with a JSON-RPC "
        "result that is not isError.",
        f"{WARMUP} warm-up requests per case and server, not counted. Then blocks of {BLOCK}: ours, then the "
        "SDK, per case, so drift on the machine hits both. Our rate limit (60 requests/min per user) stays "
        "on: the clock the services use (svc_shared.services.wire(clock=...)) moves 61 s ahead between blocks. "
        "Percentiles nearest-rank.",
        f"Cold start: {cold_runs} fresh interpreters per server, alternating, after one uncounted run each "
        "(bytecode caches "
        "exist; Lambda's do not). Ours: CodeUri functions/mcp and layers/shared on sys.path, `import app`, "
        "the function's template environment, then handler() for one tools/call with the token against the "
        "embedded AWS in the parent (so it includes boto3's import and first client). SDK: import "
        "MCPServer, build the server and its app, asyncio.run with its lifespan and one tools/call through "
        "asgi_post. `import + first request` is timed inside the child; `whole process` adds interpreter "
        "start-up, timed by the parent.",
        "Our first request's largest lazy imports (one `-X importtime` child, cumulative ms): "
        + (", ".join(f"{name} {us / 1000:.0f}" for name, us in late_imports) or "-")
        + ".",
        "DynamoDB calls: a botocore `before-call.dynamodb` hook on the shared client "
        '(services.current().aws.client("dynamodb")) during one warm request each: '
        + "; ".join(f"{label}: {len(ops)} ({', '.join(ops)})" for label, ops in ddb_rows)
        + f". Target for get_me: ≤ {DDB_TARGET}.",
        "Targets (from the issue): ours under half the SDK's per-request time and cold start "
        f"(ratio < 0.5): {'met' if all(verdicts) else 'not met'} "
        f"({sum(verdicts)} of {len(verdicts)} rows meet it). Recorded, not asserted.",
    ]
    return result
