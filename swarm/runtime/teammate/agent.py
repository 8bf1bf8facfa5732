"""The teammate process (`swarm agent --agent-id NAME@TEAM`): its turns, signals and exit.

Life of a teammate: read its member entry, build its prompt, tools and permission policy,
resume its conversation from the transcript, then forever: wait for input (`inputs.py`: SPEC's
order, how the model sees it), run one turn of the loop, go idle and tell the lead once
(`idle.py`). SIGINT aborts the turn only; SIGTERM ends the process; an approved shutdown request
ends it cleanly (exit 0); a lead gone for good too (`orphan.py`); any other exception is a
crash, recorded as a death (exit 1).

The agent is the `LoopHooks` of its loop and the `ToolHost` of its tools.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from swarm.core.agents.definitions import effective_tools, get_definition, lends
from swarm.core.agents.memory import memory_tools, own_memory
from swarm.core.records.names import LEAD_NAME, TEAM_TOOLS
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import (
    Message,
    ModeChange,
    ShutdownRequest,
    ShutdownResponse,
)
from swarm.core.records.state import MODEL_FAILING, RESTARTED, SubagentInfo, Usage, without_model
from swarm.core.records.task import Task
from swarm.core.shell.rules import tool_path
from swarm.core.store import paths
from swarm.core.store.liveness import process_start_time
from swarm.core.store.select import open_mailbox
from swarm.core.team.overlaps import record_write
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.trust.workspace import decide
from swarm.errors import ModelAPIError
from swarm.runtime.extensions.loader import checkout_of
from swarm.runtime.models import default_model_spec, load_model
from swarm.runtime.models.base import ModelReply
from swarm.runtime.models.recording import wrap
from swarm.runtime.permissions.asking import Asker
from swarm.runtime.process.orphan import OrphanCheck
from swarm.runtime.process.signals import Signals
from swarm.runtime.process.subreaper import Reaper
from swarm.runtime.teammate.base import AgentBase
from swarm.runtime.teammate.console import Console, brief
from swarm.runtime.teammate.idle import TurnRecord, idle_notification, task_report
from swarm.runtime.teammate.inputs import Inbound, Inputs, is_shutdown
from swarm.runtime.teammate.life import live
from swarm.runtime.teammate.prompts import TeammatePrompt
from swarm.runtime.tools.base import Tool, ToolResult
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.budget import Budget
from swarm.runtime.turn.builder import AgentParts, LoopParts, build_agent
from swarm.runtime.turn.hooks import LoopHooks
from swarm.runtime.turn.loop import Loop, TurnOutcome

T = TypeVar("T")
log = logging.getLogger(__name__)


class Agent(AgentBase, LoopHooks):
    def __init__(self, team_name: str, name: str) -> None:
        team = Team.open(team_name)
        previous = read_state(team.name, name)  # a respawn keeps its turns and usage
        super().__init__(team, name)
        self.member = self.team.member(name)
        self.box = open_mailbox(self.team.name, name)
        self.console = Console(paths.agent_log(self.team.name, name), name)
        in_turn = ("working", "waiting_permission", "awaiting_plan")
        self.signals = Signals(busy=lambda: self.state.state in in_turn,
                               child=lambda: self._proc, stopping=self._stopping)
        self.orphan = OrphanCheck(self.team, self.console.say, remote=bool(self.member.host))
        self.reaper = Reaper()  # the orphans of its commands, adopted at `run` (subreaper)
        self.pending_shutdown: ShutdownRequest | None = None
        self.answering: ShutdownRequest | None = None  # the request this turn began with
        self.shutdown_approved = False
        self.turn = TurnRecord()  # what the current turn did, for its idle note
        # Restarted (respawn, wake): its first input says so, with the why the restart wrote.
        detail = (previous.detail or "") if previous else ""
        resumed: str | None = None
        if previous is not None:
            resumed = detail if detail.startswith(RESTARTED) else RESTARTED

        self.cwd = Path(self.member.cwd or os.getcwd())
        # The project's hooks, servers and definitions only in a trusted project: the process
        # decides for itself (a worktree's uncommitted ones come from its checkout, same rule).
        self.trust = decide(self.cwd, checkout_of(self.member),
                            granted=self.member.trusted_config)
        for line in (self.trust.warning, self.trust.notice()):
            if line:
                self.console.say(f"warning: {line}")
        self.project = self.trust.project
        # Managed definitions from the team's recorded policy directory, never this process's
        # environment (a teammate cannot change it).
        self.definition = get_definition(self.member.agent_type, self.cwd, project=self.project,
                                         policy_dir=self.team.config().policy_dir)
        self.model_name = (self.member.model or self.definition.model
                           or default_model_spec()[0])
        self.depth = self.member.depth  # SubagentHost: its subagents are one deeper
        self.budget = Budget(lambda: self.state.usage, self._lock,
                             self.member.max_budget_usd or self.definition.max_budget_usd,
                             self.member.max_tokens or self.definition.max_tokens)
        # A restart keeps the mode it was in (a plan approved before it exited stays approved).
        resumed_mode = previous.mode if previous and previous.mode else None
        if resumed_mode == "bypassPermissions" and self.member.plan_mode_required:
            resumed_mode = None
        every = all_tools()
        names = effective_tools(self.definition, list(every), TEAM_TOOLS)
        # Memory on and no Write/Edit: given them for its memory file alone (the policy's own_only).
        only = memory_tools(self.definition, names)
        names = [n for n in every if n in names or n in only]
        tools = {n: every[n] for n in names if n in every}
        if self.member.plan_mode_required:
            tools["ExitPlanMode"] = every["ExitPlanMode"]
        model = wrap(load_model(self.model_name, cwd=str(self.cwd)), self.team.name, name)
        # Hooks and MCP servers (the servers start in run(), their tools join base_tools then);
        # the tools and the system prompt by mode come from refresh().
        built = build_agent(AgentParts(
            team=self.team, member=self.member, definition=self.definition, cwd=self.cwd,
            project=self.project, say=self.console.say,
            asker=Asker(self.team, name, self.box, self), mode=resumed_mode,
            loop=LoopParts(model, tools, "", self.transcript.conversation()),
            dangling="not finished: the teammate process died and was restarted"), self, self)
        self.extensions, self.policy, self.base_tools = (built.extensions, built.policy,
                                                         built.tools)
        self.subagents, self.loop = built.subagents, built.loop
        self.signals.on_background = self.subagents.to_background
        self.state.mode = self.policy.mode
        if not self.loop.messages:
            resumed = None
        self.prompt = TeammatePrompt(self.team, name, self.definition, self.cwd, self.project,
                                     memory_only=only)
        own = own_memory(self.definition, self.cwd)
        if own is not None:  # its own memory file: written without asking in acceptEdits
            self.policy.own_files, self.policy.own_only = (own,), frozenset(only)
        for line in self.prompt.warnings:
            self.console.say(f"warning: {line}")
        self.inputs = Inputs(self.team, name, self.box, self.subagents, self.console, self,
                             resumed)
        self.refresh()

    # -- what depends on the mode ---------------------------------------------------------------
    def refresh(self) -> None:
        """Rebuild the tool set and the system prompt (the mode, the team or the day changed)."""
        mode = self.policy.mode
        self.loop.tools = {k: v for k, v in self.base_tools.items()
                           if k != "ExitPlanMode" or mode == "plan"}
        self.loop.system = self.prompt.build(mode)

    @property
    def environment(self) -> str:
        return self.prompt.environment

    # -- AgentBase ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.console.say(text)

    def on_superseded(self, why: str) -> None:
        self.console.say(f"{why}: exiting")
        if not self._stopping.is_set():
            os.kill(os.getpid(), signal.SIGTERM)  # the main thread leaves through finish()

    def on_beat(self) -> None:
        self.reaper.reap()
        if self.orphan.check() and not self._stopping.is_set():
            os.kill(os.getpid(), signal.SIGTERM)  # the main thread leaves through finish()

    # -- ToolHost ------------------------------------------------------------------------------
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # a hook run for a subagent's thread: the turn's own command is tracked
        self._proc = proc
        # Recorded so whoever records our death can end the command too (its own group).
        pid = proc.pid if proc is not None else None
        self.set_state(child_pgid=pid, child_started_at=process_start_time(pid) if pid else None)

    def structured_sent(self, message: Any) -> None:
        if (isinstance(message, ShutdownResponse) and self.answering is not None
                and message.request_id == self.answering.request_id):
            self.answering = None  # answered by its model: a later failing call changes nothing
        pending = self.pending_shutdown
        if (isinstance(message, ShutdownResponse) and message.approve and pending is not None
                and message.request_id == pending.request_id):
            self.shutdown_approved = True

    def pending_shutdown_id(self) -> str | None:
        return self.pending_shutdown.request_id if self.pending_shutdown else None

    def change_mode(self, change: ModeChange, order: Message) -> None:
        newest = self.state.mode_order
        if newest is not None and (order.timestamp, order.id) <= _order_key(newest):
            log.warning("mode_change %s ignored: not newer than the last one obeyed", order.id)
            return  # an older order arriving late, or a signed one copied back in: a replay
        if change.mode == self.policy.mode:
            self.set_state(mode_order=f"{order.timestamp} {order.id}")
            return
        was, self.policy.mode = self.policy.mode, change.mode
        if change.mode != "plan":
            self.policy.working_mode = change.mode  # where an approved plan would lead anyway
        self.refresh()
        self.set_state(mode=change.mode, mode_order=f"{order.timestamp} {order.id}")
        self.transcript.event("mode_changed", mode=change.mode, previous=was)
        why = f": {change.reason}" if change.reason else ""
        self.console.say(f"mode: {was} -> {change.mode} (set by {LEAD_NAME}){why}")

    def exit_plan(self, plan: str) -> str:
        text, changed = self.policy.exit_plan(plan)
        if changed:
            self.refresh()
            self.set_state(mode=self.policy.mode)
        return text

    # -- SubagentHost, and the asker's Waiter ---------------------------------------------------
    def interruptible(self, call: Callable[[], T]) -> T:
        return self.signals.interruptible(call)

    def show(self, *lines: str) -> None:
        self.console.show(*lines)

    def subagent_limit(self) -> str | None:
        return "budget_exhausted" if self.budget.check() else None

    def spend_limit(self, pending: Usage) -> str | None:
        return self.budget.check(pending)  # its own calls' and its subagents'

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        log.debug("subagent %s %s", info.agent_id, info.status)
        self.extensions.subagent_stop(info, final_text)  # the `SubagentStop` hooks

    def mcp_tools(self) -> dict[str, Tool]:
        return {n: t for n, t in self.base_tools.items() if n.startswith("mcp__")}

    def lends(self, tool_name: str) -> bool:
        # A tool it has for its memory file alone is not its to lend.
        return (tool_name not in self.policy.own_only
                and lends(self.definition, self.base_tools, tool_name))

    # -- LoopHooks -----------------------------------------------------------------------------
    def permit(self, tool: Tool, args: dict[str, Any], use_id: str) -> Decision:
        self.inputs.apply_mode_changes()
        return self.policy.check(tool, args, use_id)

    def guard(self, call: Callable[[], T]) -> T:
        return self.signals.interruptible(call)

    def before_call(self, loop: Loop) -> None:
        if self.prompt.stale():
            self.refresh()
        self.compactor(loop)

    def on_text(self, text: str) -> None:
        self.console.stream(text)

    def retry_wait(self, problem: str, delay: float) -> None:
        """A failing model call backs off: status says so, and a shutdown request meanwhile is
        approved without the model, which cannot be reached to decide (a respawn resumes)."""
        if threading.current_thread() is not threading.main_thread():
            return super().retry_wait(problem, delay)  # a subagent's call
        self.set_state(detail=f"{MODEL_FAILING}: {problem}; retrying in {delay:.0f}s")
        why = f"{MODEL_FAILING} ({problem})"
        if self.answering is not None:  # this turn's model call was to answer the request
            self._approve_without_model(self.answering, why)
        else:
            request = self.inputs.shutdown_within(delay)
            if request is None:
                return
            self._shutdown_without_turn([request], why)
        raise ModelAPIError(f"{problem}; stopped retrying: asked to shut down")

    def activity(self, what: str | None) -> None:
        super().activity(what)  # for `status --watch`
        self.console.activity(what)

    def tool_output(self, text: str) -> None:
        self.console.output(text)

    def on_reply(self, reply: ModelReply) -> None:
        if (self.state.detail or "").startswith(MODEL_FAILING):
            self.set_state(detail=None)  # it answers again
        self.count_reply(reply)
        text = reply.text().strip()
        if not self.console.end_stream(text) and text:
            self.console.show(*self.console.view.says(text))

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> ToolResult:
        self.turn.tool_ran(tool, args)
        path = tool_path(args, self.cwd) if tool.edits_files and not result.is_error else None
        if path is not None:  # overlapping writes among members sharing a checkout
            record_write(self.team, self.name, path)
        self.console.result(result.content, result.is_error)
        return result

    def stop_reason(self) -> str | None:
        if self.shutdown_approved:
            return "available"
        max_turns = self.member.max_turns or self.definition.max_turns
        if max_turns is not None and self.state.turns >= max_turns:
            return "max_turns"
        self.budget.read_team(self.team, self.name)  # the loop asks this before each call
        if self.budget.check():
            return "budget_exhausted"
        return None

    def arrivals(self) -> tuple[list[dict[str, Any]], Callable[[], None]]:
        return self.inputs.arrivals()

    def trace(self, line: str) -> None:
        self.console.say(brief(line, 160))

    # -- one turn ----------------------------------------------------------------------------
    def take_turn(self, inbound: list[Inbound], task: Task | None) -> TurnOutcome:
        self.console.activity(None)  # no longer idle
        # Its model cannot answer (a limit, or its last turn failed): no turn to decide.
        unable = self.stop_reason() or without_model(self.state)
        if unable and any(is_shutdown(i) for i in inbound):
            return self._shutdown_without_turn(inbound, unable)
        current = task.id if task is not None else self.state.current_task
        self.turn = TurnRecord()
        self.signals.interrupt.clear()
        self.set_state(state="working", current_task=current, idle_reason=None, detail=None)
        self.answering = self.inputs.begin(inbound, task)
        self.pending_shutdown = self.answering or self.pending_shutdown
        # The message is in the conversation (and transcript) before it is marked read.
        content = self.inputs.render(inbound, task) + self.subagents.take_arrivals()
        if content:
            self.loop.add({"role": "user", "content": content})
        self.inputs.mark_read(inbound)
        outcome = self.loop.run()
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        elif (outcome.reason == "failed" and self.answering is not None
              and not self.shutdown_approved):  # a call not retried: the model cannot decide
            self._approve_without_model(self.answering, f"its turn failed: {outcome.failure}")
        self.answering = None
        return outcome

    def continue_turn(self, content: list[dict[str, Any]]) -> TurnOutcome:
        """More of the same turn, driven by a hook (a refused completion, TeammateIdle)."""
        self.console.activity(None)  # no longer idle
        self.console.say(f"<- hook: {brief(content[0].get('text', ''))}")
        self.set_state(state="working", detail=None)
        self.inputs.turn_began()
        self.loop.add({"role": "user", "content": content})
        outcome = self.loop.run()
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        return outcome

    def follow_up(self, outcome: TurnOutcome) -> list[dict[str, Any]] | None:
        """What hooks want done before going idle; None: go idle."""
        can_continue = (outcome.reason == "available" and self.stop_reason() is None
                        and not any(is_shutdown(i) for i in self.inputs.unread()))
        return self.extensions.follow_up(outcome.reason, outcome.last_text, can_continue,
                                         lambda task: self.inputs.render([], task))

    def _shutdown_without_turn(self, inbound: list[Inbound], why: str) -> TurnOutcome:
        """The model cannot answer a shutdown request (out of turns or budget, its last turn
        failed, its API failing): approve it."""
        request = next(i.kind for i in inbound if isinstance(i.kind, ShutdownRequest))
        assert isinstance(request, ShutdownRequest)
        self.inputs.mark_read(inbound)
        self._approve_without_model(request, why)
        return TurnOutcome()

    def _approve_without_model(self, request: ShutdownRequest, why: str) -> None:
        self.pending_shutdown = request
        reply = ShutdownResponse(request_id=request.request_id, approve=True,
                                 reason=f"{why}: shutting down without the model")
        self.team.send(LEAD_NAME, reply, sender=self.name)
        self.structured_sent(reply)

    def after_turn(self, outcome: TurnOutcome) -> None:
        if outcome.reason == "budget_exhausted":
            # One line for the pane, the idle note and status; and for the model, which reads
            # it at its next input (a respawn with a larger cap goes on from there).
            outcome.failure = outcome.failure or self.budget.check() or "budget_exhausted"
            self.loop.add({"role": "user", "content": [
                {"type": "text", "text": f"[swarm] {outcome.failure}"}]})
        report = task_report(self.team, self.name, self.state.current_task, outcome, self.turn)
        detail = outcome.failure or (f"stopped: {outcome.reason}"
                                     if outcome.reason not in ("available",) else None)
        self.set_state(state="idle", idle_reason=outcome.reason, current_task=report.current,
                       detail=detail)
        note = idle_notification(self.name, outcome, self.turn, report, self.state.turns)
        self.team.send(LEAD_NAME, note, sender=self.name)
        self.console.say(f"idle ({outcome.reason})" + (f": {outcome.failure}" if outcome.failure else ""))
        self.console.idle()

    # -- the process -------------------------------------------------------------------------
    def run(self) -> int:
        return live(self)

def _order_key(recorded: str) -> tuple[str, str]:
    timestamp, _, message_id = recorded.partition(" ")
    return timestamp, message_id
