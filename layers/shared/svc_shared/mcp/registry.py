"""Tools: each one a pydantic input model, a description a model can act on, annotations, and a function
(whose docstring is the description)."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from svc_shared.domain.projects import Project
from svc_shared.domain.tool_tasks import Progress, Task

# The scopes that allow a tool call, any one of them sufficing. Today the one scope allows every tool; a
# read-only scope is added by naming it in READ_SCOPES (and in the metadata's scopes_supported), no tool changes.
READ_SCOPES: tuple[str, ...] = ("mcp:all",)
WRITE_SCOPES: tuple[str, ...] = ("mcp:all",)


class ToolInput(BaseModel):
    """Base of every tool's arguments: unknown arguments are errors, so typos are reported, not ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class NoArguments(ToolInput):
    pass


HANDSHAKE_TASKS, EXTENSION_TASKS = "handshake", "extension"


@dataclass(frozen=True)
class ToolContext:
    """Who is calling: the user behind the access token, whether their client renders MCP Apps views
    (it declared the `io.modelcontextprotocol/ui` extension; svc_shared.mcp.apps), and which tasks it speaks
    (svc_shared.mcp.tasks): HANDSHAKE_TASKS (2025-11-25's capability), EXTENSION_TASKS (2026-07-28's
    `io.modelcontextprotocol/tasks`), or None."""

    user_id: str
    client_id: str
    ui: bool = False
    tasks: str | None = None


Follow = Callable[[ToolContext, Task, Project | None], Progress]


def _same(args: Any) -> Any:
    return args


def _nothing(value: dict[str, Any]) -> str | None:
    return None


def _no_stop(ctx: ToolContext, task: Task, project: Project | None) -> None:
    return None


@dataclass(frozen=True)
class TaskSupport:
    """How a tool runs as an MCP task: the arguments it runs with then (a builder message does not wait),
    what in its first answer the task follows besides the project, how to read where that work is, and how to
    stop it when the task is cancelled (work that cannot be stopped runs on; the task still says cancelled)."""

    follow: Follow
    arguments: Callable[[Any], Any] = _same
    ref: Callable[[dict[str, Any]], str | None] = _nothing
    stop: Callable[[ToolContext, Task, Project | None], None] = _no_stop


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
    # MCP Apps: the ui:// view that renders this tool's result, and who may call the tool ("model", "app").
    # An app-only tool exists only for clients that render views; the host hides it from the model.
    ui_resource: str | None = None
    visibility: tuple[str, ...] = ("model", "app")
    task: TaskSupport | None = None  # the tool may run as an MCP task

    @property
    def app_only(self) -> bool:
        return "model" not in self.visibility

    @property
    def accepted_scopes(self) -> tuple[str, ...]:
        return READ_SCOPES if self.read_only else WRITE_SCOPES

    def allowed_by(self, scope: str) -> bool:
        granted = scope.split()
        return any(s in granted for s in self.accepted_scopes)

    def result(self, value: Any) -> dict[str, Any]:
        """The CallToolResult of this tool's value (as text, and as structuredContent when its shape is
        declared)."""
        text = json.dumps(value, separators=(",", ":"))
        structured = {"structuredContent": value} if self.output is not None else {}
        return {"content": [{"type": "text", "text": text}], "isError": False, **structured}

    def definition(self, ui: bool = False, tasks: bool = False) -> dict[str, Any]:
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
        if ui and (self.ui_resource is not None or self.app_only):
            meta: dict[str, Any] = {"visibility": list(self.visibility)}
            if self.ui_resource is not None:
                meta["resourceUri"] = self.ui_resource
            definition["_meta"] = {"ui": meta}
        if tasks and self.task is not None:
            definition["execution"] = {"taskSupport": "optional"}
        return definition


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    _listings: dict[str, str] = field(default_factory=dict)

    def tool(
        self,
        title: str,
        description: str | None = None,
        *,
        output: type[BaseModel] | None = None,
        ui_resource: str | None = None,
        visibility: tuple[str, ...] = ("model", "app"),
        task: TaskSupport | None = None,
        **hints: bool,
    ) -> Callable[[Callable[[ToolContext, Any], Any]], Callable[[ToolContext, Any], Any]]:
        """Register the decorated function as a tool, named as the function is, described by its docstring
        (or by `description`, when the words take a figure from the code), whose arguments are the model its
        second parameter is annotated with."""

        def register(run: Callable[[ToolContext, Any], Any]) -> Callable[[ToolContext, Any], Any]:
            name, input_model = run.__name__, _arguments_model(run)
            if name in self.tools:
                raise ValueError(f"tool {name} registered twice")
            self.tools[name] = Tool(
                name,
                title,
                description or _docstring(run),
                input_model,
                run,
                output=output,
                ui_resource=ui_resource,
                visibility=visibility,
                task=task,
                **hints,
            )
            self._listings.clear()
            return run

        return register

    def arrange(self, names: Sequence[str]) -> None:
        """Put the tools in the order tools/list shows them; `names` must name every registered tool once."""
        missing, unknown = set(self.tools) - set(names), set(names) - set(self.tools)
        if missing or unknown or len(names) != len(self.tools):
            raise ValueError(
                f"tool order: missing {sorted(missing)}, unknown {sorted(unknown)}, or a name given twice"
            )
        self.tools = {name: self.tools[name] for name in names}
        self._listings.clear()

    def visible(self, name: str, ui: bool) -> Tool | None:
        """The tool of that name as this client sees it: app-only tools exist only for clients that render
        views."""
        tool = self.tools.get(name)
        return None if tool is None or (tool.app_only and not ui) else tool

    def listing(self, extra: dict[str, Any] | None = None, ui: bool = False, tasks: bool = False) -> str:
        """The tools/list result as JSON text (with `extra` members, such as caching hints), built and encoded
        once per container (the JSON schemas never change at run time): every tools/list answers these bytes.
        A client that renders MCP Apps views (`ui`) also gets each tool's `_meta.ui` and the app-only tools;
        any other client gets the plain tools. A client of 2025-11-25's tasks (`tasks`) also gets the
        `execution.taskSupport` of the tools that may run as tasks."""
        extra = extra or {}
        cache_key = json.dumps([extra, ui, tasks], sort_keys=True)
        text = self._listings.get(cache_key)
        if text is None:
            tools = [tool.definition(ui, tasks) for tool in self.tools.values() if ui or not tool.app_only]
            text = self._listings[cache_key] = json.dumps({"tools": tools, **extra}, separators=(",", ":"))
        return text


def _arguments_model(run: Callable[..., Any]) -> type[ToolInput]:
    """The model a tool function's arguments parameter (its second) is annotated with."""
    second = run.__code__.co_varnames[1]
    model = typing.get_type_hints(run)[second]
    if not (isinstance(model, type) and issubclass(model, ToolInput)):
        raise TypeError(
            f"tool {run.__name__}: its arguments parameter must be annotated with a ToolInput model"
        )
    return model


def _docstring(run: Callable[..., Any]) -> str:
    """A tool function's docstring as its description: one line, the words as written."""
    if not run.__doc__:
        raise TypeError(f"tool {run.__name__}: its docstring is its description, and it has none")
    return " ".join(run.__doc__.split())
