"""One look at the team for the lead's wake policy: members, tasks, and whether anything is
still moving (quiet: nothing will happen without the lead; stalled: nobody can go on); and what
the lead sleeps on between looks (`lead_watcher`)."""

from __future__ import annotations

from msgspec import Struct

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.task import Task
from swarm.core.store import select as stores
from swarm.core.store.api import Watcher
from swarm.core.store.waker import Waker
from swarm.core.team.team import Team
from swarm.ops.member.health import MemberStatus, age_s, observe

DONE_STATES = ("exited", "dead")
# An idle teammate that is out of turns or budget leaves its mail unread on purpose: not busy.
STOPPED_REASONS = ("max_turns", "budget_exhausted")
LOOK_EVERY = 2.0  # seconds between looks with no file change (a death by stale heartbeat, a stall)
NOTE_GRACE = 5.0  # seconds a note in flight may take (a member killed mid-turn never sends it)


class TeamView(Struct, dict=True):
    """One look at the team: members, tasks, and whether anything is still moving."""

    statuses: list[MemberStatus]
    tasks: list[Task]
    pending_requests: int
    quiet: bool
    stalled: bool  # nobody works and nobody can take the unfinished tasks

    def signature(self) -> tuple[object, ...]:
        return (tuple((s.name, s.state) for s in self.statuses),
                tuple((t.id, t.status, t.owner) for t in self.tasks))


def look(team: Team, pending_requests: int, reported: dict[str, int]) -> TeamView:
    """`reported`: the `turns` of each member's newest idle note. A member that shows idle
    with more turns than that has a note on its way (it writes its state, then tells the lead):
    still busy, or the lead would be woken once before its note and once after."""
    statuses = observe(team)
    tasks = team.tasks.list()
    live = [s for s in statuses if s.state not in DONE_STATES]
    busy = any(s.state != "idle" or (s.unread and s.idle_reason not in STOPPED_REASONS)
               or (s.turns and reported.get(s.name, 0) < s.turns
                   and age_s(s.last_activity or "") < NOTE_GRACE) for s in live)
    unfinished = [t for t in tasks if t.status != "completed"]
    quiet = not busy and not unfinished and not pending_requests
    claimable = bool(live) and any(
        team.tasks.is_available(t, t.owner) and (t.owner is None or any(
            s.name == t.owner for s in live)) for t in unfinished)
    stalled = not busy and bool(unfinished) and not pending_requests and not claimable
    return TeamView(statuses, tasks, pending_requests, quiet, stalled)


def task_tally(tasks: list[Task]) -> str:
    if not tasks:
        return "tasks: none"
    counts = {s: sum(1 for t in tasks if t.status == s)
              for s in ("completed", "failed", "in_progress", "pending")}
    return "tasks: " + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)


def lead_watcher(team: Team, waker: Waker | None = None) -> Watcher:
    """What the lead sleeps on: the mailboxes, the tasks and every teammate's state file (not
    the lead's own heartbeat)."""
    return stores.team_watcher(team.name, None, True,
                               [m.name for m in team.members() if m.name != LEAD_NAME], waker)
