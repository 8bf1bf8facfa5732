"""The client side of the Agent Client Protocol on the official SDK (`acp`, its typed schema):
one asyncio loop in a daemon thread per teammate process, attached to the pipes of an agent
process swarm started itself (its own session, its stderr to a file). The synchronous driver
(runtime.clis.acp_driver) submits requests and waits for their answers; what the agent sends
meanwhile is handled here:

- `session/update`: each one (as its JSON, `_meta` kept) goes to the current turn's queue,
  which the driver's thread reads in order; a tool call's state is kept by its id, so a
  permission request that leaves out what an earlier update said (OpenCode's reads) is read
  whole. Updates outside a turn (a load's replay, commands lists) are dropped.
- `session/request_permission`: swarm's decision, made in a worker thread (it may wait for the
  lead), answered with the `allow_once` or `reject_once` option the agent offered, never an
  `*_always` one (the agent would stop asking swarm); `cancelled` once the turn is cancelled.
- anything else the agent asks (files, terminals, vendor methods) is refused by the SDK.

Imported only when an ACP teammate starts (`import acp` is ~30 MB and a second of CPU), after
its agent process is spawned, so the import overlaps the agent's own start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import subprocess
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import acp
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    McpServerStdio,
    PermissionOption,
    RequestPermissionResponse,
)

T = TypeVar("T")
SDK_LOGGER = acp.__name__


class _VendorNoise(logging.Filter):
    """The SDK logs a traceback for every notification it has no handler for (Qwen Code's
    `qwen/notify/...`): harmless, and not for the pane."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unhandled error while handling notification")


def _quiet_sdk() -> None:
    for name in (SDK_LOGGER, "acp.connection", "root"):
        logger = logging.getLogger(None if name == "root" else name)
        if not any(isinstance(f, _VendorNoise) for f in logger.filters):
            logger.addFilter(_VendorNoise())


def as_json(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def stdio_server(name: str, argv: list[str], env: dict[str, str]) -> McpServerStdio:
    return McpServerStdio(name=name, command=argv[0], args=argv[1:],
                          env=[EnvVariable(name=k, value=v) for k, v in env.items()])


def http_server(name: str, url: str, headers: dict[str, str]) -> HttpMcpServer:
    return HttpMcpServer(type="http", name=name, url=url,
                         headers=[HttpHeader(name=k, value=v) for k, v in headers.items()])


def offers_http(init: InitializeResponse) -> bool:
    """The agent takes an http MCP server in `session/new` (its `mcpCapabilities.http`)."""
    caps = init.agent_capabilities
    mcp = getattr(caps, "mcp_capabilities", None) if caps is not None else None
    return bool(getattr(mcp, "http", False))


class TurnSink:
    """One turn's updates, read in order by the driver's thread; `None` ends them."""

    def __init__(self) -> None:
        self.items: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self.cancelled = threading.Event()  # a pending question ends; answers say cancelled


class _Client:
    """What swarm answers the agent (acp.Client: only the methods it offers)."""

    def __init__(self, session: AcpSession) -> None:
        self.session = session

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = self.session.remember(as_json(update))
        sink = self.session.sink
        if sink is not None:
            sink.items.put(data)

    async def request_permission(self, options: list[PermissionOption], session_id: str,
                                 tool_call: Any, **kwargs: Any) -> RequestPermissionResponse:
        sink = self.session.sink
        call = self.session.remember({**as_json(tool_call), "sessionUpdate": "tool_call"})
        loop = asyncio.get_running_loop()
        allowed = False
        if sink is not None and not sink.cancelled.is_set():
            allowed = await loop.run_in_executor(None, self.session.permission, call,
                                                 sink.cancelled)
        if sink is None or sink.cancelled.is_set():
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        wanted = "allow_once" if allowed else "reject_once"
        for option in options:
            if option.kind == wanted:
                return RequestPermissionResponse(outcome=AllowedOutcome(
                    outcome="selected", option_id=option.option_id))
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class AcpSession:
    """The connection to one agent process, driven from synchronous code."""

    def __init__(self, proc: subprocess.Popen[bytes],
                 permission: Callable[[dict[str, Any], threading.Event], bool],
                 trace: Callable[[str], None] | None = None) -> None:
        _quiet_sdk()
        self.proc = proc
        self.permission = permission
        self.sink: TurnSink | None = None
        self.calls: dict[str, dict[str, Any]] = {}  # tool call id -> its state so far
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="acp-client",
                                        daemon=True)
        self._thread.start()
        observers = [lambda event: trace(f"ACP: {event.direction}: {event.message}")] \
            if trace is not None else []
        self.conn = self.run(self._connect(observers))

    async def _connect(self, observers: list[Any]) -> Any:
        assert self.proc.stdout is not None and self.proc.stdin is not None
        reader = asyncio.StreamReader(limit=2**20)
        await self.loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                          self.proc.stdout)
        transport, protocol = await self.loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, self.proc.stdin)
        writer = asyncio.StreamWriter(transport, protocol, None, self.loop)
        return acp.connect_to_agent(_Client(self), writer, reader,  # type: ignore[arg-type]
                                    observers=observers)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """`coro` on the loop; its result (or its error) here, within `timeout` seconds."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        """`coro` on the loop, not waited for (a cancel from a signal handler)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def initialize(self, timeout: float) -> InitializeResponse:
        return self.run(self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_info=Implementation(name="swarm", version="1")), timeout)

    def remember(self, update: dict[str, Any]) -> dict[str, Any]:
        """A tool call's update (or question) as its whole state so far; others as they are."""
        call_id = update.get("toolCallId")
        kind = update.get("sessionUpdate")
        if not call_id or kind not in ("tool_call", "tool_call_update"):
            return update
        merged = _merge(self.calls.get(str(call_id), {}), update)
        merged["sessionUpdate"] = kind
        self.calls[str(call_id)] = merged
        return merged

    def close(self) -> None:
        """The connection and the loop (the process is the driver's)."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(Exception):  # the agent is gone already: nothing to close
            self.run(self.conn.close(), 5.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5.0)


def _merge(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """A tool call's state: later non-empty fields over earlier ones (an input a request
    leaves empty is the one an update said)."""
    merged = dict(before)
    for key, value in after.items():
        if value not in (None, "", [], {}):
            merged[key] = value
    return merged
