"""Fixtures of the integration tests that drive the provider sandbox directly (a sandbox per module)."""

from __future__ import annotations

import pytest

from svc_local.providers import SandboxCredentials, base_urls
from svc_local.sandbox import Sandbox


@pytest.fixture(scope="module")
def creds() -> SandboxCredentials:
    """What the platform is registered with at each sandbox provider, fresh for each module."""
    return SandboxCredentials.generate()


@pytest.fixture(scope="module")
def urls(sandbox: Sandbox) -> dict[str, str]:
    """The providers' base URLs on the module's own sandbox."""
    return base_urls(sandbox.url)
