"""Deleting asks first: a Delete button posts to the record's `.../delete` address, which answers a page
saying what goes and what stays, with a box "I understand" to tick and the Delete button that does it. Only
a post with that box ticked deletes (without script too: no dialog is needed, and a post from a list's
button or an old page never deletes at once)."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.pages import form, local_path, nav_of, page, router, see_other, tab_of
from svc_backoffice.core.catalogue import say

UNDERSTOOD = "understood"


def confirmed(remove: Callable[[], object], *, what: str, back: str, consequence: str = "") -> Response:
    """Delete with `remove` once the person ticked "I understand" on the page this answers otherwise (in the
    navigation's section and settings tab of `back`, the list); then back to the list saying it was removed."""
    ticked = form().get(UNDERSTOOD) == "on"
    if ticked:
        remove()
        return see_other(back, notice="removed")
    asked = UNDERSTOOD in form()  # the confirmation page was sent with its box left empty
    return page(
        "confirm.html",
        400 if asked else 200,
        nav=nav_of(back),
        tab=tab_of(back),
        title=f"Delete {what}?",
        consequence=consequence,
        action=local_path(router.current_event.path),
        back=back,
        errors={UNDERSTOOD: say("admin.understand")} if asked else {},
    )
