"""Gemini CLI driven through its Agent Client Protocol mode: one `gemini --acp` process kept
alive between turns (runtime.clis.acp: JSON-RPC on its stdio). `initialize`, then
`session/new` (or `session/load SESSION` after a restart); a turn is one `session/prompt`, its
`session/update` notifications (text, tool calls) on the way, its result last with the turn's
tokens (`_meta.quota`, per model: priced by swarm's table); `session/cancel` interrupts it.

Its team tools are the team's MCP server on this host (runtime/clis/team_server.py: streamable
HTTP, the member's token in the server's headers), handed over in `session/new` itself (nothing
written into the user's settings or on its command line) and trusted by a private
policy file (`--policy`: every tool of the `swarm` server allowed), so they never ask. What it
would ask a person comes to swarm as `session/request_permission` with the real call (a
command's text, an edit's path and new text): swarm's mode, rules and file scopes decide and
what they leave open goes to the lead (runtime.clis.permission, as for Claude Code and Codex).

Modes: Gemini CLI runs in its `default` approval mode (it asks about every shell command, edit
and unknown tool, not reads) for swarm's default, acceptEdits and bypassPermissions, so swarm
makes the one decision with its file scopes in every mode; swarm's plan is Gemini's `plan`
(read-only). swarm's part of the prompt goes before the first message of a new session.

The checkout's own configuration (`.gemini/settings.json`, its MCP servers, policies, commands,
skills, agents, extensions, `.env`) loads only when workspace trust says so: Gemini CLI's folder
trust is set for the process by `GEMINI_CLI_TRUST_WORKSPACE` (`true`, or `false`: its restricted
mode, the user's own settings and login stay). Its restricted mode reads no GEMINI.md either:
swarm gives the checkout's instructions (text, not configuration) before the first message.

It starts with `GEMINI_CLI_NO_RELAUNCH=true`: Gemini CLI's launcher otherwise starts a second
node process only to raise its heap limit (about a second of CPU and ~140 MB per teammate).

Resume works around gemini-cli#28775 (0.61.0: a `session/load` in the same minute the session
was started writes an empty record over it): before loading, the session's record is renamed
so the load's new record cannot land on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

from swarm.core.records.permissions import Decision
from swarm.core.records.state import Usage
from swarm.runtime.clis.acp import PROTOCOL_VERSION, AcpConnection, AcpError
from swarm.runtime.clis.base import (
    DriverSetup,
    TurnEvents,
    TurnResult,
    TurnText,
    checkout_instructions,
    stderr_tail,
)
from swarm.runtime.clis.gemini_calls import (
    READS,
    SERVER,
    content_text,
    shown_call,
    swarm_calls,
    tool_of,
)
from swarm.runtime.models.prices import price_usage
from swarm.runtime.process.kill import end_group

CLOSE_GRACE = 2.0  # seconds for the CLI to end after its input closes
STOP_GRACE = 10.0  # then after SIGTERM
# Every tool of swarm's server allowed (user tier, above Gemini's own defaults); its own ways
# to a person and out of its mode switched off: the lead is reached and sets modes via swarm.
# Every command and every read or search asked (Gemini would run some, `cat` and `echo`, and
# every read, unasked): swarm's rules, protected paths and file scopes decide them all.
POLICY = f'''[[rule]]
mcpName = "{SERVER}"
toolName = "*"
decision = "allow"
priority = 900

[[rule]]
toolName = [{", ".join(f'"{n}"' for n in ("run_shell_command", *READS))}]
decision = "ask_user"
priority = 900

[[rule]]
toolName = ["ask_user", "enter_plan_mode", "exit_plan_mode"]
decision = "deny"
priority = 900
denyMessage = "not in a swarm team: ask the lead with mcp_{SERVER}_SendMessage"
'''


JS_SPECIAL = re.compile(r"[.*+?^${}()|[\]\\/]")  # escaped in a regular expression of its policy


def denied(rules: tuple[str, ...]) -> str:
    """swarm's Bash deny rules as Gemini CLI's own policy rules (above everything it would
    allow): it runs the commands it deems safe (`cat`, `echo`, `ls`, ...) without asking, so
    only its own deny stops them. Other denied tools are asked (above), and swarm refuses."""
    out = []
    for rule in rules:
        tool, _, spec = rule.partition("(")
        if tool != "Bash":
            continue
        spec = spec.removesuffix(")")
        lines = ['toolName = "run_shell_command"']
        if spec.endswith(":*"):
            lines.append(f"commandPrefix = {json.dumps(spec[:-2])}")
        elif spec and spec != "*":
            exact = "^" + JS_SPECIAL.sub(lambda m: "\\" + m[0], spec) + "$"
            lines.append(f"commandRegex = {json.dumps(exact)}")
        lines += ['decision = "deny"', "priority = 950",
                  f"denyMessage = {json.dumps(f'denied by rule {rule}')}"]
        out.append("\n[[rule]]\n" + "\n".join(lines) + "\n")
    return "".join(out)


class Gemini:
    """A `CliDriver` for Gemini CLI."""

    def __init__(self, setup: DriverSetup) -> None:
        self.setup = setup
        self.session = setup.session
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: AcpConnection | None = None
        self._policy: Path | None = None
        self._stderr: IO[bytes] | None = None
        self._fresh = False  # a new session: swarm's prompt goes before its first message
        self._told: str | None = None  # the session the teammate was told of
        self._instructions = ""  # the checkout's, when its restricted mode reads none
        self.model = setup.model or ""  # as it reports it (session/new), else as asked
        # Why swarm refused its calls this turn: its ACP answer can only say no, so the reasons
        # go before its next message.
        self._refused: list[str] = []

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def argv(self) -> list[str]:
        s = self.setup
        argv = [str(s.executable), "--acp", "--policy", str(self._policy),
                "--approval-mode", s.kind.own_mode(s.mode)]
        return argv + (["--model", s.model] if s.model else []) + s.kind.effort_argv(s.effort)

    def start(self) -> None:
        s = self.setup
        if self._policy is None:
            fd, name = tempfile.mkstemp(prefix="swarm-gemini-", suffix=".toml")  # 0600
            with os.fdopen(fd, "w") as out:
                out.write(POLICY + denied(s.deny))
            self._policy = Path(name)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the CLI's life
        trusted = s.trusted()
        self._instructions = "" if trusted else checkout_instructions(s.kind, s.cwd)
        env = {**s.env, "GEMINI_CLI_NO_RELAUNCH": "true",
               "GEMINI_CLI_TRUST_WORKSPACE": "true" if trusted else "false"}
        self.proc = subprocess.Popen(self.argv(), cwd=s.cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr,
                                     start_new_session=True)  # its own group: kill_tree
        self.conn = AcpConnection(self.proc)
        try:
            init = self.conn.call("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                                 "clientCapabilities": {}})
            servers = [self._server(init)]
            where = {"cwd": str(s.cwd), "mcpServers": servers}
            if self.session:
                try:
                    _keep_record(s.env, self.session)
                    self.conn.call("session/load", {"sessionId": self.session, **where})
                    # It replays the history as updates after its answer: a request answered
                    # after them all, so the first turn sees only its own.
                    self.conn.call("session/set_mode", {"sessionId": self.session,
                                                        "modeId": s.kind.own_mode(s.mode)})
                    self._fresh = False
                except AcpError as exc:
                    s.log(f"gemini could not resume session {self.session} ({exc}): a new one")
                    self.session = None
            if not self.session:
                made = self.conn.call("session/new", where)
                self.session = str(made["sessionId"])
                self.model = str((made.get("models") or {}).get("currentModelId") or s.model or "")
                self._fresh = True
        except AcpError as exc:
            raise RuntimeError(f"gemini did not start: {exc}: {stderr_tail(self._stderr)}") from exc
        s.log(f"gemini started (pid {self.proc.pid}, session {self.session}"
              + ("" if self._fresh else ", resumed")
              + f"; the checkout's configuration {'loaded' if trusted else 'ignored'})")

    def _server(self, init: Any) -> dict[str, Any]:
        """swarm's MCP server for `session/new`: the team's server on this host over http, the
        member's token in its headers (it says `mcpCapabilities.http`), else a stdio child."""
        s = self.setup
        caps = (init.get("agentCapabilities") or {}) if isinstance(init, dict) else {}
        if s.team_server is not None and (caps.get("mcpCapabilities") or {}).get("http"):
            hub = s.team_server()
            return {"type": "http", "name": SERVER, "url": hub.url,
                    "headers": [{"name": k, "value": v} for k, v in hub.headers().items()]}
        return {"name": SERVER, "command": s.mcp_server[0], "args": s.mcp_server[1:],
                "env": [{"name": k, "value": v} for k, v in s.mcp_env.items()]}

    def turn(self, text: str, events: TurnEvents) -> TurnResult:
        if self.proc is None or self.proc.poll() is not None or self.conn is None:
            self.start()
        assert self.conn is not None and self.session is not None
        if self._told != self.session:
            self._told = self.session
            events.on_session(self.session)
        if self.model:
            events.on_model(self.model)
        if self._refused:  # why swarm refused what it asked last turn: it was told only "no"
            text = "(swarm) Not run in your last turn: " + "; ".join(self._refused) + "\n\n" + text
            self._refused = []
        if self._fresh:
            text = "\n\n".join(p for p in (self.setup.system_append, self._instructions, text) if p)
            self._fresh = False
        reader = _Updates(self, events)
        result = TurnResult(session_id=self.session)
        try:
            answer = self.conn.call("session/prompt", {"sessionId": self.session, "prompt": [
                {"type": "text", "text": text}]}, reader.handle)
        except AcpError as exc:
            result.text = reader.finish()
            if self.proc is not None and self.proc.poll() is not None:
                self.proc = None
                result.failure = f"gemini exited during the turn: {stderr_tail(self._stderr)}"
            else:
                result.failure = f"gemini: {str(exc)[:300]}"
            return result
        result.text = reader.finish()
        result.usage = usage_of(answer, self.setup.kind.price_provider or "")
        stop = str(answer.get("stopReason") or "end_turn")
        if stop == "cancelled":
            result.interrupted = True
        elif stop != "end_turn":
            result.failure = f"gemini stopped: {stop}"
        return result

    def permission(self, request: dict[str, Any]) -> dict[str, Any]:
        """swarm's answer to `session/request_permission`: an option Gemini offered. A call
        swarm reads as several (a read of many files) runs only if each is allowed."""
        params = request.get("params") or {}
        call = params.get("toolCall") or {}
        decide = self.setup.decide
        decision = Decision("deny", "nobody decides for this agent")
        for asked in swarm_calls(call, self.setup.cwd):
            if decide is None:
                break
            decision = decide(asked.tool, asked.args, str(call.get("toolCallId") or ""), None,
                              asked.must_ask)
            if decision.behavior != "allow":
                break
        self.setup.log(f"gemini asks {tool_of(call)} {call.get('title', '')!r}:"
                       f" {decision.behavior}")
        if decision.behavior != "allow":
            self._refused.append(f"{call.get('title') or tool_of(call)}: {decision.reason}")
        wanted = "allow_once" if decision.behavior == "allow" else "reject_once"
        for option in params.get("options") or []:
            if option.get("kind") == wanted:
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    def interrupt(self) -> None:
        if self.conn is not None and self.session:
            self.conn.notify("session/cancel", {"sessionId": self.session})

    def set_mode(self, mode: str) -> None:
        own = self.setup.kind.own_mode
        if own(mode) != own(self.setup.mode) and self.conn is not None:
            self.conn.send("session/set_mode", {"sessionId": self.session,
                                                "modeId": own(mode)})
        self.setup.mode = mode

    def stop(self) -> None:
        """Close its input; it lives on while its MCP servers do (measured), so then SIGTERM
        its group (it ends them and exits), and SIGKILL if that is not enough."""
        proc, self.proc, self.conn = self.proc, None, None
        if proc is not None:
            end_group(proc, CLOSE_GRACE, STOP_GRACE)
        if self._policy is not None:
            self._policy.unlink(missing_ok=True)
            self._policy = None


