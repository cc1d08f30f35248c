"""db_host sandbox (Supabase Management API shape): OAuth with expiring, rotating tokens, organizations per
account, projects that become ready after a delay, SQL run for real in one PostgreSQL database per project
(`sbx_<ref>` on the server of DATABASE_URL), API keys, the connection pooler's configuration (the same server:
connections go straight to it), and the per-token rate limit.

The provider with its projects (provider), its tokens and rate limit (tokens) and the projects' databases
(databases); this package gives its public names."""

from svc_local.providers.supabase.provider import DEFAULT_ACCOUNT, NO_ORGS_ACCOUNT, Supabase

__all__ = ["DEFAULT_ACCOUNT", "NO_ORGS_ACCOUNT", "Supabase"]
