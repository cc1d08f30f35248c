"""Tools: each one a pydantic input model, a description a model can act on, annotations, and a function."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

# The scopes that allow a tool call, any one of them sufficing. Today the one scope allows every tool; a
# read-only scope is added by naming it in READ_SCOPES (and in the metadata's scopes_supported), no tool changes.
READ_SCOPES: tuple[str, ...] = ("mcp:all",)
WRITE_SCOPES: tuple[str, ...] = ("mcp:all",)


class ToolInput(BaseModel):
    """Base of every tool's arguments: unknown arguments are errors, so typos are reported, not ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class NoArguments(ToolInput):
    pass


@dataclass(frozen=True)
class ToolContext:
    """Who is calling: the user behind the access token."""

    user_id: str
    client_id: str


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    run: Callable[[ToolContext, Any], Any]
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False
    # The result's shape, when it is fixed: declared as outputSchema, the result sent as structuredContent too.
    output: type[BaseModel] | None = None

    @property
    def accepted_scopes(self) -> tuple[str, ...]:
        return READ_SCOPES if self.read_only else WRITE_SCOPES

    def allowed_by(self, scope: str) -> bool:
        granted = scope.split()
        return any(s in granted for s in self.accepted_scopes)

    def definition(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        definition: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema,
        }
        if self.output is not None:
            output = self.output.model_json_schema()
            output.pop("title", None)
            definition["outputSchema"] = output
        definition["annotations"] = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return definition


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    _listings: dict[str, str] = field(default_factory=dict)

    def tool(
        self,
        name: str,
        title: str,
        description: str,
        input_model: type[ToolInput] = NoArguments,
        *,
        output: type[BaseModel] | None = None,
        **hints: bool,
    ) -> Callable[[Callable[[ToolContext, Any], Any]], Callable[[ToolContext, Any], Any]]:
        def register(run: Callable[[ToolContext, Any], Any]) -> Callable[[ToolContext, Any], Any]:
            if name in self.tools:
                raise ValueError(f"tool {name} registered twice")
            self.tools[name] = Tool(name, title, description, input_model, run, output=output, **hints)
            self._listings.clear()
            return run

        return register

    def listing(self, extra: dict[str, Any] | None = None) -> str:
        """The tools/list result as JSON text (with `extra` members, such as caching hints), built and encoded
        once per container (the JSON schemas never change at run time): every tools/list answers these bytes."""
        extra = extra or {}
        cache_key = json.dumps(extra, sort_keys=True)
        text = self._listings.get(cache_key)
        if text is None:
            tools = [tool.definition() for tool in self.tools.values()]
            text = self._listings[cache_key] = json.dumps({"tools": tools, **extra}, separators=(",", ":"))
        return text
