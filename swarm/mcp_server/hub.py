"""`swarm mcp hub --team T`: the team's MCP server on this host, shared by its agent CLI and ACP
teammates (started by their drivers: runtime/clis/team_server.py), over the official SDK's
streamable HTTP transport (`StreamableHTTPSessionManager`) on 127.0.0.1, a free port.

Each request carries a member driver's token (`Authorization: Bearer`); one whose SHA-256 is not
registered for a live driver of this team is refused (401) before the SDK sees it. The member it
names is the request's principal (`scope["user"]`: client id the member, subject the hash), so
the SDK serves a session only to requests with the token that opened it (any other: 404), and
every tool call runs as that member in its own `ServedHost` (mcp_server/host.py, attached: the
member's own `swarm agent` is the member): the tools, names and rules of `swarm mcp serve --as`.
No token names the lead: its tools are never offered.

It ends by itself: the team gone (SWARM_TEAM_GONE_GRACE), or no registered driver alive for
SWARM_MCP_HUB_GRACE seconds; under the run file's lock, so a driver that registers meanwhile
either finds it still serving or starts a new one. SIGTERM, SIGINT, SIGHUP end it too.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from swarm import __version__, settings
from swarm.big_import import big_import
from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.core.store.disk import try_locked
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.log import configure as configure_logging
from swarm.mcp_server.host import ServedHost, ServeOptions
from swarm.runtime.clis import team_server
from swarm.runtime.process.team_gone import TeamGoneCheck
from swarm.runtime.tools.base import ToolResult

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

log = logging.getLogger(__name__)
WATCH_EVERY = 0.5  # seconds between looks at the team and the drivers
REFRESH_EVERY = 1.0  # seconds a token's registration is trusted before it is read again
KEEP_ALIVE = 75  # seconds an idle connection stays open (longer than clients keep theirs)


class Members:
    """The registered tokens (hash -> member) and each member's served host."""

    def __init__(self, team: str) -> None:
        self.team = team
        self._lock = threading.Lock()
        self._known: dict[str, team_server.Registration] = {}
        self._read_at = 0.0
        self._hosts: dict[str, ServedHost] = {}

    def refresh(self) -> dict[str, team_server.Registration]:
        with self._lock:
            self._known = team_server.registrations(self.team)
            self._read_at = time.monotonic()
            return dict(self._known)

    def member_of(self, token: str) -> tuple[str, str] | None:
        """(member, the token's hash) for a token registered by a live driver; else None."""
        digest = team_server.token_hash(token)
        with self._lock:
            entry = self._known.get(digest)
            fresh = time.monotonic() - self._read_at < REFRESH_EVERY
        if entry is None or not fresh:  # a new driver, or a stale look: read them again
            entry = self.refresh().get(digest)
        if entry is None or entry.member == LEAD_NAME or not entry.live():
            return None
        return entry.member, digest

    def any_live(self) -> bool:
        return any(entry.live() for entry in self.refresh().values())

    def host(self, member: str) -> ServedHost:
        """Member's served host (its tools, its lock), made at its first call."""
        with self._lock:
            host = self._hosts.get(member)
            if host is None:
                cwd = Team.open(self.team).member(member).cwd
                host = ServedHost(ServeOptions(team=self.team, member=member, attached=True,
                                               cwd=cwd))
                host.start()
                host.client_probe = self._probe(member)
                self._hosts[member] = host
            return host

    def _probe(self, member: str) -> Callable[[], Callable[[], bool]]:
        """Whether the CLI that asks is still there, for a wait on the lead: its driver lives
        and runs the same CLI process as when the call came (its state's `child_pgid`)."""

        def probe() -> Callable[[], bool]:
            state = read_state(self.team, member)
            cli = state.child_pgid if state is not None else None

            def present() -> bool:
                now = read_state(self.team, member)
                return (now is not None and now.child_pgid == cli
                        and (cli is None or is_alive(cli))
                        and any(e.member == member for e in self.refresh().values()))

            return present

        return probe

    def close(self) -> None:
        with self._lock:
            for host in self._hosts.values():
                host.close("the team's MCP server ended")


def bearer(scope: dict[str, Any]) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == b"authorization":
            text = value.decode("latin-1")
            if text[:7].lower() == "bearer ":
                return text[7:].strip() or None
    return None


class HubApp:
    """The ASGI app: the token checked, the member set as the request's principal, then the
    SDK's session manager."""

    def __init__(self, members: Members, manager: Any) -> None:
        self.members = members
        self.manager = manager

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope.get("path", "").rstrip("/") != team_server.HUB_PATH:
            await _answer(send, 404, "not found")
            return
        token = bearer(scope)
        found = await anyio.to_thread.run_sync(self.members.member_of, token) if token else None
        if found is None:
            await _answer(send, 401, "a member driver's token is required",
                          [(b"www-authenticate", b"Bearer")])
            return
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        member, digest = found
        user = AuthenticatedUser(AccessToken(token=digest, client_id=member, scopes=[],
                                             subject=digest))
        await self.manager.handle_request({**scope, "user": user}, receive, send)


