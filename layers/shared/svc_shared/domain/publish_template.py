"""The backoffice tree publishing pushes into the merchant's repository, and its migration runner."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.domain.publish_state import TEMPLATE_BODY, TEMPLATE_SUBJECT, PublishFailed

if TYPE_CHECKING:
    from svc_shared.providers.repo_host import RepoHost

_SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".aws-sam",
    "node_modules",
    "dist",  # a storefront built locally (storefront/dist): the site host builds its own
}


def template_root(configured: str | None = None) -> Path:
    """The backoffice tree publishing pushes: `configured` (BACKOFFICE_TEMPLATE_DIR), the repository's
    backoffice/ in development, or the copy `make build` bundles into the layer for the deployed function."""
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        if (parent / "backoffice" / "template.yaml").is_file():
            return parent / "backoffice"
    bundled = (
        Path(__file__).resolve().parents[1] / "backoffice_template"
    )  # svc_shared/, where make build puts it
    if bundled.is_dir():
        return bundled
    raise PublishFailed(say("publishing.template_unavailable"))


def migrations_dir(root: Path) -> Path:
    """The migrations of the backoffice tree `root`: what publishing applies to a new shop's database and
    what the hosted backoffice brings each shop's database to."""
    return root / "migrations"


def template_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if (
            any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in relative.parts)
            or not path.is_file()
        ):
            continue
        if path.suffix in {".pyc", ".pyo"} or relative.name.startswith(".env"):
            continue
        files[relative.as_posix()] = path.read_bytes()
    return files


def push_template(repo_host: RepoHost, owner: str, name: str, branch: str, root: Path) -> tuple[str, bool]:
    """The backoffice tree pushed onto the branch in one commit, unless its head already is that commit (an
    earlier attempt pushed it and stopped before recording it): (the commit's sha, whether it was pushed now)."""
    head = repo_host.commit(owner, name, branch)
    if head.message.split("\n", 1)[0] == TEMPLATE_SUBJECT:
        return head.sha, False
    sha = repo_host.commit_files(
        owner,
        name,
        branch,
        template_files(root),
        f"{TEMPLATE_SUBJECT}\n\n{TEMPLATE_BODY}",
        parent=(head.sha, head.tree_sha),
    )
    return sha, True


def migration_runner(root: Path) -> Any:
    """The backoffice's own migration runner, from the same tree, so publishing applies migrations exactly as
    the backoffice's tests and the local stack do."""
    source = root / "shared" / "svc_backoffice" / "data" / "migrate.py"
    spec = importlib.util.spec_from_file_location("svc_backoffice_template_migrate", source)
    if spec is None or spec.loader is None:
        raise PublishFailed(say("publishing.migration_runner_missing"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
