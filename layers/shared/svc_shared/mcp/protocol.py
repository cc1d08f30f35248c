"""JSON-RPC 2.0 over one HTTP POST: parse, validate, dispatch, and shape the replies.

Two eras of MCP share the endpoint, chosen by the `MCP-Protocol-Version` header:
- the handshake era (2025-03-26, 2025-06-18, 2025-11-25; no header means 2025-03-26): `initialize` negotiates
  the version, batches are accepted (2025-03-26), results are plain;
- the stateless era (2026-07-28): no `initialize`; every request carries its version and the client's
  capabilities in `params._meta`, which must agree with the `MCP-Protocol-Version`, `Mcp-Method` and
  `Mcp-Name` headers; `server/discover` describes the server; results say `resultType`, list results carry
  caching hints; errors map to HTTP statuses (400, and 404 for an unknown method).
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from svc_shared.core import jsonlimit
from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError
from svc_shared.core.logs import get_logger
from svc_shared.mcp import apps, failures, session, tasks
from svc_shared.mcp.messages import (
    META_CAPABILITIES,
    META_VERSION,
    CallParams,
    Message,
    Refused,
    error,
    read,
)
from svc_shared.mcp.registry import EXTENSION_TASKS, HANDSHAKE_TASKS, Registry, ToolContext

logger = get_logger()

PROTOCOL_VERSION = "2025-03-26"  # what a client that sends no version header speaks
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, *STATELESS_VERSIONS)
SERVER_INFO = {"name": "svc-mcp", "version": "0.2.0"}
MAX_BATCH = 100

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
UNAUTHORIZED = -32001
HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_VERSION = -32020, -32021, -32022
# The HTTP status of a stateless-era error reply, by its code (anything else is 200).
STATUS_BY_CODE = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# Methods whose name-bearing parameter the client mirrors in the Mcp-Name header.
NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/cancel": "taskId",
    "tasks/update": "taskId",
}
# Caching hints (2026-07-28): the tool list and the server description change only with a deployment and are
# the same for every user, so shared caches may keep them for an hour.
LIST_TTL_MS = 3_600_000
CACHE_SCOPE = "public"
INSTRUCTIONS = (
    "Tools of the svc AI shop builder: your account, workspaces, projects, the builder, "
    "repository files, assets, analytics and credits."
)


def result(id_: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": value}


class Encoded:
    """A result value that is already JSON text (the tool list), spliced into the reply by `dumps`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _dumps_one(reply: dict[str, Any]) -> str:
    value = reply.get("result")
    if isinstance(value, Encoded):
        return f'{{"jsonrpc":"2.0","id":{json.dumps(reply["id"])},"result":{value.text}}}'
    return json.dumps(reply, separators=(",", ":"))


def dumps(body: dict[str, Any] | list[dict[str, Any]]) -> str:
    """The JSON text of one reply or of a batch of replies."""
    if isinstance(body, list):
        return "[" + ",".join(_dumps_one(reply) for reply in body) + "]"
    return _dumps_one(body)


@dataclass(frozen=True)
class Parsed:
    """A decoded body: its messages (each read, or refused with its reply), whether it was a batch, or a ready
    error reply for the whole body."""

    messages: list[Message | Refused]
    batch: bool
    failure: dict[str, Any] | None = None


def parse(body: str | None) -> Parsed:
    try:
        payload = jsonlimit.loads(body or "")
    except jsonlimit.TooDeep:
        return Parsed(
            [], False, error(None, PARSE_ERROR, say("mcp.parse_error", problem=jsonlimit.too_deep()))
        )
    except ValueError:
        return Parsed([], False, error(None, PARSE_ERROR, say("mcp.not_json")))
    if isinstance(payload, list):
        if not payload:
            return Parsed([], True, error(None, INVALID_REQUEST, say("mcp.empty_batch")))
        if len(payload) > MAX_BATCH:
            return Parsed(
                [],
                True,
                error(None, INVALID_REQUEST, say("mcp.batch_too_large", max_batch=MAX_BATCH)),
            )
        return Parsed([read(m) for m in payload], True)
    return Parsed([read(payload)], False)


# Told of every state-changing tool call once it ran: (context, tool name, arguments, its result or None,
# its error message or None).
CallRecorder = Callable[[ToolContext, str, Any, Any, "str | None"], None]


def decode_header_value(value: str | None) -> str | None:
    """A routing header's value: surrounding whitespace dropped, `=?base64?...?=` decoded (non-ASCII names)."""
    if value is None:
        return None
    value = value.strip()
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    return value


