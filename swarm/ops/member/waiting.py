"""`swarm wait`: block until teammates are idle, tasks are done, members exited, or one asks."""

from __future__ import annotations

import time

from swarm.core.team.team import Team
from swarm.errors import BadInputError, OperationFailedError, WaitTimeoutError
from swarm.ops.member.control import team_watcher
from swarm.ops.member.health import MemberStatus, observe

UNTIL = ("idle", "tasks-done", "exited", "asking")
ASKING = ("waiting_permission", "awaiting_plan")  # waits for the lead's answer


def _satisfied(team: Team, until: str, statuses: list[MemberStatus]) -> bool:
    if until == "exited":
        return all(s.state in ("exited", "dead") for s in statuses)
    if until == "asking":
        return any(s.state in ASKING for s in statuses)
    if until == "tasks-done":
        tasks = team.tasks.list()
        return bool(tasks) and all(t.status == "completed" for t in tasks)
    live = [s for s in statuses if s.state not in ("exited", "dead")]
    if any(s.state != "idle" or s.unread for s in live):
        return False
    # Idle with claimable work left is only a pause: a teammate is about to take it.
    return not live or not any(team.tasks.is_available(t) for t in team.tasks.list())


def _refuse_failed_tasks(team: Team) -> None:
    """A failed task will never be completed by itself: waiting for it would only time out."""
    failed = [t for t in team.tasks.list() if t.status == "failed"]
    if failed:
        names = ", ".join(f"#{t.id} ({t.subject[:40]})" for t in failed)
        raise OperationFailedError(f"task failed: {names}; see `swarm tasks show {failed[0].id}`")


def wait(team: Team, until: str, timeout: float | None) -> list[MemberStatus]:
    """Block until the condition holds. OperationFailedError if a member died (or failed),
    WaitTimeoutError (exit 124) on timeout."""
    if until not in UNTIL:
        raise BadInputError(f"--until must be one of {', '.join(UNTIL)}")
    if until == "tasks-done" and not team.tasks.list():  # it could only time out
        raise OperationFailedError(f"team {team.name!r} has no tasks: nothing to wait for"
                                   " (`swarm tasks add` creates one)")
    deadline = None if timeout is None else time.monotonic() + timeout
    # A death before the wait is old news (`swarm status` shows it, the lead was told): it
    # fails only a wait that nobody alive can satisfy. A death during the wait fails it.
    before: set[str] | None = None
    while True:
        with team_watcher(team) as watcher:
            statuses = observe(team)
            if before is None:
                before = {s.name for s in statuses if s.state == "dead"}
            dead = [s for s in statuses if s.state == "dead" and s.name not in before]
            if dead and until != "exited":
                names = ", ".join(f"{s.name} ({s.detail})" for s in dead)
                raise OperationFailedError(f"teammate died: {names}")
            if before and until != "exited" and all(s.state in ("exited", "dead") for s in statuses):
                _nobody_alive([s for s in statuses if s.name in before])
            if until == "tasks-done":
                _refuse_failed_tasks(team)
            if _satisfied(team, until, statuses):
                failed = [s for s in statuses if s.idle_reason == "failed"]
                if failed:
                    names = ", ".join(f"{s.name} ({s.detail})" for s in failed)
                    raise OperationFailedError(f"teammate failed: {names}")
                return statuses
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimeoutError(f"timed out after {timeout:g}s waiting for {until}")
            watcher.wait(1.0 if remaining is None else min(remaining, 1.0))


def _nobody_alive(dead: list[MemberStatus]) -> None:
    names = ", ".join(f"{s.name} ({s.detail})" for s in dead)
    first = dead[0].name
    raise OperationFailedError(
        f"teammate died: {names} before this wait, and no teammate is alive: `swarm respawn"
        f" {first}` restarts one, `swarm team remove {first}` clears it")


def left_out(statuses: list[MemberStatus]) -> list[str]:
    """Notes for a wait that held: members dead since before it, which it left out."""
    return [f"{s.name} died before this wait and is left out of it (`swarm respawn {s.name}`"
            f" restarts it, `swarm team remove {s.name}` clears it)"
            for s in statuses if s.state == "dead"]
