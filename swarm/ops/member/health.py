"""What each member is doing, and the one place a death is noticed and acted on.

`dead` means: the recorded pid is gone, or now belongs to another process (start time differs:
pids are reused), or the heartbeat is stale. Whoever observes a death first releases the dead
agent's tasks, tells the lead once (`teammate_terminated`), and records it in state.json.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import UTC, datetime
from typing import Any

from msgspec import Struct, field
from msgspec.structs import asdict

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import TeammateTerminated
from swarm.core.records.state import AgentState, end_child_command
from swarm.core.records.team_config import Member
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.store.disk import iso_at, utcnow, warn
from swarm.core.store.liveness import is_alive
from swarm.core.team import decisions
from swarm.core.team.overlaps import overlapping
from swarm.core.team.state import read_state, update_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.errors import LockTimeoutError

log = logging.getLogger(__name__)

STARTUP_GRACE = 20.0  # seconds a new member may take to write its first state


def heartbeat_stale_after() -> float:
    return settings.heartbeat_stale()


class MemberStatus(Struct, dict=True):
    name: str
    agent_id: str
    state: str
    backend: str | None
    pane_id: str | None
    pid: int | None
    current_task: str | None
    unread: int
    turns: int
    tokens: int
    cost_usd: float
    last_activity: str | None
    detail: str | None
    idle_reason: str | None
    color: str | None
    model: str | None
    mode: str | None = None  # the permission mode it is really in (see `mode_of`)
    cost_known: bool = True  # False: a model it used has no price (its cost shows n/a)
    # Files this member wrote that another member (sharing its checkout) wrote too.
    overlaps: list[str] = field(default_factory=list)
    subagents: list[dict[str, object]] = field(default_factory=list)  # the running ones
    # What it does now ("thinking", a tool call's line) since when (epoch seconds), if alive.
    activity: str | None = None
    activity_since: float | None = None
    # Of `tokens`, those its model spent thinking (where its provider reports them).
    thinking_tokens: int = 0
    effort: str | None = None  # how hard it thinks (its member entry's)
    # In auto: why its reviewer no longer decides (3 denials in a row, 20 in all) until auto is
    # set again; a person is asked meanwhile (core.team.decisions).
    auto_paused: str | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def mode_of(member: Member, state: AgentState | None) -> str:
    """The permission mode a member is really in: what its process last recorded (a plan
    approval changes it), else what it starts in."""
    if state is not None and state.mode:
        return state.mode
    return "plan" if member.plan_mode_required else member.permission_mode


def age_s(iso: str) -> float:
    """Seconds since an ISO timestamp (0 for one that does not parse; one without a zone is
    UTC, as ours are: a message's timestamp is whatever its sender wrote)."""
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (utcnow() - (then if then.tzinfo else then.replace(tzinfo=UTC))).total_seconds()


def death_reason(member: Member, state: AgentState | None) -> str | None:
    """Why `member` is dead though not recorded so, or None (alive, starting, or recorded)."""
    if member.host:
        return _remote_death_reason(member, state)
    if state is None:
        if member.pid:
            return None if is_alive(member.pid) else "exited before it started (see `swarm logs " + member.name + "`)"
        if age_s(member.joined_at) < STARTUP_GRACE:
            return None
        return "never started (see `swarm logs " + member.name + "`)"
    if state.state in ("exited", "dead"):
        return None
    if state.pid is None:  # respawned, its process not up yet
        if member.pid and is_alive(member.pid):
            return None
        return None if time.time() - state.heartbeat < STARTUP_GRACE else "never started"
    if not is_alive(state.pid):
        return f"process {state.pid} is gone"
    if not is_alive(state.pid, state.started_at):
        return f"pid {state.pid} now belongs to another process"
    stale = time.time() - state.heartbeat
    if stale > heartbeat_stale_after():
        return f"no heartbeat for {stale:.0f}s"
    return None


def _remote_death_reason(member: Member, state: AgentState | None) -> str | None:
    """A member on another host: its pid is that host's, so only its heartbeat tells."""
    if state is None:
        if age_s(member.joined_at) < STARTUP_GRACE:
            return None
        return f"never started on {member.host} (see `swarm logs {member.name}`)"
    if state.state in ("exited", "dead"):
        return None
    stale = time.time() - state.heartbeat
    if state.pid is None:  # respawned, its process not up yet
        return None if stale < STARTUP_GRACE else f"never started on {member.host}"
    team = member.agent_id.partition("@")[2]
    if stores.team_store().heartbeat_expired(team, member.name):  # nothing refreshed it
        return f"no heartbeat from {member.host} for {max(stale, heartbeat_stale_after()):.0f}s"
    if stale > heartbeat_stale_after():
        return f"no heartbeat from {member.host} for {stale:.0f}s"
    return None


# An observer waits this long for a lock; a stopped process holding one must not hang status.
OBSERVER_LOCK_TIMEOUT = 2.0


def end_child_commands(state: AgentState | None, member: Member | None = None) -> None:
    """A dead agent's Bash command runs in its own process group and would outlive it: end it,
    if that group is still the one the agent started. Not for a member on another host: its
    process group is that host's (a stop there ends it through ssh)."""
    if member is None or not member.host:
        end_child_command(state)


def record_death(team: Team, name: str, reason: str, release: bool = True) -> bool:
    """Mark `name` dead: release its tasks, record it, and (the first observer only) tell the
    lead. True if first. Tasks go first: a lock timeout then leaves the death to be recorded by
    the next observer, never recorded with its tasks still held. `release` False: its tasks
    stay with it (`swarm team resume` restarts it next, and it continues them)."""
    first = False
    last_alive = 0.0

    def mark(state: AgentState) -> None:
        nonlocal first, last_alive
        # Exited after the observer looked (state read, then its pid found gone): a clean exit
        # recorded by the member itself, not a death.
        if state.state == "exited" or (state.state == "dead" and state.terminated_reported):
            return
        first = not state.terminated_reported
        last_alive = state.heartbeat
        state.state, state.detail, state.terminated_reported = "dead", reason, True
        state.current_task = None

    try:
        if release:
            team.tasks.release_owned_by(name, timeout=OBSERVER_LOCK_TIMEOUT)
        update_state(team.name, name, mark, timeout=OBSERVER_LOCK_TIMEOUT)
    except LockTimeoutError as exc:
        warn(f"{name} looks dead ({reason}) but could not be recorded yet: {exc}")
        return False
    member = team.config().member(name)
    end_child_commands(read_state(team.name, name), member)
    if first and not (member is not None and member.host):  # its transcript is that host's
        # For `swarm report`: it was dead from its last sign of life, not busy or idle.
        with contextlib.suppress(OSError):
            Transcript(paths.agent_transcript(team.name, name)).event(
                "died", detail=reason, last_alive=iso_at(last_alive))
    if first:
        log.warning("%s@%s is dead: %s", name, team.name, reason)
        note = TeammateTerminated(agent_id=f"{name}@{team.name}", reason=reason)
        team.send(LEAD_NAME, note, sender=name)
    return first


def observe_member(team: Team, member: Member, record: bool = True,
                   release: bool = True) -> MemberStatus:
    """`member`'s status. A death noticed is recorded (see record_death) unless `record` is
    False: then it is only shown (`swarm doctor` without --fix changes nothing)."""
    # The mailbox before the state: a teammate writes `working` before it marks its input
    # read, so no interleaving shows an idle state with that input already gone (a team that
    # has only just been handed work would look quiet).
    unread = len(team.inbox(member.name, checked=False).unread())
    state = read_state(team.name, member.name)
    reason = death_reason(member, state)
    if reason is not None:
        if record:
            record_death(team, member.name, reason, release)
        fresh = read_state(team.name, member.name)
        if fresh is not None and fresh.state in ("exited", "dead"):  # recorded: by it, or by us
            state = fresh
        else:  # not recorded (yet): still say so
            state = records.replace(state or AgentState(pid=member.pid), state="dead",
                                    detail=reason)
    if state is None:
        return MemberStatus(member.name, member.agent_id, "starting", member.backend,
                            member.pane_id, member.pid, None, unread, 0, 0, 0.0, None, None, None,
                            member.color, member.model, mode_of(member, None))
    return MemberStatus(
        name=member.name, agent_id=member.agent_id, state=state.state, backend=member.backend,
        pane_id=member.pane_id, pid=state.pid or member.pid, current_task=state.current_task,
        unread=unread, turns=state.turns, tokens=state.usage.total_tokens,
        cost_usd=round(state.usage.cost_usd, 6), last_activity=state.last_activity,
        detail=state.detail, idle_reason=state.idle_reason, color=member.color,
        model=state.model or member.model,
        mode=mode_of(member, state), cost_known=state.usage.cost_known,
        thinking_tokens=state.usage.thinking_tokens, effort=member.effort,
        auto_paused=decisions.paused(team.name, member.name)
        if mode_of(member, state) == "auto" else None,
        subagents=[] if state.state in ("dead", "exited") else [
            {k: getattr(s, k) for k in ("agent_id", "subagent_type", "description", "status",
                                        "background", "tool_uses", "tokens", "started_at",
                                        "recent", "summary")}
            for s in state.subagents if s.status == "running"],
        **_activity(state),
    )


def _activity(state: AgentState) -> dict[str, Any]:
    if state.state in ("dead", "exited"):
        return {}
    return {"activity": state.activity, "activity_since": state.activity_since}


def observe_lead(team: Team, record: bool = True) -> MemberStatus | None:
    """The lead's row, when a `swarm lead` process leads (or led) the team: it records its
    state.json like a teammate. A lead that is gone shows as dead; nothing is recorded for it
    (its teammates notice on their own: runtime.process.orphan), but its Bash command, in a
    process group of its own, is ended (unless `record` is False), as a teammate's is."""
    member = team.config().member(LEAD_NAME)
    state = read_state(team.name, LEAD_NAME)
    if member is None or state is None:
        return None
    detail = state.detail
    if state.state not in ("exited", "dead") and state.pid is not None:
        reason = death_reason(member, state)
        if reason is not None:
            if record:
                end_child_commands(state, member)
            state = records.replace(state, state="dead")
            detail = reason
    return MemberStatus(
        name=LEAD_NAME, agent_id=member.agent_id, state=state.state, backend=None, pane_id=None,
        pid=state.pid, current_task=state.current_task,
        unread=len(team.inbox(LEAD_NAME, checked=False).unread()), turns=state.turns,
        tokens=state.usage.total_tokens, cost_usd=round(state.usage.cost_usd, 6),
        last_activity=state.last_activity, detail=detail, idle_reason=state.idle_reason,
        color=member.color, model=member.model, mode=state.mode,
        cost_known=state.usage.cost_known, **_activity(state),
    )


def observe(team: Team, record: bool = True, include_lead: bool = False) -> list[MemberStatus]:
    """Status of every teammate; with `include_lead`, the `swarm lead` process's row first
    (when one leads the team: a person leading from a shell has no process to show)."""
    statuses = [observe_member(team, m, record) for m in team.members() if m.name != LEAD_NAME]
    shared = overlapping(team.name)
    for status in statuses:
        status.overlaps = sorted(path for path, names in shared.items() if status.name in names)
    lead = observe_lead(team, record) if include_lead else None
    return [lead, *statuses] if lead is not None else statuses