def unsupported_version(id_: Any, requested: str) -> dict[str, Any]:
    supported = ", ".join(SUPPORTED_VERSIONS)
    return error(
        id_,
        UNSUPPORTED_VERSION,
        say("mcp.unsupported_version", requested=repr(requested[:64]), supported=supported),
        {"supported": list(SUPPORTED_VERSIONS), "requested": requested},
    )


def check_stateless(message: Message | Refused, headers: dict[str, str]) -> dict[str, Any] | None:
    """The error reply for a 2026-07-28 request whose envelope or routing headers are wrong, else None.

    Checked in the spec's order: `params._meta` carries the version and the client's capabilities; the
    `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers agree with the body; the version is one this
    server speaks. `headers` are keyed by lower-case name."""
    if isinstance(message, Refused):
        return message.reply or error(None, INVALID_REQUEST, say("mcp.not_json_rpc"))
    id_, method, params = message.id, message.method, message.arguments
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return error(
            id_,
            INVALID_PARAMS,
            say("mcp.meta_not_object", version=META_VERSION, capabilities=META_CAPABILITIES),
        )
    missing = [key for key in (META_VERSION, META_CAPABILITIES) if key not in meta]
    if missing:
        return error(id_, INVALID_PARAMS, say("mcp.meta_missing", missing=", ".join(missing)))
    version = meta[META_VERSION]
    if decode_header_value(headers.get("mcp-protocol-version")) != version:
        return error(
            id_,
            HEADER_MISMATCH,
            say("mcp.version_header_mismatch"),
        )
    if decode_header_value(headers.get("mcp-method")) != method:
        return error(id_, HEADER_MISMATCH, say("mcp.method_header_mismatch"))
    name_key = NAME_PARAM.get(method)
    named = params.get(name_key) if name_key is not None else None
    if named is not None and decode_header_value(headers.get("mcp-name")) != named:
        return error(id_, HEADER_MISMATCH, say("mcp.name_header_mismatch", param=name_key))
    if not isinstance(version, str):
        return error(id_, INVALID_PARAMS, say("mcp.version_not_string"))
    if version not in STATELESS_VERSIONS:
        return unsupported_version(id_, version)
    return None


def http_status(reply: dict[str, Any]) -> int:
    """The HTTP status of a stateless-era reply."""
    code = (reply.get("error") or {}).get("code")
    return STATUS_BY_CODE.get(code, 200) if code is not None else 200


Handler = Callable[[dict[str, Any], Any, ToolContext], dict[str, Any]]


def declared_in(params: dict[str, Any], context: ToolContext) -> ToolContext:
    """The context of a stateless request: MCP Apps and tasks as the request itself declares them."""
    dialect = EXTENSION_TASKS if tasks.request_offers_tasks(params) else context.tasks
    return dataclasses.replace(context, ui=context.ui or apps.request_offers_ui(params), tasks=dialect)


