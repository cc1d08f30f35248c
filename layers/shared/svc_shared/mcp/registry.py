"""Tools: each one a pydantic input model, a description a model can act on, annotations, and a function."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict


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

    def definition(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                "openWorldHint": self.open_world,
            },
        }


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    _listing: str | None = None

    def tool(
        self,
        name: str,
        title: str,
        description: str,
        input_model: type[ToolInput] = NoArguments,
        **hints: bool,
    ) -> Callable[[Callable[[ToolContext, Any], Any]], Callable[[ToolContext, Any], Any]]:
        def register(run: Callable[[ToolContext, Any], Any]) -> Callable[[ToolContext, Any], Any]:
            if name in self.tools:
                raise ValueError(f"tool {name} registered twice")
            self.tools[name] = Tool(name, title, description, input_model, run, **hints)
            self._listing = None
            return run

        return register

    def listing(self) -> str:
        """The tools/list result as JSON text, built and encoded once per container (the JSON schemas never
        change at run time): every tools/list answers these bytes."""
        if self._listing is None:
            tools = [tool.definition() for tool in self.tools.values()]
            self._listing = json.dumps({"tools": tools}, separators=(",", ":"))
        return self._listing
