"""static_host sandbox (Netlify shape): its API, builds that run the repository's build, and live sites."""

from svc_local.providers.netlify.api import Netlify
from svc_local.providers.netlify.base import DEFAULT_ACCOUNT

__all__ = ["DEFAULT_ACCOUNT", "Netlify"]
