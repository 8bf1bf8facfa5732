"""An editor for `swarm acp` tests: the official ACP SDK's client side over stdio, driven from a
synchronous test (one asyncio loop in a daemon thread). It keeps every `session/update` it
gets and every `session/request_permission`, and answers the latter with what the test chose."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import acp
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.support.agent_fixtures import stop_tree
from tests.support.cli_runner import SWARM

T = TypeVar("T")
# option kind the editor picks for a request -> None: answer "cancelled"
Answer = Callable[[ToolCallUpdate, list[PermissionOption]], str | None]


class Asked:
    """One `session/request_permission` the editor got."""

    def __init__(self, session_id: str, tool_call: ToolCallUpdate,
                 options: list[PermissionOption], at_update: int) -> None:
        self.session_id = session_id
        self.tool_call = tool_call
        self.options = options
        self.at_update = at_update  # how many updates the editor had when it was asked
        self.chosen: str | None = None


class EditorClient:
    """The `acp.Client` side: records, answers permission requests with `answer`."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[Asked] = []
        self.answer: Answer = lambda call, options: "allow_once"
        self.lock = threading.Lock()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        with self.lock:
            self.updates.append((session_id, update))

    async def request_permission(self, options: list[PermissionOption], session_id: str,
                                 tool_call: ToolCallUpdate,
                                 **kwargs: Any) -> RequestPermissionResponse:
        with self.lock:
            asked = Asked(session_id, tool_call, options, len(self.updates))
            self.asked.append(asked)
        # In a thread: an answer that waits (for the test) must not stop the editor's loop.
        kind = await asyncio.to_thread(self.answer, tool_call, options)
        asked.chosen = kind
        chosen = [o for o in options if o.kind == kind]
        if not chosen:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen[0].option_id))

    def on_connect(self, conn: Any) -> None:
        pass


class Editor:
    """`swarm acp ARGS` in `cwd`, and a connection to it; `call(coro)` runs a request."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None,
                 command: list[str] | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = EditorClient()
        self.stderr_path = cwd / f".acp-stderr-{os.getpid()}-{id(self)}.log"
        argv = command or [SWARM, "acp", *args]
        self.proc, self.conn = self.call(self._start(argv, cwd, {**os.environ, **(env or {})}))

    async def _start(self, argv: list[str], cwd: Path,
                     env: dict[str, str]) -> tuple[asyncio.subprocess.Process, Any]:
        with self.stderr_path.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=err, limit=2**22, start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        # the editor answers what `swarm acp` asks of it, not the whole Client protocol
        return proc, acp.connect_to_agent(self.client,  # type: ignore[arg-type]
                                          proc.stdin, proc.stdout)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        """Start a request now; `.result(timeout)` waits for its answer."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    # -- requests -------------------------------------------------------------------------------
    def initialize(self) -> Any:
        return self.call(self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_info=Implementation(name="swarm-tests", version="1")))

    def new_session(self, cwd: Path) -> Any:
        return self.call(self.conn.new_session(cwd=str(cwd), mcp_servers=[]))

    def prompt(self, session_id: str, text: str, timeout: float = 90) -> Any:
        return self.call(self.conn.prompt(session_id=session_id,
                                          prompt=[acp.text_block(text)]), timeout)

    # -- what the editor saw --------------------------------------------------------------------
    def updates(self, kind: str | None = None) -> list[Any]:
        with self.client.lock:
            found = [u for _, u in self.client.updates]
        return [u for u in found if kind is None or u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates("agent_message_chunk")
                       if getattr(u.content, "text", None))

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def close(self, timeout: float = 30) -> int | None:
        """Close stdin (the editor went away): `swarm acp` ends its sessions and exits."""
        proc = self.proc

        async def end() -> int | None:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()
            try:
                return await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                return None
            finally:
                with contextlib.suppress(ConnectionError):  # answers still going out: lost
                    await self.conn.close()

        try:
            code = self.call(end(), timeout + 5)
        finally:
            if proc.returncode is None:
                stop_tree(proc.pid)
            self.loop.call_soon_threadsafe(self.loop.stop)
        return code


def scripted_lead(path: Path, turns: list[dict[str, Any]]) -> str:
    """A scripted lead model file (docs/scripted.md); the `--model` value for it."""
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def task(subject: str, command: str) -> dict[str, Any]:
    return {"name": "TaskCreate", "input": {"subject": subject, "description": f"$ {command}"}}


def spawn(name: str, mode: str = "bypassPermissions", prompt: str = "Take tasks from the list.",
          **extra: Any) -> dict[str, Any]:
    return {"name": "SpawnTeammate", "input": {"name": name, "prompt": prompt, "model": "shell",
                                               "permission_mode": mode, **extra}}
