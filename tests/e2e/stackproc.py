"""Start and stop `python -m svc_local` as a real process for end-to-end tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from stacklog import StackLog

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class RunningStack:
    process: subprocess.Popen[str]
    services: dict[str, str]
    seconds_to_ready: float
    drain: threading.Thread
    env: dict[str, str] = field(default_factory=dict)
    log: StackLog | None = None  # its stderr: what IAM refused shows in a failing test's output (stacklog.py)

    def interrupt(self) -> int:
        """Ctrl-C."""
        return self.stop(signal.SIGINT)

    def stop(self, how: int = signal.SIGTERM) -> int:
        self.process.send_signal(how)
        try:
            return self.process.wait(timeout=60)  # a stack saving its state on a loaded machine
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.drain.join(timeout=5)
            assert self.process.stdout is not None
            self.process.stdout.close()


# The e2e stacks use the machine's PostgreSQL when there is one (fast); test_local_stack.py covers the
# embedded default that `make dev` uses.
DATABASE_URL = os.environ.get("SVC_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def start_stack(
    state: Path, *, database_url: str | None, extra_env: dict[str, str] | None = None
) -> RunningStack:
    """Start the stack on free ports with its state in `state`; DATABASE_URL None means the embedded one."""
    env = {
        **os.environ,
        "SVC_STATE_DIR": str(state),
        "SVC_PORT": "0",
        "SVC_AWS_PORT": "0",
        "SVC_SANDBOX_PORT": "0",
        "SVC_BACKOFFICE_PORT": "0",
        **(extra_env or {}),
    }
    for name in ("DATABASE_URL", "AWS_ENDPOINT_URL", "MOTO_PORT", "TABLE_NAME", "KMS_KEY_ID"):
        env.pop(name, None)
    if database_url:
        env["DATABASE_URL"] = database_url
    started = time.monotonic()
    state.mkdir(parents=True, exist_ok=True)
    with (state.parent / f"{state.name}-stderr.log").open("a") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "svc_local"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert process.stdout is not None
    services: dict[str, str] = {}
    for line in process.stdout:
        if line.strip() == "ready":
            # Keep draining stdout (function logs go there) so the stack never blocks on a full pipe.
            drain = threading.Thread(target=process.stdout.read, daemon=True)
            drain.start()
            log = StackLog(state.parent / f"{state.name}-stderr.log")
            return RunningStack(process, services, time.monotonic() - started, drain, env, log)
        name, _, value = line.strip().partition(" ")
        services.setdefault(name, value.strip())
    process.stdout.close()
    log = (state.parent / f"{state.name}-stderr.log").read_text()[-3000:]
    pytest.fail(f"the stack exited with {process.wait()} before ready:\n{log}")


def cli(stack: RunningStack, *args: str) -> subprocess.CompletedProcess[str]:
    """The operator's command line (`svc --local ...`) against a running stack."""
    aws_port = stack.services["aws"].rsplit(":", 1)[1]
    return subprocess.run(
        [sys.executable, "-m", "svc_local.ops", "--local", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**stack.env, "SVC_AWS_PORT": aws_port},
        timeout=60,
        check=False,
    )


def create_user(
    stack: RunningStack, email: str, password: str, plan: str = "paid", credits: int | None = None
) -> None:
    opening = [] if credits is None else ["--credits", str(credits)]
    created = cli(
        stack, "users", "create", "--email", email, "--password", password, "--plan", plan, *opening
    )
    assert created.returncode == 0, created.stderr


def new_merchant(stack: RunningStack, email: str, password: str) -> dict[str, str]:
    """A merchant's account on the stack, and the URLs of the stack the merchant's browser uses."""
    create_user(stack, email, password)
    return {"gateway": stack.services["gateway"], "sandbox": stack.services["sandbox"]}


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch_chromium(playwright: Any) -> Any:
    """Debian's headless Chromium driven by Playwright (no browser download)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def browser_sign_in(
    email: str,
    password: str,
    chromium: Any,
    gateway: str,
    path: str = "/",
    *,
    width: int = 1100,
    script: bool = True,
) -> tuple[Any, Any]:
    """A browser of its own (a new context) opening `path`, sent to the login form and signed in there, back
    on `path`: (context, page)."""
    context = chromium.new_context(viewport={"width": width, "height": 900}, java_script_enabled=script)
    page = context.new_page()
    page.goto(f"{gateway}{path}")
    assert page.url.startswith(f"{gateway}/login")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{gateway}{path}")
    return context, page
