"""Steering teammates: interrupt, kill, a new mode, stopping a member's process, and deleting a
team with everything it started (processes, panes); asking them to exit: ops.member.shutdown; waiting:
ops.member.waiting."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from msgspec import Struct

from swarm.backends.resolve import get_backend
from swarm.backends.ssh import signal_agent
from swarm.core import kinds
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import ModeCap, validate_mode
from swarm.core.records.protocol import ModeChange
from swarm.core.records.state import IN_TURN, AgentState
from swarm.core.records.team_config import Member
from swarm.core.store import select as stores
from swarm.core.store.api import Watcher
from swarm.core.store.liveness import terminate
from swarm.core.team.state import member_process, read_state, update_state
from swarm.core.team.team import Team
from swarm.core.team.worktrees import Finished, finish_member, leave_team
from swarm.errors import BadInputError, OperationFailedError, SshError
from swarm.ops.member.health import MemberStatus, end_child_commands, observe_member


def team_watcher(team: Team) -> Watcher:
    """Wakes on any mailbox, task or agent state change of the team."""
    return stores.team_watcher(team.name, None, True, [m.name for m in team.members()])


def targets(team: Team, names: list[str]) -> list[Member]:
    if not names:
        return [m for m in team.members() if m.name != LEAD_NAME]
    out = []
    for name in names:
        member = team.member(name)
        if member.name == LEAD_NAME:
            raise BadInputError("the team lead is not a teammate process")
        out.append(member)
    return out


def close_pane(member: Member) -> None:
    """Close the member's pane through its backend, if it has one (never another pane)."""
    if not member.pane_id or member.backend in (None, "hidden"):
        return
    with contextlib.suppress(Exception):
        team = member.agent_id.partition("@")[2]
        get_backend(member.backend, team=team, socket=member.tmux_socket,
                    host=member.host).kill_pane(member.pane_id)


def finish_worktree(team: Team, member: Member) -> Finished | None:
    """A member that exited: remove its worktree if it holds no work, else keep it (listed by
    `swarm worktrees`). A dead one keeps its worktree as it is, for a respawn."""
    return finish_member(team, team.member(member.name))


def stop_member(team: Team, member: Member, reason: str = "killed",
                worktree: bool = True) -> Finished | None:
    state = read_state(team.name, member.name)
    pid = state.pid if state else member.pid
    if member.host:  # its pid is that host's: TERM, then KILL, through ssh
        if pid:
            signal_agent(member.host, team.name, member.name, pid, "TERM", escalate=True,
                         child_pgid=state.child_pgid if state else None)
    elif (found := member_process(team.name, member)) and found[0] != os.getpid():
        terminate(*found)
    end_child_commands(read_state(team.name, member.name), member)
    close_pane(member)
    team.tasks.release_owned_by(member.name)
    if state is not None:

        def mark(s: AgentState) -> None:
            s.state, s.detail = "exited", reason

        update_state(team.name, member.name, mark)
    return finish_worktree(team, member) if worktree else None


def stop_members(team: Team, members: list[Member]) -> None:
    """Stop every teammate and close every pane recorded for the team (and its own tmux
    session), so deleting a team leaves nothing behind and touches nothing else."""
    for member in members:
        if member.name != "team-lead":
            # A host that cannot be reached must not keep the team (its agent will find the
            # team gone); everything here is still stopped.
            with contextlib.suppress(SshError) if member.host else contextlib.nullcontext():
                stop_member(team, member, "stopped: team deleted", worktree=False)
    places = {(m.backend, m.tmux_socket, m.host) for m in members if m.backend}
    for backend, socket, host in places:
        with contextlib.suppress(Exception):
            get_backend(backend, team=team.name, socket=socket, host=host).close_team()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and team.live_members():
        time.sleep(0.05)


class Deleted(Struct, dict=True):
    team: str
    stopped: list[str]  # members that were still running
    worktrees: list[Finished]  # removed, or kept outside the team directory (path, branch)

    def as_dict(self) -> dict[str, object]:
        return {"deleted": self.team, "stopped": self.stopped,
                "worktrees": [tree.as_dict() for tree in self.worktrees]}


def delete_team(name: str, force: bool = False, discard_worktrees: bool = False) -> Deleted:
    """`swarm team delete`: stop every teammate, close every pane recorded for the team, finish
    every worktree (a clean one goes with its branch; one with work moves to
    `$SWARM_HOME/kept-worktrees/` unless `discard_worktrees`), then remove the directory."""
    finished: list[Finished] = []

    def stop(team: Team, alive: list[Member]) -> None:
        stop_members(team, team.members())
        finished.extend(leave_team(team, discard=discard_worktrees))

    stopped = Team.delete(name, force=force, stop=stop)
    return Deleted(name.lower(), stopped, finished)


