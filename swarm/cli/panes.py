"""`swarm attach`: open the team's tmux session."""

from __future__ import annotations

import os

import click

from swarm.cli.common import open_team, team_option
from swarm.cli.helptext import examples
from swarm.errors import OperationFailedError


@click.command(epilog=examples("swarm attach", "swarm attach --team alpha"))
@team_option
def attach(team_name: str | None) -> None:
    """Open the team's tmux session.

    Inside tmux it switches the client; outside it attaches.
    """
    from swarm.backends.tmux import attach_command

    team = open_team(team_name)
    sockets = {m.tmux_socket for m in team.members() if m.backend == "tmux"}
    if not sockets:
        raise OperationFailedError(f"team {team.name!r} has no tmux teammates; "
                                   "see `swarm logs NAME` for hidden ones")
    argv = attach_command(team.name, sorted(sockets, key=str)[0])
    os.execvp(argv[0], argv)
