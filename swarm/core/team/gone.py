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
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.team.state import read_state
from swarm.errors import NotFoundError, SwarmError, TeamGoneError

ASIDE = ".corrupt-"  # store.quarantine and RedisTeam: `<document>.corrupt-<timestamp>`


def state_names(team: str) -> list[str]:
    """The members with a state record, sorted (the team lead's too, when it has one)."""
    if (remote := stores.remote()) is not None:
        return remote.names_under(team, "state")
    agents = paths.local_team_dir(team) / "agents"
    try:
        return sorted(p.parent.name for p in agents.glob("*/state.json"))
    except OSError:
        return []


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


def moved_aside(team: str) -> list[str]:
    """Corrupt copies of the document that a reader moved aside, oldest first."""
    if (remote := stores.remote()) is not None:
        return remote.keys_matching(remote.key(team, f"config{ASIDE}*"))
    try:
        return sorted(str(p) for p in paths.team_dir(team).glob(f"config.json{ASIDE}*"))
    except OSError:
        return []


def left_behind(team: str) -> bool:
    """Something of the team is left without its team file (so it is not just a wrong name)."""
    if state_names(team) or moved_aside(team):
        return True
    return stores.remote() is None and paths.team_dir(team).is_dir()


def gone_error(team: str, where: str) -> SwarmError:
    """The error for a team whose document `where` (a path or a key) cannot be read: a team
    never created (or deleted) is a wrong name; one with remains is a failure with a way out."""
    if not left_behind(team):
        return NotFoundError(f"no team named {team!r}; see `swarm team list`")
    aside = moved_aside(team)
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
    if (remote := stores.remote()) is not None:
        return remote.teams_without_config()
    root = paths.teams_dir()
    try:
        dirs = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    return [d.name for d in dirs if not (d / "config.json").exists() and state_names(d.name)]
