"""A team whose document is gone while its agents run: `config.json` deleted or moved aside as
corrupt by its first reader, or the `swarm:<team>:config` key lost (a Redis restarted without
persistence, FLUSHALL) or set aside as corrupt.

What is left of such a team is its members' state records (pid, start time, heartbeat), which
the running agents keep writing. From them: the one-line error every command gives (naming the
document and what to do), the list doctor reports, and the stand-in members
(`Team.salvage`) that `swarm team delete --force`, `swarm kill` and `swarm doctor --fix` stop.
"""

from __future__ import annotations

import time

from swarm import settings
from swarm.core.store import select as stores
from swarm.core.team.state import read_state
from swarm.errors import NotFoundError, SwarmError, TeamGoneError


def state_names(team: str) -> list[str]:
    """The members with a state record, sorted (the team lead's too, when it has one)."""
    return stores.team_store().state_names(team)


def running(team: str) -> list[str]:
    """Members whose state says they run and whose heartbeat is fresh: they may still be alive
    (on this host or another), whatever the team file says."""
    out = []
    for name in state_names(team):
        state = read_state(team, name)
        if (state is not None and state.state not in ("exited", "dead")
                and time.time() - state.heartbeat <= settings.heartbeat_stale()):
            out.append(name)
    return out


def left_behind(team: str) -> bool:
    """Something of the team is left without its team file (so it is not just a wrong name)."""
    return stores.team_store().remains(team)


def gone_error(team: str, where: str) -> SwarmError:
    """The error for a team whose document `where` (a path or a key) cannot be read: a team
    never created (or deleted) is a wrong name; one with remains is a failure with a way out."""
    if not left_behind(team):
        return NotFoundError(f"no team named {team!r}; see `swarm team list`")
    aside = stores.team_store().moved_aside(team)
    why = (f"it did not parse and was moved aside to {aside[-1]}" if aside
           else "deleted, or lost by the store")
    alive = running(team)
    delete = f"`swarm team delete --force {team}`"
    todo = (f"its agents {', '.join(alive)} may still run: {delete} stops them and removes the "
            f"team (`swarm kill NAME --team {team}` stops one)" if alive
            else f"no agent of it runs: {delete} removes what is left")
    return TeamGoneError(f"the team file of {team!r} is gone ({where}: {why}); {todo}; "
                         "or restore the file to keep the team")


def gone_teams() -> list[str]:
    """Teams with member state records but no team file (what `swarm doctor` reports)."""
    return stores.team_store().gone_teams()
