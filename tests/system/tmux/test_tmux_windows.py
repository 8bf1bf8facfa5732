"""tmux, as Claude Code's agent teams have it: a separate-window layout for large teams
(SWARM_TMUX_LAYOUT=window, or config.toml's `tmux_layout`: each teammate its own window) and a
teammate's pane hidden (moved to a session of its own, still running) and shown again where it
was. On a real tmux server (libtmux's private-socket `server`/`session` fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm import settings
from swarm.backends.tmux import TmuxBackend
from swarm.core.store import paths
from swarm.core.team.state import member_process
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from tests.support.agent_fixtures import stop_tree
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.support.tmux_helpers import spawn_agent, tmux, wide_session_params

HIDDEN = "swarm_hidden-alpha"


session_params = wide_session_params


def spawn(backend: TmuxBackend, name: str) -> str:
    return spawn_agent(backend, name)[0]


def where(server: Server) -> dict[str, tuple[str, str]]:
    """Each swarm pane's agent -> (session name, window name)."""
    out = tmux(server, "list-panes", "-a", "-F",
               "#{@swarm_agent}\t#{session_name}\t#{window_name}")
    rows = [line.split("\t") for line in out]
    return {row[0]: (row[1], row[2]) for row in rows if row[0]}


def windows(server: Server, session: str) -> list[tuple[str, int]]:
    """(window name, its pane count) of a session."""
    out = tmux(server, "list-windows", "-t", f"={session}:", "-F", "#{window_name}\t#{window_panes}")
    return [(name, int(count)) for name, count in (line.split("\t") for line in out)]


def inside(server: Server, session: Session, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run as if in the fixture session's pane (the leader's); its pane id."""
    leader = tmux(server, "display-message", "-p", "-t", str(session.session_id), "#{pane_id}")[0]
    socket_path, pid = tmux(server, "display-message", "-p", "-t", leader,
                            "#{socket_path}\t#{pid}")[0].split("\t")
    monkeypatch.setenv("TMUX", f"{socket_path},{pid},0")
    monkeypatch.setenv("TMUX_PANE", leader)
    return leader


def test_the_window_layout_gives_each_teammate_its_own_window(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "window")
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    panes = {name: spawn(backend, name) for name in ("alice", "bob", "carol")}
    assert windows(server, "swarm-alpha") == [("alice", 1), ("bob", 1), ("carol", 1)]
    assert backend.team_window() is not None  # `swarm attach` finds the team's session
    assert backend.kill_pane(panes["bob"])
    assert windows(server, "swarm-alpha") == [("alice", 1), ("carol", 1)]
    assert backend.kill_pane(panes["alice"]) and backend.kill_pane(panes["carol"])
    assert not backend.session_exists()  # the last one takes the session with it


def test_inside_tmux_the_windows_open_in_the_leaders_session(
        server: Server, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    leader = inside(server, session, monkeypatch)
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "window")
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    spawn(backend, "alice")
    spawn(backend, "bob")
    ours = str(session.session_name)
    assert where(server) == {"alice": (ours, "alice"), "bob": (ours, "bob")}
    leader_window = tmux(server, "display-message", "-p", "-t", leader, "#{window_panes}")
    assert leader_window == ["1"]  # the leader's window is left as it was
    assert not backend.session_exists()
    assert backend.close_team() == 2 and leader in tmux(server, "list-panes", "-a", "-F",
                                                        "#{pane_id}")


def test_the_layout_from_the_config_file_and_a_bad_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings.tmux_layout() == "split"
    config = paths.home() / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('tmux_layout = "window"\n')
    assert settings.tmux_layout() == "window"
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "split")  # the variable wins
    assert settings.tmux_layout() == "split"
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "tabs")
    with pytest.raises(BadInputError, match=r"^SWARM_TMUX_LAYOUT must be one of split, window,"
                       r" got 'tabs'$"):
        settings.tmux_layout()


def test_hide_and_show_in_the_team_session(server: Server) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    alice, bob = spawn(backend, "alice"), spawn(backend, "bob")
    assert backend.hide_pane(alice) == "hidden"
    assert where(server) == {"alice": (HIDDEN, "alice"), "bob": ("swarm-alpha", "swarm-view")}
    assert windows(server, HIDDEN) == [("alice", 1)]  # nothing else runs there
    assert backend.is_pane_alive(alice)  # hidden, not stopped
    wait_until(lambda: "AGENT alice" in "".join(tmux(server, "capture-pane", "-p", "-t", alice)))
    assert backend.hide_pane(alice) == "already hidden"
    assert backend.show_pane(alice) == "shown"
    assert where(server) == {"alice": ("swarm-alpha", "swarm-view"),
                             "bob": ("swarm-alpha", "swarm-view")}
    assert not server.has_session(HIDDEN)  # its last pane left
    assert backend.show_pane(bob) == "not hidden"


def test_hide_and_show_beside_the_leader(
        server: Server, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    leader = inside(server, session, monkeypatch)
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    alice, bob = spawn(backend, "alice"), spawn(backend, "bob")
    backend.hide_pane(alice)
    window = tmux(server, "display-message", "-p", "-t", leader, "#{window_id}")[0]
    assert set(tmux(server, "list-panes", "-t", window, "-F", "#{pane_id}")) == {leader, bob}
    backend.show_pane(alice)
    rows = [r.split("\t") for r in tmux(server, "list-panes", "-t", window, "-F",
                                        "#{pane_id}\t#{pane_left}")]
    assert {r[0] for r in rows} == {leader, alice, bob}  # back in the leader's window
    assert [r[1] for r in rows if r[0] == leader] == ["0"]  # the leader still on the left


def test_hide_and_show_a_teammate_in_its_own_window(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "window")
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    alice = spawn(backend, "alice")
    spawn(backend, "bob")
    backend.hide_pane(alice)
    assert windows(server, "swarm-alpha") == [("bob", 1)]
    backend.show_pane(alice)
    assert sorted(windows(server, "swarm-alpha")) == [("alice", 1), ("bob", 1)]


def test_team_delete_closes_a_hidden_pane_too(server: Server, session: Session) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    alice = spawn(backend, "alice")
    spawn(backend, "bob")
    backend.hide_pane(alice)
    assert backend.close_team() == 2  # the team session, and the hidden pane
    assert not server.has_session(HIDDEN) and not backend.session_exists()
    assert server.has_session(str(session.session_name))  # the user's own stays


def test_a_pane_that_is_not_ours_is_neither_hidden_nor_shown(
        server: Server, session: Session) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    spawn(backend, "alice")
    users = tmux(server, "display-message", "-p", "-t", str(session.session_id), "#{pane_id}")[0]
    assert backend.hide_pane(users) == "not a pane of team alpha"
    assert backend.show_pane("%999") == "not a pane of team alpha"
    assert str(session.session_name) in tmux(server, "list-sessions", "-F", "#{session_name}")


# -- through the real `swarm` CLI -------------------------------------------------------------
def swarm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_swarm(*args, env=env, timeout=60)


@pytest.fixture
def cli_env(server: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The private tmux socket and a team `alpha`; its agents stopped at the end."""
    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))
    env = {**os.environ, "SWARM_TEAM": "alpha"}
    team = Team.create("alpha")
    try:
        yield env
    finally:
        swarm(env, "team", "delete", "alpha", "--force")
        for member in team.config().members if team.exists() else []:
            if found := member_process(team.name, member):
                stop_tree(found[0])


