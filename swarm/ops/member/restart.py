"""A stopped teammate started again with its identity and transcript: `swarm respawn`, and the
wake of `swarm send --wake` and the lead's sends."""

from __future__ import annotations

import time
from pathlib import Path

from msgspec import Struct
from msgspec.structs import asdict

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import validate_mode
from swarm.core.records.state import RESTARTED, AgentState
from swarm.core.records.team_config import Member
from swarm.core.team.state import update_state
from swarm.core.team.team import Team
from swarm.core.team.worktrees import create, reattach, record_fields, record_of
from swarm.errors import BadInputError
from swarm.ops.clients import EXTERNAL, serve_command
from swarm.ops.member.health import observe_member
from swarm.ops.member.spawner import SpawnRequest, SpawnResult, launch
from swarm.runtime.models import check_model_spec


def respawn(team: Team, request: SpawnRequest) -> SpawnResult:
    """Restart a dead or exited member with the same identity; it resumes its transcript.
    A new `model` or `permission_mode` (at most `cap`) is checked first and recorded before it
    starts."""
    member = team.member(request.name)
    model, permission_mode = request.model, request.permission_mode
    if member.name == LEAD_NAME:
        raise BadInputError("the team lead is not a process swarm runs")
    if member.agent_type == EXTERNAL:
        raise BadInputError(f"{member.name} is played by an MCP client, not a process swarm"
                            f" runs: the client starts it with {serve_command(team.name, member.name)}")
    if permission_mode is not None:
        validate_mode(permission_mode)
        if request.cap is not None:
            request.cap.check(permission_mode)
    if model is not None and not member.agent:
        model = check_model_spec(model, cwd=member.cwd or ".")
    status = observe_member(team, member)
    if status.state not in ("dead", "exited") or not claim_restart(team, member.name):
        now = status.state if status.state not in ("dead", "exited") else "being restarted"
        raise BadInputError(f"{member.name} is {now}, not dead or exited; "
                            f"`swarm kill {member.name}` first to restart it")
    changes: dict[str, object] = {}
    if model is not None:
        changes["model"] = model
    if permission_mode is not None:
        changes.update(permission_mode=permission_mode, plan_mode_required=False)

        def new_mode(state: AgentState) -> None:
            state.mode = permission_mode  # not the mode it was in before: the one asked for

        update_state(team.name, member.name, new_mode)
    if changes:
        member = team.update_member(member.name, **changes)
    return relaunch(team, member)


def claim_restart(team: Team, name: str) -> bool:
    """Under the state lock: a dead or exited member becomes `starting` (True), so of two
    restarts at once (two `send --wake`) only one launches a process."""
    claimed = False

    def reset(state: AgentState) -> None:
        nonlocal claimed
        if state.state not in ("dead", "exited"):
            return
        claimed = True
        why = f" ({state.detail})" if state.detail else ""
        how = "exited" if state.state == "exited" else "died"
        state.state, state.terminated_reported = "starting", False
        state.detail = f"{RESTARTED} after it {how}{why}"  # the new process tells its model
        # A fresh heartbeat: an observer must give the new process its start-up grace.
        state.pid, state.started_at, state.heartbeat = None, None, time.time()

    update_state(team.name, name, reset)
    return claimed


def relaunch(team: Team, member: Member) -> SpawnResult:
    repo = member.worktree_repo
    gone = repo and not (member.worktree_path and Path(member.worktree_path).is_dir())
    record = record_of(member)
    # Deleted while it was down, its branch kept: that branch at that path (its commits there).
    if repo and gone and not (record is not None and reattach(record)):
        # Its clean worktree was removed when it exited: it works in a fresh one again.
        tree = create(Path(repo), team.name, member.name)
        member = team.update_member(member.name, **record_fields(tree))
    pane_id, pid = launch(team, member)
    return SpawnResult(agent_id=member.agent_id, name=member.name, team=team.name,
                       backend=member.backend or "hidden", backend_reason="as first spawned",
                       pane_id=pane_id, pid=pid, model=member.model or "",
                       permission_mode=member.permission_mode, agent=member.agent)


class WakeResult(Struct, dict=True):
    """What `wake` found and did: `was` is the state it found the member in."""

    name: str
    was: str
    detail: str | None = None  # why it had stopped
    woken: bool = False
    pid: int | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def describe(self, by_lead: bool = True) -> str:
        """One line for the sender; a teammate is not told to run lead-only commands."""
        why = f" ({self.detail})" if self.detail else ""
        if self.woken:
            was = "had exited" if self.was == "exited" else "was dead"
            return (f"{self.name} {was}{why}: woke it (pid {self.pid or '-'}) with its"
                    " transcript; it will handle the message")
        if self.was in ("exited", "dead"):
            verb = "has exited" if self.was == "exited" else "is dead"
            if not by_lead:
                return f"{self.name} {verb}{why}: the message waits in its mailbox until the lead wakes it"
            return (f"{self.name} {verb}{why}: the message waits in its mailbox; wake it with"
                    f" `swarm send {self.name} ... --wake` or `swarm respawn {self.name}`")
        return f"{self.name} is {self.was}"


def stopped(team: Team, name: str) -> WakeResult | None:
    """The member, when it is exited or dead (a death not noticed yet is recorded now)."""
    status = observe_member(team, team.member(name))
    if status.state not in ("exited", "dead"):
        return None
    return WakeResult(status.name, status.state, status.detail)


def wake(team: Team, name: str, *, revive_dead: bool = False) -> WakeResult:
    """Start a stopped teammate again so it handles the message waiting in its mailbox (send
    first, then wake). An exited one is respawned with its transcript; a dead (crashed) one only
    with `revive_dead` (`swarm send --wake`); a live one is left alone. The lead's SendMessage
    calls this after each send to a teammate."""
    member = team.member(name)
    if member.name == LEAD_NAME:
        return WakeResult(member.name, "the lead")
    if member.agent_type == EXTERNAL:  # its MCP client reads the mailbox when it connects
        return WakeResult(member.name, "played by an MCP client")
    status = observe_member(team, member)  # a death not yet noticed is recorded here
    found = WakeResult(member.name, status.state, status.detail)
    wanted = status.state == "exited" or (status.state == "dead" and revive_dead)
    if wanted and claim_restart(team, member.name):
        found.woken, found.pid = True, relaunch(team, member).pid
    return found
