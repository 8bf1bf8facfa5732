"""`swarm mcp serve`: a stdio MCP server, built on the official SDK's low-level `Server` (so each
tool keeps its own JSON schema), that lets any MCP client lead a team or play one of its members.

The tools are `ServedHost.tools` (mcp_server/host.py): the very definitions `swarm lead` and
teammates use, listed as they are. A call runs in a worker thread (`anyio.to_thread`), so a
WaitForTeam blocking on inotify never blocks the event loop, and other calls go on beside it.
What a call hands over (ReadInbox's messages, a quiet team's notes) is marked read once its
result is built and the call was not cancelled.

The server ends when the client closes stdin or sends SIGINT/SIGTERM (how Claude Code and Codex
end their servers: a normal end, exit 0), or on SIGHUP (128+signal): every wait ends, the exit is
recorded, and teammates are left running (see served.py: the lead
record stays, so they leave by the orphan rule unless a new server adopts them in time).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from swarm import __version__
from swarm.big_import import big_import
from swarm.errors import StoppedBySignal
from swarm.mcp_server.host import ServedHost, ServeOptions

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
# Claude Code ends its stdio servers with SIGINT at the end of a session, Codex with SIGTERM.
CLIENT_ENDS = (signal.SIGINT, signal.SIGTERM)


def _stopped(signum: int, frame: object) -> None:
    raise StoppedBySignal(signum)


def serve(options: ServeOptions) -> None:
    """Serve until the client closes stdin. Bad options fail before the server speaks."""
    for signum in SIGNALS:  # until the event loop's receiver takes them (the SDK loads slowly)
        signal.signal(signum, _stopped)
    host = ServedHost(options)
    try:
        host.start()
        anyio.run(_serve, host)
    except StoppedBySignal as stop:
        _exit(host, stop.signum)
    except BaseExceptionGroup as group:  # the signal came inside the task group, before its receiver
        stops = group.subgroup(StoppedBySignal)
        if stops is None:
            raise
        _exit(host, _first(stops).signum)
    finally:
        host.close("the MCP client closed the connection")


def _first(group: BaseExceptionGroup[StoppedBySignal]) -> StoppedBySignal:
    found = group.exceptions[0]
    return found if isinstance(found, StoppedBySignal) else _first(found)


def _exit(host: ServedHost, signum: int) -> None:
    if signum in CLIENT_ENDS:  # how clients end their servers: a normal end of the session
        host.close(f"the MCP client ended the session with {signal.Signals(signum).name}")
        code = 0
    else:
        host.close(f"ended by signal {signum}")
        code = 128 + signum
    # The SDK reads stdin in a worker thread that only EOF ends: do not wait for it.
    sys.stderr.flush()
    os._exit(code)


async def _serve(host: ServedHost) -> None:
    with big_import():
        from mcp import types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server

    listed = [types.Tool(name=tool.name, description=tool.description,
                         input_schema=tool.input_schema) for tool in host.tools.values()]

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        result = await anyio.to_thread.run_sync(host.call, params.name, args,
                                                abandon_on_cancel=True)
        await anyio.to_thread.run_sync(host.deliver, result)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)],
                                    is_error=result.is_error)

    server: Server[Any] = Server("swarm", version=__version__, instructions=host.instructions(),
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    async with anyio.create_task_group() as group:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(*SIGNALS) as received:
                async for signum in received:
                    _exit(host, signum)

        group.start_soon(on_signal)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()