async def _answer(send: Any, status: int, message: str,
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = ('{"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "swarm: '
            + message + '"}}').encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def member_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The member a request was authenticated as (HubApp set it); None: not through HubApp."""
    request = ctx.request
    user = request.scope.get("user") if request is not None else None
    token = getattr(user, "access_token", None)
    member = getattr(token, "client_id", None)
    return member if isinstance(member, str) and member != LEAD_NAME else None


def build_server(members: Members) -> Any:
    """The SDK's low-level Server: each call as the member its request was authenticated as."""
    with big_import():
        from mcp import types
        from mcp.server.lowlevel import Server

    def listed(host: ServedHost) -> list[Any]:
        return [types.Tool(name=tool.name, description=tool.description,
                           input_schema=tool.input_schema) for tool in host.tools.values()]

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        member = member_of(ctx)
        if member is None:
            return types.ListToolsResult(tools=[])
        host = await anyio.to_thread.run_sync(members.host, member)
        return types.ListToolsResult(tools=listed(host))

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        member = member_of(ctx)
        if member is None:
            result = ToolResult("swarm: this connection is not a member's", is_error=True)
        else:
            host = await anyio.to_thread.run_sync(members.host, member)
            result = await anyio.to_thread.run_sync(host.call, params.name,
                                                    dict(params.arguments or {}),
                                                    abandon_on_cancel=True)
            await anyio.to_thread.run_sync(host.deliver, result)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)],
                                    is_error=result.is_error)

    return Server("swarm", version=__version__,
                  instructions="The swarm team tools of the member this connection was made"
                               " for.", on_list_tools=list_tools, on_call_tool=call_tool)


def listen() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


class Hub:
    """One team's hub: serve on `sock` until told to stop, or until nobody needs it."""

    def __init__(self, team: str, watch: bool = True) -> None:
        self.team = team
        self.members = Members(team)
        self.watch = watch
        self.reason: str | None = None
        self._server: Any = None

    async def serve(self, sock: socket.socket,
                    ready: Any = None) -> None:
        with big_import():
            import uvicorn
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
            from mcp.server.transport_security import TransportSecuritySettings

        security = TransportSecuritySettings(allowed_hosts=["127.0.0.1:*", "localhost:*"])
        manager = StreamableHTTPSessionManager(build_server(self.members),
                                               security_settings=security,
                                               session_idle_timeout=None)
        # An orphaned CLI's open stream must not hold the end up: 2 s, then connections close.
        # An idle connection stays open KEEP_ALIVE s (uvicorn's default is 5): an agent CLI's
        # MCP client reuses its one connection after a model's pause, and a call that races the
        # server's close fails unsent again (it is a POST).
        config = uvicorn.Config(HubApp(self.members, manager), lifespan="off",
                                log_level="warning", access_log=False,
                                timeout_graceful_shutdown=2, timeout_keep_alive=KEEP_ALIVE)
        self._server = uvicorn.Server(config)
        async with manager.run(), anyio.create_task_group() as group:
            if self.watch:
                group.start_soon(self._watch)
            if ready is not None:
                ready()
            await self._server.serve(sockets=[sock])
            group.cancel_scope.cancel()
        self.members.close()

    def stop(self, reason: str) -> None:
        self.reason = self.reason or reason
        if self._server is not None:
            self._server.should_exit = True

    async def _watch(self) -> None:
        gone = TeamGoneCheck(Team(self.team), log.info)
        alone_since: float | None = None
        while self.reason is None:
            await anyio.sleep(WATCH_EVERY)
            why = await anyio.to_thread.run_sync(gone.check)
            if why is not None:
                await anyio.to_thread.run_sync(self._end_if, why, False)
                continue
            live = await anyio.to_thread.run_sync(self.members.any_live)
            now = time.monotonic()
            alone_since = None if live else (alone_since or now)
            if alone_since is not None and now - alone_since >= settings.mcp_hub_grace():
                await anyio.to_thread.run_sync(self._end_if, "no member driver is left", True)
                alone_since = None

    def _end_if(self, why: str, unless_needed: bool) -> None:
        """End, the run file removed under its lock (a driver that registered meanwhile keeps
        this hub)."""
        with try_locked(paths.mcp_hub_run(self.team)) as held:
            if not held:
                return  # a driver is starting or finding a hub: look again later
            if unless_needed and self.members.any_live():
                return
            team_server.forget_run(self.team)
            self.stop(why)


def serve_hub(team: str) -> int:
    """`swarm mcp hub --team T`: listen, say where (the run file), serve, end by itself."""
    Team.open(team)  # a team that does not exist: one line, exit 2
    configure_logging(paths.mcp_hub_dir(team) / "hub.log")
    hub = Hub(team)
    sock = listen()
    team_server.write_run(team, sock.getsockname()[1])
    log.info("the MCP server of team %s listens on 127.0.0.1:%d (pid %d)", team,
             sock.getsockname()[1], os.getpid())
    try:
        anyio.run(hub.serve, sock)
    finally:
        team_server.forget_run(team)
    log.info("the MCP server of team %s ended: %s", team, hub.reason or "signalled")
    return 0
