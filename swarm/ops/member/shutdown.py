"""Asking members to exit (`swarm shutdown`, a session's end, `swarm team remove`): a shutdown
request, its answer and the member's exit awaited; one that cannot answer with its model ended
after a grace; a removed member's files kept aside for the report."""

from __future__ import annotations

import time

from msgspec import Struct

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ShutdownRequest, ShutdownResponse
from swarm.core.records.state import AgentState, without_model
from swarm.core.records.task import ENDED
from swarm.core.records.team_config import Member
from swarm.core.store import paths
from swarm.core.store.api import Mailbox
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.worktrees import Finished
from swarm.errors import BadInputError, OperationFailedError
from swarm.ops.member.control import (
    close_pane,
    finish_worktree,
    stop_member,
    targets,
    team_watcher,
)
from swarm.ops.member.health import end_child_commands, observe, observe_member


class ShutdownOutcome(Struct, dict=True):
    name: str
    result: str  # exited | refused | timeout | killed | already-stopped
    reason: str | None = None
    worktree: Finished | None = None  # its worktree, finished as it exited

    def as_dict(self) -> dict[str, object]:
        return records.to_dict(self)  # deep: its worktree a dict too


def shutdown(team: Team, names: list[str], reason: str | None = None, timeout: float = 30.0,
             force: bool = False) -> list[ShutdownOutcome]:
    """Ask each member to shut down; wait for its answer and its exit; kill on --force. A member
    that cannot make a model call (its last turn failed, a failing call backing off) approves
    by itself at once: it gets a short grace (SWARM_UNANSWERED_GRACE), not `timeout`, and is
    then ended even without --force; with --force it is ended at once. With --force, a member
    that left an earlier request unread gets the grace too: it was asked already and is not
    reading its mail."""
    pending: dict[str, _Asked] = {}
    outcomes: list[ShutdownOutcome] = []
    start = time.monotonic()
    for member in targets(team, names):
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
    lead_box = team.inbox(LEAD_NAME, checked=False)
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


class _Asked:
    """A member asked to shut down: its request, until when it is waited for, and why it is
    late when it is; `ends`: ended at the deadline even without --force."""

    def __init__(self, member: Member, deadline: float, late: str) -> None:
        self.member, self.deadline, self.late = member, deadline, late
        self.request_id = ""
        self.ends = False

    def cut(self, now: float, why: str, ends: bool = False) -> None:
        """Wait at most the grace from `now`: `why` says why it gets no more."""
        grace = settings.unanswered_grace()
        if now + grace < self.deadline:
            self.deadline = now + grace
            self.late = f"{why}; no exit within {grace:g}s"
        elif why not in self.late:
            self.late = f"{why}; {self.late}"
        self.ends = self.ends or ends


def _asked_before(team: Team, name: str) -> bool:
    """An earlier shutdown request from the lead still lies unread in `name`'s mailbox."""
    return any(isinstance(m.structured(), ShutdownRequest) and m.sender == LEAD_NAME
               for m in team.inbox(name, checked=False).unread())


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
