"""One subagent: a `Loop` run in a thread of its parent's process, with its own conversation,
model object, usage and transcript. It answers that loop (its `TurnControl`, one of its
observers, its `Permits`) and is the `ToolHost` of its tools; the runner
(runtime.subagents.runner) starts, stops, resumes and reports it.

Stopping abandons rather than joins: the runner records the subagent as stopped at once and
kills its shell command; the thread, if it is inside a model call, leaves at the next hook
(each checks that it is still the subagent's current run) without touching the conversation.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from swarm.core.records.permissions import Decision
from swarm.core.records.state import SubagentInfo, Usage
from swarm.core.team.transcript import Transcript
from swarm.core.text.readable import clip, tool_call
from swarm.errors import SubagentStopped, describe_error
from swarm.runtime.models.base import ModelReply
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.process.kill import CurrentCommand, kill_tree
from swarm.runtime.subagents.progress import Summaries
from swarm.runtime.teammate.console import brief
from swarm.runtime.tools.base import NoHost, Tool, ToolContext, ToolResult
from swarm.runtime.turn.builder import LoopParts, build_loop, tool_env
from swarm.runtime.turn.compaction import Compactor
from swarm.runtime.turn.hooks import Conversation, LoopHooks, TurnControl
from swarm.runtime.turn.loop import TurnOutcome

if TYPE_CHECKING:
    from swarm.core.team.worktrees import WorktreeRecord
    from swarm.runtime.extensions.mcp_client import McpManager
    from swarm.runtime.subagents.runner import Subagents

T = TypeVar("T")
log = logging.getLogger(__name__)
RECENT = 3  # tool calls kept for AgentStatus, the notification and `swarm status`
RECENT_WIDTH = 120  # each one's line


@dataclass
class Run:
    """One stretch of work (the first prompt, or a resume): its thread and its end."""

    thread: threading.Thread | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    outcome: TurnOutcome | None = None
    error: str | None = None
    stop_reason: str = "stopped"
    finishing: bool = False  # its end is being recorded (by its thread or by a stop)


@dataclass
class SubagentParts:
    """What the runner decided for one subagent (a fork's or a type's)."""

    info: SubagentInfo
    cwd: Path
    worktree: WorktreeRecord | None
    policy: PermissionPolicy  # its parent's, in its cwd (a type's mode capped by the parent's)
    max_turns: int | None
    loop: LoopParts
    mcp: McpManager | None = None  # its definition's own MCP servers, if any
    stopped: threading.Event = field(default_factory=threading.Event)  # ends an MCP call
    withheld: list[str] = field(default_factory=list)  # its type's tools its parent lacks
    one_shot: bool = False  # explore, plan: not resumed once ended (AgentDefinition.one_shot)


class Subagent(TurnControl, LoopHooks, NoHost):
    def __init__(self, runner: Subagents, transcript: Transcript, parts: SubagentParts) -> None:
        self.runner = runner
        self.info = parts.info
        self.transcript = transcript
        self._asking = parts.policy  # may ask (as the parent would) while the parent waits
        self._quiet = replace(parts.policy, asker=None)  # in the background: asking is denied
        self.max_turns = parts.max_turns
        self.one_shot = parts.one_shot
        self.turns = 0
        self.usage = Usage()
        self.final_text = ""
        self.worktree = parts.worktree
        self.run = Run()
        self.command = CurrentCommand(lambda pid: None)  # its Bash, which AgentStop kills
        self._inbox: list[dict[str, Any]] = []  # messages from the parent while it runs
        self.mcp = parts.mcp
        self.stopped = parts.stopped  # AgentStop: ends an MCP call in flight
        self.compactor = Compactor(on_compacted=self.transcript.compaction,
                                   on_usage=self.count)
        self.summaries = Summaries(self)
        host = runner.host
        # Its tools work in its cwd as its parent (the same env); its calls get the parent's
        # PreToolUse (in the policy) and PostToolUse (the parent loop's tool hooks).
        # SWARM_DEPTH: a `swarm spawn` from its commands counts the chain through it.
        ctx = ToolContext(team=host.team, name=host.name, cwd=parts.cwd, host=self,
                          env={**tool_env(host.team.name, host.name),
                               "SWARM_DEPTH": str(parts.info.depth)})
        self.loop = build_loop(parts.loop, ctx, self, self, (self,), host.loop.tool_hooks)

    @property
    def agent_id(self) -> str:
        return self.info.agent_id

    # -- running -----------------------------------------------------------------------------
    def start(self, content: list[dict[str, Any]]) -> Run:
        """A new run on a new thread; the previous run (if any) is already over."""
        run = Run()
        self.run = run
        run.thread = threading.Thread(target=self._main, args=(run, content),
                                      name=self.agent_id, daemon=True)
        run.thread.start()
        return run

    def _main(self, run: Run, content: list[dict[str, Any]]) -> None:
        try:
            run.outcome = self.loop.run(content)
        except SubagentStopped:
            pass
        except BaseException as exc:  # a subagent that raises fails; its parent goes on
            log.exception("subagent %s crashed", self.agent_id)
            run.error = describe_error(exc)
        finally:  # a stopped run's open tool calls are answered when it is resumed
            self.runner.ended(self, run)

    def stop(self) -> None:
        self.run.stop.set()
        self.stopped.set()
        self.command.kill()

    def move_to(self, cwd: Path) -> None:
        """Work in `cwd` from now on (a new worktree on resume)."""
        self.loop.ctx.cwd = self._asking.cwd = self._quiet.cwd = cwd

    def deliver(self, block: dict[str, Any]) -> None:
        """A message from the parent: the subagent sees it at its next model call."""
        with self.runner.lock:
            self._inbox.append(block)

    def _stale(self) -> bool:
        """This thread's run was stopped, or is not the subagent's current one any more."""
        run = self.run
        return run.stop.is_set() or run.thread is not threading.current_thread()

    def _check(self) -> None:
        if self._stale():
            raise SubagentStopped()

    def count(self, usage: Usage) -> None:
        """Its usage (a call of its loop, its compaction or its summary: another thread)."""
        with self.runner.lock:
            self.usage.add(usage)
            self.info.tokens = self.usage.total_tokens
        self.runner.host.add_usage(usage, turn=False)  # the parent's usage and cost include it

    # -- Permits: its parent's policy; in the background nobody is asked ------------------------
    def check(self, tool: Tool, args: dict[str, Any], use_id: str,
              must_ask: str | None = None) -> Decision:
        policy = self._quiet if self.info.background else self._asking
        return policy.check(tool, args, use_id, must_ask)  # with its parent's PreToolUse hooks

    # -- TurnControl: each step checks that it is still the subagent's current run -----------
    def guard(self, call: Callable[[], T]) -> T:
        self._check()
        result = call()
        if self._stale():  # stopped meanwhile: the reply is dropped, the conversation untouched
            if isinstance(result, ModelReply):
                self.count(result.usage)  # spent, even by a run that was stopped meanwhile
            raise SubagentStopped()
        return result

    def before_call(self, conversation: Conversation) -> None:
        self.compactor(conversation)

    def spend_limit(self, pending: Usage) -> str | None:
        return self.runner.host.spend_limit(pending)  # its spend is its parent's

    def stop_reason(self) -> str | None:
        self._check()
        limit = self.runner.host.subagent_limit()
        if limit:
            return limit
        if self.max_turns is not None and self.turns >= self.max_turns:
            return "max_turns"
        return None

    def before_tool(self, tool: Tool, args: dict[str, Any]) -> None:
        self._check()

    def arrivals(self) -> tuple[list[dict[str, Any]], Callable[[], None]]:
        self._check()
        with self.runner.lock:
            taken, self._inbox = self._inbox, []
        return taken, lambda: None

    # -- LoopHooks: what it did, for AgentStatus, the notification and `swarm status` --------
    def on_tool_start(self, tool: Tool, args: dict[str, Any]) -> None:
        # Its recent activity: a call as it starts (a long command shows while it runs).
        with self.runner.lock:  # `records()` copies the list under the same lock
            self.info.recent = [*self.info.recent, clip(tool_call(tool.name, args),
                                                        RECENT_WIDTH)][-RECENT:]
        self.runner.changed(sync=False)

    def on_reply(self, reply: Any) -> None:
        self.turns += 1
        self.count(reply.usage)  # spent, even by a run that was stopped meanwhile
        self.compactor.last_input_tokens = reply.usage.all_input_tokens
        if reply.text().strip():
            self.final_text = reply.text().strip()
            self.trace(f"says: {self.final_text}")
        self.runner.changed(sync=False)

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        self.info.tool_uses += 1
        self.summaries.tool_done(tool.name)

    def record(self, message: dict[str, Any]) -> None:
        self.transcript.message(message)

    def trace(self, line: str) -> None:
        self.runner.host.trace(f"[{self.agent_id}] {brief(line, 150)}")

    # -- ToolHost ------------------------------------------------------------------------------
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        self.command.track(proc)
        if proc is not None and self.run.stop.is_set():
            kill_tree(proc)  # stopped while it was starting the command

    def exit_plan(self, plan: str) -> str:
        return "A subagent does not submit plans: put the plan in your final reply."
