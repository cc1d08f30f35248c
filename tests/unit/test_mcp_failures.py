"""What an MCP client sees when a tool refuses (svc_shared.mcp.failures): a result with isError true, the
error's message as its text, and its code in `_meta` by the one table, through the dispatcher as a client
calls it."""

from __future__ import annotations

import pytest
from mcp.types import CallToolResult, TextContent

from svc_shared.core import errors
from svc_shared.mcp import failures
from svc_shared.mcp.messages import read
from svc_shared.mcp.protocol import Dispatcher
from svc_shared.mcp.registry import Registry, ToolContext, ToolInput


class Arguments(ToolInput):
    what: str


def _call(exc: errors.DomainError) -> CallToolResult:
    registry = Registry()

    @registry.tool("Fail", "Raises what the test gives it.", read_only=True)
    def fail(context: ToolContext, args: Arguments) -> dict[str, str]:
        raise exc

    params = {"name": "fail", "arguments": {"what": "x"}}
    message = read({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    reply = Dispatcher(registry).handle(message, ToolContext(user_id="u1", client_id="c1"))
    assert reply is not None
    return CallToolResult.model_validate(reply["result"])


@pytest.mark.parametrize(
    ("exc", "meta"),
    [
        (errors.NotFound("project not found"), {"code": "not_found", "retryable": False}),
        (
            errors.InvalidInput("path must be relative", code="invalid_path", field="path"),
            {"code": "invalid_path", "retryable": False, "field": "path"},
        ),
        (errors.PaymentRequired("needs a paid plan"), {"code": "UPGRADE_REQUIRED", "retryable": False}),
        (
            errors.RateLimited("slow down", retry_after=7),
            {"code": "rate_limited", "retryable": True, "retryAfter": 7},
        ),
        (errors.UpstreamError("GitHub is down"), {"code": "upstream_error", "retryable": True}),
    ],
)
def test_a_refusal_is_an_error_result_with_its_text_and_its_code(exc: errors.DomainError, meta: dict) -> None:
    result = _call(exc)
    assert result.is_error is True
    assert result.content == [TextContent(type="text", text=exc.message)]
    assert result.meta == {failures.META_ERROR: meta}
    assert result.structured_content is None  # an output schema never sees an error's shape


def test_a_subclass_takes_its_parents_row() -> None:
    class Gone(errors.UpstreamError):
        code = "provider_gone"

    assert _call(Gone("the provider went away")).meta == {
        failures.META_ERROR: {"code": "provider_gone", "retryable": True}
    }


def test_every_error_class_of_core_has_a_row() -> None:
    declared = {
        cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.DomainError)
    }
    assert declared == set(failures.RETRYABLE_BY_ERROR)


def test_a_tool_is_named_as_its_function_and_takes_the_model_its_arguments_are_annotated_with():
    registry = Registry()

    @registry.tool("Echo", "Answers what it is given.")
    def echo(context: ToolContext, args: Arguments) -> dict[str, str]:
        return {"what": args.what}

    assert (registry.tools["echo"].name, registry.tools["echo"].input_model) == ("echo", Arguments)
    with pytest.raises(TypeError, match="tool loose: its arguments parameter must be annotated"):

        @registry.tool("Loose", "Takes a bare dict.")
        def loose(context: ToolContext, args: dict[str, str]) -> dict[str, str]:
            return args
