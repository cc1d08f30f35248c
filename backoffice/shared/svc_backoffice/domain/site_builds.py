"""Catalog changes reach the storefront site: the database appends a row to `storefront_changes` for every
change a shopper could see (migration 0011), and after a write this asks the site host to rebuild the site by
POSTing to its build hook (hosted: the hook publishing recorded for the shop's site; self-hosted:
STOREFRONT_BUILD_HOOK_URL), at most once per debounce window (20 s): the first change of a quiet spell is
built at once, the changes made during the window by one more request at its end (a timer of this process;
on a frozen Lambda instance, the first write or storefront write after the window). A burst of edits so costs
one or two builds, and every change is built within the window plus the build's own time."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Callable

from svc_backoffice.core import config, tenancy
from svc_backoffice.core.logs import logger
from svc_backoffice.data import db
from svc_backoffice.data.db import Database
from svc_backoffice.domain import storefront_settings

HOOK_TIMEOUT_SECONDS = 5

_timers: dict[str, threading.Timer] = {}
_timers_lock = threading.Lock()


def post_hook(url: str) -> bool:
    """POST the build hook (an empty JSON body, as the site host's documentation shows); True when the host
    took it (2xx)."""
    request = urllib.request.Request(  # noqa: S310 - the shop's configured build hook (https, or the sandbox)
        url, data=b"{}", method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=HOOK_TIMEOUT_SECONDS) as answer:  # noqa: S310
            return 200 <= answer.status < 300
    except urllib.error.HTTPError as exc:
        logger.warning("storefront build hook refused", extra={"status": exc.code})
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        logger.warning("storefront build hook unreachable", extra={"reason": type(exc).__name__})
    return False


def flush(database: Database, hook: str | None = None) -> float | None:
    """Request a build if something changed since the last request and the window has passed. Returns None
    when nothing is left to build, else the seconds until the next request may be made."""
    hook = hook or storefront_settings.build_hook_url()
    if not hook:
        return None
    window = storefront_settings.settings().storefront_build_debounce_seconds
    with database.transaction():
        taken = database.one(
            "UPDATE storefront_builds b SET built_through = c.last, requested_at = now() "
            "FROM (SELECT max(id) AS last FROM storefront_changes) c "
            "WHERE c.last > b.built_through AND (b.requested_at IS NULL "
            "OR b.requested_at <= now() - make_interval(secs => %s)) "
            "RETURNING (SELECT built_through FROM storefront_builds) AS previous, "
            "(SELECT requested_at FROM storefront_builds) AS previous_at",
            (window,),
        )
    if taken is not None:
        if post_hook(hook):
            logger.info("storefront build requested")
            with database.transaction():
                database.all("DELETE FROM storefront_changes WHERE id <= %s", (taken["previous"],))
            return None
        with database.transaction():  # not taken: as if it had not been asked, so the next write asks again
            database.all(
                "UPDATE storefront_builds SET built_through = %s, requested_at = %s",
                (taken["previous"], taken["previous_at"]),
            )
    with database.transaction():
        due = database.one(
            "SELECT greatest(extract(epoch FROM b.requested_at + make_interval(secs => %s) - now()), 0)::float "
            "AS wait FROM storefront_builds b WHERE (SELECT max(id) FROM storefront_changes) > b.built_through",
            (window,),
        )
    return None if due is None else float(due["wait"] or 0)


def _in_context(run: Callable[[Database], object]) -> Callable[[], None]:
    """`run` later, on a thread, with the current shop (hosted) or the deployment's database (self-hosted)."""
    shop = tenancy.current_shop()

    def later() -> None:
        try:
            if shop is not None:
                with tenancy.serving(shop), db.POOL.lease(shop.conninfo) as database, db.serving(database):
                    run(database)
            else:
                own = Database(config.database_url())
                try:
                    run(own)
                finally:
                    own.close()
        except Exception:  # noqa: BLE001 - a timer thread has no caller to tell; the next write retries
            logger.exception("storefront rebuild check failed")

    return later


def after_write(database: Database) -> None:
    """After a write committed: request a build now if the window allows, else at the window's end."""
    hook = storefront_settings.build_hook_url()
    if not hook:
        return
    wait = flush(database, hook)
    if wait is None:
        return
    key = hook
    with _timers_lock:
        if key in _timers and _timers[key].is_alive():
            return

        def again(database: Database) -> None:
            with _timers_lock:
                _timers.pop(key, None)
            later = flush(database, hook)
            if later is not None:
                after_write(database)

        timer = threading.Timer(wait + 0.5, _in_context(again))
        timer.daemon = True
        _timers[key] = timer
        timer.start()


def pending_timers() -> int:
    with _timers_lock:
        return sum(1 for t in _timers.values() if t.is_alive())
