"""Claude Code driven headless: one `claude -p --input-format stream-json --output-format
stream-json` process kept alive between turns (measured: a turn is one user line in, events out
to its `result` line; the process waits for the next line), resumed with `--resume SESSION`
after a restart.

Its team tools are the team's MCP server on this host (streamable HTTP, runtime/clis/team_server.py),
set over its stdin by the stream-json control request `mcp_set_servers` with the member's token
in the server's headers (no file, no command line), answered once connected, before the first
turn; `--strict-mcp-config` (no other server: the checkout's `.mcp.json` never loads); its own team
tools are switched off (`--disallowedTools`); what it would ask a person goes to swarm's
`PermissionPrompt` tool (`--permission-prompt-tool`): swarm's mode, rules and file scopes
decide, and what they leave open is asked of the lead (its modes: core.kinds).

The checkout's own configuration (`.claude/settings*.json` hooks, agents, skills, commands,
plugins; `.mcp.json` never: `--strict-mcp-config`) loads only when workspace trust says so:
`--setting-sources user,project,local`; untrusted, `--setting-sources user` (the user's own
settings and login stay) and its instructions (CLAUDE.md) still reach the model as text, read
through `--add-dir` of its own directory (CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from swarm.core.records.names import TEAM_TOOLS
from swarm.core.records.state import Usage
from swarm.runtime.clis.base import (
    DriverSetup,
    TurnEvents,
    TurnResult,
    close_and_end,
    stderr_tail,
)
from swarm.runtime.clis.team_server import TeamServer

SERVER = "swarm"
PERMISSION_TOOL = "PermissionPrompt"  # served by `swarm mcp serve --as NAME` in its own agent
# Claude Code's own team and agent tools: swarm's MCP server is its team.
OWN_TEAM_TOOLS = ("SendMessage", "TaskCreate", "TaskList", "TaskGet", "TaskUpdate", "TaskStop",
                  "TeamCreate", "TeamDelete", "ListAgents")
TEAM_TOOLS_SERVED = (*TEAM_TOOLS, "TeamStatus")
# Its tools that would run unasked (reads, read-only commands): asked, so swarm's rules, file
# scopes and protected paths decide them as every other call (PermissionPrompt).
ASKED = ("Bash", "Read", "Grep", "Glob", "LS", "NotebookRead")
STOP_GRACE = 10.0  # seconds for the CLI to end after its input closes
SET_SERVERS = "swarm-mcp-servers"  # the id of its control request that sets swarm's server
SOURCES = {True: "user,project,local", False: "user"}  # trusted: the checkout's settings too


class ClaudeCode:
    """A `CliDriver` for Claude Code."""

    def __init__(self, setup: DriverSetup) -> None:
        self.setup = setup
        self.session = setup.session
        self.proc: subprocess.Popen[bytes] | None = None
        self._config: Path | None = None
        self._cost_seen = 0.0  # total_cost_usd is per process: the turn's cost is the rise
        self._write = threading.Lock()
        self._stderr: IO[bytes] | None = None
        self._trusted = False  # the checkout's configuration, as decided when it last started
        self._early: list[bytes] = []  # what it printed before its servers were set

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def argv(self) -> list[str]:
        s = self.setup
        argv = [str(s.executable), "-p", "--input-format", "stream-json", "--output-format",
                "stream-json", "--verbose",
                *(["--mcp-config", str(self._config)] if self._config is not None else []),
                "--strict-mcp-config", "--permission-prompt-tool",
                f"mcp__{SERVER}__{PERMISSION_TOOL}", "--permission-mode", s.kind.own_mode(s.mode),
                "--disallowedTools", ",".join(OWN_TEAM_TOOLS),
                # swarm's deny rules are its own too (refused before anything is asked); what
                # it would run unasked is asked.
                "--settings", json.dumps({"permissions": {"deny": list(s.deny),
                                                          "ask": list(ASKED)}}),
                # swarm's team tools are the team protocol: never a question for the lead.
                "--allowedTools", ",".join(f"mcp__{SERVER}__{n}" for n in TEAM_TOOLS_SERVED),
                "--append-system-prompt", s.system_append,
                "--setting-sources", SOURCES[self._trusted]]
        if not self._trusted:  # its instructions only: text, not configuration
            argv += ["--add-dir", str(s.cwd)]
        if s.model:
            argv += ["--model", s.model]
        argv += s.kind.effort_argv(s.effort)
        if self.session:
            argv += ["--resume", self.session]
        return argv

    def start(self) -> None:
        s = self.setup
        if s.team_server is None:  # its own stdio server, from a private file
            config = {"mcpServers": {SERVER: {"type": "stdio", "command": s.mcp_server[0],
                                              "args": s.mcp_server[1:], "env": s.mcp_env}}}
            fd, name = tempfile.mkstemp(prefix="swarm-mcp-", suffix=".json")  # 0600
            with os.fdopen(fd, "w") as out:
                json.dump(config, out)
            self._config = Path(name)
        self._trusted = s.trusted()
        # Its first turn waits for swarm's server, up to a minute (ops.clients: the snippet's)
        env = {**s.env, "MCP_CONNECTION_NONBLOCKING": "0", "MCP_CONNECT_TIMEOUT_MS": "60000",
               "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD": "1",
               # Each Bash command starts in its project directory, where swarm checked it (its
               # shell would keep a `cd` for the next command, which swarm never sees).
               "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR": "1"}
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the CLI's life
        self.proc = subprocess.Popen(self.argv(), cwd=s.cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr,
                                     start_new_session=True)  # its own group: kill_tree
        self._cost_seen = 0.0
        if s.team_server is not None:
            self._set_servers(s.team_server())
        s.log(f"claude started (pid {self.proc.pid}"
              + (f", resuming session {self.session}" if self.session else "")
              + f"; the checkout's configuration {'loaded' if self._trusted else 'ignored'})")

    def _set_servers(self, hub: TeamServer) -> None:
        """swarm's server, the team's on this host with the member's token, set over its stdin
        (`mcp_set_servers`, its stream-json control request): in no file, on no command line.
        Its answer comes once the server is connected; what it printed before is kept for the
        first turn."""
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        self._send({"type": "control_request", "request_id": SET_SERVERS, "request": {
            "subtype": "mcp_set_servers",
            "servers": {SERVER: {"type": "http", "url": hub.url, "headers": hub.headers()}}}})
        for raw in proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            answer = event.get("response") if isinstance(event, dict) else None
            if not isinstance(answer, dict) or event.get("type") != "control_response" \
                    or answer.get("request_id") != SET_SERVERS:
                self._early.append(raw)
                continue
            result = answer.get("response") or {}
            errors = result.get("errors") if isinstance(result, dict) else None
            if answer.get("subtype") == "error" or errors:
                raise RuntimeError(f"claude did not take swarm's MCP server:"
                                   f" {answer.get('error') or errors}")
            return
        raise RuntimeError(f"claude exited at its start: {stderr_tail(self._stderr)}")

    def _send(self, line: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None:
            return
        with self._write, contextlib.suppress(OSError, ValueError):
            proc.stdin.write((json.dumps(line) + "\n").encode())
            proc.stdin.flush()

    def turn(self, text: str, events: TurnEvents) -> TurnResult:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        self._send({"type": "user", "session_id": self.session or "",
                    "message": {"role": "user", "content": [{"type": "text", "text": text}]},
                    "parent_tool_use_id": None})
        result = TurnResult()
        early, self._early = self._early, []
        for raw in itertools.chain(early, proc.stdout):
            try:
                event = json.loads(raw)
            except ValueError:
                continue  # not ours to parse: the CLI's own noise
            if not isinstance(event, dict):
                continue
            if event.get("session_id") and event["session_id"] != self.session:
                self.session = str(event["session_id"])
                events.on_session(self.session)
            kind = event.get("type")
            if kind == "system" and event.get("subtype") == "init" and event.get("model"):
                events.on_model(str(event["model"]))  # the model it runs, as it says
            elif kind == "assistant" and event.get("parent_tool_use_id") is None:
                for block in (event.get("message") or {}).get("content") or []:
                    if block.get("type") == "text" and block.get("text"):
                        result.text = str(block["text"])
                        events.on_text(result.text)
                    elif block.get("type") == "tool_use":
                        events.on_tool_use(str(block.get("name")), block.get("input") or {})
            elif kind == "user" and event.get("parent_tool_use_id") is None:
                for block in (event.get("message") or {}).get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        events.on_tool_result(_text_of(block.get("content")),
                                              bool(block.get("is_error")))
            elif kind == "result":
                return self._finish(event, result)
        code = proc.wait()
        result.failure = f"claude exited (code {code}) during the turn: {stderr_tail(self._stderr)}"
        self.proc = None
        return result

    def _finish(self, event: dict[str, Any], result: TurnResult) -> TurnResult:
        usage = event.get("usage") or {}
        total = float(event.get("total_cost_usd") or 0.0)
        result.usage = Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cost_usd=max(0.0, total - self._cost_seen))
        self._cost_seen = max(total, self._cost_seen)
        result.session_id = self.session
        if isinstance(event.get("result"), str) and event["result"].strip():
            result.text = event["result"]
        subtype = str(event.get("subtype") or "")
        if event.get("is_error") or subtype.startswith("error"):
            if subtype == "error_during_execution" and result.interrupted:
                return result
            result.failure = failure_of(event)
        return result

    def interrupt(self) -> None:
        self._send({"type": "control_request", "request_id": f"int-{os.getpid()}",
                    "request": {"subtype": "interrupt"}})

    def set_mode(self, mode: str) -> None:
        self._send({"type": "control_request", "request_id": f"mode-{mode}",
                    "request": {"subtype": "set_permission_mode", "mode": self.setup.kind.own_mode(mode)}})

    def stop(self) -> None:
        """Close its input (it ends the session and its MCP servers), then make sure."""
        proc, self.proc = self.proc, None
        if proc is not None:
            close_and_end(proc, STOP_GRACE)
        if self._config is not None:
            self._config.unlink(missing_ok=True)
            self._config = None



def failure_of(event: dict[str, Any]) -> str:
    """What failed, in the CLI's words: its message (a failed turn can still be subtype
    `success`: `Not logged in · Please run /login`), the API's status, else the subtype."""
    subtype = str(event.get("subtype") or "")
    said = str(event.get("result") or "").strip()[:300]
    errors = event.get("errors")
    if not said and isinstance(errors, list) and errors:
        said = "; ".join(str(e) for e in errors)[:300]
    status = event.get("api_error_status")
    parts = [f"API error {status}" if status else "",
             subtype if subtype.startswith("error") else "", said]
    return "claude: " + (": ".join(p for p in parts if p) or "the turn failed")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
