"""No benchmark here: the in-process platform that bench_mcp and bench_publish measure against.

`platform(root)` starts embedded AWS (svc_local.aws.EmbeddedAws, no persistence) with template.yaml's tables,
secrets and state machine (or, with `aws_in_child=True`, the tables and secrets in a child process), optionally the provider sandbox (svc_local.sandbox.Sandbox with
svc_local.providers.build_providers), sets the functions' environment as the local stack does, creates a
paid demo user and hands back an in-process API client (tests/apiclient.py: handlers called with real API
Gateway proxy events). Everything it changed (os.environ, cached AWS clients and services) is put back on
exit."""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PUBLIC_BASE_URL = "http://127.0.0.1:3000"
DATABASE_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DEMO_EMAIL = "bench@example.com"
DEMO_PASSWORD = "bench-password-1"  # noqa: S105 - a throwaway user in a throwaway embedded AWS


def _apiclient() -> Any:
    """tests/apiclient.py (the tests' HTTP client and OAuth flow), loaded from its file: tests/ is no package."""
    import importlib.util

    name = "svc_tests_apiclient"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "tests/apiclient.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class SkewedClock:
    """The system clock plus an offset the benchmark moves (past a rate-limit window), as tests move time."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Platform:
    root: Path
    aws: Any  # svc_local.aws.EmbeddedAws
    template: Any  # svc_local.template.Template
    api: Any  # apiclient.ApiClient
    env: dict[str, str]  # what was set in os.environ for the functions
    user: Any
    sandbox: Any = None  # svc_local.sandbox.Sandbox when asked for
    credentials: Any = None  # svc_local.providers.SandboxCredentials
    providers: list[Any] = field(default_factory=list)

    def bearer_token(self) -> str:
        """An access token of the demo user through the real OAuth flow (register, sign in, consent, code)."""
        tokens = _apiclient().authorize_client(self.api, DEMO_EMAIL, DEMO_PASSWORD)
        self.api.cookies.clear()
        return str(tokens["access_token"])


def _reset_shared_state() -> None:
    with contextlib.suppress(ImportError):
        from svc_shared.wiring import services

        services.current().http.close()
        services.wire()  # new settings, AWS clients and HTTP pool


# Embedded AWS in a process of its own: it prints its endpoint, then serves until its stdin closes.
AWS_CHILD = """
import sys
from svc_local.aws import EmbeddedAws
from svc_local.template import Template

template = Template(sys.argv[1], {"PublicBaseUrl": sys.argv[2]})
aws = EmbeddedAws(host="127.0.0.1", port=0, persist=False, templates=[template])
aws.start()
print(aws.endpoint_url, flush=True)
sys.stdin.read()
aws.stop()
"""


class AwsProcess:
    """EmbeddedAws (template tables and secrets, no Lambda tasks) in a child process: AWS calls are then
    round trips to another process, as to DynamoDB, instead of handing this process's GIL to moto's threads
    in the middle of the code being timed."""

    def __init__(self, template_path: Path) -> None:
        self.template_path = template_path
        self.process: subprocess.Popen[str] | None = None
        self.endpoint_url = ""

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", AWS_CHILD, str(self.template_path), PUBLIC_BASE_URL],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.endpoint_url = self.process.stdout.readline().strip()
        if not self.endpoint_url.startswith("http"):
            self.stop()
            raise RuntimeError("embedded AWS child process did not start")

    def stop(self) -> None:
        if self.process is None:
            return
        from svc_local.serving import close_child

        close_child(self.process, 20)
        self.process = None


@contextlib.contextmanager
def platform(
    root: Path,
    *,
    aws_in_child: bool = False,
    with_sandbox: bool = False,
    project_ready_delay: float = 2.0,
    build_delay: float = 0.3,
    builder_delay: float = 0.2,
) -> Iterator[Platform]:
    if aws_in_child and with_sandbox:
        raise ValueError(
            "the sandbox's secrets are written to the in-process embedded AWS: not with aws_in_child"
        )
    ApiClient = _apiclient().ApiClient
    from svc_local.aws import EmbeddedAws
    from svc_local.runtime import FunctionRegistry
    from svc_local.template import Template

    saved = dict(os.environ)
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "KMS_KEY_ID"):
        os.environ.pop(name, None)
    template_path = root / "template.yaml"
    template = Template(template_path, {"PublicBaseUrl": PUBLIC_BASE_URL})
    aws: Any = (
        AwsProcess(template_path)
        if aws_in_child
        else EmbeddedAws(
            host="127.0.0.1",
            port=0,
            persist=False,
            registry=FunctionRegistry(template.functions()),
            templates=[template],
        )
    )
    sandbox = None
    providers: list[Any] = []
    credentials = None
    state = tempfile.TemporaryDirectory(prefix="bench-sandbox-")
    try:
        aws.start()
        env = template.environment(skip={"KMS_KEY_ID"})
        env.update(
            {
                "PUBLIC_BASE_URL": PUBLIC_BASE_URL,
                "SVC_ENV": env.get("SVC_ENV", "dev"),
                "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
                "AWS_ENDPOINT_URL": aws.endpoint_url,
            }
        )
        if with_sandbox:
            from svc_local.providers import (
                SandboxCredentials,
                base_urls,
                build_providers,
                platform_client_ids,
                platform_secrets,
            )
            from svc_local.sandbox import Sandbox

            credentials = SandboxCredentials.generate()
            providers = build_providers(
                Path(state.name),
                credentials,
                database_url=DATABASE_URL,
                project_ready_delay=project_ready_delay,
                build_delay=build_delay,
                builder_delay=builder_delay,
                rate_limit_per_minute=None,
            )
            sandbox = Sandbox("127.0.0.1", 0, providers, quiet=True)
            sandbox.start()
            env.update(base_urls(sandbox.url))
            for setting, value in platform_secrets(credentials).items():
                env[setting] = aws.ensure_secret(f"bench/{setting.lower()}", value)
            env |= platform_client_ids(credentials)
        os.environ.update(env)
        _reset_shared_state()
        from svc_shared.wiring import services

        user = services.accounts().create_user(
            email=DEMO_EMAIL, password=DEMO_PASSWORD, display_name="Bench", plan="paid"
        )
        api = ApiClient(template_path)
        yield Platform(
            root=root,
            aws=aws,
            template=template,
            api=api,
            env=env,
            user=user,
            sandbox=sandbox,
            credentials=credentials,
            providers=providers,
        )
    finally:
        _reset_shared_state()
        if sandbox is not None:
            sandbox.stop()
        aws.stop()
        _drop_sandbox_databases(providers)
        state.cleanup()
        os.environ.clear()
        os.environ.update(saved)
        _reset_shared_state()


def _drop_sandbox_databases(providers: list[Any]) -> None:
    """The db_host projects' databases live on the machine's PostgreSQL: drop them."""
    if not providers:
        return
    from svc_local.providers.supabase import Supabase

    supabase = next((p for p in providers if isinstance(p, Supabase)), None)
    names = [p["database"] for p in supabase.data["projects"].values()] if supabase else []
    if not names:
        return
    import psycopg

    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
