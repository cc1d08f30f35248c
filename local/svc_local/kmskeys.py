"""The embedded KMS's keys kept across restarts of the local stack: the nth symmetric key created in a state
directory gets the id and key material the nth key had before, so what was encrypted under the key the deploy
rehearsal created (wrapped data keys in the persisted tables) still decrypts after a restart."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from pathlib import Path

from svc_local.state import atomic_write


def keep_keys(path: Path) -> Callable[[], None]:
    """Make moto's KMS hand out the keys recorded in `path` (recording new ones); returns the undo."""
    from moto.kms import models

    original_id: Callable[..., str] = models.generate_key_id
    original_material: Callable[[], bytes] = models.generate_master_key
    lock = threading.Lock()
    made = 0
    pending = threading.local()

    def kept() -> list[dict[str, str]]:
        return list(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else []

    def generate_key_id(multi_region: bool = False) -> str:
        nonlocal made
        with lock:
            keys = kept()
            if made < len(keys):
                key = keys[made]
            else:
                key = {
                    "id": original_id(multi_region),
                    "material": base64.b64encode(original_material()).decode("ascii"),
                }
                atomic_write(path, json.dumps([*keys, key]).encode("utf-8"), mode=0o600)
            made += 1
        pending.material = base64.b64decode(key["material"])
        return key["id"]

    def generate_master_key() -> bytes:
        # Key.__init__ asks for the id, then the material: the material of the id just handed out.
        material: bytes | None = getattr(pending, "material", None)
        pending.material = None
        return material if material is not None else original_material()

    setattr(models, "generate_key_id", generate_key_id)  # noqa: B010 - moto reads it from its module
    setattr(models, "generate_master_key", generate_master_key)  # noqa: B010

    def undo() -> None:
        setattr(models, "generate_key_id", original_id)  # noqa: B010
        setattr(models, "generate_master_key", original_material)  # noqa: B010

    return undo
