"""An agent's MCP servers: started when it starts, stopped when it exits (docs/design/hooks-mcp.md).

The official SDK (`mcp`, imported lazily) is asyncio; the agent is synchronous. One background
thread runs an event loop, and each server lives in one task of it that holds the transport
(`stdio_client` or `streamable_http_client`) and the `ClientSession` open until the manager
closes (anyio scopes must be left by the task that entered them). The agent calls the
synchronous `start()`, `tools()`, `call_tool()` and `close()`.

Stdio servers run under `mcp_guard.py`, which takes the server's process group down when the
agent dies, however it dies (SIGKILL included). A server that fails to start is one warning and
no tools; one that dies mid-call makes that call (and later ones) a tool error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from swarm.big_import import big_import
from swarm.core.store.disk import FILE_MODE, ensure_dir
from swarm.core.trust.child_env import minimal_env
from swarm.core.trust.mcp_config import McpServer
from swarm.runtime.tools.base import OUTPUT_CAP, Tool, ToolContext, ToolResult

GUARD = Path(__file__).with_name("mcp_guard.py")
TOOL_PREFIX = "mcp__"
MAX_TOOL_NAME = 64  # the Messages API's limit on a tool name
DESCRIPTION_CAP = 2_000
STDERR_TAIL = 600
BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str  # the server's own name for it
    qualified: str  # what the model sees: mcp__<server>__<tool>
    description: str
    input_schema: dict[str, Any]


@dataclass
class McpCallResult:
    text: str
    is_error: bool = False


@dataclass
class _Server:
    config: McpServer
    state: str = "starting"  # starting|running|failed|dead|stopped
    error: str | None = None
    tools: list[McpTool] = field(default_factory=list)
    session: Any = None
    stop: asyncio.Event | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    log_path: Path | None = None
    future: Any = None


def qualified_name(server: str, tool: str, taken: set[str]) -> str:
    """`mcp__<server>__<tool>`, made safe for the API (characters, length, uniqueness)."""
    name = f"{TOOL_PREFIX}{server}__{BAD_CHARS.sub('_', tool)}"
    if len(name) > MAX_TOOL_NAME or name in taken:
        digest = hashlib.sha1(f"{server}/{tool}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_TOOL_NAME - 9]}_{digest}"
    return name


def result_text(result: dict[str, Any]) -> McpCallResult:
    """A `CallToolResult` (its wire JSON) as the text of a tool result."""
    parts: list[str] = []
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            parts.append(f"[{kind}: {block.get('mimeType', '?')}, {size} bytes]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            text = resource.get("text")
            kind_of = resource.get("mimeType", "binary")
            parts.append(str(text) if text is not None
                         else f"[resource {resource.get('uri', '?')}: {kind_of}]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.get('uri', '?')} ({block.get('name', '')})]")
        else:
            parts.append(json.dumps(block))
    structured = result.get("structuredContent")
    # Servers should also send structured results serialized as text (and FastMCP wraps a plain
    # value as {"result": ...}): show the structured form only when there is nothing else.
    if structured is not None and not parts:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > OUTPUT_CAP:
        more = len(text) - OUTPUT_CAP
        text = text[:OUTPUT_CAP] + f"\n... [output truncated: {more} more characters]"
    return McpCallResult(text or "(no output)", bool(result.get("isError")))


def _wire(model: Any) -> dict[str, Any]:
    """An SDK model as its JSON on the wire (camelCase): the same in SDK 1.x and 2.x."""
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert isinstance(dumped, dict)
    return dumped


class McpManager:
    """The MCP servers of one agent (or of one `swarm mcp list --check`)."""

    def __init__(self, servers: Mapping[str, McpServer], *, cwd: Path,
                 environ: Mapping[str, str] | None = None,
                 base_env: Mapping[str, str] | None = None,
                 warn: Callable[[str], None] = lambda line: None,
                 log_dir: Path | None = None) -> None:
        self.cwd = cwd
        self.environ = dict(os.environ if environ is None else environ)  # `${VAR}` source
        # A stdio server's environment: a minimal one plus its own `env` (core/trust/child_env.py).
        self.base_env = dict(minimal_env(self.environ, str(cwd)) if base_env is None
                             else base_env)
        self.warn = warn
        self.log_dir = log_dir
        self._servers = {name: _Server(config) for name, config in servers.items()}
        self._by_tool: dict[str, tuple[_Server, McpTool]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._logs: list[TextIO] = []

    def __enter__(self) -> McpManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- life --------------------------------------------------------------------------------
    def start(self, timeout: float) -> None:
        """Start every server at once; wait until each runs, failed, or `timeout` passed."""
        if not self._servers or self._loop is not None:
            return
        # swarm's own import of the SDK (a second or more of CPU, far more on a busy machine)
        # is not a server's start: the timeout counts from here.
        with big_import():
            from mcp import ClientSession  # noqa: F401
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="mcp", daemon=True)
        self._thread.start()
        for server in self._servers.values():
            server.future = asyncio.run_coroutine_threadsafe(self._serve(server), loop)
        deadline = time.monotonic() + timeout
        for server in self._servers.values():
            if not server.ready.wait(max(0.0, deadline - time.monotonic())):
                server.state, server.error = "failed", f"did not start within {timeout:g}s"
                server.future.cancel()
        taken: set[str] = set()
        for server in self._servers.values():
            if server.state == "running":
                self._register(server, taken)
            else:
                server.error = f"{server.error}{self._stderr_tail(server)}"
                self.warn(f"warning: MCP server {server.config.name!r} "
                          f"({server.config.spec.describe()}) failed to start: {server.error}"
                          "; going on without its tools")

    def _register(self, server: _Server, taken: set[str]) -> None:
        tools = []
        for tool in server.tools:
            qualified = qualified_name(server.config.name, tool.name, taken)
            taken.add(qualified)
            tool = McpTool(server.config.name, tool.name, qualified, tool.description,
                           tool.input_schema)
            tools.append(tool)
            self._by_tool[qualified] = (server, tool)
        server.tools = tools

    def close(self, timeout: float = 10.0) -> None:
        """Stop every server (stdio: close its stdin, then the SDK's and the guard's kills)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for server in self._servers.values():
            if server.state == "running" and server.stop is not None:
                loop.call_soon_threadsafe(server.stop.set)
            elif server.future is not None:  # still starting (SIGTERM during start): give up
                server.future.cancel()
        deadline = time.monotonic() + timeout
        for server in self._servers.values():
            with contextlib.suppress(Exception):
                server.future.result(max(0.0, deadline - time.monotonic()))
            if server.state == "running":
                server.state = "stopped"
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(max(0.1, deadline - time.monotonic()))
        if self._thread is None or not self._thread.is_alive():
            loop.close()
        for handle in self._logs:
            with contextlib.suppress(OSError):
                handle.close()

    # -- what the agent uses -----------------------------------------------------------------
    def tools(self) -> list[McpTool]:
        return [tool for _, tool in self._by_tool.values()]

    def status(self) -> list[dict[str, Any]]:
        return [{"name": s.config.name, "transport": s.config.spec.transport,
                 "target": s.config.spec.describe(), "source": s.config.source, "state": s.state,
                 "error": s.error, "tools": [{"name": t.name, "qualified": t.qualified,
                                              "description": t.description} for t in s.tools]}
                for s in self._servers.values()]

    def call_tool(self, qualified: str, arguments: dict[str, Any], timeout: float,
                  abort: threading.Event | None = None) -> McpCallResult:
        """Call a tool by its qualified name; every failure is an error result, never a raise."""
        found = self._by_tool.get(qualified)
        if found is None:
            return McpCallResult(f"unknown MCP tool {qualified!r}", is_error=True)
        server, tool = found
        loop = self._loop
        if server.state != "running" or server.session is None or loop is None:
            return McpCallResult(f"MCP server {server.config.name!r} is not running"
                                 f" ({server.state}{': ' + server.error if server.error else ''})",
                                 is_error=True)
        future = asyncio.run_coroutine_threadsafe(
            asyncio.wait_for(server.session.call_tool(tool.name, arguments), timeout), loop)
        late = time.monotonic() + timeout + 5.0  # wait_for should have ended it by now
        # Poll with wait(), not result(timeout): wait_for's own timeout raises the same
        # TimeoutError class as result()'s poll, and must not be taken for "not yet".
        while not concurrent.futures.wait([future], timeout=0.2).done:
            if abort is not None and abort.is_set():
                future.cancel()
                return McpCallResult("interrupted", is_error=True)
            if time.monotonic() > late:
                future.cancel()
                break
        try:
            result = future.result(0)
        except (TimeoutError, concurrent.futures.CancelledError):
            return McpCallResult(f"MCP tool {tool.name} timed out after {timeout:g}s",
                                 is_error=True)
        except Exception as exc:  # the SDK's errors, a dead server: a tool error
            return McpCallResult(self._failure(server, tool, exc), is_error=True)
        return result_text(_wire(result))

    def _failure(self, server: _Server, tool: McpTool, exc: BaseException) -> str:
        detail = str(exc) or type(exc).__name__
        if server.state != "running":
            detail += f" (server {server.state}: {server.error})"
        return f"MCP server {server.config.name!r} failed on {tool.name}: {detail}"

    def _stderr_tail(self, server: _Server) -> str:
        if server.log_path is None:
            return ""
        try:
            text = server.log_path.read_text(errors="replace").strip()
        except OSError:
            return ""
        return f" (stderr: {' '.join(text[-STDERR_TAIL:].split())})" if text else ""

    # -- the loop thread ---------------------------------------------------------------------
    async def _serve(self, server: _Server) -> None:
        with big_import():
            from mcp import ClientSession

        server.stop = asyncio.Event()
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport(server))
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                server.tools = await _list_tools(session, server.config.name)
                server.session, server.state = session, "running"
                server.ready.set()
                await server.stop.wait()
        except asyncio.CancelledError:
            server.error = server.error or "cancelled"
            raise
        except BaseException as exc:  # anything from the SDK or the transport
            server.error = _describe(exc)
            server.state = "dead" if server.state == "running" else "failed"
            if server.state == "dead":
                self.warn(f"warning: MCP server {server.config.name!r} died: {server.error}"
                          f"{self._stderr_tail(server)}")
        finally:
            server.session = None
            server.ready.set()

    def _transport(self, server: _Server) -> contextlib.AbstractAsyncContextManager[Any]:
        spec, missing = server.config.spec.expanded(self.environ)
        if missing:
            self.warn(f"warning: MCP server {server.config.name!r}: {', '.join(missing)} not set")
        if spec.url is not None:
            from mcp.client import streamable_http

            # SDK 2.x (and late 1.x) spell it streamable_http_client; early 1.x only the other.
            connect = getattr(streamable_http, "streamable_http_client", None)
            if connect is None:
                connect = streamable_http.streamablehttp_client  # type: ignore[attr-defined]
            return connect(spec.url)  # type: ignore[no-any-return]
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert spec.command is not None
        env = {**self.base_env, **spec.env}
        path = env.get("PATH")
        command = spec.command
        if os.sep in command and not os.path.isabs(command):
            command = str(self.cwd / command)
        if shutil.which(command, path=path) is None:
            raise FileNotFoundError(f"command not found: {spec.command}")
        params = StdioServerParameters(
            command=sys.executable, args=["-I", str(GUARD), str(os.getpid()), "--", command,
                                          *spec.args],
            env=env, cwd=str(self.cwd))
        return stdio_client(params, errlog=self._errlog(server))

    def _errlog(self, server: _Server) -> TextIO:
        if self.log_dir is None:
            handle = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        else:
            ensure_dir(self.log_dir)
            server.log_path = self.log_dir / f"mcp-{server.config.name}.log"
            # 0600 like every swarm file: a server's stderr may hold tokens or private paths.
            fd = os.open(server.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                         FILE_MODE)
            os.fchmod(fd, FILE_MODE)  # one an older swarm created 0644
            handle = open(fd, "a", encoding="utf-8")  # noqa: SIM115
        self._logs.append(handle)
        return handle


