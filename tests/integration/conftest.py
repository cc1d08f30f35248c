"""Fixtures of the integration tests that drive the provider sandbox directly (a sandbox per module)."""

from __future__ import annotations

import pytest

from svc_local.providers import SandboxCredentials


@pytest.fixture(scope="module")
def creds() -> SandboxCredentials:
    """What the platform is registered with at each sandbox provider, fresh for each module."""
    return SandboxCredentials.generate()
