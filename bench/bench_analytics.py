"""What analytics costs in DynamoDB, from the items actually written: 100,000 simulated pageviews of one shop
(400 pages, 80 referrers, 70 countries, 20,000 visitors) replayed through the aggregator in the batches the
event source mapping forms (up to 1,000 beacons or 10 s, whichever comes first), against embedded DynamoDB.
Each write is billed as DynamoDB bills it: one write unit per started KB of the larger of the item before and
after (item size by DynamoDB's rules: attribute names plus values)."""

from __future__ import annotations

import math
import os
import random
from typing import Any

from bench.harness import Context, Result, benchmark

PAGEVIEWS = 100_000
QUICK_PAGEVIEWS = 5_000
BATCH_SIZE = 1000  # template.yaml: AnalyticsAggregatorFunction's SQS event
WINDOW_SECONDS = 10


def item_size(item: dict[str, Any]) -> int:
    def value(v: Any) -> int:
        if isinstance(v, bool) or v is None:
            return 1
        if isinstance(v, int | float):
            return 1 + math.ceil(len(str(abs(v)).replace(".", "").lstrip("0") or "0") / 2)
        if isinstance(v, str):
            return len(v.encode())
        if isinstance(v, bytes | bytearray):
            return len(v)
        if isinstance(v, dict):
            return 3 + sum(len(k.encode()) + value(x) + 1 for k, x in v.items())
        if isinstance(v, list | set):
            return 3 + sum(value(x) + 1 for x in v)
        return len(str(v))

    return sum(len(k.encode()) + value(v) for k, v in item.items())


