"""The teammate process of a member that is another agent CLI (`spawn --agent claude-code`).

The same life as swarm's own teammate (runtime/teammate/agent.py), with the CLI in place of the loop:
its inputs in their order (`inputs.py`: messages and claimed tasks become turns, marked read
once sent), one turn = one user message to the CLI's session and its events back to the
`result`, then the idle note (`idle.py`). State, heartbeat, usage and cost (from the CLI's own
result JSON) and the transcript are AgentBase's. Shutdown is negotiated: the request is a turn;
its model's approving `shutdown_response` (sent through swarm's MCP tools) ends the process.
SIGINT interrupts the CLI's turn; SIGTERM stops the CLI and exits. A restart resumes the CLI's
session (`cli_session` in its state).

Plan mode is the CLI's own plan mode; its ExitPlanMode is answered by the lead through swarm's
PermissionPrompt (mcp_server/permission_prompt.py, in the MCP server's process), which writes the verdict
into this member's transcript: this process shows `awaiting_plan` meanwhile and, on an approval,
records the working mode and tells the CLI, as a mode change does.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarm import settings
from swarm.core import kinds
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import Message, ModeChange, ShutdownRequest, ShutdownResponse
from swarm.core.records.state import RESTARTED
from swarm.core.records.task import Task
from swarm.core.store import paths
from swarm.core.team import decisions
from swarm.core.team.state import read_state, write_state
from swarm.core.team.team import Team
from swarm.core.text.readable import tool_call
from swarm.core.trust.user_config import lasting_rules
from swarm.core.trust.workspace import TrustDecision
from swarm.core.trust.workspace import decide as decide_trust
from swarm.errors import AgentStopped, describe_error
from swarm.runtime.clis.base import CliDriver, DriverSetup
from swarm.runtime.clis.model_proxy import model_route
from swarm.runtime.clis.permission import asked, decide, forget_asking
from swarm.runtime.clis.team_server import HubLink
from swarm.runtime.clis.waits import AskWaiter, CliSignals, DriverWaiter, NoSubagents
from swarm.runtime.extensions.loader import checkout_of
from swarm.runtime.process.orphan import OrphanCheck
from swarm.runtime.teammate.base import AgentBase
from swarm.runtime.teammate.console import Console, brief
from swarm.runtime.teammate.idle import TurnRecord, idle_notification, task_report
from swarm.runtime.teammate.inputs import Inbound, Inputs, is_shutdown
from swarm.runtime.teammate.prompts import Peer, team_addendum
from swarm.runtime.turn.loop import TurnOutcome

SERVER_PREFIX = "mcp__swarm__"


class CliTeammate(AgentBase):
    def __init__(self, team_name: str, name: str) -> None:
        team = Team.open(team_name)
        previous = read_state(team.name, name)
        super().__init__(team, name)
        self.member = self.team.member(name)
        self.box = self.team.inbox(name, checked=False)
        self.console = Console(paths.agent_log(self.team.name, name), name)
        self.cwd = Path(self.member.cwd or os.getcwd())
        trust = self._trust()  # the process decides for itself, as swarm's own teammates do
        for line in (trust.warning, trust.notice()):
            if line:
                self.console.say(f"warning: {line}")
        self.orphan = OrphanCheck(self.team, self.console.say, remote=bool(self.member.host))
        self.pending_shutdown: ShutdownRequest | None = None
        self.shutdown_approved = False
        self.turn = TurnRecord()
        self.plans_before: int | None = None  # answered plans when its ExitPlanMode was seen
        self._asking_lock = threading.Lock()  # a turn's end, and what its MCP server asks
        self._in_turn = False
        self._mirrored = False  # the state shows what the MCP server asks
        session = previous.cli_session if previous else None
        self.state.cli_session = session
        resumed_mode = previous.mode if previous and previous.mode else None
        self.state.mode = resumed_mode or ("plan" if self.member.plan_mode_required
                                           else self.member.permission_mode)
        detail = (previous.detail or "") if previous else ""
        resumed = (detail if detail.startswith(RESTARTED) else RESTARTED) if session else None
        self.inputs = Inputs(self.team, name, self.box, NoSubagents(), self.console,
                             self.keeper, self.stop_reason, self.change_mode, resumed)
        self.kind = kinds.agent_cli(self.member.agent or "")
        driver: Callable[[DriverSetup], CliDriver] = kinds.load(str(self.kind.driver))
        self.driver: CliDriver = driver(self._setup(session))
        self.signals = CliSignals(self)

    def _setup(self, session: str | None) -> DriverSetup:
        env = dict(os.environ)
        # Its credential stays in this (non-dumpable) process: the CLI gets a token for it.
        self.route = model_route(self.kind, env, self.console.say)
        # Its team tools: the team's MCP server on this host, bound to this member by a token
        # in this process's memory only (runtime/clis/team_server.py).
        self.hub = HubLink(self.team.name, self.name, self.console.say)
        serve = [sys.executable, "-m", "swarm", "mcp", "serve", "--team", self.team.name,
                 "--as", self.name]
        # Explicit: the CLI may not pass its own environment on to its servers.
        mcp_env = {"SWARM_HOME": str(paths.home()), "SWARM_TEAM": self.team.name,
                   "SWARM_AGENT_ID": self.member.agent_id, "PATH": env.get("PATH", "")}
        if settings.raw("SWARM_STORE"):
            mcp_env["SWARM_STORE"] = settings.raw("SWARM_STORE")
        command = self.member.agent_command  # an anonymous ACP agent's (`-- CMD ARGS`)
        return DriverSetup(kind=self.kind, executable=self.kind.executable_path(command),
                           command_args=tuple((command or [])[1:]), cwd=self.cwd,
                           mode=self.state.mode or "default", model=self.member.model,
                           effort=self.member.effort, system_append=self._prompt(),
                           mcp_server=serve, mcp_env=mcp_env, session=session,
                           env=self.route.env, model_url=self.route.url,
                           provider=self.route.provider,
                           log=self.console.say, decide=self._decide,
                           team_server=self.hub.endpoint,
                           trusted=lambda: self._trust().trusted,
                           deny=(*self.member.deny_rules, *lasting_rules()[1]))

    def _trust(self) -> TrustDecision:
        """The checkout's configuration, trusted for this member now? (The CLI reads it at
        its start: asked again at each start, so a file changed since is untrusted.)"""
        return decide_trust(self.cwd, checkout_of(self.member),
                            granted=self.member.trusted_config)

    def _decide(self, tool: str, args: dict[str, Any], use_id: str,
                cancelled: threading.Event | None = None, must_ask: str | None = None) -> Decision:
        """A driver thread's wait ends with `cancelled`; else the wait is this process's own
        (its state shows it, `swarm interrupt` ends it)."""
        waiter = AskWaiter(self) if cancelled is None else DriverWaiter(self, cancelled)
        return decide(self.team.name, self.name, self.cwd, tool, args, use_id, cancelled,
                      waiter=waiter, must_ask=must_ask, on_spend=self.reviewer_spent)

    def _prompt(self) -> str:
        config = self.team.config()
        peers = [Peer(m.name, m.agent_type) for m in config.members
                 if m.name not in (self.name, LEAD_NAME)]
        addendum = team_addendum(self.name, config.name, config.lead_agent_id, peers,
                                 self.state.mode or "default")
        p = self.kind.tool_prefix
        return (f"{addendum}\nYour team tools are swarm's: {p}SendMessage, {p}TaskList,"
                f" {p}TaskGet, {p}TaskCreate, {p}TaskUpdate, {p}TeamStatus."
                + (f" {self.kind.tools_hint}" if self.kind.tools_hint else ""))

    def driver_proc(self) -> Any:
        return getattr(self.driver, "proc", None)

    # -- AgentBase / InputHost -------------------------------------------------------------
    def say(self, text: str) -> None:
        self.console.say(text)

    def on_superseded(self, why: str) -> None:
        self.console.say(f"{why}: exiting")
        if not self._stopping.is_set():
            os.kill(os.getpid(), 15)

    def on_beat(self) -> None:
        self._show_asking()
        if self.orphan.check() and not self._stopping.is_set():
            os.kill(os.getpid(), 15)

    def _show_asking(self) -> None:
        """What its CLI's MCP server asks the lead (Claude Code's PermissionPrompt, in that
        process) shown in this process's state, the one writer of it, while the turn runs."""
        with self._asking_lock:
            if not self._in_turn:
                return
            asking = asked(self.team.name, self.name)
            if asking is not None and self.state.state == "working":
                self._mirrored = True
                self.set_state(state=str(asking.get("state")), detail=asking.get("detail"))
            elif asking is None and self._mirrored:
                self._mirrored = False
                if self.state.state in ("waiting_permission", "awaiting_plan"):
                    self.set_state(state="working", detail=None)

    def stop_reason(self) -> str | None:
        if self.shutdown_approved:
            return "available"
        if self.member.max_turns is not None and self.state.turns >= self.member.max_turns:
            return "max_turns"
        budget = self.member.max_budget_usd
        if budget is not None and self.state.usage.cost_usd >= budget:
            return "budget_exhausted"
        return None

    def change_mode(self, change: ModeChange, order: Message) -> None:
        if change.mode == "auto":  # set again: its reviewer's denial counts start anew
            decisions.resume_auto(self.team.name, self.member.name)
        if change.mode != self.state.mode:
            self.driver.set_mode(change.mode)
            self.transcript.event("mode_changed", mode=change.mode, previous=self.state.mode)
        self.set_state(mode=change.mode, mode_order=f"{order.timestamp} {order.id}")

    # -- TurnEvents --------------------------------------------------------------------------
    def on_session(self, session_id: str) -> None:
        self.set_state(cli_session=session_id)
        self.transcript.event("cli_session", agent=self.member.agent, session=session_id)

    def on_model(self, model: str) -> None:
        if model and model != self.state.model:
            self.set_state(model=model)
            self.transcript.event("cli_model", model=model)

    def on_text(self, text: str) -> None:
        self.console.show(*self.console.view.says(text))

    def on_tool_use(self, name: str, args: dict[str, Any]) -> None:
        short = name.removeprefix(SERVER_PREFIX)
        self.turn.last_action = tool_call(short, args)
        if short == "TaskUpdate" and args.get("task_id") is not None:
            self.turn.updated_tasks.append(str(args["task_id"]))
        self.activity(self.turn.last_action)
        self.transcript.event("cli_tool_use", tool=name, input=args)
        self.console.show(f"-> {brief(self.turn.last_action, 160)}")
        if short == "ExitPlanMode" and self.state.mode == "plan":
            self.plans_before = len(self._plan_answers())
            self.set_state(state="awaiting_plan", detail="plan submitted")

    def on_tool_result(self, content: str, is_error: bool) -> None:
        self.activity(None)
        self.console.show(*self.console.view.result(content, is_error))
        if self.plans_before is not None:
            self._plan_answered()

    # -- plan approval -------------------------------------------------------------------------
    def _plan_answers(self) -> list[dict[str, Any]]:
        return [e for e in self.transcript.entries() if e.get("event") == "permission_prompt"
                and e.get("tool") == "ExitPlanMode"]

    def _plan_answered(self) -> None:
        """A tool result after its ExitPlanMode: once PermissionPrompt has answered, an approval
        is recorded here and the running CLI told (it left its own plan mode already)."""
        answers = self._plan_answers()
        if self.plans_before is None or len(answers) <= self.plans_before:
            return  # another call's result: the plan is still with the lead
        self.plans_before = None
        self.set_state(state="working", detail=None)
        mode = answers[-1].get("mode")
        if answers[-1].get("decision") != "allow" or not isinstance(mode, str):
            return
        self.driver.set_mode(mode)
        self.transcript.event("mode_changed", mode=mode, previous=self.state.mode,
                              by="plan approval")
        self.set_state(mode=mode)
        self.console.say(f"mode: plan -> {mode} (plan approved by {LEAD_NAME})")

    # -- one turn ----------------------------------------------------------------------------
    def take_turn(self, inbound: list[Inbound], task: Task | None) -> TurnOutcome:
        if self.stop_reason() and any(is_shutdown(i) for i in inbound):
            return self._approve_without_model(inbound, str(self.stop_reason()))
        current = task.id if task is not None else self.state.current_task
        self.turn = TurnRecord()
        self.plans_before = None
        self.signals.interrupt.clear()
        self.set_state(state="working", current_task=current, idle_reason=None, detail=None)
        with self._asking_lock:
            self._in_turn = True
        self.pending_shutdown = self.inputs.begin(inbound, task) or self.pending_shutdown
        blocks = self.inputs.render(inbound, task)
        self.record({"role": "user", "content": blocks})
        self.inputs.mark_read(inbound)
        try:
            result = self.driver.turn("\n\n".join(b["text"] for b in blocks), self)
        finally:
            with self._asking_lock:  # nothing it asked outlives the turn
                self._in_turn = self._mirrored = False
                forget_asking(self.team.name, self.name)
        self.record({"role": "assistant", "content": [{"type": "text", "text": result.text}]})
        self.add_usage(result.usage)
        if self.signals.interrupt.is_set():
            self.transcript.event("interrupted")
            return TurnOutcome(reason="interrupted", last_text=result.text)
        if result.failure:
            return TurnOutcome(reason="failed", failure=result.failure, last_text=result.text)
        return TurnOutcome(last_text=result.text)

    def _approve_without_model(self, inbound: list[Inbound], why: str) -> TurnOutcome:
        request = next(i.kind for i in inbound if isinstance(i.kind, ShutdownRequest))
        assert isinstance(request, ShutdownRequest)
        self.inputs.mark_read(inbound)
        self.team.send(LEAD_NAME, ShutdownResponse(
            request_id=request.request_id, approve=True,
            reason=f"{why}: shutting down without the model"), sender=self.name)
        self.shutdown_approved = True
        return TurnOutcome()

    def _check_shutdown(self) -> None:
        """Its model approved through swarm's SendMessage (in the MCP server's process): the
        lead's mailbox has that answer."""
        pending = self.pending_shutdown
        if pending is None:
            return
        for message in self.team.inbox(LEAD_NAME, checked=False).messages(include_archive=True):
            kind = message.structured() if message.sender == self.name else None
            if (isinstance(kind, ShutdownResponse) and kind.request_id == pending.request_id
                    and kind.approve):
                self.shutdown_approved = True
                return

    def after_turn(self, outcome: TurnOutcome) -> None:
        report = task_report(self.team, self.name, self.state.current_task, outcome, self.turn)
        detail = outcome.failure or (f"stopped: {outcome.reason}"
                                     if outcome.reason != "available" else None)
        self.set_state(state="idle", idle_reason=outcome.reason, current_task=report.current,
                       detail=detail, activity=None)
        note = idle_notification(self.name, outcome, self.turn, report, self.state.turns)
        self.team.send(LEAD_NAME, note, sender=self.name)
        self.console.say(f"idle ({outcome.reason})"
                         + (f": {outcome.failure}" if outcome.failure else ""))

    # -- the process -------------------------------------------------------------------------
    def run(self) -> int:
        self.signals.install()
        write_state(self.team.name, self.name, self.state)
        self.team.update_member(self.name, pid=os.getpid())
        self.transcript.event("started", pid=os.getpid(), agent=self.member.agent,
                              model=self.member.model)
        self.start_heartbeat()
        self.console.say(f"{self.name}@{self.team.name} started ({self.member.agent}, mode"
                         f" {self.state.mode}, pid {os.getpid()})")
        exit_code, detail, crashed = 0, "shut down", False
        try:
            self.hub.warm()  # the team's MCP server starts beside the CLI
            self.driver.start()
            pid = self.driver.pid
            self.set_state(child_pgid=pid)
            with self.inputs.watcher() as watcher:
                self.set_state(state="idle", idle_reason="available")
                while not self.shutdown_approved:
                    inbound, task = self.inputs.next_input(watcher)
                    outcome = self.take_turn(inbound, task)
                    if self.driver.pid != pid:  # restarted after a death within the turn
                        pid = self.driver.pid
                        self.set_state(child_pgid=pid)
                    self._check_shutdown()
                    if self.shutdown_approved:
                        break
                    self.after_turn(outcome)
        except AgentStopped:
            exit_code, detail = ((0, self.orphan.orphaned) if self.orphan.orphaned else
                                 (129, "its pane was closed (SIGHUP)") if self.signals.hangup
                                 else (143, "killed (SIGTERM)"))
        except Exception as exc:  # a crash: recorded as a death
            exit_code, detail, crashed = 1, f"crashed: {describe_error(exc)}", True
            self.console.say(detail)
        finally:
            self.stop_heartbeat()
            self.finish(detail, died=crashed or self.signals.hangup)
        return exit_code

    def finish(self, detail: str, died: bool) -> None:
        from swarm.runtime.teammate.life import tell_lead_of_death

        self.signals.ignore_stops()
        self.driver.stop()
        self.hub.close()
        if self.route.proxy is not None:
            self.route.proxy.stop()
        if self.superseded:
            self.transcript.event("exited", detail=self.superseded)
            return
        released = self.team.tasks.release_owned_by(self.name)
        self.transcript.event("exited", detail=detail, released=[t.id for t in released])
        self.console.say(f"exited: {detail}")
        if not died:
            self.set_state(state="exited", current_task=None, detail=detail, child_pgid=None)
            return
        self.set_state(state="dead", current_task=None, detail=detail, terminated_reported=True,
                       child_pgid=None)
        tell_lead_of_death(self.team.name, self.name, detail)
