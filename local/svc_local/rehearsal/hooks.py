"""moto's CloudFormation as the rehearsal uses it: our own models registered for the types it lacks or gets wrong
(svc_local.rehearsal.models), and, while a stack is created, stable physical names and failures that name
their resource."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_create_lock = threading.Lock()


@contextmanager
def cloudformation_hooks() -> Iterator[None]:
    """While a stack is created: generated physical names are stable for a stack name and logical id (a
    deployed stack keeps its names across updates; the local stack is created anew at each start), and a
    resource that fails names itself in the error."""
    from moto.cloudformation import parsing as moto_parsing
    from moto.cloudformation.exceptions import ValidationError

    parsing: Any = moto_parsing  # patched for the time of one create_stack

    generate, create = parsing.generate_resource_name, parsing.parse_and_create_resource

    def stable_name(resource_type: str, stack_name: str, logical_id: str) -> str:
        suffix = hashlib.sha256(f"{stack_name}/{logical_id}".encode()).hexdigest()[:12].upper()
        if resource_type == "AWS::S3::Bucket":
            tail = f"-{logical_id}-{suffix}"
            return f"{stack_name[: 63 - len(tail)]}{tail}".lower()
        if resource_type == "AWS::IAM::Policy":
            return f"{stack_name[:5]}-{logical_id[:4]}-{suffix}"
        # IAM role names are at most 64 characters, CloudFormation shortens the prefix to fit.
        return f"{stack_name}-{logical_id}"[: 64 - len(suffix) - 1] + f"-{suffix}"

    def named_failure(logical_id: str, resource_json: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return create(logical_id, resource_json, *args, **kwargs)
        except ValidationError:
            raise
        except Exception as exc:  # any failure of a resource is reported with its name
            reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise ValidationError(
                message=f"{logical_id} ({resource_json.get('Type')}) failed to create: {reason}"
            ) from exc

    with _create_lock:
        install_models()
        parsing.generate_resource_name = stable_name
        parsing.parse_and_create_resource = named_failure
        try:
            yield
        finally:
            parsing.generate_resource_name = generate
            parsing.parse_and_create_resource = create


@functools.cache
def install_models() -> None:
    """Register our models (svc_local.rehearsal.models) with moto's CloudFormation (its type -> model map), once."""
    from moto.cloudformation.parsing import get_model_map

    # moto lists its models once, as the direct subclasses of CloudFormationModel at its first call: the map
    # is taken before our models exist, or their abstract base would be listed as a model of no type.
    known = get_model_map()
    from svc_local.rehearsal.models import MODELS

    for model in MODELS:
        known[model.cloudformation_type()] = model
