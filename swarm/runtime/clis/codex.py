"""Codex driven headless through `codex app-server`: one long-lived process speaking JSON-RPC
(one JSON object a line) on its stdin and stdout, kept between turns. Measured with codex
0.171: `initialize`, then `thread/start` (or `thread/resume` with the thread id after a
restart: the thread is `cli_session`), then per input one `turn/start`, its notifications
(`item/started`, `item/completed`, `thread/tokenUsage/updated`) up to `turn/completed`;
`turn/interrupt` ends a turn, the process lives on. Closing its stdin ends it.

Its team tools are the team's MCP server on this host (streamable HTTP: runtime/clis/team_server.py),
given in the thread's `config` on top of the user's own Codex config (their provider and login
stay theirs; nothing on its command line, which any user's `ps` shows): `url` and
`http_headers` (the member's token), `required = true` (connected before the first request, or the start
fails), `default_tools_approval_mode = "approve"` (the team protocol is never a question).

What Codex would ask a person comes to swarm as a JSON-RPC request: a command
(`item/commandExecution/requestApproval`, asked as swarm's `Bash` with the command the model
wrote, unwrapped from Codex's `bash -lc`) or a patch (`item/fileChange/requestApproval`, each
file asked as `Write` (added) or `Edit`). Swarm's permission engine answers
(`clis.permission.decide`: its mode, rules, file scopes, else the lead with that input); a
denial's reason is steered into the turn before the decline goes back (so it is in the
model's next request).

Mode mapping (core.kinds): every swarm mode (plan is refused at spawn) runs Codex with approval
policy `untrusted` and sandbox `danger-full-access`; measured with 0.171, Codex then asks about every
command (`ls` and `cat` too) and every patch, so swarm's answer, made with the member's mode
as it is now, is the one gate, as for swarm's own Bash (Codex's sandbox would need bubblewrap
and would ask again to run unsandboxed). `swarm mode` changes what swarm answers; Codex's
settings stay.
Workspace trust: each thread's `config` (never the user's `config.toml`) marks the checkout
`trusted` or `untrusted` under `projects`, as workspace trust decided when the process started:
untrusted, Codex loads none of its `.codex/` (config, MCP servers, hooks, exec policy rules),
and never records the checkout as trusted in the user's own config (measured with 0.171: a
thread started with sandbox `danger-full-access` does, then loads it). Every directory Codex may
look the trust up by is marked: the cwd and those above it, resolved too, and a worktree's main
checkout.
Usage: the `last` token counts of each `thread/tokenUsage/updated` in the turn (input counts
cached input: split into swarm's input and cache-read), priced by swarm's table for the model.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import queue
import shlex
import subprocess
import tempfile
import threading
from typing import IO, Any

from swarm.core.records.permissions import Decision
from swarm.core.records.state import Usage
from swarm.runtime.clis.base import (
    DriverSetup,
    TurnEvents,
    TurnResult,
    close_and_end,
    stderr_tail,
)
from swarm.runtime.clis.codex_config import thread_config
from swarm.runtime.clis.permission import UNKNOWN_DIRECTORY, run_in
from swarm.runtime.models.prices import price_usage

SERVER = "swarm"
SANDBOX = "danger-full-access"
log = logging.getLogger(__name__)

START_TIMEOUT = 180.0  # seconds for initialize and the thread (its MCP servers included)
STEER_TIMEOUT = 30.0  # seconds Codex may take to take a decline's reason into its turn
STOP_GRACE = 10.0  # seconds for it to end after its input closes
SHELLS = ("bash", "sh", "zsh")
Rpc = dict[str, Any]  # one JSON-RPC message, as sent or read


class CodexError(Exception):
    pass


def shown_command(command: str) -> str:
    """The command the model wrote: Codex runs it as `/bin/bash -lc '...'`."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if (len(words) == 3 and os.path.basename(words[0]) in SHELLS
            and words[1] in ("-c", "-lc")):
        return words[2]
    return command


