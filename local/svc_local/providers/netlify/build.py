"""One build as the real static host runs it: the commit checked out in a scratch directory, the build
command of its netlify.toml (or the site's settings) run by bash with the site's environment and a time
limit, and the publish directory kept as the deploy's files with its redirect rules."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from svc_local.providers.gitstore import GitError, GitRepo
from svc_local.providers.netlify.redirects import Rule, parse_redirects_file, parse_toml_redirects

MAX_LOG = 64 * 1024  # the tail of a build's output kept with its deploy
PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class BuildResult:
    error: str | None
    log: str
    rules: list[Rule] = field(default_factory=list)


@dataclass(frozen=True)
class BuildSettings:
    command: str
    publish: str
    environment: dict[str, str]
    redirects: list[Rule]


class BuildFailed(Exception):
    """A build that cannot go live; its message is the deploy's error_message."""


def read_settings(root: Path, site_cmd: str, site_dir: str) -> BuildSettings:
    """netlify.toml at the repository's root overrides the site's settings, as on the real host."""
    toml_path = root / "netlify.toml"
    config: dict[str, Any] = {}
    if toml_path.is_file():
        try:
            config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BuildFailed(f"Failed to parse configuration file netlify.toml: {exc}") from None
    build = config.get("build") if isinstance(config.get("build"), dict) else {}
    assert isinstance(build, dict)
    environment = build.get("environment") if isinstance(build.get("environment"), dict) else {}
    assert isinstance(environment, dict)
    return BuildSettings(
        command=str(build.get("command") or site_cmd or ""),
        publish=str(build.get("publish") or site_dir or ""),
        environment={str(k): str(v) for k, v in environment.items()},
        redirects=parse_toml_redirects(config.get("redirects")),
    )


def checkout(repo: GitRepo, sha: str, target: Path) -> None:
    """The commit's tree written under `target` (git archive, extracted with tar's safe filter)."""
    data = repo.git("archive", "--format=tar", sha)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(target, filter="data")


def _inside(root: Path, relative: str) -> Path:
    candidate = (root / relative.strip("/")).resolve()
    if candidate != root.resolve() and root.resolve() not in candidate.parents:
        raise BuildFailed(f"Deploy directory '{relative}' is outside the repository")
    return candidate


def run_build(
    repo: GitRepo,
    sha: str,
    *,
    site_cmd: str,
    site_dir: str,
    environment: dict[str, str],
    timeout: float,
    output: Path,
) -> BuildResult:
    """Build `sha` and copy its publish directory to `output`; the result names the failure, if any."""
    lines: list[str] = []

    def note(text: str) -> None:
        lines.append(f"{time.strftime('%H:%M:%S')}: {text}")

    with tempfile.TemporaryDirectory(prefix="sbx-build-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        try:
            note(f"Preparing repository at commit {sha}")
            try:
                checkout(repo, sha, root)
            except (GitError, tarfile.TarError) as exc:
                raise BuildFailed(f"Failed to prepare repo: {exc}") from None
            settings = read_settings(root, site_cmd, site_dir)
            env = {"PATH": PATH, "HOME": scratch, "LANG": "C.UTF-8", **environment, **settings.environment}
            if settings.command:
                note(f"Build command from netlify.toml: {settings.command}")
                log = _run(settings.command, root, env, timeout)
                lines.append(log.text)
                if log.timed_out:
                    raise BuildFailed(f"Build exceeded maximum allowed runtime ({timeout:g}s)")
                if log.code != 0:
                    raise BuildFailed(f"Build script returned non-zero exit code: {log.code}")
            publish = _inside(root, settings.publish)
            if not publish.is_dir():
                raise BuildFailed(f"Deploy directory '{settings.publish or '.'}' does not exist")
            shutil.copytree(publish, output, ignore=shutil.ignore_patterns(".git"))
            rules = parse_redirects_file(output / "_redirects") + settings.redirects
            note(f"Site is live with {sum(1 for p in output.rglob('*') if p.is_file())} files")
            return BuildResult(None, _tail("\n".join(lines)), rules)
        except BuildFailed as failed:
            note(f"Failed during stage 'building site': {failed}")
            shutil.rmtree(output, ignore_errors=True)
            return BuildResult(str(failed), _tail("\n".join(lines)))


@dataclass(frozen=True)
class _Output:
    text: str
    code: int | None
    timed_out: bool


def _run(command: str, cwd: Path, env: dict[str, str], timeout: float) -> _Output:
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=timeout)
        return _Output(out.decode("utf-8", "replace"), process.returncode, False)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)  # the command's own process group, started above
        out, _ = process.communicate()
        return _Output(out.decode("utf-8", "replace"), None, True)


def _tail(text: str) -> str:
    return text if len(text) <= MAX_LOG else "[earlier output cut]\n" + text[-MAX_LOG:]
