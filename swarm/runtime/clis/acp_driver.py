"""Any agent that speaks the Agent Client Protocol as a teammate (Qwen Code, OpenCode, Goose,
Kimi, Copilot, ...): one driver for all, everything that differs is data in the kind's entry
(core.kinds `AcpAgent`). The wire is the official SDK's (runtime.clis.acp_client).

Start: workspace trust first (none of them can drop a checkout's configuration and keep the
session's MCP servers: an untrusted checkout with any project file is refused, one line); the
agent spawned in its own process group with the teammate's environment (its credential a token
of swarm's model proxy), the kind's fixed and per-start secret variables and its private
settings file; `initialize`; `session/load` (or `session/resume`) of the member's session on a
restart where the agent offers it, else `session/new` in the member's directory with swarm's
MCP server for this member in `mcpServers` (the team's server on this host over http with the
member's token in its headers, when the agent's `initialize` says `mcpCapabilities.http`; else
a stdio `swarm mcp serve --as NAME` child of its own); then its mode (`session/set_mode` or the kind's
config option), checked: a mode it cannot be put in stops the start. A failed `session/new` that
asks for a login stops it with the kind's sign-in step.

A turn is one `session/prompt` (swarm's part of the prompt and the checkout's instructions
before the first message of a new session); its updates become the pane's lines and the
transcript's tool calls; its tokens are the sum of the per-call `_meta.usage` of its message
chunks where the agent sends them (Qwen Code), else the prompt result's `usage` (OpenCode: its
last model call only); cost unknown. Permission requests: runtime.clis.acp_calls reads the real
input, swarm decides. Interrupt is `session/cancel` (a pending question answered `cancelled`).
Stop: `session/close` where offered, the input closed, then SIGTERM and SIGKILL of its group.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from swarm.big_import import big_import
from swarm.core.kinds import AcpAgent, load
from swarm.core.records.state import Usage
from swarm.runtime.clis.acp_calls import is_swarms_own, result_text, shown_call, swarm_calls
from swarm.runtime.clis.base import (
    DriverSetup,
    TurnEvents,
    TurnResult,
    TurnText,
    stderr_tail,
)
from swarm.runtime.process.kill import end_group

SERVER = "swarm"
START_TIMEOUT = 120.0  # seconds for initialize and session/new on a busy machine
CLOSE_GRACE = 2.0  # for the agent to end after its input closes
STOP_GRACE = 10.0  # then after SIGTERM
_LOGIN = ("auth", "login", "sign in", "unauthor")


class AcpDriver:
    """A `CliDriver` for any ACP agent."""

    def __init__(self, setup: DriverSetup) -> None:
        self.setup = setup
        agent = setup.kind.acp
        if agent is None:
            raise RuntimeError(f"{setup.kind.title} does not speak ACP")
        self.agent: AcpAgent = agent
        self.session = setup.session
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: Any = None  # acp_client.AcpSession, imported at the first start
        self.sink: Any = None
        self.capabilities: Any = None
        self._stderr: IO[bytes] | None = None
        self._files: list[Path] = []
        self._fresh = False
        self._told: str | None = None
        self._refused: list[str] = []  # why swarm refused what it asked (told next turn)
        self.model = setup.model or ""

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def name(self) -> str:
        return self.setup.kind.title

    def argv(self, own_mode: str) -> list[str]:
        exe_argv = [str(self.setup.executable)]
        node = shutil.which("node")
        if self.agent.node_entry and node is not None:  # its package's entry, not its launcher
            entry = Path(os.path.realpath(exe_argv[0])).parent / self.agent.node_entry[-1]
            if entry.is_file():
                exe_argv = [node, *self.agent.node_entry[:-1], str(entry)]
        return [*exe_argv, *(a.replace("{mode}", own_mode) for a in self.agent.args),
                *self.setup.command_args]

    def _env(self, own_mode: str) -> dict[str, str]:
        s = self.setup
        env = {**s.env, **{k: v.replace("{mode}", own_mode) for k, v in self.agent.env.items()}}
        env.update({name: secrets.token_hex(16) for name in self.agent.secret_env})
        if self.agent.settings:
            named = load(self.agent.settings)(s, own_mode)
            self._files += [Path(p) for p in named.values()]
            env.update(named)
        return env

    def start(self) -> None:
        s = self.setup
        trusted = s.trusted()
        if not trusted:  # the spawn refused it already; a file written since stops a restart
            raise RuntimeError(f"{self.name} does not start in an untrusted checkout (it would"
                               f" run the checkout's own configuration): review it with"
                               f" `swarm trust {s.cwd}`")
        own_mode = s.kind.own_mode(s.mode)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the agent's life
        self.proc = subprocess.Popen(self.argv(own_mode), cwd=s.cwd, env=self._env(own_mode),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        with big_import():  # after the spawn: the import overlaps the agent's own start
            from swarm.runtime.clis import acp_client
        self.client = acp_client.AcpSession(self.proc, self._permission)
        try:
            self._open_session(acp_client, own_mode)
        except Exception as exc:
            self.stop()
            raise RuntimeError(self._why(exc)) from exc
        s.log(f"{self.name} started (pid {self.proc.pid}, session {self.session}"
              + ("" if self._fresh else ", resumed") + ")")

    def _why(self, exc: BaseException) -> str:
        text = str(exc) or type(exc).__name__
        data = getattr(exc, "data", None)
        if data:
            text = f"{text}: {data}"
        if any(word in text.lower() for word in _LOGIN):
            return f"{self.name} needs a login: {self.setup.kind.sign_in_hint} ({text[:200]})"
        return f"{self.name} did not start: {text[:300]}: {stderr_tail(self._stderr)}"

    def _open_session(self, acp_client: Any, own_mode: str) -> None:
        s = self.setup
        init = self.client.initialize(START_TIMEOUT)
        self.capabilities = init.agent_capabilities
        if s.team_server is not None and acp_client.offers_http(init):
            # The team's MCP server on this host, the member's token in the request itself.
            hub = s.team_server()
            servers = [acp_client.http_server(SERVER, hub.url, hub.headers())]
        else:  # an agent that takes stdio servers only: its own child, as before
            servers = [acp_client.stdio_server(SERVER, s.mcp_server, s.mcp_env)]
        where = {"cwd": str(s.cwd), "mcp_servers": servers}
        answer = None
        if self.session:
            answer = self._resume(where)
        if answer is None:
            answer = self.client.run(self.client.conn.new_session(**where), START_TIMEOUT)
            self.session = str(answer.session_id)
            self._fresh = True
        models = getattr(answer, "models", None)
        if models is not None and getattr(models, "current_model_id", None):
            self.model = str(models.current_model_id)
        self._set_mode(answer, own_mode)

    def _resume(self, where: dict[str, Any]) -> Any:
        caps = self.capabilities
        sessions = getattr(caps, "session_capabilities", None)
        conn = self.client.conn
        try:
            if caps is not None and caps.load_session:
                return self.client.run(conn.load_session(session_id=self.session, **where),
                                       START_TIMEOUT) or _Empty()
            if sessions is not None and sessions.resume is not None:
                return self.client.run(conn.resume_session(session_id=self.session, **where),
                                       START_TIMEOUT) or _Empty()
        except Exception as exc:  # noqa: BLE001 - any failure: a new session, said so
            self.setup.log(f"{self.name} could not resume session {self.session} ({exc}):"
                           " a new one")
        else:
            self.setup.log(f"{self.name} offers no way to resume a session: a new one")
        self.session = None
        return None

    def _set_mode(self, answer: Any, own_mode: str) -> None:
        """Put the session in the kind's mode and check it took; else stop the start."""
        conn, sid = self.client.conn, str(self.session)
        option = self.agent.mode_option
        if option is not None:
            options = self.client.run(conn.set_config_option(
                config_id=option, session_id=sid, value=own_mode), START_TIMEOUT)
            values = {o.id: getattr(o, "current_value", None)
                      for o in getattr(options, "config_options", None) or []}
            if values.get(option) != own_mode:
                raise RuntimeError(f"its {option} option is {values.get(option)!r}, not"
                                   f" {own_mode!r}: not run with fewer questions than asked")
            return
        modes = getattr(answer, "modes", None)
        offered = {m.id for m in modes.available_modes} if modes is not None else set()
        if own_mode in offered:
            self.client.run(conn.set_session_mode(session_id=sid, mode_id=own_mode),
                            START_TIMEOUT)
            return
        if "{mode}" in " ".join((*self.agent.args, *self.agent.env.values())):
            return  # its launch set the mode (Goose's GOOSE_MODE), the only way it has
        raise RuntimeError(f"it offers no mode {own_mode!r} (its modes: "
                           f"{', '.join(sorted(offered)) or 'none'})")

    # -- a turn ------------------------------------------------------------------------------
    def turn(self, text: str, events: TurnEvents) -> TurnResult:
        if self.proc is None or self.proc.poll() is not None or self.client is None:
            self.stop()  # what is left of an agent that ended
            self.start()
        from swarm.runtime.clis import acp_client  # imported by start() already

        assert self.session is not None
        if self._told != self.session:
            self._told = self.session
            events.on_session(self.session)
        if self.model:
            events.on_model(self.model)
        if self._refused:
            text = "(swarm) Not run in your last turn: " + "; ".join(self._refused) + "\n\n" + text
            self._refused = []
        if self._fresh:
            text = "\n\n".join(p for p in (self.setup.system_append, text) if p)
            self._fresh = False
        sink = self.sink = acp_client.TurnSink()
        self.client.sink = sink
        future = self.client.submit(self.client.conn.prompt(
            session_id=self.session, prompt=[acp_client.acp.text_block(text)]))
        future.add_done_callback(lambda _: sink.items.put(None))
        reader = _Updates(events, self.setup.kind.tool_prefix)
        while (item := sink.items.get()) is not None:
            reader.handle(item)
        self.client.sink = None
        result = TurnResult(session_id=self.session, text=reader.finish())
        try:
            answer = future.result()
        except Exception as exc:  # noqa: BLE001 - the agent's error, or its exit
            if self.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(CLOSE_GRACE)  # a closed connection: is it gone?
            if self.proc is not None and self.proc.poll() is not None:
                code, tail = self.proc.returncode, stderr_tail(self._stderr)
                self.stop()  # the next turn starts it again and loads the session
                result.failure = f"{self.name} exited during the turn (code {code}): {tail}"
            else:
                result.failure = f"{self.name}: {str(exc)[:300]}"
            return result
        result.usage = reader.usage if reader.counted else _usage(answer)
        stop = str(answer.stop_reason)
        if stop == "cancelled" or sink.cancelled.is_set():
            result.interrupted = True
        elif stop != "end_turn":
            result.failure = f"{self.name} stopped: {stop}"
        return result

    def _permission(self, call: dict[str, Any], cancelled: threading.Event) -> bool:
        """swarm's answer (in a worker thread): each of swarm's calls it reads must be allowed."""
        s = self.setup
        if is_swarms_own(call, s.kind.tool_prefix):
            return True
        if s.decide is None:
            return False
        decision = None
        for asked in swarm_calls(call, s.cwd):
            decision = s.decide(asked.tool, asked.args, str(call.get("toolCallId") or ""),
                                cancelled, asked.must_ask)
            if decision.behavior != "allow":
                break
        allowed = decision is not None and decision.behavior == "allow"
        s.log(f"{self.name} asks {call.get('kind')} {str(call.get('title') or '')[:80]!r}:"
              f" {'allow' if allowed else 'deny'}")
        if not allowed and decision is not None:
            self._refused.append(f"{str(call.get('title') or '')[:120]}: {decision.reason}")
        return allowed

    def interrupt(self) -> None:
        if self.sink is not None:
            self.sink.cancelled.set()
        if self.client is not None and self.session:
            self.client.submit(self.client.conn.cancel(session_id=self.session))

    def set_mode(self, mode: str) -> None:
        own = self.setup.kind.own_mode
        if own(mode) != own(self.setup.mode) and self.client is not None and self.session:
            conn, option = self.client.conn, self.agent.mode_option
            self.client.submit(
                conn.set_config_option(config_id=option, session_id=self.session,
                                       value=own(mode)) if option is not None
                else conn.set_session_mode(session_id=self.session, mode_id=own(mode)))
        self.setup.mode = mode

    def stop(self) -> None:
        proc, client, self.proc, self.client = self.proc, self.client, None, None
        sessions = getattr(self.capabilities, "session_capabilities", None)
        if client is not None and self.session and sessions is not None \
                and sessions.close is not None and proc is not None and proc.poll() is None:
            with contextlib.suppress(Exception):
                client.run(client.conn.close_session(session_id=self.session), CLOSE_GRACE)
        if proc is not None:
            end_group(proc, CLOSE_GRACE, STOP_GRACE)
        if client is not None:
            client.close()
        for path in self._files:
            path.unlink(missing_ok=True)
        self._files = []


