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


def processes(team: str) -> dict[str, int]:
    """This user's `swarm agent` processes on this host working for `team` under this
    SWARM_HOME (name -> pid): what still runs when even the state records are gone (a team
    folder removed by hand, before the next heartbeat writes one again)."""
    import psutil  # only on this error path

    home = str(paths.home())
    found: dict[str, int] = {}
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if "--agent-id" not in argv[:-1]:
            continue
        name, _, its_team = argv[argv.index("--agent-id") + 1].partition("@")
        if its_team != team:
            continue
        try:
            if proc.environ().get("SWARM_HOME") == home and proc.status() != psutil.STATUS_ZOMBIE:
                found[name] = proc.pid
        except psutil.Error:  # another user's, or gone meanwhile
            continue
    return found


def left_behind(team: str) -> bool:
    """Something of the team is left without its team file (so it is not just a wrong name)."""
    return stores.team_store().remains(team)


def gone_error(team: str, where: str) -> SwarmError:
    """The error for a team whose document `where` (a path or a key) cannot be read: a team
    never created (or deleted) is a wrong name; one with remains is a failure with a way out."""
    found = processes(team)
    if not found and not left_behind(team):
        return NotFoundError(f"no team named {team!r}; see `swarm team list`")
    aside = stores.team_store().moved_aside(team)
    why = (f"it did not parse and was moved aside to {aside[-1]}" if aside
           else "deleted, or lost by the store")
    maybe = [n for n in running(team) if n not in found]  # by its record: maybe elsewhere
    said = []
    if found:
        said.append(", ".join(f"{n} (pid {pid})" for n, pid in sorted(found.items()))
                    + (" still runs" if len(found) == 1 else " still run"))
    if maybe:
        said.append(f"{', '.join(maybe)} may still run")
    delete = f"`swarm team delete --force {team}`"
    todo = (f"{' and '.join(said)}: {delete} stops {'it' if len(found) + len(maybe) == 1 else 'them'}"
            f" and removes the team (`swarm kill NAME --team {team}` stops one)" if said
            else f"no agent of it runs: {delete} removes what is left")
    return TeamGoneError(f"the team file of {team!r} is gone ({where}: {why}); {todo}; "
                         "or restore the file to keep the team")


def gone_teams() -> list[str]:
    """Teams with member state records but no team file (what `swarm doctor` reports)."""
    return stores.team_store().gone_teams()
