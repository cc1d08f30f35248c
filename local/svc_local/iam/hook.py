"""The hooks into the local stack: botocore calls checked as the current function's, and each function its own
container (services wiring, secrets cache, settings from its own environment)."""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from svc_local.iam.evaluation import MODE_ENV, RECORD_ENV, AccessDenied, Iam, Unattributed
from svc_local.iam.model import IamModel, local_resolver
from svc_local.iam.requests import Request, requests_for
from svc_local.runtime import current_function
from svc_local.template import FunctionSpec, Template


class _Active:
    iam: Iam | None = None
    installed = False


def active() -> Iam | None:
    return _Active.iam


# Set on a thread started while a function was current: the function whose code started it.
STARTED_BY = "_svc_iam_started_by"


def _before_parameter_build(
    params: Mapping[str, Any],
    model: Any,
    context: Any = None,
    owner: FunctionSpec | None = None,
    **_: Any,
) -> None:
    iam = _Active.iam
    if iam is None:
        return
    spec = current_function.get()
    service = model.service_model.signing_name
    if spec is None:
        # The local stack's own calls (its setup, tests' fixtures) come from code no function started, on
        # clients no function made; anything else has lost its function's context: refused, not let through.
        origin = owner or getattr(threading.current_thread(), STARTED_BY, None)
        if origin is None:
            return
        for request in requests_for(iam.model, service, model.name, params) or [
            Request(f"{service}:{model.name}", "*")
        ]:
            try:
                iam.refuse_unattributed(origin.logical_id, request)
            except Unattributed as refused:
                raise _client_error(_denied_code(service), refused.message, model.name) from None
        return
    requests = requests_for(iam.model, service, model.name, params)
    if requests is None:
        raise _client_error(
            "AccessDeniedException",
            f"svc_local.iam has no IAM mapping for {service}:{model.name} (called by {spec.logical_id}); "
            "add it to requests_for so the call is checked",
            model.name,
        )
    if isinstance(context, dict) and context.get("is_presign_request"):
        # The signer's permissions are checked when the URL is used, as S3 does.
        if service == "s3" and "Key" in params:
            iam.presigned(spec.logical_id, str(params["Bucket"]), str(params["Key"]))
            for request in requests:
                iam.decide(spec.logical_id, request)  # recorded: the grant the URL will need
        return
    for request in requests:
        try:
            iam.check(spec.logical_id, request)
        except AccessDenied as denied:
            raise _client_error(_denied_code(service), denied.message, model.name) from None


def _denied_code(service: str) -> str:
    return "AccessDenied" if service == "s3" else "AccessDeniedException"


def _client_error(code: str, message: str, operation: str) -> Exception:
    from botocore.exceptions import ClientError

    status = 403 if code == "AccessDenied" else 400
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        operation,
    )


def _install_botocore_hook() -> None:
    """Every botocore client made from now on reports its calls (and presigned URLs) to the hook."""
    if _Active.installed:
        return
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        # A client a function makes is that function's: used with no function current, it is refused.
        owner = current_function.get()
        client.meta.events.register(
            "before-parameter-build", functools.partial(_before_parameter_build, owner=owner)
        )
        return client

    original_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        # contextvars do not follow a new thread: remember whose code started it.
        spec = current_function.get()
        if spec is not None:
            setattr(self, STARTED_BY, spec)
        original_start(self)

    botocore.session.Session.create_client = create_client
    threading.Thread.start = start  # type: ignore[method-assign]
    _Active.installed = True


class _ScopedCache(MutableMapping[str, Any]):
    """A module-level cache of svc_shared, one per function (its container), one outside any function."""

    def __init__(self, initial: Mapping[str, Any]) -> None:
        self._scopes: dict[str | None, dict[str, Any]] = {None: dict(initial)}

    def _scope(self) -> dict[str, Any]:
        spec = current_function.get()
        return self._scopes.setdefault(spec.logical_id if spec else None, {})

    def __getitem__(self, key: str) -> Any:
        return self._scope()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._scope()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._scope()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._scope()))

    def __len__(self) -> int:
        return len(self._scope())

    def clear(self) -> None:
        self._scopes.clear()


