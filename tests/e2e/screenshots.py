"""The README's screenshots: taken by the browser tests, written over docs/screenshots only by
`make screenshots` (SVC_UPDATE_SCREENSHOTS=1, so a test run leaves the checkout as it was), and shown by the
README."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stackproc import ROOT

SCREENSHOTS = ROOT / "docs" / "screenshots"


def shot(page, name: str) -> None:
    """The whole page as docs/screenshots/{name}.png under `make screenshots`, else in the temporary folder."""
    update = os.environ.get("SVC_UPDATE_SCREENSHOTS") == "1"
    folder = SCREENSHOTS if update else Path(tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / (f"{name}.png" if update else f"svc-{name}.png")), full_page=True)


def assert_readme_shows(*names: str) -> None:
    """Each screenshot is in docs/screenshots and the README shows it."""
    readme = (ROOT / "README.md").read_text()
    for name in names:
        assert f"docs/screenshots/{name}.png" in readme
        assert (SCREENSHOTS / f"{name}.png").is_file()
