"""The lead process (`swarm lead`): an agent with id `team-lead@<team>` running in the current
terminal. It creates its team (or resumes one), records itself in the team file (`lead_pid` and
its process start time, so teammates can tell when it is gone), and runs the runtime's `Loop`
with the lead's tools, prompt, permission policy, transcript, state and usage.

Its loop is answered by small objects it owns (lead.control: `LeadControl`, `LeadView`; the
`Books` every agent keeps); the Lead itself is the host of its tools (they spawn, steer and end
its team) and, like a teammate, the `SubagentHost` of its `Agent` tools. The user's hooks (PreToolUse, PostToolUse, TaskCreated,
TaskCompleted, SubagentStop, SessionEnd) apply to it as to a teammate.
"""

from __future__ import annotations

import os
import queue
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swarm.backends.resolve import resolve
from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import PlanApprovalResponse
from swarm.core.records.state import SubagentInfo, Usage, end_child_command
from swarm.core.records.team_config import TeamConfig
from swarm.core.shell.git_state import take_snapshot
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state, write_state
from swarm.core.team.team import Team
from swarm.core.trust.workspace import decide
from swarm.errors import BadInputError, OperationFailedError, from_origin
from swarm.lead.control import LeadControl, LeadView, TeamBudget
from swarm.lead.lead_tools import SpawnDefaults, deleted_line, lead_tools
from swarm.lead.options import (
    NO_MODEL,
    LeadOptions,
    lead_model_origin,
    lead_model_spec,
    teammate_model_spec,
    validate,
)
from swarm.lead.prompt import lead_system_prompt
from swarm.lead.replay_wakes import ReplayedWakes
from swarm.lead.wake_policy import Reporter, Wake
from swarm.ops.member import control
from swarm.runtime.models import check_model_spec, default_effort, effort_warning, load_model
from swarm.runtime.models.base import Model
from swarm.runtime.models.recording import ReplayModel, wrap
from swarm.runtime.subagents.runner import Subagents
from swarm.runtime.teammate.base import AgentBase
from swarm.runtime.teammate.prompts import environment
from swarm.runtime.tools.base import NoHost, Tool
from swarm.runtime.turn.builder import AgentParts, LoopParts, build_loop, equip, tool_context
from swarm.runtime.turn.loop import TurnOutcome

if TYPE_CHECKING:
    import subprocess

T = TypeVar("T")

class LeadUI(Reporter, Protocol):
    """The terminal (interactive) or the CI log (headless)."""

    def lead_text(self, text: str) -> None:
        """What the lead model says."""

    def tool_line(self, line: str) -> None:
        """One line per tool call (and its error, if any)."""

    def ask(self, tool: Tool, args: dict[str, Any], why: Decision) -> Decision | None:
        """The lead's own tool call needs a yes from the person; None: nobody can answer."""