class MeteredTable:
    """The real Table, with each put billed and the largest item kept."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self.units = 0
        self.writes = 0
        self.largest = 0
        self.units_by_item: dict[tuple[str, str], int] = {}

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._table.get(*args, **kwargs)

    def query(self, *args: Any, **kwargs: Any) -> Any:
        return self._table.query(*args, **kwargs)

    def put(self, item: dict[str, Any], **kwargs: Any) -> None:
        before = self._table.get(item["pk"], item["sk"]) or {}
        self._table.put(item, **kwargs)
        size = max(item_size(item), item_size(before))
        units = math.ceil(size / 1024)
        self.units += units
        self.writes += 1
        self.largest = max(self.largest, item_size(item))
        key = (item["pk"], item["sk"])
        self.units_by_item[key] = self.units_by_item.get(key, 0) + units


def beacons(count: int, rate: float, project: str) -> list[tuple[str, Any]]:
    from svc_shared.domain.analytics import Beacon

    rng = random.Random(7)
    pages = [f"/products/item-{i}" for i in range(400)]
    referrers = [f"https://site{i}.example/" for i in range(80)] + [""]
    countries = [f"{chr(65 + i // 26)}{chr(65 + i % 26)}" for i in range(70)]
    start = 1_795_000_000.0
    out = []
    for n in range(count):
        visitor = rng.randrange(20_000)
        out.append(
            (
                f"m{n}",
                Beacon(
                    project,
                    rng.choice(pages),
                    rng.choice(referrers),
                    f"visitor-{visitor:06d}",
                    f"session-{visitor:06d}-{n // 5000}",
                    rng.choice(countries),
                    start + n / rate,
                ),
            )
        )
    return out


def batches(messages: list[tuple[str, Any]]) -> list[list[tuple[str, Any]]]:
    """As the event source mapping forms them: full at BATCH_SIZE, or WINDOW_SECONDS after the first."""
    out: list[list[tuple[str, Any]]] = []
    current: list[tuple[str, Any]] = []
    for message in messages:
        if current and (len(current) >= BATCH_SIZE or message[1].at - current[0][1].at >= WINDOW_SECONDS):
            out.append(current)
            current = []
        current.append(message)
    if current:
        out.append(current)
    return out


@benchmark("analytics-cost", "Analytics write units per pageview, hottest item, largest item")
def analytics_cost(ctx: Context) -> Result:
    from moto import mock_aws

    from svc_local.template import Template
    from svc_shared.core.clock import system_clock
    from svc_shared.domain.analytics import Analytics
    from svc_shared.storage.dal import Table

    count = QUICK_PAGEVIEWS if ctx.quick else ctx.option("pageviews", PAGEVIEWS)
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    rows = []
    with mock_aws():
        import boto3

        client = boto3.client("dynamodb", region_name="us-east-1")
        spec = Template(ctx.root / "template.yaml").tables()[0]
        for rate in (100.0, 1000.0):
            name = f"{spec.table_name}-{int(rate)}"
            client.create_table(**{**spec.create_kwargs, "TableName": name})
            table = MeteredTable(Table(name, client))
            analytics = Analytics(table, system_clock)  # type: ignore[arg-type]
            messages = beacons(count, rate, "shop")
            formed = batches(messages)
            for batch in formed:
                analytics.apply(batch)
            seconds = count / rate
            hottest = max(table.units_by_item.values()) / seconds
            rows.append(
                [
                    f"{rate:,.0f}/s",
                    f"{count:,}",
                    f"{len(formed):,}",
                    f"{table.writes:,}",
                    f"{table.units / count:.4f}",
                    f"{hottest:.1f}",
                    f"{table.largest / 1024:.1f} KB",
                    f"${table.units / count * 1.25:.2f}",
                ]
            )
    return Result(
        columns=[
            "rate (one site)",
            "pageviews",
            "batches",
            "writes",
            "write units per pageview",
            "hottest item, write units/s",
            "largest item",
            "DynamoDB writes per million pageviews",
        ],
        rows=rows,
        notes=[
            "Targets: at most 0.05 write units per pageview at 100/s; the hottest item under 1,000 write "
            "units/s (one partition's limit) at 1,000/s.",
            "Before (a DynamoDB update per beacon field, the day item growing to 15-35 KB): about 6 writes "
            "and 75+ write units per pageview.",
            "Price: on-demand writes at $1.25 per million write units (us-east-1). SQS adds $0.40 per million "
            "beacons (one SendMessage each; receives and deletes are batched by the event source mapping).",
        ],
    )


# ---------------------------------------------------------------- many shops on one queue

POLLERS = 5  # Lambda's SQS event source mapping starts with five pollers, each forming its own batches
MAX_CONCURRENCY = 2  # template.yaml: ScalingConfig.MaximumConcurrency
MIXES = ((2_000, 100.0, 300), (20_000, 1_000.0, 90))  # shops, pageviews/s, simulated seconds
QUIET_PAGEVIEWS = 100  # one shop alone on the queue, over one day
OVERLAP_SECONDS = 1.0  # batches closing closer than this are applied at once
REQUEST_SECONDS = 0.008  # one DynamoDB request from Lambda, typical (freshness model)


def mapping_settings(root: Any) -> tuple[int, float]:
    """The aggregator's batch size and window, from template.yaml."""
    from svc_local.template import Template

    (source,) = Template(root / "template.yaml").sqs_event_sources()
    return source.batch_size, source.window_seconds


