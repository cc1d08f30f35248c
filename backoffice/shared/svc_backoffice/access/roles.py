"""The staff roles, lowest first: a route's minimum role admits every role of its rank or above."""

from __future__ import annotations

ROLE_RANK = {"viewer": 1, "editor": 2, "admin": 3, "owner": 4}
