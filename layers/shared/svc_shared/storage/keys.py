"""Every partition and sort key of the platform table (and the tokens table's state marker), built in one place.

The table is single-table design: an item's kind is the prefix of its `pk` (`USER#<id>`, `PROJECT#<id>`, ...)
and its `sk` says which item of that partition it is. No other module spells a key prefix
(tests/unit/test_keys.py checks it), so the layout of the table can be read here whole.
"""

from __future__ import annotations

from collections.abc import Callable

# -- fixed sort keys -------------------------------------------------------------------------------------
PROFILE = "PROFILE"  # USER#<id>: the account
CREDITS = "CREDITS"  # USER#<id>: the credit balance
EMAIL = "EMAIL"  # EMAIL#<address>: the address's owner (one account per address)
META = "META"  # WS#<id> and PROJECT#<id>: the workspace or project itself
SESSION = "SESSION"
BACKOFF = "BACKOFF"  # RATE#<scope>#<digest>: failures so far and the time of the last (sign-in backoff)
MESSAGE = "MESSAGE"
CREDITED = "CREDITED"  # CHECKOUT#<id>: a paid checkout session already credited
UPGRADED = "UPGRADED"  # CHECKOUT#<id>: a paid plan checkout session already applied
CLIENT = "CLIENT"
CODE = "CODE"
CONSENT = "CONSENT"  # OAUTH_CONSENT#<id>: a consent form already answered (each is single use)
ACCESS = "AT"
REFRESH = "RT"
FAMILY = "FAMILY"
MCP_GATE = "MCP"  # USER#<id>: current access token, client and last use of each grant; the /mcp rate log
HANDOFF_KEYS = "HANDOFF_KEYS"  # the partition of the backoffice hand-off signing keys (one item)
KEYRING = "KEYRING"  # HANDOFF_KEYS: every signing key, the current one's kid and a version for rotation

# -- prefixes used in range queries ----------------------------------------------------------------------
MEMBER_PREFIX = "MEMBER#"
SLOT_PREFIX = "SLOT#"
PROJECT_PREFIX = "PROJECT#"
TASK_PREFIX = "TASK#"
CREDIT_LOG_PREFIX = "CREDITLOG#"


def _kind(prefix: str) -> Callable[[str], str]:
    """The key of one kind of item: its prefix, then the id it is given (`user("u1")` is "USER#u1")."""
    return lambda value: f"{prefix}{value}"


# -- accounts and workspaces -----------------------------------------------------------------------------
user = _kind("USER#")
email = _kind("EMAIL#")
workspace = _kind("WS#")
# a membership's sort key: `MEMBER#<workspace>` under the user, `MEMBER#<user>` in the workspace index
member = _kind(MEMBER_PREFIX)
session = _kind("SESSION#")
checkout = _kind("CHECKOUT#")


def credit_log(at: int, entry_id: str) -> str:
    """Sort key of one line of a user's credit history (USER#<id>): a top-up or a spend, ordered by time."""
    return f"{CREDIT_LOG_PREFIX}{at:012d}#{entry_id}"


# -- projects --------------------------------------------------------------------------------------------
project = _kind(PROJECT_PREFIX)
owner = _kind("OWNER#")  # gsi1 partition of a user's projects


def owned_project(created_at: int, project_id: str) -> str:
    """gsi1 sort key of a project under its owner: newest first by creation time."""
    return f"{PROJECT_PREFIX}{created_at:012d}#{project_id}"


# -- workbench -------------------------------------------------------------------------------------------
deploy_slots = _kind("DEPLOY_SLOT#")
message = _kind("MESSAGE#")


def slot(number: int) -> str:
    return f"{SLOT_PREFIX}{number}"


# -- MCP tasks ---------------------------------------------------------------------------------------------
task = _kind(TASK_PREFIX)  # USER#<id>: a tool call run as an MCP task (svc_shared.domain.tool_tasks)

# -- analytics -------------------------------------------------------------------------------------------
stats = _kind("STATS#")
day = _kind("D#")
live = _kind("LIVE#")
live_minute = _kind("M#")  # the item holding the set of sessions seen in one minute (`YYYYMMDDHHMM`)


def day_of(sort_key: str) -> str:
    return sort_key.removeprefix("D#")


def live_minutes(first: str, last: str) -> tuple[str, str]:
    """Sort-key range of the minute items from minute `first` to minute `last`, both included."""
    return live_minute(first), live_minute(last)


def minute_of(sort_key: str) -> str:
    return sort_key.removeprefix("M#")


FOLD = "FOLD"  # ALOG#<group>: how far the group's log is folded into the day items, and who is folding it


def analytics_log(group: int) -> str:
    """The append-only log of a group of shops (small shops' increments, one item per group and batch)."""
    return f"ALOG#{group:03d}"


def log_entry(at_ms: int, digest: str) -> str:
    return f"L#{at_ms:013d}#{digest}"


def log_bound(at_ms: int) -> str:
    """Sorts before every log entry of `at_ms` and after every earlier one."""
    return f"L#{at_ms:013d}"


LOG_END = "L#~"  # sorts after every log entry


def log_time(sort_key: str) -> int:
    """The time (ms) of a log entry or bound."""
    return int(sort_key.split("#")[1])


# -- rate limits -----------------------------------------------------------------------------------------
def rate(scope: str, key_digest: str) -> str:
    return f"RATE#{scope}#{key_digest}"


def window(start: int) -> str:
    return f"W#{start}"


# -- OAuth -----------------------------------------------------------------------------------------------
oauth_client = _kind("OAUTH_CLIENT#")
oauth_code = _kind("OAUTH_CODE#")
oauth_consent = _kind("OAUTH_CONSENT#")
oauth_access = _kind("OAUTH_AT#")
oauth_refresh = _kind("OAUTH_RT#")
oauth_family = _kind("OAUTH_FAMILY#")

# -- attributes of a user's MCP gate item (USER#<id> / MCP_GATE), one set per grant ---------------------------
GATE_TOKEN_PREFIX = "TOKEN#"  # noqa: S105 - an attribute name, not a secret


def gate_attributes(grant_id: str) -> dict[str, str]:
    """The grant's attribute names: its current access token id and last-use time (what a request reads and
    writes), and its client and authorization time, which gate items written before the token family item
    carried them may still hold."""
    return {
        "token": f"{GATE_TOKEN_PREFIX}{grant_id}",
        "client": f"CLIENT#{grant_id}",
        "authorized": f"AUTHORIZED#{grant_id}",
        "used": f"USED#{grant_id}",
    }


# -- tokens table (pk user_id, sk provider) --------------------------------------------------------------
connection_state = _kind("STATE#")  # the `provider` sort key that marks a connection state as spent


# ---- the audit of state-changing tool calls: USER#<id> / CALL#<time>#<id>, newest last in sort order
CALL_PREFIX = "CALL#"


def tool_call(at_ms: int, call_id: str) -> str:
    return f"{CALL_PREFIX}{at_ms:015d}#{call_id}"


# -- the platform's own settings learnt at run time: CONFIG / <name> --------------------------------------------
CONFIG = "CONFIG"
PUBLIC_BASE_URL = (
    "PUBLIC_BASE_URL"  # the API's base URL as API Gateway names it (stacks without PublicBaseUrl)
)
