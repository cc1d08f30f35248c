"""JSON-RPC 2.0 over one HTTP POST: parse, validate, dispatch, and shape the replies (MCP 2025-03-26)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from svc_shared.errors import DomainError
from svc_shared.logs import get_logger
from svc_shared.mcp.registry import Registry, ToolContext

logger = get_logger()

PROTOCOL_VERSION = "2025-03-26"
SUPPORTED_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
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


def error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


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
    """A decoded body: its messages, whether it was a batch, or a ready error reply."""

    messages: list[Any]
    batch: bool
    failure: dict[str, Any] | None = None


def parse(body: str | None) -> Parsed:
    try:
        payload = json.loads(body or "")
    except ValueError:
        return Parsed([], False, error(None, PARSE_ERROR, "Parse error: the body is not valid JSON."))
    if isinstance(payload, list):
        if not payload:
            return Parsed([], True, error(None, INVALID_REQUEST, "Invalid Request: empty batch."))
        if len(payload) > MAX_BATCH:
            return Parsed(
                [],
                True,
                error(None, INVALID_REQUEST, f"Invalid Request: a batch holds at most {MAX_BATCH} messages."),
            )
        return Parsed(payload, True)
    return Parsed([payload], False)


def _valid_id(message: dict[str, Any]) -> bool:
    value = message.get("id")
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


# Told of every state-changing tool call once it ran: (context, tool name, arguments, its result or None,
# its error message or None).
CallRecorder = Callable[[ToolContext, str, Any, Any, "str | None"], None]


class Dispatcher:
    def __init__(self, registry: Registry, on_change: CallRecorder | None = None) -> None:
        self._registry = registry
        self._on_change = on_change
        # The JSON-RPC methods this server answers: name -> handler(params, id, context).
        self._methods: dict[str, Callable[[dict[str, Any], Any, ToolContext], dict[str, Any]]] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._list_tools,
            "tools/call": self._call,
        }

    def handle(self, message: Any, context: ToolContext) -> dict[str, Any] | None:
        """The reply to one message, or None for a notification."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not _valid_id(message):
            return error(None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object.")
        method = message.get("method")
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                return None  # a reply to a server request we never send: nothing to answer
            return error(message.get("id"), INVALID_REQUEST, "Invalid Request: method must be a string.")
        notification = "id" not in message
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            reply = error(message.get("id"), INVALID_PARAMS, "Invalid params: params must be an object.")
            return None if notification else reply
        try:
            reply = self._method(method, params, message.get("id"), context)
        except Exception:
            logger.exception("mcp method failed", extra={"method": method})
            reply = error(message.get("id"), INTERNAL_ERROR, "Internal error.")
        return None if notification else reply

    def _method(self, method: str, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        """Dispatch by the method table; notifications are acknowledged, anything else is not found."""
        handler = self._methods.get(method)
        if handler is not None:
            return handler(params, id_, context)
        if method.startswith("notifications/"):
            return result(id_, {})
        return error(id_, METHOD_NOT_FOUND, "Method not implemented")

    def _initialize(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_VERSIONS else PROTOCOL_VERSION
        return result(
            id_,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
                "instructions": "Tools of the svc AI shop builder: your account, workspaces, projects, the builder, "
                "repository files, assets, analytics and credits.",
            },
        )

    def _ping(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        return result(id_, {})

    def _list_tools(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        return result(id_, Encoded(self._registry.listing()))

    def _call(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            return error(id_, INVALID_PARAMS, "Invalid params: name must be a string.")
        tool = self._registry.tools.get(name)
        if tool is None:
            return error(id_, METHOD_NOT_FOUND, f"Unknown tool: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return result(id_, tool_error("Invalid arguments: arguments must be an object."))
        try:
            args = tool.input_model.model_validate(arguments)
        except ValidationError as exc:
            return result(id_, tool_error(describe_validation(exc)))
        try:
            value = tool.run(context, args)
        except DomainError as exc:
            if not tool.read_only and self._on_change is not None:
                self._on_change(context, tool.name, args, None, exc.message)
            return result(id_, tool_error(exc.message))
        if not tool.read_only and self._on_change is not None:
            self._on_change(context, tool.name, args, value, None)
        return result(
            id_,
            {
                "content": [{"type": "text", "text": json.dumps(value, separators=(",", ":"))}],
                "isError": False,
            },
        )


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def describe_validation(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return "Invalid arguments: " + "; ".join(problems)