def test_swarm_pane_hide_and_show(server: Server, cli_env: dict[str, str]) -> None:
    for name in ("alice", "bob"):
        spawned = swarm(cli_env, "spawn", name, "--backend", "tmux", "--model", "shell",
                        "--permission-mode", "bypassPermissions")
        assert spawned.returncode == 0, spawned.stderr
    hidden = swarm(cli_env, "pane", "hide", "alice")
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout == ("alice: hidden (still running; `swarm pane show alice` brings it"
                             " back)\n")
    assert where(server)["alice"] == (HIDDEN, "alice")
    assert swarm(cli_env, "pane", "hide", "alice").stdout == "alice: already hidden\n"
    (row,) = [s for s in json.loads(swarm(cli_env, "status", "--json").stdout)
              if s["name"] == "alice"]
    assert row["state"] in ("idle", "working")  # hidden is not dead
    shown = swarm(cli_env, "pane", "show", "alice")
    assert shown.returncode == 0 and shown.stdout == "alice: shown\n"
    assert where(server)["alice"] == ("swarm-alpha", "swarm-view")


def test_hidden_and_iterm2_teammates_say_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_TMUX_LAYOUT", "window")
    env = {**os.environ, "SWARM_TEAM": "alpha"}
    team = Team.create("alpha")
    try:
        spawned = swarm(env, "spawn", "bob", "--backend", "hidden", "--model", "shell",
                        "--cwd", str(tmp_path))
        assert spawned.returncode == 0, spawned.stderr
        assert [line for line in spawned.stderr.splitlines() if "layout" in line] == [
            "swarm: warning: the tmux layout `window` does not apply: this teammate runs hidden,"
            " with no pane"]
        for verb in ("hide", "show"):
            said = swarm(env, "pane", verb, "bob")
            assert said.returncode == 1 and said.stderr == (
                f"swarm: error: bob runs hidden, with no pane: `swarm pane {verb}` is a tmux"
                " feature (`swarm logs bob` shows its output)\n")
        team.add_member("carol", backend="iterm2", pane_id="w0t0p1:ABC")
        said = swarm(env, "pane", "hide", "carol")
        assert said.stderr == ("swarm: error: carol runs in iTerm2: `swarm pane hide` is a tmux"
                               " feature\n")
        from_a_teammate = swarm({**env, "SWARM_AGENT_ID": "bob@alpha"}, "pane", "hide", "bob")
        assert from_a_teammate.returncode == 2 and "is for the team lead" in from_a_teammate.stderr
    finally:
        swarm(env, "team", "delete", "alpha", "--force")
