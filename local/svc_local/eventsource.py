"""SQS event source mappings run locally as Lambda runs them: a poller per mapping collects messages until
the batch size is reached or the batching window has passed since the first one, invokes the function with
an SQS event, deletes what succeeded and leaves the failed messages (partial batch responses) to come back
after the queue's visibility timeout, and to the dead-letter queue after its maxReceiveCount."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from svc_local.runtime import FunctionRegistry, LambdaContext, acting_as
from svc_local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION, SqsEventSource

log = logging.getLogger("svc_local.eventsource")
RECEIVE_MAX = 10  # SQS hands out at most 10 messages per ReceiveMessage


def _record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": message.get("MessageAttributes", {}),
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": LOCAL_REGION,
    }


class SqsPoller:
    def __init__(self, sqs: Any, queue_url: str, source: SqsEventSource, registry: FunctionRegistry) -> None:
        self.sqs = sqs
        self.queue_url = queue_url
        self.source = source
        self.registry = registry
        self.queue_arn = f"arn:aws:sqs:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:{queue_url.rsplit('/', 1)[-1]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.batches = 0

    def collect(self, wait: bool = True) -> list[dict[str, Any]]:
        """One batch: up to batch_size messages, gathered for at most the batching window."""
        batch: list[dict[str, Any]] = []
        deadline: float | None = None
        while len(batch) < self.source.batch_size and not self._stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            with acting_as(self.source.function):  # the mapping polls with the function's role
                got = self.sqs.receive_message(
                    QueueUrl=self.queue_url,
                    MaxNumberOfMessages=min(RECEIVE_MAX, self.source.batch_size - len(batch)),
                    WaitTimeSeconds=1 if wait else 0,
                    AttributeNames=["All"],
                ).get("Messages", [])
            if got:
                batch.extend(got)
                if deadline is None:
                    deadline = time.monotonic() + self.source.window_seconds
            elif not wait or deadline is None:
                break  # nothing (more) waiting: deliver what there is, or poll again
        return batch

    def deliver(self, batch: list[dict[str, Any]]) -> list[str]:
        """Invoke the function with one batch; delete what succeeded. Returns the failed message ids."""
        event = {"Records": [_record(m, self.queue_arn) for m in batch]}
        spec = self.source.function
        ids = [m["MessageId"] for m in batch]
        try:
            result = self.registry.invoke(spec, event, LambdaContext.for_function(spec, str(uuid.uuid4())))
        except Exception:
            log.exception("%s failed on a batch of %d", spec.logical_id, len(batch))
            return ids
        failed: set[str] = set()
        if self.source.partial_failures and isinstance(result, dict):
            failed = {str(f.get("itemIdentifier")) for f in result.get("batchItemFailures") or []}
        done = [m for m in batch if m["MessageId"] not in failed]
        for start in range(0, len(done), 10):
            with acting_as(spec):
                self.sqs.delete_message_batch(
                    QueueUrl=self.queue_url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                        for i, m in enumerate(done[start : start + 10])
                    ],
                )
        self.batches += 1
        return [i for i in ids if i in failed]

    def drain(self) -> int:
        """Deliver every message waiting now (tests and tools); returns how many were delivered."""
        count = 0
        while batch := self.collect(wait=False):
            self.deliver(batch)
            count += len(batch)
        return count

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                batch = self.collect()
                if batch:
                    self.deliver(batch)
            except Exception:
                if not self._stop.is_set():
                    log.exception("polling %s failed", self.queue_url)
                    time.sleep(1)

    def start(self) -> None:
        # Creating the mapping, Lambda reads the queue's attributes with the function's role.
        with acting_as(self.source.function):
            self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["VisibilityTimeout"])
        self._thread = threading.Thread(
            target=self._run, name=f"sqs-{self.source.function.logical_id}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
