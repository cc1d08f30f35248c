"""Embedded AWS: moto's server in-process (state machines really execute), Lambda Invoke answered by our own
handlers, and DynamoDB items and S3 objects persisted in the state directory across restarts.

The server and its resources (embedded), the front before moto (middleware, s3presign) and the state kept across
restarts (snapshot); this package gives their public names."""

from svc_local.aws.embedded import DEFAULT_PORT, SNAPSHOT_INTERVAL_SECONDS, EmbeddedAws, create_state_machine
from svc_local.aws.middleware import LOCAL_CREDENTIALS

__all__ = [
    "DEFAULT_PORT",
    "LOCAL_CREDENTIALS",
    "SNAPSHOT_INTERVAL_SECONDS",
    "EmbeddedAws",
    "create_state_machine",
]