class PersonAsker:
    """The lead's own "ask" goes to the person at its terminal (never to its mailbox)."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead

    def permission(self, tool: Tool, args: dict[str, Any], use_id: str, why: Decision) -> Decision:
        self.lead.set_state(state="waiting_permission", detail=f"asks: {tool.describe(args)}")
        try:
            answer = self.lead.ui.ask(tool, args, why)
        finally:
            self.lead.set_state(state="working", detail=None)
        if answer is None:
            return Decision("deny", f"{why.reason}; nobody can approve the lead's own calls here"
                            " (headless): delegate it to a teammate")
        return answer

    def plan(self, plan: str) -> PlanApprovalResponse | None:
        return None


class Lead(AgentBase, NoHost):
    def __init__(self, options: LeadOptions, ui: LeadUI) -> None:
        validate(options)
        self.options = options
        self.ui = ui
        self.model_spec = lead_model_spec(options.model)
        self.cwd = Path(options.cwd or os.getcwd()).expanduser().resolve()
        if not self.cwd.is_dir():
            raise BadInputError(f"--cwd {self.cwd} is not a directory")
        self.backend = resolve(options.backend)  # an unknown backend fails before any team
        if options.resume:  # no such team: say so before the SDK import (seconds of CPU)
            self._open_team()
        try:
            with from_origin(lead_model_origin(options.model, self.model_spec)):
                check_model_spec(self.model_spec, cwd=str(self.cwd))
            model = load_model(self.model_spec, cwd=str(self.cwd))
        except OperationFailedError as exc:  # no credentials: say what to do, in one line
            raise BadInputError(f"{NO_MODEL} ({exc})") from None
        super().__init__(self._open_team(), LEAD_NAME)
        try:
            self._build(options, wrap(model, self.team.name, LEAD_NAME))
        except BaseException:
            if not options.resume:  # a team this session created but never led
                Team.delete(self.team.name, force=True)
            raise

    def _build(self, options: LeadOptions, model: Model) -> None:
        self.person: queue.Queue[str] = queue.Queue()  # the person's input, for the next call
        self._interrupt = threading.Event()
        self.in_turn = False
        self.team_deleted = False  # TeamDelete ran: the session ends and removes the team
        self.final_text = ""
        self.last_outcome: TurnOutcome | None = None
        self._turn_thread: threading.Thread | None = None
        # The turn's own command (Bash, a hook of its calls): not a hook run for a subagent in
        # its own thread.
        self.command.mine = lambda: threading.current_thread() is self._turn_thread
        self.model_name = self.model_spec  # what a subagent's model `inherit` means
        self.mode = options.permission_mode  # its own tool use; the most it grants (LeadHost)
        self.depth = 1  # the person's own delegate (LeadHost, SubagentHost)
        self.budget = TeamBudget(self.team, self.keeper, options.max_budget_usd)
        self.state.mode = self.mode
        self.environment = environment(self.cwd)  # a subagent working in the lead's cwd reuses it
        # In the team file (its policy reads its rules there), so `team show` says it and
        # `swarm spawn` from its shell is capped.
        # Its --max-budget-usd too: the team's, which each teammate checks before its calls.
        effort = options.effort or default_effort()
        for line in filter(None, [effort_warning(self.model_spec, effort)]):
            self.ui.notice(f"warning: {line}")
        me = self.team.update_member(LEAD_NAME, permission_mode=self.mode,
                                     allow_rules=list(options.allow), deny_rules=list(options.deny),
                                     ask_rules=list(options.ask), reviewer=options.reviewer,
                                     max_budget_usd=options.max_budget_usd, effort=effort)
        if self.mode == "auto":  # what git may run, as the team starts
            take_snapshot(self.team.name, self.cwd)
        # The project's hooks, servers and definitions only in a trusted project (the CLI has
        # said what it ignores, or asked): its teammates get the same run's trust.
        self.trust = decide(self.cwd, flag=options.trust_project)
        self.project = self.trust.project
        self.watch = options.watch_type(self.team, options.approvals, self.ui)
        if isinstance(model, ReplayModel):  # it wakes as the recording's lead woke
            self.watch.steer = ReplayedWakes(model, self.team.name, model.out.parent)
        teammate_model = teammate_model_spec(options.teammate_model, self.model_spec)
        self.spawn_defaults = SpawnDefaults(backend=options.backend, cwd=str(self.cwd),
                                            model=teammate_model,
                                            max_teammates=options.max_teammates,
                                            permission_mode=options.permission_mode,
                                            allow=options.allow, deny=options.deny,
                                            trust_project=self.trust.for_run)
        system = lead_system_prompt(self.team.name, str(self.cwd), options.approvals,
                                    options.coordinator, options.max_teammates, teammate_model,
                                    self.mode, project=self.project,
                                    policy_dir=self.team.config().policy_dir)
        messages = self.transcript.conversation() if options.resume else []
        # The user's hooks, as a teammate has them (the lead has no agent definition); its
        # commands and hooks say who they are: a member, whose shell grants at most its mode.
        parts = AgentParts(
            team=self.team, member=me, definition=AgentDefinition(name=LEAD_NAME), cwd=self.cwd,
            project=self.project, say=self.ui.notice,
            asker=PersonAsker(self) if not options.headless else None, mode=self.mode,
            loop=LoopParts(model, lead_tools(options.approvals, options.coordinator), system,
                           messages),
            dangling="not finished: the lead process ended and was resumed")
        equipped = equip(parts, self.command.track)
        self.extensions, self.policy = equipped.extensions, equipped.policy
        self.policy.on_spend = self.reviewer_spent
        self.subagents = Subagents(self)  # the Agent tools' runner (subagents are threads here)
        self.control = LeadControl(self._interrupt, self.budget, self.compactor, self.watch,
                                   self.person, self.subagents)
        self.loop = build_loop(
            LoopParts(model, dict(equipped.tools), system, messages, effort=effort),
            tool_context(parts, self, self.subagents), self.policy,
            self.control, (self.books, LeadView(self.ui)), self.extensions, parts.dangling)

    def _open_team(self) -> Team:
        options = self.options
        if options.resume:
            assert options.team is not None
            team = Team.open(options.team)
            config = team.config()
            if config.lead_pid and config.lead_pid != os.getpid() and is_alive(
                    config.lead_pid, config.lead_started_at):
                raise BadInputError(f"team {team.name!r} is led by a running swarm lead (pid"
                                    f" {config.lead_pid}); end that session first")
            return team
        name = options.team or f"lead-{secrets.token_hex(3)}"
        return Team.create(name, description=(options.prompt or "")[:200])

    # -- the session's life ----------------------------------------------------------------------
    def start(self) -> None:
        """Record this process as the team's lead and start the heartbeat. A lead before it
        that died (no lead runs now: `_open_team` checked) may have left its Bash command."""
        end_child_command(read_state(self.team.name, LEAD_NAME))
        write_state(self.team.name, LEAD_NAME, self.state)  # ours now, whoever had it before

        def lead(config: TeamConfig) -> None:
            config.lead_pid, config.lead_started_at = self.state.pid, self.state.started_at

        self.team.update(lead)
        self.team.update_member(LEAD_NAME, model=self.model_spec, cwd=str(self.cwd))
        self.transcript.event("started", pid=os.getpid(), model=self.model_spec,
                              resumed=self.options.resume)
        self.start_heartbeat()
        self.set_state(state="idle", idle_reason="available")

    def release(self, detail: str) -> None:
        """The session is over: no longer the team's lead (its teammates have no orphan rule)."""
        self.stop_heartbeat()

        def unlead(config: TeamConfig) -> None:
            if config.lead_pid == self.state.pid:
                config.lead_pid = config.lead_started_at = None

        self.team.update(unlead)
        self.set_state(state="exited", current_task=None, detail=detail)
        self.transcript.event("exited", detail=detail)

    def turn(self, wake: Wake) -> TurnOutcome:
        self._interrupt.clear()
        self.in_turn = True
        self._turn_thread = threading.current_thread()
        try:
            self.set_state(state="working", idle_reason=None, detail=None)
            # What the lead's background subagents reported while it was idle comes along.
            self.loop.add({"role": "user",
                           "content": [*wake.blocks, *self.subagents.take_arrivals()]})
            wake.done()  # in the conversation (and transcript): now they may be marked read
            outcome = self.loop.run()
        finally:
            self.in_turn = False
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        if outcome.reason == "budget_exhausted" and not outcome.failure:  # refused before a call
            self.budget.others = self.team_cost() - self.state.usage.cost_usd
            outcome.failure = self.spend_limit(Usage()) or "budget_exhausted"
        if outcome.last_text:
            self.final_text = outcome.last_text
        self.last_outcome = outcome
        self.set_state(state="idle", idle_reason=outcome.reason, detail=outcome.failure)
        return outcome

    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    def interrupt(self) -> bool:
        """Abort the running turn (Ctrl-C, a timeout, the end of the session)."""
        self._interrupt.set()
        self.command.kill()
        return self.in_turn

    def team_cost(self) -> float:
        return self.budget.team_cost()

    def over_budget(self) -> bool:
        return self.budget.over()

    def subagent_wake(self) -> Wake:
        """A background subagent ended while the lead was idle: its notification (taken in
        `turn`) starts a turn, under the team's status."""
        head = self.watch.status_block(self.watch.last_view or self.watch.view())
        return Wake(["subagent"], [{"type": "text", "text": head}] if head else [])

    def end_extensions(self, detail: str) -> None:
        """The session is over: the SessionEnd hooks (then any MCP server stops)."""
        self.extensions.session_end(detail)
        self.extensions.close()

    # -- AgentBase -------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.ui.notice(text)

    def notice(self, text: str) -> None:
        self.ui.notice(text)

    def delete_team(self) -> str:
        """TeamDelete: the teammates stop now; the session ends after this turn and removes the
        team's files (even with --keep)."""
        line = deleted_line(control.end_teammates(self.team))
        self.team_deleted = True
        return f"{line}; this session ends after this turn"

    def on_superseded(self, why: str) -> None:
        self.ui.notice(f"{why}: this lead stops")
        self.interrupt()

    # -- SubagentHost ----------------------------------------------------------------------------
    def interruptible(self, call: Callable[[], T]) -> T:
        """A foreground subagent's wait: interrupting the lead's turn ends it."""
        return self.control.guard(call)

    def subagent_limit(self) -> str | None:
        return "budget_exhausted" if self.over_budget() else None

    def spend_limit(self, pending: Usage) -> str | None:
        """The team's budget (`--max-budget-usd`), checked between a call's streamed chunks."""
        return self.budget.spend_limit(pending)

    def trace(self, line: str) -> None:
        self.ui.tool_line(line)

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        self.extensions.subagent_stop(info, final_text)  # the `SubagentStop` hooks

    def mcp_tools(self) -> dict[str, Tool]:
        return {}  # the lead starts no MCP servers of its own

    def lends(self, tool_name: str) -> bool:
        # No agent definition narrows the lead; a coordinator lacks the file tools by its role,
        # not by trust, and delegates them (docs/design/lead.md). Its mode caps its subagents'.
        return True

    # -- ToolHost (its tools need more of it: lead.lead_tools.LeadHost) -------------------------
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        self.command.track(proc)
