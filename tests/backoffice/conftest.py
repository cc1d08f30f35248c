"""Fixtures of the backoffice tests; the helpers and fixtures themselves live in bohelpers.py so test modules
can import them by a name no other conftest.py shares."""

from bohelpers import *  # noqa: F403 - re-export the fixtures for pytest
from storefronthelpers import creds, front, hosted_env, stripe_sandbox  # noqa: F401 - storefront fixtures
