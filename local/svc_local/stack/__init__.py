"""`svc-local`: one command that starts embedded AWS, the provider sandbox, PostgreSQL and the gateway, seeds
the demo users and prints `ready`; Ctrl-C or SIGTERM stops it cleanly and persists the state."""

from __future__ import annotations

import atexit
import contextlib
import http.client
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import TextIO
from urllib.parse import urlsplit

from svc_local.aws import EmbeddedAws
from svc_local.eventsource import SqsPoller
from svc_local.gateway import Gateway
from svc_local.postgres import Postgres, redact
from svc_local.providers import (
    SandboxCredentials,
    base_urls,
    build_providers,
    platform_client_ids,
    platform_secrets,
)
from svc_local.rehearsal import Rehearsal, RehearsalError
from svc_local.runtime import FunctionRegistry
from svc_local.sandbox import Sandbox
from svc_local.state import StateDir, repo_root
from svc_local.template import Template

DEMO_EMAIL = "demo@svc.local"
DEMO_PASSWORD = "demo-password-123"  # noqa: S105 - documented local demo account
DEMO_FREE_EMAIL = "free@svc.local"
DEMO_FREE_PASSWORD = "free-password-123"  # noqa: S105 - documented local demo account


def _loopback(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "") else host


class LocalStack:
    """The whole local stack in this process. Ports of 0 pick free ones (tests)."""

    def __init__(
        self,
        template_path: str | Path | None = None,
        *,
        state_dir: str | Path | None = None,
        host: str | None = None,
        port: int | None = None,
        aws_port: int | None = None,
        sandbox_port: int | None = None,
        database_url: str | None = None,
        out: TextIO | None = None,
        derive_base_url: bool | None = None,
        rehearsal: bool | None = None,
    ) -> None:
        env = os.environ
        self.template_path = Path(template_path or env.get("SVC_TEMPLATE") or repo_root() / "template.yaml")
        self.state = StateDir(state_dir)
        self.host = host or env.get("SVC_HOST", "127.0.0.1")
        self.port = int(port if port is not None else env.get("SVC_PORT", "3000"))
        self.aws_port = int(aws_port if aws_port is not None else env.get("SVC_AWS_PORT", "4566"))
        self.sandbox_port = int(
            sandbox_port if sandbox_port is not None else env.get("SVC_SANDBOX_PORT", "4010")
        )
        self.database_url = database_url
        # SVC_DERIVE_BASE_URL=true leaves PublicBaseUrl empty, as a stack deployed without a custom domain: the
        # functions read the base URL from each request (svc_shared.wiring.baseurl), the publish steps from the table.
        self.derive_base_url = (
            derive_base_url
            if derive_base_url is not None
            else env.get("SVC_DERIVE_BASE_URL", "").strip().lower() in ("1", "true", "yes")
        )
        self.out = out or sys.stdout
        # The resources come from the built template created as a stack (svc_local.rehearsal); SVC_REHEARSAL=0
        # reads the template directly instead (a few seconds less at start).
        self.rehearse = rehearsal if rehearsal is not None else env.get("SVC_REHEARSAL", "1").strip() != "0"
        self.rehearsal: Rehearsal | None = None
        self.gateway: Gateway | None = None
        self.aws: EmbeddedAws | None = None
        self.pollers: list[SqsPoller] = []
        self.sandbox: Sandbox | None = None
        self.postgres: Postgres | None = None
        self.urls: dict[str, str] = {}
        self.demo_project_id: str | None = None
        self._stop_lock = threading.Lock()

    def start(self) -> None:
        """Start every service, set the functions' environment, seed the demo users."""
        # Bind the gateway first: its URL (PUBLIC_BASE_URL) is part of the template's parameters.
        probe_template = Template(self.template_path)
        registry = FunctionRegistry(probe_template.functions())
        gateway = Gateway(probe_template, self.host, self.port, registry=registry)
        self.gateway = gateway
        gateway_port = gateway.bind()
        public_url = f"http://{_loopback(self.host)}:{gateway_port}"
        configured_url = "" if self.derive_base_url else public_url
        params = probe_template.data.get("Parameters") or {}
        template = Template(
            self.template_path, {"PublicBaseUrl": configured_url} if "PublicBaseUrl" in params else {}
        )

        # PostgreSQL starts (initdb on a first start) while embedded AWS creates the stack: they need nothing of
        # each other, and each mostly waits (pg_ctl, moto's CloudFormation).
        self.postgres = Postgres(self.state.path / "pg", self.database_url)
        starting = ThreadPoolExecutor(1, thread_name_prefix="svc-postgres-start")
        postgres_started = starting.submit(self.postgres.start)
        starting.shutdown(wait=False)
        rehearsal = Rehearsal.for_local_stack(template, self.state) if self.rehearse else None
        self.rehearsal = rehearsal
        self.aws = EmbeddedAws(
            host="127.0.0.1",
            port=self.aws_port,
            state_dir=self.state.path,
            registry=registry,
            templates=[] if rehearsal else [template],
            setup=[rehearsal.run] if rehearsal else [],
            iam_template=template,
        )
        try:
            self.aws.start()
        finally:
            # Whatever happened, PostgreSQL has finished starting (or failed) before stop() may run.
            with contextlib.suppress(BaseException):
                postgres_started.exception()
        if rehearsal:
            template.refs.update(rehearsal.refs)
            print(rehearsal.summary(), file=sys.stderr, flush=True)
        database_url = postgres_started.result()
        # The provider sandbox: its credentials are generated once per state directory; db_host projects get
        # their databases on the same PostgreSQL server.
        credentials = SandboxCredentials.load_or_create(self.state.path / "sandbox-credentials.json")
        self.sandbox = Sandbox(
            "127.0.0.1",
            self.sandbox_port,
            build_providers(
                self.state.path,
                credentials,
                database_url=database_url,
                # Paid top-ups are delivered to the platform's own webhook route unless told otherwise.
                checkout_webhook_url=os.environ.get("SVC_CHECKOUT_WEBHOOK_URL")
                or f"{public_url}/api/webhooks/checkout",
            ),
        )
        self.sandbox.start()

        environment = rehearsal.environment() if rehearsal else template.environment(skip={"KMS_KEY_ID"})
        buckets = template.buckets()
        tables = template.tables()
        urls = base_urls(self.sandbox.url)
        environment.update(
            {
                "PUBLIC_BASE_URL": configured_url,
                "SVC_ENV": environment.get("SVC_ENV", "dev"),
                # Browser clients a developer runs beside the stack: the MCP Inspector's web UI.
                "ALLOWED_ORIGINS": os.environ.get(
                    "ALLOWED_ORIGINS", "http://localhost:6274,http://127.0.0.1:6274"
                ),
                # Only when asked (CIMD_ALLOW_LOOPBACK=true): MCP clients (and the conformance suite) may serve
                # their client metadata document from this machine. By default the local stack, like a deployed
                # one, fetches only public https addresses, so an anonymous /oauth/authorize cannot make it
                # probe the developer's own loopback services.
                "CIMD_ALLOW_LOOPBACK": os.environ.get("CIMD_ALLOW_LOOPBACK", "false"),
                "AWS_ENDPOINT_URL": self.aws.endpoint_url,
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
                "AWS_DEFAULT_REGION": "us-east-1",
                "DATABASE_URL": database_url,
                **urls,
                **self._provider_settings(credentials),
                # The hosted backoffice's search console and card provider (Stripe Connect): the sandbox's.
                "BACKOFFICE_GSC_PROVIDER_BASE_URL": urls["GSC_PROVIDER_BASE_URL"],
                "BACKOFFICE_STRIPE_API_BASE_URL": urls["CHECKOUT_API_URL"],
                "BACKOFFICE_STRIPE_CONNECT_BASE_URL": urls["CHECKOUT_API_URL"] + "/connect",
            }
        )
        if tables:
            environment.setdefault("TABLE_NAME", tables[0].table_name)
        if buckets:
            environment.setdefault("UPLOADS_BUCKET", buckets[0])
        # The functions encrypt with the embedded KMS and the key the rehearsal created (its KMS_KEY_ID); read
        # directly, the template makes no key: LOCAL_MASTER_KEY then, and no KMS key id beside it.
        if not rehearsal:
            environment["LOCAL_MASTER_KEY"] = self.state.master_key()
            os.environ.pop("KMS_KEY_ID", None)
        else:
            os.environ.pop("LOCAL_MASTER_KEY", None)
        os.environ.pop("AWS_SESSION_TOKEN", None)
        if not rehearsal:  # the rehearsal's stack made its own BackofficeSecret
            environment["BACKOFFICE_SECRET_ARN"] = self.aws.ensure_secret(
                "svc-local/backoffice-secret", self.state.random("backoffice-secret.key")
            )
        os.environ.update(environment)
        self.seed_demo_users()
        self.seed_demo_store(database_url, public_url)

        self.pollers = [
            SqsPoller(self.aws.client("sqs"), str(template.ref(source.queue_logical_id)), source, registry)
            for source in template.sqs_event_sources()
        ]
        for poller in self.pollers:
            poller.start()
        gateway.start()
        self.urls = {
            "backoffice": f"{public_url}/shops/{self.demo_project_id}",
            "gateway": public_url,
            "aws": self.aws.endpoint_url,
            "sandbox": self.sandbox.url,
            "postgres": database_url,
        }

    def seed_demo_store(self, database_url: str, public_url: str) -> None:
        """The paid demo user's demo store: the first published shop, served by the hosted backoffice."""
        from svc_local.stack import demostore

        self.demo_project_id = demostore.seed(
            database_url,
            os.environ.get("SVC_DEMO_EMAIL", DEMO_EMAIL),
            public_url,
            self.state.path / "demo-project-id",
            self.sandbox.url if self.sandbox else None,
        )

    def _provider_settings(self, credentials: SandboxCredentials) -> dict[str, str]:
        """OAuth client ids, and the ARNs of the provider secrets stored in the embedded Secrets Manager."""
        assert self.aws is not None
        # Each in a secret named after its setting (REPO_HOST_CLIENT_SECRET_ARN: svc-local/repo-host-client-secret).
        secrets = {
            **platform_secrets(credentials),
            "BACKOFFICE_GSC_CLIENT_SECRET_ARN": credentials.gsc_client_secret,
        }
        settings = {
            setting: self.aws.ensure_secret(f"svc-local/{setting[:-4].lower().replace('_', '-')}", value)
            for setting, value in secrets.items()
        }
        settings.update(
            {
                **platform_client_ids(credentials),
                "BACKOFFICE_GSC_CLIENT_ID": credentials.gsc_client_id,
                "BACKOFFICE_STRIPE_CLIENT_ID": credentials.checkout_connect_client_id,
                "BACKOFFICE_STRIPE_SECRET_KEY_ARN": settings["CHECKOUT_SECRET_KEY_ARN"],
            }
        )
        return settings

    def seed_demo_users(self) -> None:
        """Create the paid and the Free-plan demo users unless they exist."""
        try:
            from svc_shared.core import errors
            from svc_shared.wiring import services
        except ImportError as exc:
            print(f"demo users not seeded: {exc}", file=sys.stderr, flush=True)
            return
        services.wire()  # the settings of the environment just set
        env = os.environ
        users = [
            (
                env.get("SVC_DEMO_EMAIL", DEMO_EMAIL),
                env.get("SVC_DEMO_PASSWORD", DEMO_PASSWORD),
                "Demo",
                "paid",
            ),
            (
                env.get("SVC_DEMO_FREE_EMAIL", DEMO_FREE_EMAIL),
                env.get("SVC_DEMO_FREE_PASSWORD", DEMO_FREE_PASSWORD),
                "Demo Free",
                "free",
            ),
        ]
        accounts = services.accounts()
        for email, password, name, plan in users:
            with contextlib.suppress(errors.AlreadyExists):  # seeded by an earlier start
                accounts.create_user(email=email, password=password, display_name=name, plan=plan)

    def probe(self, timeout: float = 5.0) -> bool:
        """Does every service answer (HTTP for the servers, a query for PostgreSQL)?"""
        deadline = time.monotonic() + timeout
        checks: list[Callable[[], bool]] = [
            lambda: _http_answers(self.urls["gateway"] + "/"),
            lambda: _http_answers(self.urls["aws"] + "/moto-api/"),
            lambda: _http_answers(self.urls["sandbox"] + "/health", expect=200),
            lambda: self.postgres is not None and self.postgres.probe(),
        ]
        with ThreadPoolExecutor(len(checks)) as pool:
            pending = list(checks)
            while pending and time.monotonic() < deadline:
                answers = list(pool.map(lambda check: check(), pending))
                pending = [check for check, ok in zip(pending, answers, strict=True) if not ok]
                if pending:
                    time.sleep(0.05)
        return not pending

    def print_services(self) -> None:
        env = os.environ
        lines = [
            f"gateway   {self.urls['gateway']}",
            f"aws       {self.urls['aws']}",
            f"sandbox   {self.urls['sandbox']}",
            f"postgres  {redact(self.urls['postgres'])}",
            f"state     {self.state.path}",
            f"demo      {env.get('SVC_DEMO_EMAIL', DEMO_EMAIL)} / "
            f"{env.get('SVC_DEMO_PASSWORD', DEMO_PASSWORD)} (paid)",
            f"demo      {env.get('SVC_DEMO_FREE_EMAIL', DEMO_FREE_EMAIL)} / "
            f"{env.get('SVC_DEMO_FREE_PASSWORD', DEMO_FREE_PASSWORD)} (free)",
            f"backoffice {self.urls['backoffice']}",
            f"sign-in   {self.urls['gateway']}/backoffice/sso?project={self.demo_project_id} (demo store owner)",
        ]
        live = self._demo_live_url()
        if live:
            lines.append(f"storefront {live}   the demo store's live site, built by the site host sandbox")
        print("\n".join(lines), file=self.out, flush=True)

    def _demo_live_url(self) -> str | None:
        from svc_shared.wiring import services

        try:
            return services.projects().get(self.demo_project_id).live_url if self.demo_project_id else None
        except Exception:  # noqa: BLE001 - a line of the banner, never a reason not to start
            return None

    def stop(self) -> None:
        """Stop in reverse order; embedded AWS writes its state before it stops. Safe to call twice."""
        with self._stop_lock:
            for poller in self.pollers:
                poller.stop()
            self.pollers = []
            for service in (self.gateway, self.sandbox, self.aws, self.postgres):
                if service is None:
                    continue
                try:
                    service.stop()
                except Exception as exc:  # noqa: BLE001 - stop the others whatever happens
                    print(f"error stopping {type(service).__name__}: {exc!r}", file=sys.stderr, flush=True)
            self.gateway = self.sandbox = self.aws = self.postgres = None


def _http_answers(url: str, expect: int | None = None) -> bool:
    """Any HTTP answer (or exactly `expect`). http.client: no TLS context to build for a loopback probe."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=1.0)
    try:
        connection.request("GET", parts.path or "/")
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
    return expect is None or status == expect


def main() -> int:
    started = time.monotonic()
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    stack = LocalStack()
    atexit.register(stack.stop)
    try:
        stack.start()
        stack.print_services()
        if not stack.probe():
            print("a service did not answer; stopping", file=sys.stderr, flush=True)
            return 1
        print("ready", flush=True)
        print(f"started in {time.monotonic() - started:.2f}s; Ctrl-C stops", file=sys.stderr, flush=True)
        while not stop.wait(1.0):
            pass
        print("stopping", file=sys.stderr, flush=True)
        return 0
    except (OSError, RehearsalError) as exc:
        print(f"cannot start the local stack: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        stack.stop()
