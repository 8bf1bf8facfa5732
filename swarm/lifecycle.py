"""Stopping members: end their processes, close their panes, give back their tasks."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

import psutil

from swarm.liveness import is_alive
from swarm.state import AgentState, read_state, update_state

if TYPE_CHECKING:
    from swarm.team import Member, Team


def terminate(pid: int, started_at: float | None, grace: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after `grace` seconds. True when the process is gone."""
    if not is_alive(pid, started_at):
        return True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            psutil.Process(pid).send_signal(sig)
        except (psutil.NoSuchProcess, ProcessLookupError):
            return True
        # Poll rather than psutil's wait: an exited child of a process that has not reaped it
        # yet stays a zombie, which that wait counts as running (`is_alive` does not).
        deadline = time.monotonic() + grace
        while is_alive(pid, started_at):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        else:
            return True
    return False


def close_pane(member: Member) -> None:
    """Close the member's pane through its backend, if it has one (never another pane)."""
    if not member.pane_id or member.backend in (None, "hidden"):
        return
    try:
        from backends.resolve import get_backend
    except ImportError:
        return
    with contextlib.suppress(Exception):
        team = member.agent_id.partition("@")[2]
        get_backend(member.backend, team=team, socket=member.tmux_socket).kill_pane(member.pane_id)


def stop_member(team: Team, member: Member, reason: str = "killed") -> None:
    state = read_state(team.name, member.name)
    pid = state.pid if state else member.pid
    if pid and pid != os.getpid():
        terminate(pid, state.started_at if state else None)
    close_pane(member)
    team.tasks.release_owned_by(member.name)
    if state is not None:

        def mark(s: AgentState) -> None:
            s.state, s.detail = "exited", reason

        update_state(team.name, member.name, mark)


def stop_members(team: Team, members: list[Member]) -> None:
    """Stop every teammate and close every pane recorded for the team (and its own tmux
    session), so deleting a team leaves nothing behind and touches nothing else."""
    for member in members:
        if member.name != "team-lead":
            stop_member(team, member, "stopped: team deleted")
    sockets = {m.tmux_socket for m in members if m.backend == "tmux"}
    for socket in sockets:
        with contextlib.suppress(Exception):
            from backends.tmux import TmuxBackend

            TmuxBackend(team=team.name, socket=socket).kill_session()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and team.live_members():
        time.sleep(0.05)
