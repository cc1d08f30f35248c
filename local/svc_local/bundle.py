"""Copy the backoffice tree into the shared layer before `sam build`, so the deployed publish function
pushes and migrates exactly the tree of this commit: `python -m svc_local.bundle`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from svc_local.state import repo_root
from svc_shared.domain.publish_template import template_files

DESTINATION = Path("layers/shared/svc_shared/backoffice_template")


def bundle(root: Path) -> int:
    destination = root / DESTINATION
    shutil.rmtree(destination, ignore_errors=True)
    files = template_files(root / "backoffice")
    for path, content in files.items():
        target = destination / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return len(files)


if __name__ == "__main__":
    count = bundle(repo_root())
    print(f"bundled {count} backoffice files into {DESTINATION}", file=sys.stderr)
