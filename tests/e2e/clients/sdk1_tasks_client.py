"""The official MCP Python SDK 1.x as a client of 2025-11-25's tasks (its experimental tasks API; run by the
interpreter of .venv-sdk1): it declares the `tasks` capability, deploys a project as a task, follows it with
tasks/get until it ends, takes its result with tasks/result, lists its tasks and tries to cancel the ended one.
Prints one JSON line.

Usage: sdk1_tasks_client.py <mcp url> <email> <password>   (deploys the user's first published project)
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings

import httpx
from mcp import ClientSession, types
from mcp.client.experimental.task_handlers import ExperimentalTaskHandlers
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError
from sdk1_auth import signed_in_provider

warnings.simplefilter("ignore", DeprecationWarning)  # the SDK marks its experimental tasks API deprecated


async def _no_tasks_here(context, params):  # this client runs no tasks of its own for the server
    return types.ErrorData(code=types.INVALID_PARAMS, message="no tasks on this client")


async def main(url: str, email: str, password: str) -> dict:
    provider, _ = signed_in_provider(url, email, password, "SDK 1.x tasks end-to-end")
    handlers = ExperimentalTaskHandlers(list_tasks=_no_tasks_here, cancel_task=_no_tasks_here)
    async with (
        streamablehttp_client(url, auth=provider, timeout=30) as (read, write, _),
        ClientSession(read, write, experimental_task_handlers=handlers) as session,
    ):
        init = await session.initialize()
        tools = await session.list_tools()
        projects = json.loads((await session.call_tool("list_projects", {})).content[0].text)["projects"]
        project_id = next(p["id"] for p in projects if p["status"] == "published")
        created = await session.experimental.call_tool_as_task(
            "deploy_project", {"project_id": project_id}, ttl=600_000
        )
        seen: list[str] = [created.task.statusMessage or ""]
        states: list[str] = [created.task.status]
        async for status in session.experimental.poll_task(created.task.taskId):
            if status.statusMessage != seen[-1]:
                seen.append(status.statusMessage or "")
            states.append(status.status)
        result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
        listed = await session.experimental.list_tasks()
        try:
            await session.experimental.cancel_task(created.task.taskId)
            cancel_refused = None
        except McpError as exc:
            cancel_refused = {"code": exc.error.code, "message": exc.error.message}
        try:
            await session.experimental.get_task(f"{project_id}.not-a-task")
            unknown = None
        except McpError as exc:
            unknown = exc.error.code
    return {
        "protocol": init.protocolVersion,
        "server_tasks": init.capabilities.tasks.model_dump(exclude_none=True)
        if init.capabilities.tasks
        else None,
        "task_tools": sorted(
            t.name for t in tools.tools if t.execution is not None and t.execution.taskSupport == "optional"
        ),
        "created": {
            "status": created.task.status,
            "ttl": created.task.ttl,
            "poll": created.task.pollInterval,
        },
        "states": states,
        "seen": seen,
        "result": {"isError": result.isError, "structured": result.structuredContent},
        "related": (result.meta or {}).get("io.modelcontextprotocol/related-task"),
        "listed": [(t.taskId, t.status) for t in listed.tasks],
        "task_id": created.task.taskId,
        "project_id": project_id,
        "cancel_refused": cancel_refused,
        "unknown": unknown,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
    httpx.Client().close()
