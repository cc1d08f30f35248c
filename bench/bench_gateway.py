"""Latency of one request through the local API Gateway (svc_local.gateway) with the functions in-process and
embedded AWS (svc_local.aws) behind them: N sequential `GET /login` with one keep-alive httpx client."""

from __future__ import annotations

import base64
import contextlib
import io
import os
import time
from collections.abc import Iterator
from typing import Any

from bench.harness import Context, Result, Target, benchmark, median, ms, percentile

REQUESTS = 500
QUICK_REQUESTS = 50
WARMUP = 20
PATH = "/login"
NAGLE_MS = 40  # bench/README.md: a median stuck near 40 ms is Nagle's algorithm meeting delayed ACKs


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _start_gateway(template_path: Any) -> Any:
    from svc_local.gateway import Gateway

    try:  # its request log would be a line per request on stderr
        gateway = Gateway(template_path, "127.0.0.1", 0, log_stream=io.StringIO())
    except TypeError:
        gateway = Gateway(template_path, "127.0.0.1", 0)
    gateway.start()
    return gateway


@benchmark("gateway-latency", "Local gateway: GET /login latency, in-process, against embedded AWS")
def gateway_latency(ctx: Context) -> Result:
    try:
        import httpx

        from svc_local.aws import EmbeddedAws
        from svc_local.template import Template
    except ImportError as exc:
        return Result.unavailable(f"the local stack is not importable ({exc})")
    try:
        import svc_local.gateway  # noqa: F401
    except ImportError as exc:
        return Result.unavailable(f"svc_local.gateway is not importable ({exc})")

    requests = QUICK_REQUESTS if ctx.quick else ctx.option("requests", REQUESTS)
    template_path = ctx.root / "template.yaml"
    base_env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    with _environment(base_env):
        os.environ.pop("AWS_SESSION_TOKEN", None)
        os.environ.pop("AWS_PROFILE", None)
        gateway = _start_gateway(template_path)
        aws = None
        try:
            url = f"http://127.0.0.1:{gateway.port}"
            template = Template(template_path, {"PublicBaseUrl": url})
            aws = EmbeddedAws(host="127.0.0.1", port=0, persist=False, templates=[template])
            aws.start()
            env = template.environment(skip={"KMS_KEY_ID"})
            env.update(
                {
                    "PUBLIC_BASE_URL": url,
                    "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
                    "AWS_ENDPOINT_URL": aws.endpoint_url,
                }
            )
            tables, buckets = template.tables(), template.buckets()
            if tables:
                env.setdefault("TABLE_NAME", tables[0].table_name)
            if buckets:
                env.setdefault("UPLOADS_BUCKET", buckets[0])
            os.environ.pop("KMS_KEY_ID", None)
            os.environ.update(env)
            with contextlib.suppress(ImportError):
                from svc_shared.wiring import services

                services.wire()  # the settings and AWS endpoint of the environment just set

            samples: list[float] = []
            statuses: dict[int, int] = {}
            with httpx.Client(base_url=url, timeout=30.0) as client:
                started = time.perf_counter()
                first = client.get(PATH)
                first_took = time.perf_counter() - started
                if first.status_code != 200:
                    return Result.failed(f"GET {PATH} answered {first.status_code}: {first.text[:300]}")
                for _ in range(WARMUP):
                    client.get(PATH)
                wall = time.perf_counter()
                for _ in range(requests):
                    started = time.perf_counter()
                    response = client.get(PATH)
                    samples.append(time.perf_counter() - started)
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                wall = time.perf_counter() - wall
        finally:
            gateway.stop()
            if aws is not None:
                aws.stop()
            with contextlib.suppress(ImportError):
                from svc_shared.wiring import services

                services.wire()  # the settings and AWS endpoint of the environment just set

    ok = statuses.get(200, 0)
    result = Result(
        targets=[
            Target(
                f"GET {PATH} answers 200", f"{requests} of {requests}", f"{ok} of {requests}", ok == requests
            ),
            Target(
                f"GET {PATH} median, in-process (no delayed-ACK stall)",
                f"< {NAGLE_MS} ms",
                f"{ms(median(samples))} ms (p99 {ms(percentile(samples, 99))})",
                median(samples) * 1000 < NAGLE_MS,
            ),
        ],
        columns=[
            "request",
            "n",
            "median ms",
            "p90 ms",
            "p99 ms",
            "mean ms",
            "max ms",
            "req/s",
            "first request ms",
        ],
        rows=[
            [
                f"GET {PATH}",
                str(requests),
                ms(median(samples)),
                ms(percentile(samples, 90)),
                ms(percentile(samples, 99)),
                ms(sum(samples) / len(samples)),
                ms(max(samples)),
                f"{requests / wall:.0f}",
                ms(first_took),
            ]
        ],
        notes=[
            "One keep-alive httpx client, sequential requests, client and gateway in one process (the GIL is "
            "shared); the handler runs in-process as the local stack runs it.",
            f"{WARMUP} warm-up requests are not counted. `first request` is the handler's cold start in this "
            "process, where the local stack has already loaded most libraries (see cold-import for a fresh "
            "interpreter). Percentiles are nearest-rank.",
            "Status codes: " + ", ".join(f"{code} x{count}" for code, count in sorted(statuses.items())),
        ],
    )
    if set(statuses) != {200}:
        result.status = "failed"
    return result
