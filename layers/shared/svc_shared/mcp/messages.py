"""The JSON-RPC 2.0 messages that reach /mcp, as pydantic models read at the edge: the envelope of one message,
and the parameters of a tool call. A message that cannot be served becomes a
`Refused` holding the JSON-RPC error reply that names what is wrong (or nothing to answer, for a reply to a
request this server never sends)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, ValidationError

from svc_shared.core.catalogue import say

INVALID_REQUEST, INVALID_PARAMS = -32600, -32602
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

RequestId = StrictInt | StrictStr | StrictFloat


def error(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": body}


class Message(BaseModel):
    """A request or notification (JSON-RPC 2.0 §4). Unknown members are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    jsonrpc: Literal["2.0"]
    id: RequestId | None = None
    method: StrictStr
    params: dict[str, Any] | None = None

    @property
    def notification(self) -> bool:
        return "id" not in self.model_fields_set

    @property
    def arguments(self) -> dict[str, Any]:
        return self.params or {}


@dataclass(frozen=True)
class Refused:
    """A message that cannot be served: the reply to send (None: nothing to answer) and whether it was a
    notification."""

    reply: dict[str, Any] | None
    notification: bool = False
    id: Any = None


def read(raw: Any) -> Message | Refused:
    """One decoded JSON value as a message, or the refusal naming its first wrong member."""
    if not isinstance(raw, dict):
        return Refused(error(None, INVALID_REQUEST, say("mcp.not_json_rpc")))
    try:
        return Message.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_context=False, include_input=False)[0]
        member = str(first["loc"][0]) if first["loc"] else ""
    raw_id = raw.get("id")
    valid_id = raw_id is None or (isinstance(raw_id, str | int | float) and not isinstance(raw_id, bool))
    notification = "id" not in raw
    if member in ("jsonrpc", "id") or not valid_id:
        return Refused(error(None, INVALID_REQUEST, say("mcp.not_json_rpc")), notification)
    if member == "method":
        if "result" in raw or "error" in raw:
            return Refused(None, notification, raw_id)  # a reply to a server request we never send
        return Refused(error(raw_id, INVALID_REQUEST, say("mcp.method_not_string")), notification, raw_id)
    reply = error(raw_id, INVALID_PARAMS, say("mcp.params_not_object"))
    return Refused(None if notification else reply, notification, raw_id)


class CallParams(BaseModel):
    """`tools/call` parameters: the tool's name and its arguments (checked by the tool's own input model)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: StrictStr
    arguments: dict[str, Any] | None = None