def end_teammates(team: Team) -> Deleted:
    """What `delete_team` does but removing the files, for a lead that deletes the team it
    runs in (TeamDelete): its own session removes them as it ends."""
    stopped = [m.name for m in team.live_members()]
    stop_members(team, team.members())
    return Deleted(team.name, stopped, leave_team(team))


def interrupted_line(status: MemberStatus) -> str:
    """What an interrupt did: a teammate ignores SIGINT outside a turn (idle, or starting)."""
    if status.state not in IN_TURN:
        return f"{status.name} is {status.state}: there was no turn to interrupt"
    return f"interrupted {status.name} ({status.state})"


def interrupt(team: Team, name: str) -> MemberStatus:
    member = team.member(name)
    state = read_state(team.name, member.name)
    status = observe_member(team, member)
    if status.state in ("dead", "exited") or state is None or not state.pid:
        raise OperationFailedError(f"{member.name} is {status.state}: nothing to interrupt")
    if member.host:
        signal_agent(member.host, team.name, member.name, state.pid, "INT")
    else:
        os.kill(state.pid, signal.SIGINT)
    return status


def to_background(team: Team, name: str) -> list[str]:
    """`swarm interrupt NAME --background`: the member's foreground subagents go on in the
    background and its wait on them ends (SIGUSR1); their ids. Refused when none runs."""
    member = team.member(name)
    if member.name == LEAD_NAME:  # its process has no SIGUSR1 handler: the signal would end it
        raise BadInputError("the team lead is not a teammate process: --background moves a"
                            " teammate's subagents")
    state = read_state(team.name, member.name)
    status = observe_member(team, member)
    if status.state in ("dead", "exited") or state is None or not state.pid:
        raise OperationFailedError(f"{member.name} is {status.state}: nothing to send to the"
                                   " background")
    running = [s for s in state.subagents if s.status == "running"]
    foreground = [s.agent_id for s in running if not s.background]
    if not foreground:
        others = ", ".join(s.agent_id for s in running)
        raise OperationFailedError(f"{member.name} has no foreground subagent running"
                                   + (f" ({others} {'is' if len(running) == 1 else 'are'} in"
                                      " the background)" if running else ""))
    if member.host:
        signal_agent(member.host, team.name, member.name, state.pid, "USR1")
    else:
        os.kill(state.pid, signal.SIGUSR1)
    return foreground


class Killed(Struct, dict=True):
    name: str
    was: str | None = None  # not running: its state and why ("exited: killed")
    worktree: Finished | None = None

    def describe(self) -> str:
        if self.was is not None:
            return f"{self.name} is not running ({self.was}): nothing to kill"
        return f"killed {self.name}" + (f"\n{self.worktree.describe()}" if self.worktree else "")


def kill(team: Team, name: str) -> Killed:
    """End a member's process now. One that is not running keeps its record as it is (a
    member that shut down is not `killed`); its pane and commands are ended all the same."""
    member = team.member(name)
    if member.name == LEAD_NAME:
        raise BadInputError("the team lead is not a teammate process")
    status = observe_member(team, member)
    if status.state in ("exited", "dead"):
        close_pane(member)
        end_child_commands(read_state(team.name, member.name), member)
        was = f"{status.state}: {status.detail}" if status.detail else status.state
        return Killed(member.name, was)
    return Killed(member.name, worktree=stop_member(team, member, "killed"))


def set_mode(team: Team, name: str, mode: str, reason: str | None = None,
             cap: ModeCap | None = None) -> MemberStatus:
    """`swarm mode` / the lead's SetMode: tell a teammate its new permission mode (a
    `mode_change`, which only the lead may send); it applies from its next tool call, or when
    it next runs. `cap`: the grantor's own mode (None: a person, not limited)."""
    member = team.member(name)
    if member.name == LEAD_NAME:
        raise BadInputError("the team lead's mode is its own: start `swarm lead` with "
                            "--permission-mode")
    validate_mode(mode)
    refused = kinds.mode_refusal(kinds.of_member(member.agent), mode,
                                 "give it default or acceptEdits")
    if refused:
        raise BadInputError(refused)
    if cap is not None:
        cap.check(mode)
    team.send(member.name, ModeChange(mode=mode, reason=reason),  # type: ignore[arg-type]
              sender=LEAD_NAME)
    return observe_member(team, member)
