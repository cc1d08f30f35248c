"""repo_host sandbox (GitHub shape): the OAuth app web flow, the REST subset the adapter uses (user,
repositories, commits, Git Data API, contents, compare) over real bare git repositories, and smart-HTTP
`git clone` of those repositories through `git http-backend`.

The ground every route stands on (base), the Git Data API (git_data), the REST routes of accounts and contents
(rest) and the provider with its route table, OAuth flow and clones (provider); this package gives its public
names."""

from svc_local.providers.github.base import CONTENTS_LIMIT, DEFAULT_ACCOUNT, TREE_LIMIT
from svc_local.providers.github.provider import GitHub

__all__ = ["CONTENTS_LIMIT", "DEFAULT_ACCOUNT", "TREE_LIMIT", "GitHub"]