def patch_calls(changes: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """A patch's files as swarm's tool calls: an added file is a Write, any other an Edit."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for change in changes:
        kind = (change.get("kind") or {}).get("type")
        path, diff = str(change.get("path", "")), str(change.get("diff", ""))
        if kind == "add":
            calls.append(("Write", {"file_path": path, "content": diff}))
        else:
            calls.append(("Edit", {"file_path": path, "diff": diff,
                                   **({"delete": True} if kind == "delete" else {})}))
            moved = (change.get("kind") or {}).get("move_path")
            if moved:
                calls.append(("Write", {"file_path": str(moved), "content": diff}))
    return calls


class Codex:
    """A `CliDriver` for Codex."""

    def __init__(self, setup: DriverSetup) -> None:
        self.setup = setup
        self.session = setup.session  # the thread id
        self.model = setup.model
        self.proc: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, queue.Queue[Rpc | None]] = {}
        self._events: queue.Queue[Rpc | None] = queue.Queue()
        self._patches: dict[str, list[dict[str, Any]]] = {}  # fileChange item id -> changes
        self._write = threading.RLock()  # interrupt() writes from the signal handler
        self._turn: str | None = None
        self._commands: set[str] = set()  # the turn's command items (to end on an interrupt)
        self._interrupt_wanted = False
        self._cancel = threading.Event()  # set when no turn waits for an answer any more
        self._announced: str | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def argv(self) -> list[str]:
        s = self.setup
        return [str(s.executable), "app-server", *s.kind.effort_argv(s.effort)]

    # -- the process and its wire -------------------------------------------------------------
    def start(self) -> None:
        s = self.setup
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the CLI's life
        self._events, self._pending = queue.Queue(), {}
        self.proc = subprocess.Popen(self.argv(), cwd=s.cwd, env=s.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr,
                                     start_new_session=True)  # its own group: kill_tree
        threading.Thread(target=self._read, args=(self.proc, self._events, self._pending),
                         name="codex-reader", daemon=True).start()
        self._request("initialize", {"clientInfo": {"name": "swarm", "version": "1"},
                                     "capabilities": {"experimentalApi": True}})
        self._send({"method": "initialized"})
        trusted = s.trusted()
        params = {k: v for k, v in {
            "cwd": str(s.cwd), "approvalPolicy": s.kind.own_mode(s.mode), "sandbox": SANDBOX,
            "developerInstructions": s.system_append, "model": s.model,
            "config": thread_config(s, trusted, SERVER)}.items() if v}
        thread: Rpc | None = None
        if self.session:
            try:
                thread = self._request("thread/resume", {"threadId": self.session, **params})
            except CodexError as exc:
                s.log(f"codex could not resume thread {self.session} ({exc}): a new thread")
        resumed = thread is not None
        thread = thread or self._request("thread/start", params)
        self.session = str(thread["thread"]["id"])
        self.model = str(thread.get("model") or s.model or "")
        s.log(f"codex app-server started (pid {self.proc.pid}, thread {self.session}"
              + (", resumed" if resumed else "")
              + f"; the checkout's configuration {'loaded' if trusted else 'ignored'})")

    def _read(self, proc: subprocess.Popen[bytes], events: queue.Queue[Rpc | None],
              pending: dict[int, queue.Queue[Rpc | None]]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # not ours to parse
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:  # a request of Codex's: to answer
                threading.Thread(target=self._answer, args=(message,), name="codex-approval",
                                 daemon=True).start()
            elif "id" in message:
                box = pending.pop(message["id"], None)
                if box is not None:
                    box.put(message)
            elif "method" in message:
                item = (message.get("params") or {}).get("item") or {}
                if message["method"] == "item/started" and item.get("type") == "fileChange":
                    self._patches[str(item.get("id"))] = list(item.get("changes") or [])
                events.put(message)
        for box in list(pending.values()):
            box.put(None)
        pending.clear()
        events.put(None)

    def _send(self, message: Rpc) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None:
            return
        with self._write, contextlib.suppress(OSError, ValueError):
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
            proc.stdin.flush()

    def _request(self, method: str, params: Rpc, timeout: float = START_TIMEOUT) -> Rpc:
        ident = next(self._ids)
        box: queue.Queue[Rpc | None] = queue.Queue()
        self._pending[ident] = box
        self._send({"id": ident, "method": method, "params": params})
        try:
            reply = box.get(timeout=timeout)
        except queue.Empty:
            raise CodexError(f"{method}: no answer within {timeout:g}s") from None
        if reply is None:
            raise CodexError(f"codex exited: {stderr_tail(self._stderr)}")
        if "error" in reply:
            raise CodexError(f"{method}: {(reply['error'] or {}).get('message')}")
        return dict(reply.get("result") or {})

    # -- its questions ------------------------------------------------------------------------
    def _answer(self, request: Rpc) -> None:
        method, params = str(request["method"]), request.get("params") or {}
        cancel = self._cancel  # the turn that asks
        must_ask = None
        if method == "item/commandExecution/requestApproval":
            # Checked where it runs: the request's cwd (the model's `workdir`, resolved).
            command = shown_command(str(params.get("command") or ""))
            where = params.get("cwd")
            if isinstance(where, str) and where:
                calls = [("Bash", {"command": run_in(command, where, self.setup.cwd)})]
            else:
                must_ask = UNKNOWN_DIRECTORY
                calls = [("Bash", {"command": command,
                                   "description": f"{UNKNOWN_DIRECTORY} (Codex gave no cwd)"})]
        elif method == "item/fileChange/requestApproval":
            calls = patch_calls(self._patches.pop(str(params.get("itemId")), []))
        else:  # nothing else is ever asked with the policy above: refuse, never hang the turn
            self._send({"id": request["id"], "error": {
                "code": -32601, "message": f"swarm does not answer {method}"}})
            return
        decision = self._decide(calls, str(params.get("itemId") or ""), cancel, must_ask)
        allowed = decision.behavior == "allow"
        turn, thread = params.get("turnId"), params.get("threadId")
        if not allowed and turn and thread and not cancel.is_set():
            # Why, for its model (a decline says no more): in the turn before the decline lets
            # it go on. Its answer is awaited: a steer that lands after the next model request
            # has gone out makes Codex drop that request and ask again (tokens spent twice).
            try:
                self._request("turn/steer", {
                    "threadId": thread, "expectedTurnId": turn, "input": [{
                        "type": "text", "text": f"(swarm) Not run: {decision.reason}"}]},
                    timeout=STEER_TIMEOUT)
            except CodexError as exc:  # the turn ended meanwhile: the decline is what counts
                log.info("the reason of a decline was not steered in: %s", exc)
        self._send({"id": request["id"], "result": {"decision": "accept" if allowed
                                                    else "decline"}})

    def _decide(self, calls: list[tuple[str, dict[str, Any]]], use_id: str,
                cancel: threading.Event, must_ask: str | None = None) -> Decision:
        decide = self.setup.decide
        if decide is None or not calls:
            return Decision("deny", "nobody can answer this here" if decide is None
                            else "a change swarm was not shown")
        decision = Decision("deny", "not asked")
        for name, args in calls:  # every file of a patch must be allowed
            decision = decide(name, args, use_id, cancel, must_ask)
            if decision.behavior != "allow":
                return decision
        return decision

    # -- a turn -------------------------------------------------------------------------------
    def turn(self, text: str, events: TurnEvents) -> TurnResult:
        result = TurnResult()
        try:
            if self.proc is None or self.proc.poll() is not None:
                self.start()
            if self.session != self._announced and self.session:
                self._announced = self.session
                events.on_session(self.session)
            if self.model:
                events.on_model(self.model)  # the model its thread runs, as it says
            self._cancel = threading.Event()  # this turn's: a later turn's never revives it
            self._interrupt_wanted = False
            self._commands = set()
            started = self._request("turn/start", {"threadId": self.session, "input": [
                {"type": "text", "text": text}]})
        except CodexError as exc:
            result.failure = f"codex: {exc}"
            return result
        result.session_id = self.session
        self._turn = str((started.get("turn") or {}).get("id"))
        if self._interrupt_wanted:
            self.interrupt()
        try:
            return self._follow(self._turn, events, result)
        finally:
            self._turn = None
            self._cancel.set()

    def _follow(self, turn: str, events: TurnEvents, result: TurnResult) -> TurnResult:
        usage = Usage()
        while True:
            message = self._events.get()
            if message is None:
                code = self.proc.wait() if self.proc is not None else None
                result.failure = (f"codex exited (code {code}) during the turn:"
                                  f" {stderr_tail(self._stderr)}")
                self.proc = None
                break
            method, params = message.get("method"), message.get("params") or {}
            if method == "turn/completed":
                done = params.get("turn") or {}
                if done.get("id") != turn:
                    continue
                if done.get("status") == "interrupted":
                    result.interrupted = True
                    self._end_commands(self._commands)
                elif done.get("status") == "failed":
                    why = (done.get("error") or {}).get("message") or "the turn failed"
                    result.failure = f"codex: {why}"
                break
            if params.get("turnId") not in (None, turn):
                continue  # a notification of an earlier (interrupted) turn
            if method == "item/started":
                self._started(params.get("item") or {}, events)
            elif method == "item/completed":
                self._completed(params.get("item") or {}, events, result)
            elif method == "thread/tokenUsage/updated":
                last = (params.get("tokenUsage") or {}).get("last") or {}
                cached = int(last.get("cachedInputTokens") or 0)
                output = int(last.get("outputTokens") or 0)
                # Reasoning is part of its output (as OpenAI counts it): counted apart.
                thinking = min(int(last.get("reasoningOutputTokens") or 0), output)
                usage.add(Usage(input_tokens=max(0, int(last.get("inputTokens") or 0) - cached),
                                cache_read_input_tokens=cached, output_tokens=output - thinking,
                                thinking_tokens=thinking))
        result.usage = price_usage("openai", self.model or "", usage)
        return result

    def _started(self, item: Rpc, events: TurnEvents) -> None:
        kind = item.get("type")
        if kind == "commandExecution":
            self._commands.add(str(item.get("id")))
            events.on_tool_use("Bash", {"command": run_in(shown_command(str(item.get("command"))),
                                                          item.get("cwd"), self.setup.cwd)})
        elif kind == "mcpToolCall":
            args = item.get("arguments")
            events.on_tool_use(f"mcp__{item.get('server')}__{item.get('tool')}",
                               args if isinstance(args, dict) else {})
        elif kind == "fileChange":
            events.on_tool_use("apply_patch", {"files": ", ".join(
                str(c.get("path")) for c in item.get("changes") or [])})

    def _completed(self, item: Rpc, events: TurnEvents, result: TurnResult) -> None:
        kind, status = item.get("type"), item.get("status")
        if kind == "agentMessage" and item.get("text"):
            result.text = str(item["text"])
            events.on_text(result.text)
        elif kind == "commandExecution":
            failed = status != "completed" or item.get("exitCode") not in (0, None)
            events.on_tool_result(str(item.get("aggregatedOutput") or status), failed)
        elif kind == "mcpToolCall":
            error = (item.get("error") or {}).get("message")
            content = (item.get("result") or {}).get("content") or []
            text = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            events.on_tool_result(str(error or text), bool(error))
        elif kind == "fileChange":
            events.on_tool_result(str(status), status != "completed")

    def _end_commands(self, items: set[str]) -> None:
        """An interrupted turn's commands end with it: Codex may keep one running as a
        background terminal of the thread (seen under load with 0.171)."""
        try:
            listed = self._request("thread/backgroundTerminals/list", {"threadId": self.session},
                                   STOP_GRACE)
            for terminal in listed.get("data") or []:
                if terminal.get("itemId") in items:
                    self._request("thread/backgroundTerminals/terminate", {
                        "threadId": self.session, "processId": terminal.get("processId")},
                        STOP_GRACE)
                    self.setup.log(f"ended `{terminal.get('command')}` with the turn")
        except CodexError as exc:
            self.setup.log(f"codex: the interrupted turn's commands: {exc}")

    def interrupt(self) -> None:
        self._cancel.set()  # a question waiting for the lead is withdrawn
        turn, thread = self._turn, self.session
        if turn is None:
            self._interrupt_wanted = True  # the turn is starting: interrupt once it has an id
            return
        self._send({"id": next(self._ids), "method": "turn/interrupt",
                    "params": {"threadId": thread, "turnId": turn}})

    def set_mode(self, mode: str) -> None:
        """Nothing to tell Codex: swarm answers its questions with the member's mode now."""
        self.setup.mode = mode

    def stop(self) -> None:
        """Close its input (it ends, its MCP servers with it), then make sure."""
        self._cancel.set()
        proc, self.proc = self.proc, None
        if proc is None:
            return
        close_and_end(proc, STOP_GRACE)

