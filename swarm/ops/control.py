"""Steering teammates: shutdown (asked, maybe refused), interrupt, kill, a new mode, removing a
member, and deleting a team with everything it started (processes, panes); waiting: ops.waiting."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from msgspec import Struct

from swarm.backends.resolve import get_backend
from swarm.backends.ssh import signal_agent
from swarm.core.model import records
from swarm.core.model.names import LEAD_NAME, PLANS_TO_THE_LEAD, ModeCap, plan_refusal
from swarm.core.model.protocol import ModeChange, ShutdownRequest, ShutdownResponse
from swarm.core.model.state import AgentState, without_model
from swarm.core.model.task import ENDED
from swarm.core.model.team import Member
from swarm.core.shell.rules import validate_mode
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.store.api import Mailbox, Watcher
from swarm.core.store.liveness import terminate
from swarm.core.store.select import open_mailbox
from swarm.core.team.state import read_state, update_state
from swarm.core.team.team import Team
from swarm.core.team.worktrees import Finished, finish_member, leave_team
from swarm.errors import BadInputError, OperationFailedError, SshError
from swarm.ops.health import MemberStatus, end_child_commands, observe, observe_member


class ShutdownOutcome(Struct, dict=True):
    name: str
    result: str  # exited | refused | timeout | killed | already-stopped
    reason: str | None = None
    worktree: Finished | None = None  # its worktree, finished as it exited

    def as_dict(self) -> dict[str, object]:
        return records.to_dict(self)  # deep: its worktree a dict too


def team_watcher(team: Team) -> Watcher:
    """Wakes on any mailbox, task or agent state change of the team."""
    return stores.team_watcher(team.name, None, True, [m.name for m in team.members()])


def _targets(team: Team, names: list[str]) -> list[Member]:
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
    elif pid and pid != os.getpid():
        terminate(pid, state.started_at if state else None)
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


def shutdown(team: Team, names: list[str], reason: str | None = None, timeout: float = 30.0,
             force: bool = False) -> list[ShutdownOutcome]:
    """Ask each member to shut down; wait for its answer and its exit; kill on --force. A member
    that cannot make a model call (its last turn failed, a failing call backing off) approves
    by itself at once: it gets GRACE, not `timeout`, and is then ended even without --force;
    with --force it is ended at once. With --force, a member that left an earlier request
    unread gets GRACE too: it was asked already and is not reading its mail."""
    pending: dict[str, _Asked] = {}
    outcomes: list[ShutdownOutcome] = []
    start = time.monotonic()
    for member in _targets(team, names):
        status = observe_member(team, member)
        if status.state in ("exited", "dead"):
            close_pane(member)
            tree = finish_worktree(team, member) if status.state == "exited" else None
            outcomes.append(ShutdownOutcome(member.name, "already-stopped", status.state, tree))
            continue
        unable = without_model(read_state(team.name, member.name))
        if force and unable:  # nothing to wait for: its model cannot decide anything
            tree = stop_member(team, member, "killed by shutdown --force")
            outcomes.append(ShutdownOutcome(member.name, "killed", unable, tree))
            continue
        asked = _Asked(member, start + timeout, f"no exit within {timeout:g}s")
        if force and _asked_before(team, member.name):
            asked.cut(start, "it did not answer an earlier shutdown request")
        request = ShutdownRequest(reason=reason)
        team.send(member.name, request, sender=LEAD_NAME)
        asked.request_id = request.request_id
        pending[member.name] = asked
    lead_box = open_mailbox(team.name, LEAD_NAME)
    late_ones: list[tuple[_Asked, str]] = []
    with team_watcher(team) as watcher:
        while pending:
            # States first: a member sends its answer before it exits, so one seen exited has
            # its answer (and its words on why) already in the lead's box.
            states = {name: read_state(team.name, name) for name in pending}
            answers = _shutdown_answers(lead_box, {p.request_id: n for n, p in pending.items()})
            now = time.monotonic()
            for name, asked in list(pending.items()):
                answer = answers.get(asked.request_id)
                state = states[name]
                unable = without_model(state)
                if unable and not asked.ends:  # it cannot decide: a grace, then it is ended
                    asked.cut(now, unable, ends=True)
                if answer is not None and not answer.approve:
                    outcomes.append(ShutdownOutcome(name, "refused", answer.reason))
                    del pending[name]
                elif state is not None and state.state in ("exited", "dead"):
                    close_pane(asked.member)
                    tree = (finish_worktree(team, asked.member) if state.state == "exited"
                            else None)
                    # Its own words when it approved (why it left without the model).
                    why = answer.reason if answer is not None and answer.reason else state.detail
                    outcomes.append(ShutdownOutcome(name, "exited", why, tree))
                    del pending[name]
                elif now >= asked.deadline:
                    # One that cannot answer: its late line says why already.
                    late_ones.append((asked, asked.late if asked.ends
                                      else _late(asked.late, state)))
                    del pending[name]
            if not pending:
                break
            next_deadline = min(p.deadline for p in pending.values())
            watcher.wait(max(0.0, min(next_deadline - time.monotonic(), 1.0)))
            observe(team)  # notices a member that died instead of answering
    for asked, late in late_ones:
        if force or asked.ends:
            tree = stop_member(team, asked.member, "killed by shutdown" + (
                " --force" if force else ": it could not answer"))
            outcomes.append(ShutdownOutcome(asked.member.name, "killed", late, tree))
        else:
            outcomes.append(ShutdownOutcome(asked.member.name, "timeout", late))
    return outcomes


GRACE = 5.0  # seconds a shutdown waits for a member that cannot answer with its model


class _Asked:
    """A member asked to shut down: its request, until when it is waited for, and why it is
    late when it is; `ends`: ended at the deadline even without --force."""

    def __init__(self, member: Member, deadline: float, late: str) -> None:
        self.member, self.deadline, self.late = member, deadline, late
        self.request_id = ""
        self.ends = False

    def cut(self, now: float, why: str, ends: bool = False) -> None:
        """Wait at most GRACE from `now`: `why` says why it gets no more."""
        if now + GRACE < self.deadline:
            self.deadline = now + GRACE
            self.late = f"{why}; no exit within {GRACE:g}s"
        elif why not in self.late:
            self.late = f"{why}; {self.late}"
        self.ends = self.ends or ends


def _asked_before(team: Team, name: str) -> bool:
    """An earlier shutdown request from the lead still lies unread in `name`'s mailbox."""
    return any(isinstance(m.structured(), ShutdownRequest) and m.sender == LEAD_NAME
               for m in open_mailbox(team.name, name).unread())


