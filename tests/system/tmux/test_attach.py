"""`swarm attach` from inside tmux: a real tmux client, moved with
`switch-client` (never a nested tmux), to the team's session or to the leader's window its
teammates split; one line says what it did."""

from __future__ import annotations

import os
import subprocess

from libtmux.server import Server

import tests.system.tmux.test_tmux_cli as test_tmux_cli
from swarm.core.team.team import Team
from tests.support import tmux_terminal
from tests.support.cli_runner import SWARM
from tests.support.tmux_terminal import Terminal, tmux
from tests.system.tmux.test_tmux_cli import SHELL, TEAM, panes, spawn_all

# The fixtures of the tmux CLI tests (a private server, team alpha) and a person's terminal.
tmux_env = test_tmux_cli.tmux_env
team = test_tmux_cli.team
terminal = tmux_terminal.terminal



def status_line(lines: list[str]) -> int:
    codes = [line.rpartition("=")[2] for line in lines if line.startswith("done-")]
    return int(codes[-1])


def said(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("done-")]


def test_attach_inside_tmux_switches_the_client_to_the_team_session(
    server: Server, team: Team, tmux_env: dict[str, str], terminal: Terminal
) -> None:
    (alice,) = spawn_all(tmux_env, ["alice"]).values()  # from outside tmux: swarm-alpha
    work = terminal.shell("work", tmux_env)
    terminal.attach("work")
    assert terminal.client_at()[0] == "work"

    lines = terminal.run(work, f"{SWARM} attach")
    assert status_line(lines) == 0, lines
    assert terminal.client_at()[0] == f"swarm-{TEAM}"  # the same client, not a nested one
    assert len(terminal.clients()) == 1
    (line,) = said(lines)
    assert line.startswith(f"switched this tmux client to session swarm-{TEAM}"), line
    assert panes(server)[alice["pane_id"]]["session_name"] == f"swarm-{TEAM}"


def test_attach_inside_tmux_joins_the_leader_window_the_teammates_split(
    server: Server, team: Team, tmux_env: dict[str, str], terminal: Terminal
) -> None:
    """Spawned from inside tmux, teammates split the leader's window and there is no
    swarm-<team> session: attach goes to that window (the fresh-clone `can't find session`)."""
    work = terminal.shell("work", tmux_env)
    other = terminal.shell("other", tmux_env)
    client = terminal.attach("work")
    spawned = terminal.run(work, f"{SWARM} spawn alice --backend tmux {' '.join(SHELL)}")
    assert status_line(spawned) == 0, spawned
    team_window = tmux(server, "display-message", "-p", "-t", work, "#{window_id}")[0]
    assert any(p["@swarm_agent"] == "alice" and p["window_id"] == team_window
               for p in panes(server).values())
    assert f"swarm-{TEAM}" not in tmux(server, "list-sessions", "-F", "#{session_name}")

    tmux(server, "switch-client", "-c", client, "-t", "=other")
    assert terminal.client_at()[0] == "other"
    lines = terminal.run(other, f"{SWARM} attach")
    assert status_line(lines) == 0, lines
    assert terminal.client_at() == ("work", team_window)
    (line,) = said(lines)
    assert line.startswith("switched this tmux client to the window of team alpha"), line
    assert "session work" in line

    # From that window itself: nothing to switch, and it says so (exit 0).
    again = terminal.run(work, f"{SWARM} attach")
    assert status_line(again) == 0, again
    assert said(again) == [f"this tmux client already shows team {TEAM} (session work)"]
    assert terminal.client_at() == ("work", team_window)


def test_attach_inside_another_tmux_server_never_nests(
    server: Server, team: Team, tmux_env: dict[str, str], terminal: Terminal
) -> None:
    """The team lives on its private server (SWARM_TMUX_SOCKET) and the person's tmux is
    another one: no client can switch across servers, so attach says how instead of nesting."""
    spawn_all(tmux_env, ["alice"])
    terminal.outer.cmd("new-session", "-d", "-s", "mine")
    outer_path = terminal.outer.cmd("display-message", "-p", "#{socket_path}").stdout[0]
    env = {**tmux_env, "TMUX": f"{outer_path},1,0", "TMUX_PANE": "%0"}
    proc = subprocess.run([SWARM, "attach"], capture_output=True, text=True, env=env,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    socket = str(server.socket_name)
    assert proc.stderr.strip() == (
        f"swarm: error: team {TEAM}'s tmux session is on another tmux server ({socket}) than"
        f" the one you are in; a client cannot switch servers: detach (prefix d) and run"
        f" `swarm attach`, or from outside tmux `tmux -L {socket} attach -t swarm-{TEAM}`")
    assert terminal.clients() == []  # nothing attached, nested or not
    assert os.environ.get("TMUX") is None
