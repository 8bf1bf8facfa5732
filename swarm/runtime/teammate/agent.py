"""The teammate process (`swarm agent --agent-id NAME@TEAM`): its turns, signals and exit.

Life of a teammate: read its member entry, build its prompt, tools and permission policy,
resume its conversation from the transcript, then forever: wait for input (`inputs.py`: the
order of docs/design/messages.md, how the model sees it), run one turn of the loop, go idle and
tell the lead once (`idle.py`). SIGINT aborts the turn only; SIGTERM ends the process; an
approved shutdown request ends it cleanly (exit 0); a lead gone for good too
(runtime.process.orphan); any other exception is a crash, recorded as a death (exit 1).

The Agent builds its parts and owns them; each answers the loop for itself: the permission
policy ("may I?"), `TeammateControl` (the turn's decisions), the observers `Books` (state,
usage, transcript), `TurnLog` (what the turn did) and `Pane` (what it shows), and
`TeammateToolHost` (its tools' host). The Agent itself is what its subagents' runner asks of
their parent (`SubagentHost`), and it runs the turns (`take_turn`, `after_turn`).
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path
from typing import Any, TypeVar

from swarm.core.agents.definitions import effective_tools, get_definition, lends
from swarm.core.agents.memory import memory_tools, own_memory
from swarm.core.records.names import LEAD_NAME, TEAM_TOOLS
from swarm.core.records.protocol import ShutdownRequest
from swarm.core.records.state import IN_TURN, RESTARTED, SubagentInfo, Usage, without_model
from swarm.core.records.task import Task
from swarm.core.store import paths
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.trust.workspace import decide
from swarm.runtime.extensions.loader import checkout_of
from swarm.runtime.models import default_model_spec, load_model
from swarm.runtime.models.recording import wrap
from swarm.runtime.models.scripted import ScriptedModel
from swarm.runtime.permissions.asking import Asker, Waiting
from swarm.runtime.process.orphan import OrphanCheck
from swarm.runtime.process.signals import Signals
from swarm.runtime.process.subreaper import Reaper
from swarm.runtime.subagents.runner import Subagents
from swarm.runtime.teammate.base import AgentBase
from swarm.runtime.teammate.console import Console, Pane, brief
from swarm.runtime.teammate.control import Limits, TeammateControl, TeammateToolHost, main_thread
from swarm.runtime.teammate.idle import TurnLog, idle_notification, task_report
from swarm.runtime.teammate.inputs import Inbound, Inputs, is_shutdown
from swarm.runtime.teammate.life import live
from swarm.runtime.teammate.modes import Modes
from swarm.runtime.teammate.prompts import TeammatePrompt
from swarm.runtime.teammate.shutdown import Shutdown
from swarm.runtime.tools.base import Tool
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.budget import Budget
from swarm.runtime.turn.builder import AgentParts, LoopParts, build_loop, equip, tool_context
from swarm.runtime.turn.loop import TurnOutcome

T = TypeVar("T")
log = logging.getLogger(__name__)


class Agent(AgentBase):
    def __init__(self, team_name: str, name: str) -> None:
        team = Team.open(team_name)
        previous = read_state(team.name, name)  # a respawn keeps its turns and usage
        super().__init__(team, name)
        self.member = self.team.member(name)
        self.box = self.team.inbox(name, checked=False)  # a member: found above
        self.console = Console(paths.agent_log(self.team.name, name), name)
        self.command.mine = main_thread  # a subagent's hook, on its thread, is not the turn's
        self.signals = Signals(busy=lambda: self.state.state in IN_TURN,
                               child=lambda: self.command.proc, stopping=self._stopping)
        self.orphan = OrphanCheck(self.team, self.console.say, remote=bool(self.member.host))
        self.reaper = Reaper()  # the orphans of its commands, adopted at `run` (subreaper)
        self.shutdown = Shutdown(self.team, name)
        self.cwd = Path(self.member.cwd or os.getcwd())
        self.turn_log = TurnLog(self.team, name, self.cwd)
        # Restarted (respawn, wake): its first input says so, with the why the restart wrote.
        detail = (previous.detail or "") if previous else ""
        resumed: str | None = None
        if previous is not None:
            resumed = detail if detail.startswith(RESTARTED) else RESTARTED
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
        # Spawn settled it (flag, definition, config.toml); a member registered otherwise
        # falls back to its definition's.
        effort = self.member.effort or self.definition.effort
        self.depth = self.member.depth  # SubagentHost: its subagents are one deeper
        self.budget = Budget(lambda: self.state.usage, self._lock,
                             self.member.max_budget_usd or self.definition.max_budget_usd,
                             self.member.max_tokens or self.definition.max_tokens)
        self.limits = Limits(self.team, name, self.keeper, self.budget,
                             self.member.max_turns or self.definition.max_turns, self.shutdown)
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
        loaded = load_model(self.model_name, cwd=str(self.cwd))
        self.script = loaded if isinstance(loaded, ScriptedModel) else None
        model = wrap(loaded, self.team.name, name)
        waiting = Waiting(self.keeper.set, self.signals.interruptible, self.console.show)
        # Hooks and MCP servers (the servers start in run(), their tools join then), the policy.
        parts = AgentParts(
            team=self.team, member=self.member, definition=self.definition, cwd=self.cwd,
            project=self.project, say=self.console.say,
            asker=Asker(self.team, name, self.box, waiting), mode=resumed_mode,
            loop=LoopParts(model, tools, "", self.transcript.conversation()),
            dangling="not finished: the teammate process died and was restarted")
        equipped = equip(parts, self.command.track)
        self.extensions, self.policy = equipped.extensions, equipped.policy
        self.policy.on_spend = self.reviewer_spent
        self.state.mode = self.policy.mode
        self.prompt = TeammatePrompt(self.team, name, self.definition, self.cwd, self.project,
                                     memory_only=only)
        own = own_memory(self.definition, self.cwd)
        if own is not None:  # its own memory file: written without asking in acceptEdits
            self.policy.own_files, self.policy.own_only = (own,), frozenset(only)
        for line in self.prompt.warnings:
            self.console.say(f"warning: {line}")
        self.modes = Modes(self.policy, self.prompt, dict(equipped.tools), self.keeper,
                           self.transcript, self.console.say)
        self.subagents = Subagents(self)  # the Agent tools' runner (subagents are threads here)
        self.signals.on_background = self.subagents.to_background
        self.inputs = Inputs(self.team, name, self.box, self.subagents, self.console,
                             self.keeper, self.limits.reason, self.modes.change,
                             resumed if parts.loop.messages else None)
        control = TeammateControl(self.signals, self.limits, self.inputs, self.modes,
                                  self.compactor, self.keeper, self.shutdown)
        host = TeammateToolHost(self.command, self.shutdown, self.modes,
                                self.signals.interrupt.is_set)
        self.loop = build_loop(
            LoopParts(model, self.modes.tools(), self.modes.system(), parts.loop.messages,
                      effort=effort),
            tool_context(parts, host, self.subagents), self.policy, control,
            (self.books, self.turn_log, Pane(self.console)), self.extensions, parts.dangling)

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

    # -- SubagentHost --------------------------------------------------------------------------
    def interruptible(self, call: Any) -> Any:
        return self.signals.interruptible(call)

    def subagent_limit(self) -> str | None:
        return "budget_exhausted" if self.budget.check() else None

    def spend_limit(self, pending: Usage) -> str | None:
        return self.budget.check(pending)  # its own calls' and its subagents'

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        log.debug("subagent %s %s", info.agent_id, info.status)
        self.extensions.subagent_stop(info, final_text)  # the `SubagentStop` hooks

    def mcp_tools(self) -> dict[str, Tool]:
        return {n: t for n, t in self.modes.all_tools.items() if n.startswith("mcp__")}

    def lends(self, tool_name: str) -> bool:
        # A tool it has for its memory file alone is not its to lend.
        return (tool_name not in self.policy.own_only
                and lends(self.definition, self.modes.all_tools, tool_name))

    def trace(self, line: str) -> None:
        self.console.say(brief(line, 160))

    # -- one turn ----------------------------------------------------------------------------
    def take_turn(self, inbound: list[Inbound], task: Task | None) -> TurnOutcome:
        self.console.activity(None)  # no longer idle
        # Its model cannot answer (a limit, or its last turn failed): no turn to decide.
        unable = self.limits.reason() or without_model(self.state) or self._script_ended()
        if unable and any(is_shutdown(i) for i in inbound):
            return self._shutdown_without_turn(inbound, unable)
        current = task.id if task is not None else self.state.current_task
        self.turn_log.begin()
        self.signals.interrupt.clear()
        self.set_state(state="working", current_task=current, idle_reason=None, detail=None)
        shutdown = self.shutdown
        shutdown.answering = self.inputs.begin(inbound, task)
        shutdown.pending = shutdown.answering or shutdown.pending
        # The message is in the conversation (and transcript) before it is marked read.
        content = self.inputs.render(inbound, task) + self.subagents.take_arrivals()
        if content:
            self.loop.add({"role": "user", "content": content})
        self.inputs.mark_read(inbound)
        outcome = self.loop.run()
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        elif (outcome.reason == "failed" and shutdown.answering is not None
              and not shutdown.approved):  # a call not retried: the model cannot decide
            shutdown.approve_without_model(shutdown.answering,
                                           f"its turn failed: {outcome.failure}")
        shutdown.answering = None
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
        can_continue = (outcome.reason == "available" and self.limits.reason() is None
                        and not any(is_shutdown(i) for i in self.inputs.unread()))
        return self.extensions.follow_up(outcome.reason, outcome.last_text, can_continue,
                                         lambda task: self.inputs.render([], task))

    def _script_ended(self) -> str | None:
        """A `scripted:` model past its last turn has nothing more to say: it cannot answer a
        shutdown request (the lead would wait out SWARM_SHUTDOWN_GRACE, then kill it)."""
        if self.script is not None and self.script.ended(self.loop.messages):
            return "its script has ended"
        return None

    def _shutdown_without_turn(self, inbound: list[Inbound], why: str) -> TurnOutcome:
        """The model cannot answer a shutdown request (out of turns or budget, its last turn
        failed): approve it."""
        request = next(i.kind for i in inbound if isinstance(i.kind, ShutdownRequest))
        assert isinstance(request, ShutdownRequest)
        self.inputs.mark_read(inbound)
        self.shutdown.approve_without_model(request, why)
        return TurnOutcome()

    def after_turn(self, outcome: TurnOutcome) -> None:
        if outcome.reason == "budget_exhausted":
            # One line for the pane, the idle note and status; and for the model, which reads
            # it at its next input (a respawn with a larger cap goes on from there).
            outcome.failure = outcome.failure or self.budget.check() or "budget_exhausted"
            self.loop.add({"role": "user", "content": [
                {"type": "text", "text": f"[swarm] {outcome.failure}"}]})
        turn = self.turn_log.turn
        report = task_report(self.team, self.name, self.state.current_task, outcome, turn)
        detail = outcome.failure or (f"stopped: {outcome.reason}"
                                     if outcome.reason not in ("available",) else None)
        self.set_state(state="idle", idle_reason=outcome.reason, current_task=report.current,
                       detail=detail)
        note = idle_notification(self.name, outcome, turn, report, self.state.turns)
        self.team.send(LEAD_NAME, note, sender=self.name)
        self.console.say(f"idle ({outcome.reason})" + (f": {outcome.failure}" if outcome.failure else ""))
        self.console.idle()

    # -- the process -------------------------------------------------------------------------
    def run(self) -> int:
        return live(self)

