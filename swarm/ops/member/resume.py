"""`swarm team resume`: a team whose processes all died (a reboot, kill -9 of everything) comes
back. Each teammate that was not shut down is respawned with its conversation (ops.member.spawner
wake: the same restart as `swarm respawn`, its worktree kept or checked out again); the tasks
it was working on stay its own and it continues them first (given back only when it does not
start); its unread mail waits in its mailbox. The lead's
seat is named, not taken: a dead `swarm lead` is continued with the command printed, or the
team is handed to the person's shell (`--shell-lead`). Running it again starts nothing."""

from __future__ import annotations

import contextlib

from msgspec import Struct, field, to_builtins

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.task import ENDED
from swarm.core.records.team_config import Member, TeamConfig
from swarm.core.store.liveness import is_alive
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.ops.member.health import observe_member
from swarm.ops.member.restart import wake

# The one exit that keeps a member down: it approved a shutdown request (runtime.teammate.agent run).
SHUT_DOWN = "shut down"


class MemberResume(Struct, dict=True):
    """One teammate: `action` is start / started (dry run or not), running (alive: left
    alone), stays down (shut down before the crash), or failed (`why` says)."""

    name: str
    was: str  # the state it was found in
    action: str
    why: str | None = None
    pid: int | None = None
    worktree: str | None = None
    # Tasks it was working on: kept with it (it continues them) when it starts; given back
    # (pending, no owner) when it does not.
    kept: list[str] = field(default_factory=list)


class LeadSeat(Struct, dict=True):
    """running: a `swarm lead` process leads; gone: it died (`command` continues it); shell: a
    person leads from a shell (nothing to start)."""

    state: str
    command: str | None = None


class ResumeResult(Struct, dict=True):
    team: str
    dry_run: bool
    lead: LeadSeat
    members: list[MemberResume]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return dict(to_builtins(self))

    @property
    def started(self) -> list[MemberResume]:
        return [m for m in self.members if m.action in ("start", "started")]

    @property
    def failed(self) -> list[MemberResume]:
        return [m for m in self.members if m.action == "failed"]


def resume_team(team: Team, *, dry_run: bool = False, shell_lead: bool = False) -> ResumeResult:
    """Bring back every teammate that died or left with its lead; `dry_run` only says who."""
    config = team.config()
    lead = _lead_seat(team, config, dry_run, shell_lead)
    notes = []
    members = [_resume_member(team, m, dry_run) for m in config.members if m.name != LEAD_NAME]
    if lead.state == "gone" and any(m.action in ("start", "started") for m in members):
        notes.append(f"the lead is gone: run `{lead.command}` (or resume with --shell-lead);"
                     " otherwise its teammates leave again after SWARM_ORPHAN_GRACE")
    return ResumeResult(team.name, dry_run, lead, members, notes)


def _lead_seat(team: Team, config: TeamConfig, dry_run: bool, shell_lead: bool) -> LeadSeat:
    pid = config.lead_pid
    if not pid:
        return LeadSeat("shell")
    if is_alive(pid, config.lead_started_at):
        return LeadSeat("running")
    if not shell_lead:
        return LeadSeat("gone", f"swarm lead --resume --team {team.name}")
    if not dry_run:
        def to_shell(found: TeamConfig) -> None:
            if found.lead_pid == pid:  # a lead that took the seat meanwhile keeps it
                found.lead_pid = found.lead_started_at = None

        team.update(to_shell)
    return LeadSeat("shell")


def _resume_member(team: Team, member: Member, dry_run: bool) -> MemberResume:
    held = [t.id for t in team.tasks.list() if t.owner == member.name and t.status not in ENDED]
    # A death noticed here is recorded with its tasks kept (it continues them); a dry run only
    # shows it (its tasks stay held, the lead is not told).
    status = observe_member(team, member, record=not dry_run, release=False)
    found = MemberResume(member.name, status.state, "running", worktree=member.worktree_path)
    if status.state not in ("dead", "exited"):
        found.pid = status.pid
        return found
    found.why = f"{status.state}" + (f" ({status.detail})" if status.detail else "")
    if status.state == "exited" and status.detail == SHUT_DOWN:
        found.action = "stays down"
        return found
    found.kept = held
    if dry_run:
        found.action = "start"
        return found
    found.kept = _keep(team, member.name, held)
    try:
        woken = wake(team, member.name, revive_dead=True)
    except SwarmError as exc:
        team.tasks.release_owned_by(member.name)  # not coming back: its tasks are for others
        found.action, found.why, found.kept = "failed", str(exc), []
        return found
    found.action = "started" if woken.woken else "running"  # another resume got there first
    found.pid = woken.pid
    found.worktree = team.member(member.name).worktree_path
    return found


def _keep(team: Team, name: str, held: list[str]) -> list[str]:
    """The tasks `name` held that are still its own, taking back any an earlier observer of its
    death gave back meanwhile (unless another teammate has it by now)."""
    kept = []
    for task_id in held:
        task = team.tasks.get(task_id)
        if task.owner is None and task.status == "pending":
            with contextlib.suppress(SwarmError):
                task = team.tasks.claim(task_id, name)
        if task.owner == name and task.status not in ENDED:
            kept.append(task_id)
    return kept