class _FunctionContainers:
    """The holder of the shipped code's Services (svc_shared.wiring.container.hold_services_in) while IAM is
    enforced: inside a function, the function's own Services (settings from its own environment; clock and HTTP
    pool those of the wiring outside); outside, those of the `original` holder."""

    def __init__(self, environ: Callable[[FunctionSpec], dict[str, str]]) -> None:
        self.original: Any = None
        self._environ = environ
        self._containers: dict[str, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    @property
    def services(self) -> Any:
        spec = current_function.get()
        if spec is None:
            return self.original.services
        from svc_shared.wiring import services as wiring

        base = self.original.services
        if base is None:
            base = self.original.services = wiring.Services()
        with self._lock:
            found = self._containers.get(spec.logical_id)
            if found is not None and found[0] is base:
                return found[1]
            own = wiring.Services(
                settings=_settings(spec, self._environ(spec)), clock=base.clock, http=base.http
            )
            self._containers[spec.logical_id] = (base, own)
            return own

    @services.setter
    def services(self, value: Any) -> None:
        spec = current_function.get()
        if spec is None:
            self.original.services = value
            return
        with self._lock:
            self._containers[spec.logical_id] = (self.original.services, value)


def _settings(spec: FunctionSpec, environment: Mapping[str, str]) -> Any:
    from pydantic import ValidationError

    from svc_shared.core.config import ConfigurationError, Settings

    try:
        return Settings.model_validate(dict(environment))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'environment'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(f"invalid configuration of {spec.logical_id}: {problems}") from None


def function_environment(
    template: Template, spec: FunctionSpec, environ: Mapping[str, str]
) -> dict[str, str]:
    """What the function's process environment would hold: the local stack's own variables, and of the
    template's variables (which the local stack sets, with its own values, for every function at once)
    only those the function declares (Globals and its own)."""
    declared: set[str] = set(template.env_var_names())
    return {k: v for k, v in environ.items() if k not in declared or k in spec.environment}


class _Installed:
    """What install() replaced (the shipped code's own holder of its Services and secret cache), to put back."""

    container: Any = None
    cache: Any = None


def install(iam: Iam, template: Template) -> None:
    """Enforce `iam` on the functions of this process; each function gets a container of its own."""
    from svc_shared.core import secrets
    from svc_shared.wiring import container

    _install_botocore_hook()
    _Active.iam = iam
    if _Installed.container is None:
        scoped = _FunctionContainers(lambda spec: function_environment(template, spec, os.environ))
        scoped.original = _Installed.container = container.hold_services_in(scoped)
        shared_cache = _ScopedCache({})
        _Installed.cache = secrets.use_cache(shared_cache)
        shared_cache.update(_Installed.cache)


def uninstall() -> None:
    from svc_shared.core import secrets
    from svc_shared.wiring import container

    iam, _Active.iam = _Active.iam, None
    if _Installed.container is not None:
        container.hold_services_in(_Installed.container)
        secrets.use_cache(_Installed.cache)
        _Installed.container = _Installed.cache = None
    if iam is not None:
        iam.close()


def mode_from_env() -> str:
    return os.environ.get(MODE_ENV, "enforce").strip().lower() or "enforce"


def for_template(template: Template, refs: Mapping[str, Any], cache_dir: Path | None = None) -> Iam | None:
    """The IAM of the local stack serving `template` (None when SVC_IAM=off); resolved on first use, when
    the local stack has set the functions' environment (the SAM transform it needs kept in `cache_dir`)."""
    mode = mode_from_env()
    if mode == "off":
        return None

    def model() -> IamModel:
        declared = template.data.get("Parameters") or {}
        resolver = local_resolver(
            template.path,
            os.environ,
            {**template.refs, **refs},
            template.package_root,
            {k: str(v) for k, v in template.parameters.items() if k in declared},
        )
        return IamModel.build(resolver, cache_dir)

    iam = Iam(model, mode=mode, record_path=os.environ.get(RECORD_ENV) or None)
    iam.set_machine_targets(
        {
            machine.logical_id: {
                spec.logical_id for spec in template.functions() if spec.arn in json.dumps(machine.definition)
            }
            for machine in template.state_machines()
        }
    )
    return iam