async def _list_tools(session: Any, server: str) -> list[McpTool]:
    result = await session.list_tools()
    tools = [_wire(t) for t in result.tools]
    cursor = _wire(result).get("nextCursor")
    pages = 1
    while cursor and pages < 100:
        from mcp import types

        try:
            result = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        except TypeError:  # SDK 1.x before `params`
            result = await session.list_tools(cursor=cursor)
        tools += [_wire(t) for t in result.tools]
        cursor, pages = _wire(result).get("nextCursor"), pages + 1
    out = []
    for tool in tools:
        schema = tool.get("inputSchema") or {}
        schema = {"type": "object", **schema} if "type" not in schema else schema
        description = str(tool.get("description") or tool.get("title") or "")[:DESCRIPTION_CAP]
        out.append(McpTool(server, str(tool["name"]), "", description, schema))
    return out


class McpToolAdapter(Tool):
    """One MCP tool in the agent's tool set; permission modes and rules treat it like any tool
    (never read-only: allowed without asking only in bypassPermissions or by a rule)."""

    input_model = None  # the input is passed on as sent: the server checks it, by its schema

    def __init__(self, manager: McpManager, tool: McpTool, timeout: Callable[[], float],
                 abort: threading.Event | None = None) -> None:
        self.manager, self.tool, self.timeout, self.abort = manager, tool, timeout, abort
        self.name = tool.qualified
        self.description = tool.description or f"{tool.name} (MCP server {tool.server})"

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.tool.input_schema

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = self.manager.call_tool(self.name, args, self.timeout(), self.abort)
        return ToolResult(result.text, result.is_error)

    def describe(self, args: dict[str, Any]) -> str:
        shown = json.dumps(args, ensure_ascii=False)
        return f"{self.name} {shown if len(shown) <= 120 else shown[:117] + '...'}"


def _describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups (anyio task groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())[:300]
