"""The local stack's state directory: atomic file writes and the secrets generated once and then reused."""

from __future__ import annotations

import base64
import os
import secrets
import tempfile
from pathlib import Path

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