class Dispatcher:
    def __init__(self, registry: Registry, on_change: CallRecorder | None = None) -> None:
        self._registry = registry
        self._on_change = on_change
        # The JSON-RPC methods this server answers, per era: name -> handler(params, id, context).
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._list_tools,
            "tools/call": self._call,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_resource_templates,
            "resources/read": self._read_resource,
        }
        self._methods |= tasks.Tasks(registry).handlers(stateless=False)
        self._stateless_methods: dict[str, Handler] = {
            "server/discover": self._discover,
            "tools/list": self._list_tools_cacheable,
            "tools/call": self._call,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_resource_templates,
            "resources/read": self._read_resource,
        }
        self._stateless_methods |= tasks.Tasks(registry).handlers(stateless=True)

    def handle(
        self, message: Message | Refused, context: ToolContext, *, stateless: bool = False
    ) -> dict[str, Any] | None:
        """The reply to one message, or None for a notification."""
        if isinstance(message, Refused):
            return message.reply
        method = message.method
        methods = self._stateless_methods if stateless else self._methods
        if stateless:  # 2026-07-28: a request declares what its client supports
            context = declared_in(message.arguments, context)
        try:
            reply = self._method(methods, method, message.arguments, message.id, context)
        except Exception:
            logger.exception("mcp method failed", extra={"method": method})
            reply = error(message.id, INTERNAL_ERROR, say("mcp.internal_error"))
        if message.notification:
            return None
        if stateless and isinstance(reply.get("result"), dict):
            reply["result"].setdefault("resultType", "complete")
            if method.startswith("resources/"):  # the views change only with a deployment, for everyone
                reply["result"].setdefault("ttlMs", LIST_TTL_MS)
                reply["result"].setdefault("cacheScope", CACHE_SCOPE)
        return reply

    def _method(
        self, methods: dict[str, Handler], method: str, params: dict[str, Any], id_: Any, context: ToolContext
    ) -> dict[str, Any]:
        """Dispatch by the era's method table; notifications are acknowledged, anything else is not found."""
        handler = methods.get(method)
        if handler is not None:
            return handler(params, id_, context)
        if method.startswith("notifications/"):
            return result(id_, {})
        return error(id_, METHOD_NOT_FOUND, say("mcp.method_not_found"))

    @staticmethod
    def capabilities(ui: bool, dialect: str | None = None) -> dict[str, Any]:
        """The server's capabilities: tools and resources (the views), and the MCP Apps extension and tasks
        for a client that declared them."""
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}, "resources": {"listChanged": False}}
        if ui:
            capabilities["extensions"] = apps.server_extensions()
        return tasks.server_capabilities(capabilities, dialect)

    def _initialize(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in HANDSHAKE_VERSIONS else PROTOCOL_VERSION
        declared = session.of_initialize(params)
        return result(
            id_,
            {
                "protocolVersion": version,
                "capabilities": self.capabilities(declared.ui, HANDSHAKE_TASKS if declared.tasks else None),
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            },
        )

    def _discover(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        return result(
            id_,
            {
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": self.capabilities(context.ui, context.tasks),
                "instructions": INSTRUCTIONS,
                "_meta": {META_SERVER_INFO: SERVER_INFO},
                "resultType": "complete",
                "ttlMs": LIST_TTL_MS,
                "cacheScope": CACHE_SCOPE,
            },
        )

    def _ping(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        return result(id_, {})

    def _list_tools(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        # A session of the handshake era declares 2025-11-25's tasks (HANDSHAKE_TASKS) or none.
        return result(id_, Encoded(self._registry.listing(ui=context.ui, tasks=bool(context.tasks))))

    def _list_tools_cacheable(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        hints = {"resultType": "complete", "ttlMs": LIST_TTL_MS, "cacheScope": CACHE_SCOPE}
        return result(id_, Encoded(self._registry.listing(hints, ui=context.ui)))

    def _list_resources(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        return result(id_, {"resources": apps.listing()})

    def _list_resource_templates(
        self, params: dict[str, Any], id_: Any, context: ToolContext
    ) -> dict[str, Any]:
        return result(id_, {"resourceTemplates": []})

    def _read_resource(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            return error(id_, INVALID_PARAMS, say("mcp.uri_invalid"))
        found = apps.read(uri)
        if found is None:
            return error(id_, INVALID_PARAMS, say("mcp.resource_not_found", uri=uri[:200]), {"uri": uri})
        return result(id_, found)

    def _call(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        try:
            call = CallParams.model_validate(params)
        except ValidationError as exc:
            if exc.errors()[0]["loc"][0] == "name":
                return error(id_, INVALID_PARAMS, say("mcp.name_not_string"))
            return result(id_, failures.tool_error(say("mcp.arguments_not_object")))
        tool = self._registry.visible(call.name, context.ui)
        if tool is None:
            return error(id_, METHOD_NOT_FOUND, say("mcp.unknown_tool", name=call.name))
        arguments = call.arguments or {}
        try:
            args = tool.input_model.model_validate(arguments)
        except ValidationError as exc:
            return result(id_, failures.tool_error(describe_validation(exc)))
        if tool.task is not None or "task" in params:  # a task, or a call that asks to be one
            not_task = tasks.refused(tool, params, context)
            if not_task is not None:
                return error(id_, METHOD_NOT_FOUND, not_task)
            if tasks.wanted(tool, params, context):
                return result(id_, tasks.start(tool, context, args, params, self._on_change))
        try:
            value = tool.run(context, args)
        except DomainError as exc:
            if not tool.read_only and self._on_change is not None:
                self._on_change(context, tool.name, args, None, exc.message)
            return result(id_, failures.answer(exc))
        if not tool.read_only and self._on_change is not None:
            self._on_change(context, tool.name, args, value, None)
        return result(id_, tool.result(value))


def describe_validation(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return say("mcp.invalid_arguments", problems="; ".join(problems))
