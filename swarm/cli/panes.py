"""`swarm attach`: open the team's tmux session."""

from __future__ import annotations

import os

import click

from swarm.cli.common import open_team, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.errors import OperationFailedError


@click.command(epilog=examples("swarm attach", "swarm attach --team alpha",
                               "swarm attach builder   # a teammate on an ssh host"))
@click.argument("name", required=False, shell_complete=complete_member)
@team_option
def attach(name: str | None, team_name: str | None) -> None:
    """Open the team's tmux session (NAME: the one on that teammate's host).

    Inside tmux it switches the client; outside it attaches. A teammate on an ssh host is
    shown in the team's session there, through `ssh -t`.
    """
    from swarm.backends.tmux import attach_command

    team = open_team(team_name)
    chosen = team.member(name) if name else None
    sockets = {m.tmux_socket for m in team.members() if m.backend == "tmux"}
    remote = [chosen] if chosen and chosen.host else [] if chosen else [
        m for m in team.members() if m.host]
    if remote and (chosen or not sockets):
        from swarm.backends.ssh import attach_argv

        member = remote[0]
        argv = attach_argv(member.host or "", team.name, member.name, member.tmux_socket)
        os.execvp(argv[0], argv)
    if not sockets:
        raise OperationFailedError(f"team {team.name!r} has no tmux teammates; "
                                   "see `swarm logs NAME` for hidden ones")
    argv = attach_command(team.name, sorted(sockets, key=str)[0])
    os.execvp(argv[0], argv)
