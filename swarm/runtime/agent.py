"""The teammate process (`swarm agent --agent-id NAME@TEAM`): inputs, turns, signals, heartbeat.

Life of a teammate: read its member entry, build its prompt, tools and permission policy,
resume its conversation from the transcript, then forever: wait for input (shutdown request >
lead > peers > a task), run one turn of the loop, go idle and tell the lead once. SIGINT aborts
the turn only; SIGTERM ends the process; an approved shutdown request ends it cleanly (exit 0);
any other exception is a crash, recorded as a death (exit 1).

The agent is the `LoopHooks` of its loop and the `ToolHost` of its tools.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from swarm import settings
from swarm.core import paths
from swarm.core.definitions import effective_tools, get_definition
from swarm.core.liveness import is_alive, process_start_time
from swarm.core.mailbox import Mailbox
from swarm.core.names import LEAD_NAME, TEAM_TOOLS, parse_agent_id
from swarm.core.overlaps import record_write
from swarm.core.protocol import (
    IdleNotification,
    Message,
    ShutdownRequest,
    ShutdownResponse,
    StructuredMessage,
    TeammateTerminated,
    dump_structured,
    escape,
    render_for_model,
    sender_may_send,
)
from swarm.core.readable import structured_line
from swarm.core.rules import Decision, tool_path
from swarm.core.state import (
    RESTARTED,
    AgentState,
    SubagentInfo,
    read_state,
    update_state,
    write_state,
)
from swarm.core.tasks import Task
from swarm.core.team import Team
from swarm.core.watch import FileWatcher
from swarm.errors import NotFoundError, SwarmError, describe_error
from swarm.log import configure as configure_logging
from swarm.runtime.asking import Asker
from swarm.runtime.base import AgentBase
from swarm.runtime.console import Console, brief
from swarm.runtime.extensions import Extensions
from swarm.runtime.loop import Loop, TurnInterrupted, TurnOutcome
from swarm.runtime.models import default_model_spec, load_model
from swarm.runtime.models.base import ModelReply
from swarm.runtime.policy import PermissionPolicy
from swarm.runtime.prompts import Peer, environment, project_memory, system_prompt, team_addendum
from swarm.runtime.subagents import Subagents
from swarm.runtime.team_tools import all_tools
from swarm.runtime.tools import Tool, ToolContext, ToolResult, kill_tree

T = TypeVar("T")
log = logging.getLogger(__name__)
SUMMARY_LIMIT = 200  # characters of the idle note's summary (whitespace collapsed)


class AgentStopped(BaseException):
    """SIGTERM/SIGHUP: leave whatever we are doing and exit. A BaseException, so no `except
    Exception` on the way (the model SDK, a retry loop) can swallow it."""


@dataclass
class Inbound:
    """A message as read: its structured kind, already checked against who sent it (a forged
    or unauthorised structured message has no kind: it is plain text from its sender)."""

    message: Message
    kind: StructuredMessage | None

    @classmethod
    def read(cls, message: Message) -> Inbound:
        kind = message.structured()
        if kind is not None and not sender_may_send(kind, message.sender):
            kind = None
        return cls(message, kind)


class Agent(AgentBase):
    def __init__(self, team_name: str, name: str) -> None:
        team = Team.open(team_name)
        previous = read_state(team.name, name)  # a respawn keeps its turns and usage
        super().__init__(team, name)
        self.member = self.team.member(name)
        self.box = Mailbox(self.team.name, name)
        self.console = Console(paths.agent_log(self.team.name, name), name)
        self._interruptible = False
        self._interrupt = threading.Event()
        self._hangup = False  # SIGHUP: its pane or terminal was closed under it
        self._lead_gone_since: float | None = None  # monotonic time the lead was first missed
        self._orphaned: str | None = None  # why it leaves: its lead process is gone
        self.pending_shutdown: ShutdownRequest | None = None
        self.shutdown_approved = False
        self.completed_task: Task | None = None
        self._waiting_at_start: set[str] = set()  # unread when the turn began
        self._turn_tasks: list[str] = []  # tasks the model updated this turn (for the idle note)
        self._last_action: str | None = None  # the last tool call of the turn, described
        # Restarted (respawn, wake): its first input says so, with the why the restart wrote.
        detail = (previous.detail or "") if previous else ""
        self._resumed: str | None = None
        if previous is not None:
            self._resumed = detail if detail.startswith(RESTARTED) else RESTARTED

        self.cwd = Path(self.member.cwd or os.getcwd())
        # A worktree may lack the project's uncommitted .swarm/agents: look where it came from.
        self.definition = get_definition(self.member.agent_type,
                                         self.member.worktree_repo or self.cwd)
        self.model_name = (self.member.model or self.definition.model
                           or default_model_spec()[0])
        asker = Asker(self.team, name, self.box, self)
        # A restart keeps the mode it was in (a plan approved before it exited stays approved).
        resumed_mode = previous.mode if previous and previous.mode else None
        if resumed_mode == "bypassPermissions" and self.member.plan_mode_required:
            resumed_mode = None
        self.policy = PermissionPolicy.for_member(self.team, self.member, self.cwd, asker,
                                                  mode=resumed_mode)
        self.state.mode = self.policy.mode
        every = all_tools()
        names = effective_tools(self.definition, list(every), TEAM_TOOLS)
        self.base_tools = {n: every[n] for n in names if n in every}
        if self.member.plan_mode_required:
            self.base_tools["ExitPlanMode"] = every["ExitPlanMode"]
        env = {"SWARM_TEAM": self.team.name, "SWARM_AGENT_ID": self.member.agent_id}
        # Hooks and MCP servers (the servers start in run(), their tools join base_tools then).
        self.extensions = Extensions.load(self.team, self.member, self.definition, self.cwd,
                                          env, self.console.say, self.track_process)
        self.base_tools = self.extensions.wrap_task_tools(self.base_tools)
        self.policy.gate = self.extensions.gate
        ctx = ToolContext(team=self.team, name=name, cwd=self.cwd, host=self, env=env)
        self.loop = Loop(model=load_model(self.model_name, cwd=str(self.cwd)), tools={},
                         system="", ctx=ctx, hooks=self,
                         messages=self.transcript.conversation())
        # Resumed after a crash mid-tool: answer the open calls, or the API rejects the history.
        self.loop.close_dangling("not finished: the teammate process died and was restarted")
        if not self.loop.messages:
            self._resumed = None
        # The stable parts of the prompt, read once; the team part follows the team file.
        self.memory = "" if self.definition.omit_project_memory else project_memory(self.cwd)
        self._env_day = date.today()
        self.environment = environment(self.cwd, self._env_day)
        self._team_key: tuple[int, int, int] | None = None
        self.subagents = Subagents(self)  # the Agent tools' runner (subagents are threads here)
        ctx.subagents = self.subagents
        self.refresh()

    # -- what depends on the mode ---------------------------------------------------------------
    def refresh(self) -> None:
        """Rebuild the tool set and the system prompt (the mode or the team changed)."""
        mode = self.policy.mode
        self.loop.tools = {k: v for k, v in self.base_tools.items()
                           if k != "ExitPlanMode" or mode == "plan"}
        self._team_key = self._team_file_key()
        config = self.team.config()
        peers = [Peer(m.name, m.agent_type) for m in config.members
                 if m.name not in (self.name, LEAD_NAME)]
        team = team_addendum(self.name, config.name, config.lead_agent_id, peers, mode)
        self.loop.system = system_prompt(self.definition.prompt, self.memory, team,
                                         self.environment)

    def _team_file_key(self) -> tuple[int, int, int]:
        try:
            info = os.stat(self.team.config_path)
        except FileNotFoundError:
            return (0, 0, 0)
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _refresh_if_stale(self) -> None:
        """Before a model call: the team changed (a teammate joined or left), or the day did
        (the date and git status in the prompt are a snapshot): rebuild the prompt."""
        if date.today() != self._env_day:
            self._env_day = date.today()
            self.environment = environment(self.cwd, self._env_day)
            self.refresh()
        elif self._team_file_key() != self._team_key:
            self.refresh()

    # -- AgentBase ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.console.say(text)

    def on_superseded(self, why: str) -> None:
        self.console.say(f"{why}: exiting")
        if not self._stopping.is_set():
            os.kill(os.getpid(), signal.SIGTERM)  # the main thread leaves through finish()

    def on_beat(self) -> None:
        self.check_lead()

    def check_lead(self) -> None:
        """Orphans: a teammate whose `swarm lead` process is gone for SWARM_ORPHAN_GRACE seconds
        leaves (tasks released, state exited with reason lead_gone). The same liveness test as
        `swarm status` (pid plus start time). A team led from the shell has no lead_pid."""
        try:
            config = self.team.config()
        except (SwarmError, OSError):
            return  # the team file is gone or unreadable: not a verdict on the lead
        pid = config.lead_pid
        if not pid or is_alive(pid, config.lead_started_at):
            if self._lead_gone_since is not None and pid:
                self.console.say(f"a lead (pid {pid}) leads the team again: staying")
            self._lead_gone_since = None  # a resumed lead adopts us
            return
        now = time.monotonic()
        if self._lead_gone_since is None:
            self._lead_gone_since = now
            self.console.say(f"the lead (pid {pid}) is gone; leaving in "
                             f"{settings.orphan_grace():g}s unless it comes back")
        if now - self._lead_gone_since >= settings.orphan_grace() and not self._orphaned:
            self._orphaned = f"lead_gone: the lead process {pid} is gone"
            if not self._stopping.is_set():
                os.kill(os.getpid(), signal.SIGTERM)  # the main thread leaves through finish()

    # -- signals -----------------------------------------------------------------------------
    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.state.state not in ("working", "waiting_permission", "awaiting_plan"):
            return  # nothing to interrupt while idle
        self._interrupt.set()
        if self._proc is not None:
            kill_tree(self._proc)
        if self._interruptible:
            raise TurnInterrupted()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self._stopping.set()
        if self._proc is not None:
            kill_tree(self._proc)
        raise AgentStopped()

    def _on_sighup(self, signum: int, frame: FrameType | None) -> None:
        self._hangup = True
        self._on_sigterm(signum, frame)

    def check_interrupt(self) -> None:
        if self._interrupt.is_set():
            raise TurnInterrupted()

    def interruptible(self, call: Callable[[], T]) -> T:
        """Run a blocking call (a model request, a wait for the lead) that SIGINT may abandon."""
        self.check_interrupt()
        if threading.current_thread() is not threading.main_thread():
            return call()  # a foreground subagent asking: signals reach the main thread only
        self._interruptible = True
        try:
            return call()
        finally:
            self._interruptible = False

    # -- ToolHost ------------------------------------------------------------------------------
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # a hook run for a subagent's thread: the turn's own command is tracked
        self._proc = proc
        # Recorded so whoever records our death can end the command too (its own group).
        pid = proc.pid if proc is not None else None
        self.set_state(child_pgid=pid, child_started_at=process_start_time(pid) if pid else None)

    def structured_sent(self, message: Any) -> None:
        pending = self.pending_shutdown
        if (isinstance(message, ShutdownResponse) and message.approve and pending is not None
                and message.request_id == pending.request_id):
            self.shutdown_approved = True

    def pending_shutdown_id(self) -> str | None:
        return self.pending_shutdown.request_id if self.pending_shutdown else None

    def exit_plan(self, plan: str) -> str:
        text, changed = self.policy.exit_plan(plan)
        if changed:
            self.refresh()
            self.set_state(mode=self.policy.mode)
        return text

    # -- LoopHooks -----------------------------------------------------------------------------
    def permit(self, tool: Tool, args: dict[str, Any], use_id: str) -> Decision:
        decision = self.policy.check(tool, args, use_id)
        self.extensions.allowed(decision)
        return decision

    def guard(self, call: Callable[[], T]) -> T:
        return self.interruptible(call)

    def before_call(self, loop: Loop) -> None:
        self._refresh_if_stale()
        self.compactor(loop)

    def on_text(self, text: str) -> None:
        self.console.stream(text)

    def on_reply(self, reply: ModelReply) -> None:
        self.count_reply(reply)
        text = reply.text().strip()
        if not self.console.end_stream(text) and text:
            self.console.show(*self.console.view.says(text))

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> ToolResult:
        result = self.extensions.after_tool(tool, args, result)  # PostToolUse hooks
        self._last_action = tool.describe(args)
        if tool.name == "TaskUpdate" and args.get("task_id") is not None:
            self._turn_tasks.append(str(args["task_id"]))  # even refused: blocked, say
        path = tool_path(args, self.cwd) if tool.edits_files and not result.is_error else None
        if path is not None:  # overlapping writes among members sharing a checkout
            record_write(self.team, self.name, path)
        self.console.show(*self.console.view.result(result.content, result.is_error))
        return result

    def subagent_limit(self) -> str | None:
        budget = self.member.max_budget_usd
        if budget is not None and self.state.usage.cost_usd >= budget:
            return "budget_exhausted"
        return None

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        log.debug("subagent %s %s", info.agent_id, info.status)
        self.extensions.subagent_stop(info, final_text)  # the `SubagentStop` hooks

    def stop_reason(self) -> str | None:
        if self.shutdown_approved:
            return "available"
        max_turns = self.member.max_turns or self.definition.max_turns
        if max_turns is not None and self.state.turns >= max_turns:
            return "max_turns"
        budget = self.member.max_budget_usd
        if budget is not None and self.state.usage.cost_usd >= budget:
            return "budget_exhausted"
        return None

    def arrivals(self) -> tuple[list[dict[str, Any]], Callable[[], None]]:
        """Messages from the lead or peers that came in during the turn reach the model at its
        next call. Those already waiting when the turn began keep their SPEC order (next input),
        and a shutdown request waits for the turn's end (it is answered as a new input)."""
        fresh = [i for i in self._unread() if not isinstance(i.kind, ShutdownRequest)
                 and i.message.id not in self._waiting_at_start]
        from_subagents = self.subagents.take_arrivals()
        if not fresh:
            return from_subagents, lambda: None
        self._announce(fresh)
        ids = [i.message.id for i in fresh]

        def mark_read() -> None:
            self.box.mark_read(ids)

        return self.render_input(fresh, None) + from_subagents, mark_read

    def show(self, *lines: str) -> None:
        self.console.show(*lines)

    def trace(self, line: str) -> None:
        self.console.say(brief(line, 160))

    # -- inputs ------------------------------------------------------------------------------
    def watcher(self) -> FileWatcher:
        return FileWatcher([(self.box.path.parent, self.box.path.name),
                            (paths.tasks_dir(self.team.name), None)], self.subagents.waker)

    def _unread(self) -> list[Inbound]:
        """Unread messages with their kinds; answers for requests no longer open (the asker
        consumes the live ones) are plain text like any other unauthorised structure."""
        return [Inbound.read(m) for m in self.box.unread()]

    def next_input(self, watcher: FileWatcher) -> tuple[list[Inbound], Task | None]:
        """Block until there is something to do, in SPEC order."""
        while True:
            inbound = self._unread()
            shutdown = [i for i in inbound if isinstance(i.kind, ShutdownRequest)]
            if shutdown:
                return shutdown[:1], None
            limit = self.stop_reason()
            if limit and inbound:
                # Out of turns or budget: leave the messages unread for a respawn with a new
                # limit, and say why in status rather than consume them unanswered.
                detail = f"{limit}: {len(inbound)} message(s) wait unread"
                if self.state.detail != detail:
                    self.set_state(detail=detail)
            elif inbound or self.subagents.has_arrivals():  # a background subagent ended
                lead = [i for i in inbound if i.message.sender == LEAD_NAME]
                peers = sorted((i for i in inbound if i.message.sender != LEAD_NAME),
                               key=lambda i: i.message.timestamp)
                return lead + peers, None
            elif limit is None:
                task = self.team.tasks.claim_next(self.name)
                if task is not None:
                    return [], task
            watcher.wait(settings.heartbeat_interval() * 2)

    def render_input(self, inbound: list[Inbound], task: Task | None) -> list[dict[str, Any]]:
        blocks = [{"type": "text", "text": render_for_model(i.message)} for i in inbound]
        if self._resumed:
            blocks.insert(0, {"type": "text", "text": (
                f"<system-note>Your process was {escape(self._resumed)}; your conversation so"
                " far is above. Handle what follows.</system-note>")})
            self._resumed = None
        if task is not None:
            blocks.append({"type": "text", "text": (
                f'<task-assignment id="{task.id}" subject="{escape(task.subject, True)}">\n'
                f"{escape(task.description)}\n</task-assignment>\n"
                f'You have claimed task #{task.id}. Do it, mark it completed with TaskUpdate '
                f'(task_id "{task.id}", with a short result) and report to {LEAD_NAME}.')})
        return blocks

    def _announce(self, inbound: list[Inbound]) -> None:
        view = self.console.view
        for item in inbound:
            if isinstance(item.kind, ShutdownRequest):
                self.pending_shutdown = item.kind
            message = item.message
            if item.kind is not None:
                self.console.show(*view.incoming(message.sender, message.color,
                                                 structured_line(item.kind)))
            else:
                self.console.show(*view.incoming(message.sender, message.color,
                                                 brief(message.summary or message.text),
                                                 message.text))

    # -- one turn ----------------------------------------------------------------------------
    def take_turn(self, inbound: list[Inbound], task: Task | None) -> TurnOutcome:
        if self.stop_reason() and any(isinstance(i.kind, ShutdownRequest) for i in inbound):
            return self._shutdown_at_limit(inbound)
        current = task.id if task is not None else self.state.current_task
        self.completed_task = None
        self._turn_tasks, self._last_action = [], None
        self._interrupt.clear()
        self.set_state(state="working", current_task=current, idle_reason=None, detail=None)
        self._announce(inbound)
        if task is not None:
            self.console.show(*self.console.view.claimed(task.id, task.subject, task.description))
        self._waiting_at_start = {m.id for m in self.box.unread()}
        # The message is in the conversation (and transcript) before it is marked read.
        content = self.render_input(inbound, task) + self.subagents.take_arrivals()
        if content:
            self.loop.add({"role": "user", "content": content})
        self.box.mark_read([i.message.id for i in inbound])
        outcome = self.loop.run()
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        return outcome

    def continue_turn(self, content: list[dict[str, Any]]) -> TurnOutcome:
        """More of the same turn, driven by a hook (a refused completion, TeammateIdle)."""
        self.console.say(f"<- hook: {brief(content[0].get('text', ''))}")
        self.set_state(state="working", detail=None)
        self._waiting_at_start = {m.id for m in self.box.unread()}
        self.loop.add({"role": "user", "content": content})
        outcome = self.loop.run()
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        return outcome

    def follow_up(self, outcome: TurnOutcome) -> list[dict[str, Any]] | None:
        """What hooks want done before going idle; None: go idle."""
        can_continue = (outcome.reason == "available" and self.stop_reason() is None
                        and not any(isinstance(i.kind, ShutdownRequest) for i in self._unread()))
        return self.extensions.follow_up(outcome.reason, outcome.last_text, can_continue,
                                         lambda task: self.render_input([], task))

    def _shutdown_at_limit(self, inbound: list[Inbound]) -> TurnOutcome:
        """Out of turns or budget, the model cannot answer a shutdown request: approve it."""
        request = next(i.kind for i in inbound if isinstance(i.kind, ShutdownRequest))
        assert isinstance(request, ShutdownRequest)
        self.pending_shutdown = request
        self.box.mark_read([i.message.id for i in inbound])
        reply = ShutdownResponse(request_id=request.request_id, approve=True,
                                 reason=f"{self.stop_reason()}: shutting down without a turn")
        self.team.send(LEAD_NAME, reply, sender=self.name)
        self.structured_sent(reply)
        return TurnOutcome()

    def after_turn(self, outcome: TurnOutcome) -> None:
        task, status, current = self._task_report(outcome)
        detail = outcome.failure or (f"stopped: {outcome.reason}"
                                     if outcome.reason not in ("available",) else None)
        self.set_state(state="idle", idle_reason=outcome.reason, current_task=current,
                       detail=detail)
        said = brief(outcome.last_text, SUMMARY_LIMIT) if outcome.last_text.strip() else None
        did = f"(wrote nothing; last tool call: {self._last_action})" if self._last_action else None
        note = IdleNotification(
            sender=self.name, idle_reason=outcome.reason,  # type: ignore[arg-type]
            summary=said or (brief(did, SUMMARY_LIMIT) if did else None),
            completed_task_id=task.id if task else None, completed_status=status,
            failure_reason=outcome.failure, turns=self.state.turns,
        )
        self.team.send(LEAD_NAME, note, sender=self.name)
        self.console.say(f"idle ({outcome.reason})" + (f": {outcome.failure}" if outcome.failure else ""))

    def _task_report(self, outcome: TurnOutcome) -> tuple[Task | None, str | None, str | None]:
        """The task the idle note is about and what became of it: `failed` (the turn failed
        with it unfinished), `completed`, or `blocked` (it waits on unfinished tasks); and the
        task it is still on. Only its current task and those it updated this turn are read."""
        current = self.state.current_task
        wanted = [t.id for t in (self.completed_task,) if t is not None]
        wanted += [current] if current is not None else []
        tasks: list[Task] = []
        for task_id in dict.fromkeys([*wanted, *self._turn_tasks]):
            try:
                task = self.team.tasks.get(task_id)
            except NotFoundError:
                continue
            if task.owner == self.name or task.id == current:
                tasks.append(task)
        if current is not None and not any(t.id == current and t.status != "completed"
                                           and t.owner == self.name for t in tasks):
            current = None
        unfinished = [t for t in tasks if t.status != "completed"]
        if outcome.reason == "failed" and unfinished:
            return unfinished[0], "failed", current
        done = [t for t in tasks if t.status == "completed"]
        if done:
            return done[-1], "completed", current
        blocked = [t for t in unfinished if self.team.tasks.unfinished_blockers(t)]
        if blocked:
            return blocked[0], "blocked", current
        return None, None, current

    # -- the process -------------------------------------------------------------------------
    def run(self) -> int:
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        signal.signal(signal.SIGHUP, self._on_sighup)
        write_state(self.team.name, self.name, self.state)
        self.team.update_member(self.name, pid=os.getpid())
        self.transcript.event("started", pid=os.getpid(), model=self.model_name)
        self.start_heartbeat()
        self.console.say(f"{self.name}@{self.team.name} started (model {self.model_name}, "
                         f"mode {self.policy.mode}, pid {os.getpid()})")
        exit_code, detail, crashed = 0, "shut down", False
        try:
            mcp_tools = self.extensions.start_mcp(self._interrupt)
            if mcp_tools:
                self.base_tools.update(mcp_tools)
                self.refresh()
            with self.watcher() as watcher:
                self.set_state(state="idle", idle_reason="available")
                while not self.shutdown_approved:
                    inbound, task = self.next_input(watcher)
                    self.extensions.new_input()
                    outcome = self.take_turn(inbound, task)
                    while not self.shutdown_approved and (more := self.follow_up(outcome)):
                        outcome = self.continue_turn(more)
                    if self.shutdown_approved:
                        break
                    self.after_turn(outcome)
        except AgentStopped:
            if self._orphaned:
                exit_code, detail = 0, self._orphaned
            else:
                exit_code, detail = ((129, "its pane was closed (SIGHUP)") if self._hangup
                                     else (143, "killed (SIGTERM)"))
        except Exception as exc:  # a crash: recorded as a death, never as a clean exit
            exit_code, detail, crashed = 1, f"crashed: {describe_error(exc)}", True
            log.exception("crashed")
            self.console.say(detail)
        finally:
            self._stopping.set()
            self.finish(detail, died=crashed or self._hangup)
            if self._orphaned:
                close_own_pane()
        return exit_code

    def finish(self, detail: str, died: bool) -> None:
        """Record how it ended. Each step on its own: after a crash (a full disk, a corrupt
        file) one failing write must not keep the others from happening."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish what we write, then go
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self._attempt(lambda: self.extensions.session_end(detail))
        self._attempt(self.extensions.close)  # no MCP server outlives us
        if self._superseded:  # our tasks and state are someone else's now: touch neither
            self._attempt(lambda: self.transcript.event("exited", detail=self._superseded))
            return
        self._attempt(lambda: self.subagents.stop_all(f"its parent {self.name} exited: {detail}"))
        released: list[Task] = []
        self._attempt(lambda: released.extend(self.team.tasks.release_owned_by(self.name)))
        self._attempt(lambda: self.transcript.event(
            "exited", detail=detail, released=[t.id for t in released]))
        self.console.say(f"exited: {detail}")
        if not died:
            self._attempt(lambda: self.set_state(state="exited", current_task=None, detail=detail))
            return
        # Nobody asked it to stop (a crash, or the user closed its pane): a death, told to the
        # lead once, as an observer would have recorded it.
        self._attempt(lambda: self.set_state(state="dead", current_task=None, detail=detail,
                                             terminated_reported=True))
        self._attempt(lambda: tell_lead_of_death(self.team.name, self.name, detail))

    def _attempt(self, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as exc:
            log.warning("while exiting: %s", describe_error(exc))
            self.console.say(f"while exiting: {describe_error(exc)}")


def tell_lead_of_death(team: str, name: str, reason: str) -> None:
    """Straight into the lead's mailbox: this must work even when the team file is what broke."""
    note = TeammateTerminated(agent_id=f"{name}@{team}", reason=reason)
    Mailbox(team, LEAD_NAME).deliver([Message(sender=name, text=dump_structured(note))])


def close_own_pane() -> None:
    """An orphan closes its own tmux pane as it leaves (panes keep a dead agent's output
    otherwise), and nothing else: it only turns off remain-on-exit for the pane it runs in."""
    pane = settings.tmux_pane()
    if not pane or not settings.tmux_env():
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # no tmux: nothing to close
        subprocess.run(["tmux", "set-option", "-p", "-t", pane, "remain-on-exit", "off"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=5, check=False)


def run_agent(agent_id: str) -> int:
    name, team = parse_agent_id(agent_id)
    configure_logging(paths.agent_log(team, name))
    try:
        agent = Agent(team, name)
        os.chdir(agent.cwd)
    except Exception as exc:  # it could not even start: a death with its reason, told once
        detail = f"crashed at start: {describe_error(exc)}"
        log.exception("could not start")
        print(f"swarm: error: {name}: {detail}", flush=True)

        def mark(state: AgentState) -> None:
            state.state, state.detail, state.terminated_reported = "dead", detail, True
            state.pid, state.started_at = os.getpid(), process_start_time(os.getpid())

        update_state(team, name, mark)
        with contextlib.suppress(Exception):
            Team(team).tasks.release_owned_by(name)
        tell_lead_of_death(team, name, detail)
        return 1
    return agent.run()