class _Updates(TurnText):
    """One turn's messages from the agent: text and tool calls to the teammate, permission
    requests to swarm, anything else refused."""

    def __init__(self, driver: Gemini, events: TurnEvents) -> None:
        super().__init__(events)
        self.driver = driver

    def handle(self, message: dict[str, Any]) -> None:
        conn = self.driver.conn
        method = message.get("method")
        if method == "session/request_permission" and conn is not None:
            conn.respond(message.get("id"), self.driver.permission(message))
            return
        if "id" in message and conn is not None:
            conn.respond(message["id"], error=f"{method} is not offered by swarm")
            return
        if method != "session/update":
            return
        update = (message.get("params") or {}).get("update") or {}
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content") or {}
            piece = str(content.get("text") or "") if content.get("type") == "text" else ""
            if not piece.startswith("[MODE_UPDATE]"):  # its note of a mode change
                self.text += piece
        elif kind == "tool_call":
            self.flush()
            name, args = shown_call(update)
            self.events.on_tool_use(name, args)
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            self.events.on_tool_result(content_text(update.get("content")),
                                       update.get("status") == "failed")


def usage_of(answer: dict[str, Any], provider: str) -> Usage:
    """The turn's tokens from `_meta.quota`, priced per model by swarm's table."""
    quota = (answer.get("_meta") or {}).get("quota") or {}
    total = Usage()
    per_model = quota.get("model_usage") or [{"model": "", "token_count":
                                              quota.get("token_count") or {}}]
    for entry in per_model:
        count = entry.get("token_count") or {}
        usage = price_usage(provider, str(entry.get("model") or ""), Usage(
            input_tokens=int(count.get("input_tokens") or 0),
            output_tokens=int(count.get("output_tokens") or 0)))
        total.input_tokens += usage.input_tokens
        total.output_tokens += usage.output_tokens
        total.cost_usd += usage.cost_usd
        total.cost_known = total.cost_known and usage.cost_known
    return total


def _keep_record(env: dict[str, str], session: str) -> None:
    """gemini-cli#28775: rename the session's record out of the way of the one `session/load`
    starts (`session-<this minute>-<id[:8]>.jsonl`); it still lists, loads and grows."""
    home = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home())
    for record in (home / ".gemini" / "tmp").glob(f"*/chats/session-*-{session[:8]}.jsonl"):
        if record.name.startswith("session-kept-"):
            continue
        with contextlib.suppress(OSError), record.open() as f:
            if session not in f.readline():
                continue
        kept = record.with_name("session-kept-" + record.name[len("session-"):])
        if not kept.exists():  # never over a record kept before
            with contextlib.suppress(OSError):
                record.rename(kept)