class ConflictMeter:
    """The real Table, each put billed as DynamoDB bills it: the larger of the item stored and the item sent,
    one unit per started KB, at least one, whether its condition holds or fails (failures counted apart).
    The size stored is known from the last read or write of the item (no extra request)."""

    def __init__(self, table: Any) -> None:
        import threading

        self._table = table
        self.units = 0
        self.writes = 0
        self.conflicts = 0
        self.largest = 0
        self.requests = 0
        self._sizes: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def get(self, pk: str, sk: str, **kwargs: Any) -> Any:
        item = self._table.get(pk, sk, **kwargs)
        with self._lock:
            self.requests += 1
            self._sizes[(pk, sk)] = item_size(item) if item else 0
        return item

    def query(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.requests += 1
        return self._table.query(*args, **kwargs)

    def put(self, item: dict[str, Any], **kwargs: Any) -> None:
        from svc_shared.storage.dal import ConditionFailed

        key = (item["pk"], item["sk"])
        size = max(item_size(item), self._sizes.get(key, 0))
        units = max(1, math.ceil(size / 1024))
        failed = False
        try:
            self._table.put(item, **kwargs)
        except ConditionFailed:
            failed = True
            raise
        finally:
            with self._lock:
                self.requests += 1
                self.units += units
                self.writes += 1
                if failed:
                    self.conflicts += 1
                else:
                    self._sizes[key] = item_size(item)
                    self.largest = max(self.largest, item_size(item))


def zipf_traffic(shops: int, rate: float, seconds: float, seed: int) -> list[tuple[str, Any]]:
    """Pageviews of `shops` shops whose traffic follows Zipf(1.1) (shop k gets a share of 1/k^1.1), Poisson
    arrivals at `rate` per second; each shop has 60 pages, 12 referrers, 20 countries and visitors in
    proportion to its traffic (a visitor views about 3 pages)."""
    import bisect
    import itertools

    from svc_shared.domain.analytics import Beacon

    rng = random.Random(seed)
    weights = list(itertools.accumulate(1 / (k**1.1) for k in range(1, shops + 1)))
    total = weights[-1]
    start = 1_795_000_000.0
    at = start
    out: list[tuple[str, Any]] = []
    n = 0
    while True:
        at += rng.expovariate(rate)
        if at - start >= seconds:
            return out
        k = bisect.bisect_left(weights, rng.random() * total)
        share = (1 / ((k + 1) ** 1.1)) / total
        visitors = max(1, int(rate * seconds * share / 3))
        visitor = rng.randrange(visitors)
        out.append(
            (
                f"m{n}",
                Beacon(
                    f"shop-{k:05d}",
                    f"/p/{rng.randrange(60)}",
                    "" if rng.random() < 0.4 else f"https://ref{rng.randrange(12)}.example/",
                    f"v-{k}-{visitor}",
                    f"s-{k}-{visitor}",
                    f"C{chr(65 + rng.randrange(20))}",
                    at,
                ),
            )
        )
        n += 1


def poller_batches(
    messages: list[tuple[str, Any]], batch_size: int, window: float, pollers: int, seed: int
) -> list[tuple[float, list[tuple[str, Any]]]]:
    """Batches as the event source mapping forms them: each message is received by one of the pollers (at
    random), and each poller closes its batch when it holds `batch_size` messages or `window` seconds after
    its first. Returned in the order they close, with the time each closes."""
    rng = random.Random(seed)
    open_: list[list[tuple[str, Any]]] = [[] for _ in range(pollers)]
    closed: list[tuple[float, list[tuple[str, Any]]]] = []
    for message in messages:
        at = message[1].at
        for p in range(pollers):  # windows that ran out before this message arrived
            if open_[p] and at - open_[p][0][1].at >= window:
                closed.append((open_[p][0][1].at + window, open_[p]))
                open_[p] = []
        p = rng.randrange(pollers)
        open_[p].append(message)
        if len(open_[p]) >= batch_size:
            closed.append((at, open_[p]))
            open_[p] = []
    for batch in open_:
        if batch:
            closed.append((batch[0][1].at + window, batch))
    closed.sort(key=lambda c: c[0])
    return closed


class StepClock:
    """The aggregator's clock in a replay: the time the batch being applied closed (per thread)."""

    def __init__(self) -> None:
        import threading

        self._local = threading.local()
        self.latest = 0.0

    def set(self, at: float) -> None:
        self._local.now = at
        self.latest = max(self.latest, at)

    def now(self) -> float:
        return float(getattr(self._local, "now", self.latest))


def replay(
    table: ConflictMeter, messages: list[tuple[str, Any]], batch_size: int, window: float, pollers: int
) -> dict[str, Any]:
    """Apply the batches in the order they close; a batch closing less than OVERLAP_SECONDS after the one
    before is applied at the same time as it (two threads against one table, so writes of the two to the
    same item conflict for real), as the mapping runs up to MAX_CONCURRENCY invocations at once. Returns
    the number of batches, each beacon's freshness and the Analytics instance."""
    from concurrent.futures import ThreadPoolExecutor

    from svc_shared.domain.analytics import Analytics

    clock = StepClock()
    analytics = Analytics(table, clock)  # type: ignore[arg-type]
    formed = poller_batches(messages, batch_size, window, pollers, seed=11)
    freshness: list[float] = []

    def run(closed: tuple[float, list[tuple[str, Any]]]) -> float:
        at, batch = closed
        clock.set(at)
        before = table.requests
        result = analytics.apply(batch)
        if result.failed_message_ids:
            raise RuntimeError(f"{len(result.failed_message_ids)} beacons failed")
        return at + (table.requests - before) * REQUEST_SECONDS  # when its writes are done

    groups: list[list[tuple[float, list[tuple[str, Any]]]]] = []
    for closed in formed:
        last = groups[-1] if groups else None
        if last and len(last) < MAX_CONCURRENCY and closed[0] - last[0][0] < OVERLAP_SECONDS:
            last.append(closed)
        else:
            groups.append([closed])
    with ThreadPoolExecutor(MAX_CONCURRENCY) as pool:
        for group in groups:
            for (_, batch), done in zip(group, pool.map(run, group), strict=True):
                freshness.extend(done - message[1].at for message in batch)
    flush = getattr(analytics, "compact_all", None)
    if flush is not None:  # what the log still holds is folded too, and billed
        clock.set(clock.latest + 3600)
        flush()
    return {"batches": len(formed), "freshness": freshness, "analytics": analytics}


def shop_batch_pairs(messages: list[tuple[str, Any]], batch_size: int, window: float, pollers: int) -> int:
    return sum(
        len({m[1].project_id for m in batch})
        for _, batch in poller_batches(messages, batch_size, window, pollers, seed=11)
    )


def visitor_error(analytics: Any, messages: list[tuple[str, Any]], sample: int) -> tuple[float, bool]:
    """The worst relative error of unique visitors over the `sample` busiest shops, and whether every shop's
    pageviews are exact (reports read back through Analytics.report)."""
    from collections import Counter
    from datetime import UTC, datetime

    views: Counter[str] = Counter()
    visitors: dict[str, set[str]] = {}
    for _, beacon in messages:
        views[beacon.project_id] += 1
        visitors.setdefault(beacon.project_id, set()).add(beacon.visitor)
    day = datetime.fromtimestamp(messages[0][1].at, UTC).date()
    last = datetime.fromtimestamp(messages[-1][1].at, UTC).date()
    worst, exact = 0.0, True
    for shop, count in views.most_common(sample):
        report = analytics.report(shop, day, last)
        exact = exact and report["pageviews"] == count
        true = len(visitors[shop])
        worst = max(worst, abs(report["unique_visitors"] - true) / true)
    return worst, exact


@benchmark("analytics-mix", "Analytics on one shared queue: many shops of Zipf traffic, and one quiet shop")
def analytics_mix(ctx: Context) -> Result:
    from moto import mock_aws

    from bench.harness import Target, percentile
    from svc_local.template import Template
    from svc_shared.storage.dal import Table

    batch_size, window = mapping_settings(ctx.root)
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    scale = 0.1 if ctx.quick else ctx.option("percent", 100) / 100
    rows: list[list[str]] = []
    targets: list[Target] = []
    with mock_aws():
        import boto3

        client = boto3.client("dynamodb", region_name="us-east-1")
        spec = Template(ctx.root / "template.yaml").tables()[0]
        cases = [
            (
                f"{shops:,} shops, {rate:,.0f}/s",
                zipf_traffic(shops, rate, seconds * scale, seed=shops),
                POLLERS,
            )
            for shops, rate, seconds in MIXES
        ]
        rng = random.Random(5)
        quiet = sorted(rng.uniform(0, 86400) for _ in range(QUIET_PAGEVIEWS))
        from svc_shared.domain.analytics import Beacon

        cases.append(
            (
                f"one quiet shop, {QUIET_PAGEVIEWS}/day",
                [
                    (
                        f"q{n}",
                        Beacon(
                            "quiet-shop",
                            f"/p/{rng.randrange(15)}",
                            "" if n % 2 else f"https://ref{n % 5}.example/",
                            f"v-{rng.randrange(70)}",
                            f"s-{n}",
                            "FR",
                            1_795_000_000.0 + t,
                        ),
                    )
                    for n, t in enumerate(quiet)
                ],
                POLLERS,
            )
        )
        for i, (label, messages, pollers) in enumerate(cases):
            name = f"{spec.table_name}-mix{i}"
            client.create_table(**{**spec.create_kwargs, "TableName": name})
            table = ConflictMeter(Table(name, client))
            outcome = replay(table, messages, batch_size, window, pollers)
            per_view = table.units / len(messages)
            fresh = outcome["freshness"]
            worst, exact = visitor_error(outcome["analytics"], messages, sample=10)
            floors = [
                shop_batch_pairs(messages, batch_size if w == window else 10_000, w, pollers) / len(messages)
                for w in (window, 50.0)
            ]
            rows.append(
                [
                    label,
                    f"{len(messages):,}",
                    f"{outcome['batches']:,}",
                    f"{table.writes:,}",
                    f"{table.conflicts:,}",
                    f"{table.units:,}",
                    f"{per_view:.3f}",
                    f"{table.largest / 1024:.1f} KB",
                    f"{percentile(fresh, 99):.1f} s / {max(fresh):.1f} s",
                    f"{worst * 100:.1f}%" + ("" if exact else " (pageviews NOT exact)"),
                    f"{floors[0]:.3f} / {floors[1]:.3f}",
                ]
            )
            limit = 1.0 if label.startswith("one quiet") else 0.25
            targets.append(
                Target(
                    f"analytics write units per pageview, {label}",
                    f"at most {limit:g}",
                    f"{per_view:.3f}",
                    per_view <= limit,
                )
            )
            targets.append(
                Target(
                    f"analytics report freshness, {label}",
                    "at most 60 s",
                    f"{max(fresh):.1f} s (worst beacon)",
                    max(fresh) <= 60,
                )
            )
            targets.append(
                Target(
                    f"analytics unique visitors, {label} (10 busiest shops)",
                    "within 3%, pageviews exact",
                    f"{worst * 100:.1f}%, pageviews {'exact' if exact else 'NOT exact'}",
                    worst <= 0.03 and exact,
                )
            )
    return Result(
        columns=[
            "traffic",
            "pageviews",
            "batches",
            "writes",
            "failed conditional writes",
            "write units",
            "write units per pageview",
            "largest item",
            "freshness p99 / worst",
            "visitors, worst error (10 busiest shops)",
            f"(shop, batch) pairs per pageview: {window:g} s / 50 s window",
        ],
        rows=rows,
        targets=targets,
        notes=[
            f"Traffic: Zipf(1.1) over the shops (shop k gets 1/k^1.1 of the pageviews), Poisson arrivals; each "
            f"shop 60 pages, 12 referrers, 20 countries, a visitor viewing about 3 pages. Simulated "
            f"{', '.join(f'{s * scale:.0f} s' for _, _, s in MIXES)} of the two mixes; the quiet shop is one "
            f"day of {QUIET_PAGEVIEWS} pageviews at random times, alone on the queue.",
            f"Batches as the event source mapping forms them: {POLLERS} pollers, each beacon received by one "
            f"of them at random, each closing its batch at {batch_size:,} beacons or {window} s after its first "
            f"(template.yaml); at most {MAX_CONCURRENCY} batches applied at once (MaximumConcurrency), in two "
            "threads against one embedded DynamoDB table (moto), so concurrent writes to one item really "
            "conflict and retry.",
            "Billing (DynamoDB's rules): every PutItem costs one write unit per started KB of the larger of the "
            "item stored before and the item written (item size = attribute names plus values), at least one; "
            "a conditional put whose condition fails costs the same and is counted as a failed write. No "
            "transactions are used (they would cost double). Reads are not counted.",
            f"Freshness: from a beacon's arrival on the queue to its batch's writes being done: the time the "
            f"batch waits to close, then {REQUEST_SECONDS * 1000:.0f} ms per DynamoDB request the batch makes "
            f"one after the other (a typical in-region latency; embedded DynamoDB on this shared machine is "
            f"slower and says nothing about Lambda); reports read the table directly, so a written beacon is in "
            f"the next report. Batches closing less than {OVERLAP_SECONDS:g} s apart are applied together.",
            f"(shop, batch) pairs per pageview: the distinct shops each batch touches, summed, per pageview, with "
            f"the template's mapping ({batch_size:,} beacons, {window:g} s) and with a 50-s window and batches "
            f"of 10,000 (SQS's largest): the floor in write units per pageview of any design that writes one "
            f"item (of at most 1 KB) per shop a batch touches, before any session or minute item.",
            "Visitors: Analytics.report over the simulated days for the 10 busiest shops, against the exact "
            "count of distinct visitor ids; pageviews compared exactly.",
        ],
    )