class _Empty:
    """A load or resume answered with nothing (`null`)."""

    modes = None
    models = None


class _Updates(TurnText):
    """One turn's updates: text and tool calls to the teammate, tokens counted."""

    def __init__(self, events: TurnEvents, prefix: str) -> None:
        super().__init__(events)
        self.prefix = prefix
        self.usage = Usage(cost_known=False)
        self.counted = False
        self.shown: set[str] = set()

    def handle(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content") or {}
            if content.get("type") == "text":
                self.text += str(content.get("text") or "")
            usage = (update.get("_meta") or {}).get("usage")
            if isinstance(usage, dict):
                self.counted = True
                self.usage.input_tokens += int(usage.get("inputTokens") or 0)
                self.usage.output_tokens += int(usage.get("outputTokens") or 0)
                self.usage.cache_read_input_tokens += int(usage.get("cachedReadTokens") or 0)
        elif kind in ("tool_call", "tool_call_update"):
            call_id = str(update.get("toolCallId") or "")
            raw = update.get("rawInput")
            if call_id not in self.shown and (raw or kind == "tool_call_update"):
                self.shown.add(call_id)
                self.flush()
                name, args = shown_call(update, self.prefix)
                self.events.on_tool_use(name, args)
            if kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
                self.events.on_tool_result(result_text(update),
                                           update.get("status") == "failed")


def _usage(answer: Any) -> Usage:
    usage = getattr(answer, "usage", None)
    if usage is None:
        return Usage(cost_known=False)
    return Usage(input_tokens=int(usage.input_tokens or 0),
                 output_tokens=int(usage.output_tokens or 0),
                 cache_read_input_tokens=int(getattr(usage, "cached_read_tokens", 0) or 0),
                 cost_known=False)
