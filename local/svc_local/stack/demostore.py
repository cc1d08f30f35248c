"""The demo store: the first shop of the local stack, a published project of the paid demo user whose backoffice
the platform's hosted backoffice serves at `/shops/{project_id}` like any other shop's. Its database (on the
stack's PostgreSQL, migrated by the backoffice's own runner, with a little demo data) is recorded on the project
as publishing records a db_host database: pooler host, port, user and database, and an encrypted password."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from svc_local.postgres import own_database, server_endpoint

# `_2`: the store's database is owned by its own role since issue 38; one made before (owned by the
# superuser) is left as it was.
DEFAULT_DATABASE = "svc_demo_store_2"
DEMO_NAME = "Demo ceramics store"
DEMO_PROMPT = "A ceramics studio selling mugs, bowls and vases (the demo store)"
DEMO_CATEGORIES = [("Mugs", "mugs"), ("Bowls", "bowls"), ("Vases", "vases")]
DEMO_PRODUCTS = [
    ("Speckled stoneware mug", "speckled-stoneware-mug", "MUG-001", "mugs", 2800, 24),
    ("Celadon tea bowl", "celadon-tea-bowl", "BWL-001", "bowls", 3400, 3),
    ("Tall ash-glaze vase", "tall-ash-glaze-vase", "VAS-001", "vases", 7900, 0),
    ("Espresso cup pair", "espresso-cup-pair", "MUG-002", "mugs", 3600, 12),
]


def database_name() -> str:
    """The demo store's database on the server: `SVC_DEMO_STORE_DATABASE`, or svc_demo_store_2 (test runs give
    each stack its own, so a stale one never meets a newer migration)."""
    return os.environ.get("SVC_DEMO_STORE_DATABASE") or DEFAULT_DATABASE


def database_url(server_url: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{database_name()}"))


def prepare_database(server_url: str, owner_email: str, password: str) -> str:
    """Create the demo store's database once, owned by a role of its own (named as it, signing in with
    `password`: never the server's superuser), apply pending migrations as that role, seed the demo data when
    empty. Returns the URL that reaches it as that role."""
    import psycopg

    from svc_backoffice.data import migrate

    url = own_database(server_url, database_name(), password)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate.migrate(migrate.psycopg_executor(conn))
        row = conn.execute("SELECT count(*) FROM staff").fetchone()
        if row is not None and row[0] == 0:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO staff (email, name, role) VALUES (%s, 'Demo owner', 'owner')", (owner_email,)
                )
                conn.execute("UPDATE settings SET store_name = %s", (DEMO_NAME,))
                for category, slug in DEMO_CATEGORIES:
                    conn.execute("INSERT INTO categories (name, slug) VALUES (%s, %s)", (category, slug))
                for title, slug, sku, category, price, stock in DEMO_PRODUCTS:
                    conn.execute(
                        "INSERT INTO products (title, slug, sku, status, category_id, price_cents) "
                        "VALUES (%s, %s, %s, 'active', (SELECT id FROM categories WHERE slug = %s), %s)",
                        (title, slug, sku, category, price),
                    )
                    if stock:
                        conn.execute(
                            "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason) "
                            "SELECT p.id, l.id, %s, 'demo stock' FROM products p, stock_locations l "
                            "WHERE p.slug = %s AND l.is_default",
                            (stock, slug),
                        )
    return url


def publish_in_sandbox(project: Any, sandbox_url: str, public_url: str = "") -> dict[str, Any]:
    """The demo store's private repository (the backoffice template pushed in one commit) and its site, made in
    the provider sandbox as publishing makes them, in the sandbox's default accounts (the ones a merchant
    signs in to when connecting GitHub and the site host locally); returns what publishing records on the
    project. Reused when they exist: a restart adds nothing."""
    import time

    import httpx

    from svc_shared.core.names import repo_name
    from svc_shared.domain.publish_template import push_template, template_root
    from svc_shared.wiring import services

    def minted(provider: str) -> dict[str, Any]:
        answer = httpx.post(f"{sandbox_url}/__admin/{provider}/tokens", json={}, timeout=10)
        answer.raise_for_status()
        return dict(answer.json())

    if project.repo_host_repo and project.static_site_id and project.last_pushed_sha:
        return {}  # made by an earlier start
    name = repo_name(project.slug)
    github = minted("github")
    repo_host = services.current().repo_host(github["access_token"])
    repo = repo_host.create_or_reuse_repo(
        name, owner=github["login"], description=f"{project.name}: svc shop backoffice"
    )
    owner, repo_short = repo.full_name.split("/", 1)
    sha, _ = push_template(repo_host, owner, repo_short, repo.default_branch, template_root())
    static_host = services.current().static_host(minted("netlify")["access_token"])
    site = static_host.find_site(name) or static_host.create_site(
        name=name, repo_path=repo.full_name, branch=repo.default_branch
    )
    if public_url:  # the storefront's build reads the shop's storefront API; its pages send the beacon
        static_host.set_env(
            site.account_id,
            site.id,
            {
                "BACKOFFICE_API_URL": f"{public_url}/shops/{project.id}",
                "SVC_PLATFORM_URL": public_url,
                "SVC_PROJECT_ID": project.id,
            },
        )
    changes: dict[str, Any] = {
        "deploy_hook": site.deploy_hook,
        "repo_host_repo": repo.full_name,
        "repo_host_branch": repo.default_branch,
        "repo_host_url": repo.html_url,
        "template_commit_sha": sha,
        "static_site_id": site.id,
        "live_url": site.ssl_url or site.url,
    }
    if project.last_pushed_sha is None:
        build = static_host.start_build(site.id)
        changes.update(
            last_pushed_sha=sha,
            last_pushed_at=int(time.time()),
            last_deploy_id=build.deploy_id,
            last_deploy_at=int(time.time()),
            build_status="building",
        )
    return changes


def seed(
    server_url: str, owner_email: str, public_url: str, marker: Path, sandbox_url: str | None = None
) -> str:
    """The demo store as a published project of `owner_email` (created on first start, its id kept in
    `marker`); returns the project id. Its backoffice is found as every shop's is: from the project record."""
    import httpx

    from svc_shared.core import errors
    from svc_shared.wiring import services

    projects = services.projects()
    project_id = marker.read_text().strip() if marker.is_file() else ""
    try:
        project = projects.get(project_id) if project_id else None
    except errors.NotFound:
        project = None
    if project is None:
        owner = services.accounts().get_user_by_email(owner_email)
        project = projects.create(
            owner_id=owner.id, workspace_id=owner.default_workspace_id, name=DEMO_NAME, prompt=DEMO_PROMPT
        )
        marker.write_text(project.id)
    host, port, _, _ = server_endpoint(server_url)
    context = {"project_id": project.id, "kind": "db_password"}
    sealed = project.extra.get("db_password")
    role_password = services.envelope().decrypt_text(sealed, context) if sealed else secrets.token_urlsafe(24)
    password = sealed or services.envelope().encrypt(role_password, context)
    prepare_database(server_url, owner_email, role_password)
    user = database_name()  # the shop's own role
    published: dict[str, Any] = {}
    if sandbox_url:
        try:
            published = publish_in_sandbox(project, sandbox_url, public_url)
        except (errors.DomainError, httpx.HTTPError) as exc:  # the store still serves its backoffice
            print(f"demo store: its repository and site were not made ({exc})", file=sys.stderr, flush=True)
    projects.update(
        project,
        {
            **published,
            "db_password": password,
            "db_pooler_host": host,
            "db_pooler_port": port,
            "db_pooler_user": user,
            "db_pooler_database": database_name(),
            "backoffice_url": f"{public_url}/shops/{project.id}",
            "publish_stage": "ready",
            "publish_status": "ready",
            "status": "published",
        },
    )
    return project.id
