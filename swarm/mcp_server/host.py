"""The team member an MCP client plays through `swarm mcp serve`: the lead (default) or member
NAME (`--as NAME`). `ServedHost` is the ToolHost (and, for the lead, the LeadHost) of the tools
the server offers; the tools are the very ones `swarm lead` and teammates run (lead/lead_tools.py,
runtime/tools/team_tools.py, mcp_server/wait_tools.py), so names, schemas, descriptions and rules are theirs.

Registration. The lead records its pid and process start time in the team file (`lead_pid`), as
`swarm lead` does, so the teammates' orphan rule counts this server as the team's live lead
process. At exit that record stays: the teammates it leaves running leave on their own once
SWARM_ORPHAN_GRACE has passed (a new server for the team within the grace adopts them). A member
joins the team file (or takes over its stopped entry). Both keep a state.json with a heartbeat,
so `swarm status` shows them and a served member that dies is noticed like any teammate.

The mode cap: the served lead is an LLM, so it grants at most its --permission-mode (the lead
tools' own check, core.records.permissions.ModeCap): a spawn or a plan approval in a higher mode is refused; a
teammate spawned without a mode starts in the served lead's.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm.core.records.names import LEAD_NAME, validate_agent_name, validate_team_name
from swarm.core.records.permissions import validate_mode
from swarm.core.records.protocol import MAX_SUMMARY_BYTES, check_size
from swarm.core.records.team_config import Member, TeamConfig
from swarm.core.store.liveness import is_alive
from swarm.core.store.waker import Waker
from swarm.core.team.state import read_state, write_state
from swarm.core.team.team import Team
from swarm.errors import BadInputError, SwarmError, ToolError, describe_error
from swarm.lead.lead_tools import (
    AnswerPermission,
    AnswerPlan,
    LeadSendMessage,
    SpawnDefaults,
    SpawnTeammate,
    TeamDelete,
    TeamStatus,
    deleted_line,
)
from swarm.lead.team_view import DONE_STATES
from swarm.mcp_server.permission_prompt import PermissionPrompt
from swarm.mcp_server.wait_tools import (
    Delivered,
    LeadReadInbox,
    LeadWaitForTeam,
    ReadInbox,
    ServedWatch,
    TeamCreate,
    WaitForTeam,
)
from swarm.ops.approvals import Pending
from swarm.ops.clients import EXTERNAL
from swarm.ops.member import control
from swarm.ops.member.health import observe_member
from swarm.runtime.teammate.base import AgentBase
from swarm.runtime.tools import team_tools as tt
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult, run_tool

log = logging.getLogger(__name__)
LEAD_ONLY_TOOLS = ("TeamCreate", "TeamDelete", "SpawnTeammate", "AnswerPermission", "AnswerPlan")
@dataclass
class ServeOptions:
    team: str | None = None  # --team (or SWARM_TEAM)
    member: str | None = None  # --as NAME
    permission_mode: str = "default"
    cwd: str | None = None  # where teammates start (default: the server's working directory)
    # Served inside member NAME's own `swarm agent` process (an agent CLI teammate's team tools):
    # that process owns the member's state and inbox; the server only serves its tools.
    attached: bool = False


class LogReporter:
    """Where a served lead's Watch reports: the log. The client hears through the tools."""

    def message(self, sender: str, color: str | None, text: str) -> None:
        log.info("%s: %s", sender, text)

    def notice(self, text: str) -> None:
        log.info("%s", text)

    def request(self, pending: Pending) -> None:
        log.info("request from %s", pending.message.sender)

    def resolved(self, pending: Pending) -> None:
        pass


class Identity(AgentBase):
    """The served lead's or member's state.json, heartbeat and transcript events."""

    def say(self, text: str) -> None:
        log.info("%s", text)

    def on_superseded(self, why: str) -> None:
        log.warning("%s: %s", self.name, why)

    def begin(self, mode: str, detail: str) -> None:
        write_state(self.team.name, self.name, self.state)  # ours now, whoever had it before
        self.transcript.event("started", pid=os.getpid(), served="mcp")
        self.start_heartbeat()
        self.set_state(state="idle", idle_reason="available", mode=mode, detail=detail)

    def end(self, detail: str) -> None:
        self.stop_heartbeat()
        self.set_state(state="exited", current_task=None, detail=detail)
        self.transcript.event("exited", detail=detail)


def never_ran(team: Team, member: Member) -> bool:
    """Registered but never started by swarm: no backend, no pid, no state. A spawn records
    its backend when it registers, so a teammate still starting is not taken for one."""
    return (member.backend is None and member.host is None and member.pid is None
            and read_state(team.name, member.name) is None)


def parent_probe() -> Callable[[], bool]:
    """The CLI that asks is this process's parent (a stdio server): there while it still is."""
    parent = os.getppid()
    return lambda: os.getppid() == parent


