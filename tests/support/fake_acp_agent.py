"""A fake ACP agent on the official SDK's agent side (`acp.run_agent`), for swarm's ACP driver.

Run as `python -m tests.support.fake_acp_agent`; driven by files named in its environment:

- `FAKE_ACP_SCRIPT`: a JSON list of turns, each a list of steps; the n-th prompt the agent gets
  (counted across restarts, in `FAKE_ACP_STATE`) plays turn n (none left: it says "Done.").
  Steps: `{"say": TEXT}`; `{"run": COMMAND}` (an `execute` tool call with the command as its
  input, asks permission, runs it in the session's cwd when allowed, ends the turn when not);
  `{"read": PATH}` (asks with an empty input, the path only in the call's earlier update, as
  OpenCode does); `{"edit": PATH, "text": T}` (a diff, asks, writes); `{"mcp": TOOL, "args":
  {...}}` (calls the tool on the MCP server swarm gave in `session/new`); `{"approve_shutdown":
  true}` (SendMessage approving the newest shutdown request in the prompt); `{"wait": true}`
  (until cancelled); `{"usage": [IN, OUT]}` (a message chunk with Qwen-style `_meta.usage`).
- `FAKE_ACP_STATE`: a directory: `log.jsonl` (every request it got and every permission answer,
  one JSON a line), `sessions/<id>.json` (history, for `session/load` in a new process).
- `FAKE_ACP_NEEDS_LOGIN=1`: `session/new` fails "Authentication required".
- `FAKE_ACP_MODES`: the session modes it offers (default `default,yolo`; it starts in yolo).
- `FAKE_ACP_NO_HTTP=1`: it does not advertise `mcpCapabilities.http` (stdio MCP servers only);
  otherwise it does, and connects to an http server of `session/new` with its headers.

Every permission request offers all four option kinds, so a test sees swarm pick `*_once`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
from acp import helpers as h
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
)

MODES = tuple(os.environ.get("FAKE_ACP_MODES", "default,yolo").split(","))
OPTIONS = [PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
           PermissionOption(option_id="once", name="Allow", kind="allow_once"),
           PermissionOption(option_id="never", name="Never", kind="reject_always"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]
REQUEST_ID = re.compile(r'request_id[\\"]*:\s*[\\"]*([0-9a-f-]{8,})')


def state_dir() -> Path:
    path = Path(os.environ["FAKE_ACP_STATE"])
    (path / "sessions").mkdir(parents=True, exist_ok=True)
    return path


def log(**entry: Any) -> None:
    if not os.environ.get("FAKE_ACP_STATE"):  # `swarm doctor`'s look: a private environment
        return
    with (state_dir() / "log.jsonl").open("a") as out:
        out.write(json.dumps({"pid": os.getpid(), **entry}) + "\n")


def next_turn() -> list[dict[str, Any]]:
    counter = state_dir() / "turns"
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    script = json.loads(Path(os.environ["FAKE_ACP_SCRIPT"]).read_text()) \
        if os.environ.get("FAKE_ACP_SCRIPT") else []
    return script[n] if n < len(script) else [{"say": "Done."}]


class McpLink:
    """The MCP server of `session/new` (swarm's), held open by one task of its own."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.calls: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[str]]] = \
            asyncio.Queue()
        self.task = asyncio.create_task(self._serve())

    async def _serve(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        if getattr(self.server, "url", None):  # an http server: the headers it was given
            await self._serve_http()
            return
        env = {e.name: e.value for e in self.server.env or []}
        params = StdioServerParameters(command=self.server.command, args=self.server.args,
                                       env=env)
        with (state_dir() / "mcp.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await self._calls(session)

    async def _serve_http(self) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        headers = {h.name: h.value for h in self.server.headers or []}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                streamable_http_client(self.server.url, http_client=http) as streams, \
                ClientSession(streams[0], streams[1]) as session:
            await self._calls(session)

    async def _calls(self, session: Any) -> None:
        await session.initialize()
        while True:
            tool, args, done = await self.calls.get()
            try:
                result = await session.call_tool(tool, args)
            except Exception as exc:  # noqa: BLE001 - the caller logs it
                done.set_result(f"error: {type(exc).__name__}: {exc}")
                continue
            done.set_result("".join(getattr(b, "text", "") for b in result.content))

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self.calls.put((tool, args, done))
        return await asyncio.wait_for(done, 60)


class FakeAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        log(method="initialize", client=client_info.name if client_info else None)
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=not os.environ.get("FAKE_ACP_NO_HTTP")),
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities())),
            agent_info=Implementation(name="fake-acp", version="0"))

    def _open(self, sid: str, cwd: str, servers: Any) -> dict[str, Any]:
        path = state_dir() / "sessions" / f"{sid}.json"
        history = json.loads(path.read_text()) if path.exists() else []
        session = {"cwd": cwd, "history": history, "mode": "yolo",
                   "mcp": McpLink(servers[0]) if servers else None}
        self.sessions[sid] = session
        return session

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any
                          ) -> NewSessionResponse:
        log(method="session/new", cwd=cwd, mcp=[s.name for s in mcp_servers or []],
            transports=[type(s).__name__ for s in mcp_servers or []])
        if os.environ.get("FAKE_ACP_NEEDS_LOGIN"):
            raise acp.RequestError(-32000, "Authentication required")
        sid = uuid.uuid4().hex
        self._open(sid, cwd, mcp_servers)
        return NewSessionResponse(session_id=sid, modes=self._modes("yolo"))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **kwargs: Any) -> LoadSessionResponse:
        log(method="session/load", session=session_id)
        session = self._open(session_id, cwd, mcp_servers)
        for text in session["history"]:  # replayed before the answer
            await self.client.session_update(session_id, h.update_user_message_text(text))
        return LoadSessionResponse(modes=self._modes("yolo"))

    def _modes(self, current: str) -> SessionModeState:
        return SessionModeState(current_mode_id=current, available_modes=[
            SessionMode(id=m, name=m) for m in MODES])

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any
                               ) -> SetSessionModeResponse:
        log(method="session/set_mode", mode=mode_id)
        self.sessions[session_id]["mode"] = mode_id
        return SetSessionModeResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        log(method="session/close", session=session_id)
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log(method="session/cancel")
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def _ask(self, sid: str, call: ToolCallUpdate) -> bool:
        session = self.sessions[sid]
        if session["mode"] == "yolo":
            log(method="unasked", title=call.title)
            return True
        answer = await self.client.request_permission(session_id=sid, options=OPTIONS,
                                                      tool_call=call)
        outcome = answer.outcome
        chosen = getattr(outcome, "option_id", None)
        log(method="permission", title=call.title, outcome=outcome.outcome, option=chosen)
        return chosen == "once"

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any
                     ) -> PromptResponse:
        text = "".join(getattr(b, "text", "") for b in prompt)
        session = self.sessions[session_id]
        session["history"].append(text)
        (state_dir() / "sessions" / f"{session_id}.json").write_text(
            json.dumps(session["history"]))
        log(method="session/prompt", session=session_id, text=text,
            turn_in_session=len(session["history"]))
        stop = self.cancelled[session_id] = asyncio.Event()
        usage = Usage(input_tokens=10, output_tokens=5, total_tokens=15)
        for step in next_turn():
            if stop.is_set():
                return PromptResponse(stop_reason="cancelled")
            if not await self._step(session_id, session, step, text, stop):
                break
            if stop.is_set():
                return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn", usage=usage)

    async def _step(self, sid: str, session: dict[str, Any], step: dict[str, Any], text: str,
                    stop: asyncio.Event) -> bool:
        """One step; False ends the turn (a refusal)."""
        send = self.client.session_update
        if "say" in step:
            await send(sid, h.update_agent_message_text(step["say"]))
        elif "usage" in step:
            chunk = h.update_agent_message_text("")
            chunk.field_meta = {"usage": {"inputTokens": step["usage"][0],
                                          "outputTokens": step["usage"][1]}}
            await send(sid, chunk)
        elif "wait" in step:
            await stop.wait()
        elif "mcp" in step:
            out = await session["mcp"].call(step["mcp"], step.get("args") or {})
            log(method="mcp", tool=step["mcp"], result=out[:300])
        elif "approve_shutdown" in step:
            found = REQUEST_ID.findall(text)
            out = await session["mcp"].call("SendMessage", {"to": "team-lead", "message": {
                "type": "shutdown_response", "request_id": found[-1], "approve": True}})
            log(method="mcp", tool="SendMessage", result=out[:300])
        elif "run" in step:
            cid = uuid.uuid4().hex[:8]
            await send(sid, h.start_tool_call(cid, f"{step['run']} (the model's words)",
                                              kind="execute", raw_input={}))
            call = ToolCallUpdate(tool_call_id=cid, title=f"{step['run']} (the model's words)",
                                  kind="execute", raw_input={"command": step["run"]})
            if not await self._ask(sid, call):
                await send(sid, h.update_tool_call(cid, status="failed"))
                return False
            proc = await asyncio.create_subprocess_shell(
                step["run"], cwd=session["cwd"], stdout=subprocess.PIPE)
            out = (await proc.communicate())[0].decode()
            await send(sid, h.update_tool_call(cid, status="completed", content=[
                h.tool_content(h.text_block(out))]))
        elif "read" in step:
            cid = uuid.uuid4().hex[:8]
            await send(sid, h.start_read_tool_call(cid, "read", step["read"]))
            await send(sid, h.update_tool_call(cid, status="in_progress",
                                               raw_input={"filePath": step["read"]}))
            if not await self._ask(sid, ToolCallUpdate(tool_call_id=cid, title="read",
                                                       kind="read", raw_input={})):
                await send(sid, h.update_tool_call(cid, status="failed"))
                return False
            await send(sid, h.update_tool_call(cid, status="completed", content=[
                h.tool_content(h.text_block(Path(step["read"]).read_text()))]))
        elif "edit" in step:
            cid = uuid.uuid4().hex[:8]
            diff = h.tool_diff_content(step["edit"], step["text"], None)
            call = ToolCallUpdate(tool_call_id=cid, title=f"Writing {step['edit']}", kind="edit",
                                  content=[diff], locations=[ToolCallLocation(path=step["edit"])])
            await send(sid, h.start_edit_tool_call(cid, call.title or "", step["edit"],
                                                   step["text"]))
            if not await self._ask(sid, call):
                await send(sid, h.update_tool_call(cid, status="failed"))
                return False
            Path(session["cwd"], step["edit"]).write_text(step["text"])
            await send(sid, h.update_tool_call(cid, status="completed"))
        return True


def main() -> None:
    if sys.argv[1:2] == ["--version"]:  # as a real agent CLI answers `swarm doctor`
        print("fake-acp 0")
        return
    # FakeAgent answers the methods swarm's driver calls, not the whole Agent protocol
    asyncio.run(acp.run_agent(FakeAgent(), use_unstable_protocol=True))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
