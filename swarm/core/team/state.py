"""A member's state record (`state.json`, or a key on Redis), read and written through the
selected store; whether its process looks stopped."""

from __future__ import annotations

from collections.abc import Callable

from swarm.core.records.state import AgentState
from swarm.core.records.team_config import Member
from swarm.core.store import select as stores
from swarm.core.store.liveness import START_TIME_TOLERANCE, is_alive, process_start_time, runs_agent


def read_state(team: str, name: str) -> AgentState | None:
    return stores.team_store().read_state(team, name)


def write_state(team: str, name: str, state: AgentState) -> None:
    stores.team_store().write_state(team, name, state)


def update_state(team: str, name: str, change: Callable[[AgentState], None],
                 timeout: float | None = None) -> AgentState:
    """Read-modify-write under the state lock (the agent and observers may both write)."""
    return stores.team_store().update_state(team, name, change, timeout)


def member_process(team: str, member: Member) -> tuple[int, float | None] | None:
    """The member's live process on this host (pid, start time), or None: its state record's
    pid while that process started when the record says; a pid without a start time (the team
    file's, when there is no record) only while it runs this member's `swarm agent`."""
    state = read_state(team, member.name)
    if state is not None and state.pid and state.started_at:
        return (state.pid, state.started_at) if is_alive(state.pid, state.started_at) else None
    pid = state.pid if state is not None and state.pid else member.pid
    return (pid, None) if pid and runs_agent(pid, member.agent_id) else None


def looks_stopped(team: str, name: str) -> bool:
    """Recorded exited or dead, or its process gone without anyone having noticed yet. Cheap
    enough for every send (state.json and /proc, no psutil); `ops.member.health` has the last word."""
    state = read_state(team, name)
    if state is None or state.state == "starting":
        return False
    if state.state in ("exited", "dead"):
        return True
    if state.pid is None:
        return False
    started = process_start_time(state.pid)
    return started is None or (state.started_at is not None
                               and abs(started - state.started_at) > START_TIME_TOLERANCE)
