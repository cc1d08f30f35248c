"""The local stack's state directory: atomic file writes and the secrets generated once and then reused."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

STATE_DIR_ENV = "SVC_STATE_DIR"


def repo_root() -> Path:
    """The repository the package is installed from (editable install), else the working directory."""
    candidate = Path(__file__).resolve().parents[2]
    return candidate if (candidate / "template.yaml").is_file() else Path.cwd()


def default_state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV) or repo_root() / ".local-state")


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write to a temporary file in the same directory, then rename over `path`: readers never see half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def kept(path: Path | None, inputs: Any, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`build()`, kept in `path` (a JSON file of the state directory) by the hash of `inputs` (JSON data): a
    restart with the same inputs reads it back instead of building it again. No path: built every time."""
    if path is None:
        return build()
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved.get("key") == key:
            return dict(saved["value"])
    value = build()
    atomic_write(path, json.dumps({"key": key, "value": value}).encode())
    return value


class StateDir:
    """Files under the state directory; secret files are created once with mode 0600."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_state_dir()
        self.path.mkdir(parents=True, exist_ok=True)

    def _secret(self, name: str, make: str) -> str:
        file = self.path / name
        if file.is_file():
            value = file.read_text(encoding="ascii").strip()
            if value:
                return value
        atomic_write(file, make.encode("ascii"), mode=0o600)
        return make

    def master_key(self) -> str:
        """The local key-encryption key: 32 random bytes, base64."""
        return self._secret("master.key", base64.b64encode(secrets.token_bytes(32)).decode("ascii"))

    def random(self, name: str, nbytes: int = 32) -> str:
        """A named random value (base64), generated once."""
        return self._secret(name, base64.b64encode(secrets.token_bytes(nbytes)).decode("ascii"))

    def secret(self, name: str) -> str:
        """The value of the template secret `name` (what Secrets Manager would generate: 64 alphanumerics)."""
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return self._secret(f"secret.{name}", "".join(secrets.choice(alphabet) for _ in range(64)))