def _late(late: str, state: AgentState | None) -> str:
    """Why no exit, and what the member is doing (its state and detail: a model call that
    keeps failing, the command it runs)."""
    if state is None:
        return late
    return f"{late}; it is {state.state}" + (f": {state.detail}" if state.detail else "")


def _shutdown_answers(box: Mailbox, asked: dict[str, str]) -> dict[str, ShutdownResponse]:
    """Answers to our requests (request id -> the member asked), from the member asked only:
    a third member's forged refusal is not an answer."""
    found: dict[str, ShutdownResponse] = {}
    used = []
    for message in box.messages(include_archive=True):
        structured = message.structured()
        if (isinstance(structured, ShutdownResponse)
                and asked.get(structured.request_id) == message.sender):
            found[structured.request_id] = structured
            if not message.read:
                used.append(message.id)
    if used:
        box.mark_read(used)
    return found


def interrupted_line(status: MemberStatus) -> str:
    """What an interrupt did: an idle teammate ignores SIGINT between turns."""
    if status.state == "idle":
        return f"{status.name} is idle: there was no turn to interrupt"
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


def kill(team: Team, name: str) -> Finished | None:
    member = team.member(name)
    if member.name == LEAD_NAME:
        raise BadInputError("the team lead is not a teammate process")
    return stop_member(team, member, "killed")


class Removed(Struct, dict=True):
    name: str
    stopped: str  # how it left: exited | killed | already-stopped
    released: list[str]  # ids of the tasks it gave back
    kept_as: str | None  # its transcript and mailbox now live under this name, for the report
    worktree: Finished | None = None

    def as_dict(self) -> dict[str, object]:
        return records.to_dict(self)  # deep: its worktree a dict too


def remove_member(team: Team, name: str, force: bool = False,
                  timeout: float = 30.0) -> Removed:
    """`swarm team remove`: stop the member (a shutdown; `force` kills), give back its tasks,
    and take it out of the team file. Its transcript and mailbox are kept under
    `NAME.removed-N` (not a member name, so the name is free and a new member with it starts
    with an empty conversation); the report still reads them."""
    member = team.member(name)
    if member.name == LEAD_NAME:
        raise BadInputError("the team lead cannot be removed")
    status = observe_member(team, member)
    owned = [t.id for t in team.tasks.list() if t.owner == member.name and t.status not in ENDED]
    tree: Finished | None = None
    if status.state in ("exited", "dead"):
        how = "already-stopped"
        close_pane(member)
        end_child_commands(read_state(team.name, member.name), member)
    elif force:
        how, tree = "killed", stop_member(team, member, "removed from the team")
    else:
        (outcome,) = shutdown(team, [member.name], "removed from the team", timeout)
        if outcome.result != "exited":
            why = f": {outcome.reason}" if outcome.reason else ""
            raise OperationFailedError(f"{member.name} did not leave ({outcome.result}{why}); "
                                       f"`swarm team remove {member.name} --force` kills it")
        how, tree = "exited", outcome.worktree
    team.tasks.release_owned_by(member.name)  # a stopped process gave them back already
    if tree is None and how != "exited":
        tree = finish_worktree(team, member)
    kept = _keep_files_aside(team, member.name)
    team.remove_member(member.name)
    return Removed(member.name, how, owned, kept, tree)


def _keep_files_aside(team: Team, name: str) -> str | None:
    """Move a removed member's agent directory and mailbox to the first free `NAME.removed-N`."""
    sources = [paths.agent_dir(team.name, name), paths.inbox(team.name, name),
               paths.inbox_archive(team.name, name)]
    if not any(p.exists() for p in sources):
        return None
    n = 1
    while paths.agent_dir(team.name, f"{name}.removed-{n}").exists() or paths.inbox(
            team.name, f"{name}.removed-{n}").exists():
        n += 1
    kept = f"{name}.removed-{n}"
    targets = [paths.agent_dir(team.name, kept), paths.inbox(team.name, kept),
               paths.inbox_archive(team.name, kept)]
    for source, target in zip(sources, targets, strict=True):
        if source.exists():
            source.rename(target)
    return kept


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
    if mode == "plan" and member.agent is not None and member.agent not in PLANS_TO_THE_LEAD:
        raise BadInputError(plan_refusal(member.agent, "give it default or acceptEdits"))
    if cap is not None:
        cap.check(mode)
    team.send(member.name, ModeChange(mode=mode, reason=reason),  # type: ignore[arg-type]
              sender=LEAD_NAME)
    return observe_member(team, member)