class ServedHost:
    """The ToolHost (and LeadHost) of one `swarm mcp serve` process."""

    def __init__(self, options: ServeOptions) -> None:
        # The most it grants: SpawnTeammate and AnswerPlan check it (core.records.permissions.ModeCap).
        self.mode = self.cap = validate_mode(options.permission_mode)
        self.depth = 1  # the client it serves is the person's delegate: its teammates are 2
        self.member = validate_agent_name(options.member) if options.member is not None else None
        self.attached = options.attached and self.member is not None
        self.name = self.member or LEAD_NAME
        self.requested = validate_team_name(options.team) if options.team is not None else None
        self.cwd = Path(options.cwd or os.getcwd()).expanduser().resolve()
        self.lock = threading.RLock()
        self.waker = Waker()
        self._closing = threading.Event()
        self._shutdown_id: str | None = None
        self.spawn_defaults = SpawnDefaults(backend=None, cwd=str(self.cwd), model=None,
                                            max_teammates=8, permission_mode=self.cap)
        self.team: Team | None = None
        self.identity: Identity | None = None
        self.watch: ServedWatch  # once there is a team (tools run only then)
        self.tools = self._tool_set()
        # For a call that waits on the lead (PermissionPrompt): made as the call comes, whether
        # the CLI that asked is still there. Here: the client is this process's parent (stdio).
        self.client_probe: Callable[[], Callable[[], bool]] = parent_probe

    # -- the team ---------------------------------------------------------------------------
    def start(self) -> None:
        """Join (a member) or lead (an existing --team) now; a lead without a team waits for
        TeamCreate. Bad input is a BadInputError before the server speaks."""
        if self.member is not None:
            if self.requested is None:
                raise BadInputError("--as NAME joins a team: pass --team T or set SWARM_TEAM")
            if self.attached:  # its own process is the member: register nothing
                self.team = Team.open(self.requested)
                self.watch = ServedWatch(self.team, "lead", LogReporter())
                return
            self._join(Team.open(self.requested))
        elif self.requested is not None and Team(self.requested).exists():
            self._lead(Team.open(self.requested))

    def create_team(self, name: str | None, description: str) -> Team:
        if self.team is not None:
            raise ToolError(f"this server already leads team {self.team.name}: one team per"
                            " server (start another `swarm mcp serve --team NAME` for another)")
        check_size("description", description, MAX_SUMMARY_BYTES)
        team = Team.create(name or self.requested or f"lead-{secrets.token_hex(3)}", description)
        try:
            self._lead(team)
        except BaseException:
            Team.delete(team.name, force=True)  # created here, never led
            raise
        return team

    def _lead(self, team: Team) -> None:
        pid = os.getpid()
        identity = Identity(team, LEAD_NAME)

        def lead(config: TeamConfig) -> None:  # checked and taken under the team file's lock
            if config.lead_pid and config.lead_pid != pid and is_alive(
                    config.lead_pid, config.lead_started_at):
                raise BadInputError(f"team {team.name!r} is led by a running lead process (pid"
                                    f" {config.lead_pid}); end it first, or join as a member"
                                    " with --as NAME")
            config.lead_pid, config.lead_started_at = pid, identity.state.started_at

        team.update(lead)
        team.update_member(LEAD_NAME, cwd=str(self.cwd))
        self._adopt(team, identity)  # first: an exit from here on is recorded
        identity.begin(self.cap, "leads over MCP (swarm mcp serve)")

    def delete_team(self) -> str:
        """TeamDelete: end the team as `swarm team delete` does; this server then leads none
        (TeamCreate makes another)."""
        assert self.team is not None and self.identity is not None
        team, self.team = self.team, None
        self.identity.end("the lead deleted the team (TeamDelete)")  # its heartbeat stops
        self.identity = None
        return deleted_line(control.delete_team(team.name, force=True))

    def _join(self, team: Team) -> None:
        existing = team.config().member(self.name)
        if existing is None:
            team.add_member(self.name, cwd=str(self.cwd), permission_mode=self.cap,
                            pid=os.getpid(), agent_type=EXTERNAL)  # never started by swarm
        elif not never_ran(team, existing):
            status = observe_member(team, existing)
            if status.state not in DONE_STATES:
                raise BadInputError(f"{self.name} is a running member of team {team.name!r}"
                                    f" ({status.state}, pid {status.pid}): serve as another"
                                    " name, or stop it first")
            team.update_member(self.name, pid=os.getpid(), cwd=str(self.cwd))
        else:  # registered (`swarm team add`, Team.add_member) and never started: ours
            team.update_member(self.name, pid=os.getpid(), cwd=str(self.cwd))
        identity = Identity(team, self.name)
        self._adopt(team, identity)
        identity.begin(self.cap, "a member played over MCP (swarm mcp serve --as)")

    def _adopt(self, team: Team, identity: Identity) -> None:
        self.team, self.identity = team, identity
        self.watch = ServedWatch(team, "lead", LogReporter())

    def close(self, detail: str) -> None:
        """End every wait; record the exit. The lead's `lead_pid` stays (the orphan rule); a
        member gives back its tasks."""
        if self._closing.is_set():
            return
        self._closing.set()
        self.waker.set()
        if self.identity is None or self.team is None:
            return
        try:
            if self.member is not None:
                self.team.tasks.release_owned_by(self.member)
            self.identity.end(detail)
        except (SwarmError, OSError) as exc:
            log.warning("recording the end of %s: %s", self.name, describe_error(exc))

    # -- the tools --------------------------------------------------------------------------
    def _tool_set(self) -> dict[str, Tool]:
        tasks: list[Tool] = [tt.TaskCreate(), tt.TaskListTool(), tt.TaskGet(), tt.TaskUpdate()]
        if self.member is None:
            items: list[Tool] = [TeamCreate(), SpawnTeammate(), LeadSendMessage(),
                                 LeadReadInbox(), *tasks, TeamStatus(), AnswerPermission(),
                                 AnswerPlan(), LeadWaitForTeam(), TeamDelete()]
        elif self.attached:  # its messages arrive as turns; what it would ask goes to the lead
            items = [tt.SendMessage(), *tasks, TeamStatus(), PermissionPrompt()]
        else:
            items = [tt.SendMessage(), ReadInbox(), *tasks, TeamStatus(), WaitForTeam()]
        return {tool.name: tool for tool in items}

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Run one tool call; every failure is an error result with the CLI's one line."""
        tool = self.tools.get(name)
        if tool is None:
            if self.member is not None and name in LEAD_ONLY_TOOLS:
                return ToolResult(f"{name} is the lead's: this server acts as member"
                                  f" {self.member} of team {self.requested}", is_error=True)
            return ToolResult(f"unknown tool {name!r}; this server has {', '.join(self.tools)}",
                              is_error=True)
        if self.team is None and not isinstance(tool, TeamCreate):
            why = f"team {self.requested} does not exist yet" if self.requested \
                else "this server was started without --team"
            return ToolResult(f"no team yet ({why}): call TeamCreate first", is_error=True)
        ctx = ToolContext(team=self.team or Team(self.requested or LEAD_NAME), name=self.name,
                          cwd=self.cwd, host=self)
        if getattr(tool, "blocking", False):  # takes the lock per look
            return self._run(tool, args, ctx)
        with self.lock:
            return self._run(tool, args, ctx)

    @staticmethod
    def _run(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return run_tool(tool, args, ctx)
        except Exception as exc:  # a bug: one line for the client, the traceback in the log
            log.exception("%s failed", tool.name)
            return ToolResult(f"unexpected {type(exc).__name__}: {exc}", is_error=True)

    def deliver(self, result: ToolResult) -> None:
        """The result is on its way to the client: mark what it hands over read."""
        if not isinstance(result, Delivered):
            return
        with self.lock:
            try:
                result.done()
            except (SwarmError, OSError) as exc:  # at least once: they come again
                log.warning("messages not marked read: %s", describe_error(exc))

    def instructions(self) -> str:
        """What the client's model is told about this server."""
        if self.member is not None:
            return (f"You are {self.member}, a member of the swarm team {self.requested}. Loop:"
                    " WaitForTeam, then ReadInbox, then do the work; claim and complete tasks"
                    " with TaskList/TaskUpdate and report to team-lead with SendMessage.")
        team = f"the swarm team {self.team.name}" if self.team else "a swarm team (TeamCreate)"
        return (f"You lead {team}: teammates are separate agent processes with their own"
                " context, tools and model. Order: TeamCreate (if there is no team yet);"
                " TaskCreate for each piece of work; SpawnTeammate with a self-contained"
                " prompt; then loop WaitForTeam -> ReadInbox -> act (SendMessage, TaskUpdate,"
                " AnswerPermission, AnswerPlan) until the tasks are completed and the team is"
                ' quiet; then SendMessage {"type": "shutdown_request"} to each teammate. You'
                f" grant at most permission mode {self.cap}.")

    # -- ToolHost / LeadHost / WaitHost -------------------------------------------------------
    def closing(self) -> bool:
        return self._closing.is_set()

    def notice(self, text: str) -> None:
        log.info("%s", text)

    def shutdown_asked(self, request_id: str) -> None:
        self._shutdown_id = request_id

    def pending_shutdown_id(self) -> str | None:
        return self._shutdown_id

    def track_process(self, proc: Any) -> None:
        pass  # no Bash tool here

    def structured_sent(self, message: Any) -> None:
        pass  # the client decides when it is done; the server ends when the client closes

    def exit_plan(self, plan: str) -> str:
        return "plan mode is not active"
