"""`swarm attach`: show the team's tmux panes; `swarm pane hide|show NAME`.

Teammates spawned outside tmux live in the session `swarm-<team>`; spawned inside tmux they
split the leader's window (no such session). Inside tmux a client is never nested: the client
we run in switches (`switch-client`) to the team's session or window, which only works on the
same tmux server; outside tmux a new client attaches. Either way one line says what happened.
"""

from __future__ import annotations

import os
import shlex

import click

from swarm import settings
from swarm.cli.common import open_team, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.core.team.team import Team
from swarm.errors import OperationFailedError


@click.command(epilog=examples("swarm attach", "swarm attach --team alpha",
                               "swarm attach builder   # a teammate on an ssh host"))
@click.argument("name", required=False, shell_complete=complete_member)
@team_option
def attach(name: str | None, team_name: str | None) -> None:
    """Open the team's tmux session (NAME: the one on that teammate's host).

    Inside tmux it switches this client to the team's session, or to the window its teammates
    split; outside it attaches. A teammate on an ssh host is shown in the team's session there,
    through `ssh -t`.
    """
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
    show_local(team, sockets)


def show_local(team: Team, sockets: set[str | None]) -> None:
    from swarm.backends.tmux import TmuxBackend, inside_server, tmux_argv
    from swarm.backends.tmux_names import session_name

    # The server this client is on first: only there can it switch without nesting.
    ordered = sorted(sockets, key=lambda s: (inside_server(s) is not True, str(s)))
    for socket in ordered:
        backend = TmuxBackend(team=team.name, socket=socket)
        found = backend.team_window()
        if found is None:
            continue
        target, session, window = found
        server = f" (tmux server {socket})" if socket else ""
        own = session == session_name(team.name)
        inside = inside_server(socket)
        if inside is False:
            how = shlex.join([*tmux_argv(socket), "attach", "-t", session])
            raise OperationFailedError(
                f"team {team.name}'s tmux session is on another tmux server ({socket or 'default'})"
                " than the one you are in; a client cannot switch servers: detach (prefix d) and"
                f" run `swarm attach`, or from outside tmux `{how}`")
        if inside:
            place = backend.pane_place(settings.tmux_pane())
            if place is not None and (place[0] == session if own else place[1] == window):
                click.echo(f"this tmux client already shows team {team.name} (session {session})")
                return
            backend.switch_client(target)
            click.echo(f"switched this tmux client to session {session}{server}" if own else
                       f"switched this tmux client to the window of team {team.name} in session"
                       f" {session}{server}")
            return
        click.echo(f"attaching to tmux session {session}{server}; detach with prefix d", err=True)
        argv = [*tmux_argv(socket), "attach-session", "-t", target]
        os.execvp(argv[0], argv)
    raise OperationFailedError(f"team {team.name!r} has no tmux pane left; see `swarm status`")



@click.group(epilog=examples("swarm pane hide builder", "swarm pane show builder"))
def pane() -> None:
    """Hide a teammate's tmux pane and show it again."""


@pane.command("hide", epilog=examples("swarm pane hide builder"))
@click.argument("name", shell_complete=complete_member)
@team_option
def hide(name: str, team_name: str | None) -> None:
    """Move NAME's tmux pane out of sight; it keeps running (`swarm pane show` brings it back)."""
    said = _tmux_of(team_name, name, "hide")
    click.echo(f"{name}: {said}" + (f" (still running; `swarm pane show {name}` brings it back)"
                                    if said == "hidden" else ""))


@pane.command("show", epilog=examples("swarm pane show builder"))
@click.argument("name", shell_complete=complete_member)
@team_option
def show(name: str, team_name: str | None) -> None:
    """Bring NAME's hidden tmux pane back where it was."""
    click.echo(f"{name}: {_tmux_of(team_name, name, 'show')}")


def _tmux_of(team_name: str | None, name: str, verb: str) -> str:
    """Hide or show a tmux teammate's pane; any other backend says in one line why not."""
    team = open_team(team_name)
    member = team.member(name)
    feature = f"`swarm pane {verb}` is a tmux feature"
    if member.host:
        raise OperationFailedError(f"{member.name} runs on {member.host}: {feature} of this"
                                   f" machine; `swarm attach {member.name}` shows it there")
    if member.backend == "iterm2":
        raise OperationFailedError(f"{member.name} runs in iTerm2: {feature}")
    if member.backend != "tmux" or not member.pane_id:
        raise OperationFailedError(f"{member.name} runs hidden, with no pane: {feature}"
                                   f" (`swarm logs {member.name}` shows its output)")
    from swarm.backends.tmux import TmuxBackend

    backend = TmuxBackend(team=team.name, socket=member.tmux_socket)
    said = backend.hide_pane(member.pane_id) if verb == "hide" else \
        backend.show_pane(member.pane_id)
    if said.startswith("not a pane"):
        raise OperationFailedError(f"{member.name}'s pane {member.pane_id} is gone ({said})")
    return said
