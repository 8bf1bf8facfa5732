"""The tmux backend on a real tmux server (libtmux's private-socket `server`/`session` fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import psutil
import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm.backends.base import PaneBackend
from swarm.backends.tmux import TmuxBackend, inside_server, tmux_argv, tmux_color
from swarm.errors import BadInputError, TmuxError
from tests.support.helpers import process_gone, wait_until
from tests.support.tmux_helpers import REPO, agent_argv, spawn_agent, tmux, wide_session_params

TRICKY = "it's a \"quoted\" arg; $HOME `id` #{pane_id}"
SPAWNER = """
import json, os, sys, time
from swarm.backends.tmux import TmuxBackend
team, socket, name, color, cwd, go = sys.argv[1:7]
backend = TmuxBackend(team=team, socket=socket)
print("ready", flush=True)
while not os.path.exists(go):  # a start line: all four spawns hit tmux at the same moment
    time.sleep(0.002)
pane = backend.create_pane(name, color)
env = dict(os.environ, SWARM_AGENT_ID=name + "@" + team, SWARM_TEST_TOKEN="t0k'en")
pid = backend.run_in_pane(pane, json.loads(sys.argv[7]), env, cwd)
print(json.dumps([pane, pid]))
"""


session_params = wide_session_params


def pane_rows(server: Server, target: str, *fields: str, session: bool = True) -> list[list[str]]:
    """Panes of the target's session (or, with session=False, of its window)."""
    scope = ["-s"] if session else []
    out = tmux(server, "list-panes", *scope, "-t", target, "-F", "\t".join(fields))
    return [line.split("\t") for line in out]


def all_pane_ids(server: Server) -> set[str]:
    result = server.cmd("list-panes", "-a", "-F", "#{pane_id}")
    return set(result.stdout) if result.returncode == 0 else set()


spawn = spawn_agent


def screen(server: Server, pane: str) -> list[str]:
    """Non-blank lines of the pane, scrollback included (tmux's "Pane is dead" line scrolls)."""
    out = tmux(server, "capture-pane", "-p", "-S", "-", "-t", pane)
    return [line for line in out if line.strip()]


def user_pane(server: Server, session: Session) -> str:
    """An unrelated pane of the user's: a split in the fixture session."""
    return tmux(server, "split-window", "-d", "-t", str(session.session_id), "-P", "-F",
                "#{pane_id}")[0]


def test_four_concurrent_spawns_from_separate_processes(server: Server, tmp_path: Path) -> None:
    names = ["alice", "bob", "carol", "dave"]
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(REPO))
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(  # noqa: S603
            [sys.executable, "-c", SPAWNER, "alpha", str(server.socket_name), name, "blue",
             str(tmp_path), str(go), json.dumps(agent_argv(name, TRICKY))],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in names
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    go.touch()
    results = {}
    for name, proc in zip(names, procs, strict=True):
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        results[name] = json.loads(out)
    panes = {name: pane for name, (pane, _) in results.items()}
    assert len(set(panes.values())) == 4

    rows = pane_rows(server, "=swarm-alpha:", "#{pane_id}", "#{pane_title}", "#{@swarm_agent}",
                     "#{@swarm_team}", "#{window_name}", "#{pane_pid}")
    by_id = {row[0]: row[1:] for row in rows}
    assert set(by_id) == set(panes.values())  # the session holds exactly the 4 teammates
    for name, (pane, pid) in results.items():
        title, agent, team, window, pane_pid = by_id[pane]
        assert (title, agent, team, window) == (name, name, "alpha", "swarm-view")
        assert int(pane_pid) == pid
        process = psutil.Process(pid)
        assert process.cmdline() == agent_argv(name, TRICKY)  # exactly its own command
        assert process.cwd() == str(tmp_path)
        environ = process.environ()
        assert environ["SWARM_AGENT_ID"] == f"{name}@alpha"
        assert environ["SWARM_TEST_TOKEN"] == "t0k'en"  # came through the private file
        wait_until(partial(screen, server, pane), 10, message=f"{name} prints")
        assert screen(server, pane) == [f"AGENT {name}|{TRICKY}"]  # nothing garbled or typed
        border = tmux(server, "display-message", "-p", "-t", pane, "#{E:pane-border-format}")
        assert border == [f"#[fg=blue,bold] {name} #[default]"]
    assert not list(tmp_path.glob("swarm-env-*"))  # secrets files are deleted once read


def test_inside_tmux_leader_keeps_left_30_percent(
    server: Server, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    leader = tmux(server, "display-message", "-p", "-t", str(session.session_id), "#{pane_id}")[0]
    socket_path, server_pid = tmux(server, "display-message", "-p", "-t", leader,
                                   "#{socket_path}\t#{pid}")[0].split("\t")
    monkeypatch.setenv("TMUX", f"{socket_path},{server_pid},0")
    monkeypatch.setenv("TMUX_PANE", leader)
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    assert backend.is_running_inside()

    def leader_share() -> float:
        rows = pane_rows(server, leader, "#{pane_id}", "#{pane_left}", "#{pane_width}",
                         "#{window_width}", session=False)
        row = next(r for r in rows if r[0] == leader)
        assert row[1] == "0"  # the leader stays on the left
        return int(row[2]) / int(row[3])

    mates = [spawn(backend, name)[0] for name in ("alice", "bob", "carol")]
    # A few columns of slack: borders take one column and tmux rounds.
    assert abs(leader_share() * 200 - 60) <= 3
    rows = pane_rows(server, leader, "#{pane_id}", "#{pane_left}", "#{pane_title}", session=False)
    assert {r[0] for r in rows} == {leader, *mates}  # teammates split the leader's own window
    assert all(int(r[1]) >= 58 for r in rows if r[0] != leader)  # all on the right-hand side
    assert not backend.session_exists()  # no detached session inside tmux

    monkeypatch.setenv("TMUX_PANE", mates[0])  # a teammate spawning from its own pane...
    extra, _ = spawn(backend, "dave")
    assert backend.session_exists()  # ...is no leader: its spawn goes to the team session
    assert [r[0] for r in pane_rows(server, "=swarm-alpha:", "#{pane_id}")] == [extra]

    assert backend.close_team() == 4  # team delete: session and splits go, the leader stays
    assert all_pane_ids(server) & {leader, extra, *mates} == {leader}


def test_kill_pane_touches_only_our_marked_panes(server: Server, session: Session) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    unrelated = user_pane(server, session)
    first, _ = spawn(backend, "alice")
    second, _ = spawn(backend, "bob")

    assert backend.kill_pane(unrelated) is False
    assert TmuxBackend(team="beta", socket=server.socket_name).kill_pane(first) is False
    assert backend.kill_pane("tmuxp") is False  # not a pane id: never resolved as a target
    assert {unrelated, first, second} <= all_pane_ids(server)

    assert backend.kill_pane(first) is True
    assert first not in all_pane_ids(server)
    assert backend.kill_pane(first) is False
    assert backend.is_pane_alive(second) and backend.session_exists()

    tmux(server, "kill-pane", "-t", second)  # the user closes it by hand
    assert backend.is_pane_alive(second) is False
    assert backend.kill_pane(second) is False

    third, _ = spawn(backend, "carol")
    assert backend.close_team() == 1
    assert not backend.session_exists() and third not in all_pane_ids(server)
    assert unrelated in all_pane_ids(server)
    assert server.has_session(str(session.session_name)) and server.has_session("tmuxp")


def test_last_teammate_takes_the_team_session_with_it(server: Server, session: Session) -> None:
    alpha = TmuxBackend(team="alpha", socket=server.socket_name)
    alphabet = TmuxBackend(team="alphabet", socket=server.socket_name)  # prefix of no concern
    a1, _ = spawn(alpha, "alice")
    a2, _ = spawn(alpha, "bob")
    b1, _ = spawn(alphabet, "carol")
    assert alpha.kill_pane(a1) and alpha.session_exists()
    assert alpha.kill_pane(a2)
    assert not alpha.session_exists() and not server.has_session("swarm-alpha")
    assert alphabet.is_pane_alive(b1) and alphabet.session_exists()
    assert server.has_session(str(session.session_name))


def test_stale_pane_id_reused_by_an_unmarked_pane_is_not_killed(server: Server) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    pane, _ = spawn(backend, "alice")
    old = int(server.cmd("display-message", "-p", "#{pid}").stdout[0])
    server.kill()  # the tmux server restarts: pane ids start again from %0
    # kill-server returns before the server is gone: a client meanwhile reaches the dying one
    # ("server exited unexpectedly").
    wait_until(lambda: process_gone(old), 10, message="the old tmux server gone")
    fresh = server.new_session("user-work")
    assert fresh.active_pane is not None and fresh.active_pane.pane_id == pane  # same id
    assert backend.is_pane_alive(pane) is False
    assert backend.kill_pane(pane) is False
    assert pane in all_pane_ids(server)


def test_remain_on_exit_keeps_last_output_until_killed(server: Server, session: Session) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    pane = backend.create_pane("alice", "red")
    argv = [sys.executable, "-c", "print('LAST-WORDS', flush=True); raise SystemExit(3)"]
    backend.run_in_pane(pane, argv, dict(os.environ), str(REPO))
    wait_until(lambda: not backend.is_pane_alive(pane), 10, message="agent exits")
    assert pane in all_pane_ids(server)  # the pane stays...
    assert screen(server, pane)[0] == "LAST-WORDS"  # ...with the agent's last output on it
    assert backend.kill_pane(pane) is True
    assert pane not in all_pane_ids(server) and not backend.session_exists()


def test_run_in_pane_passes_awkward_cwd_and_env_verbatim(server: Server, tmp_path: Path) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    cwd = tmp_path / "dir #{pane_id} it's; x"
    cwd.mkdir()
    pane = backend.create_pane("alice", None)
    env = {"PATH": os.environ["PATH"], "ODD": "ends with;", "SWARM_TEAM": "alpha",
           "TMUX_PANE": "%999"}
    pid = backend.run_in_pane(pane, agent_argv("x"), env, str(cwd))
    assert pid is not None
    process = psutil.Process(pid)
    # The pane's shell changes directory and sets the environment, then execs the agent: read
    # both only once the agent itself runs (reading earlier failed 2 runs in 5).
    # (An empty cmdline is a process caught in the middle of its exec.)
    wait_until(lambda: process.cmdline()[:1] == [sys.executable], 10,
               message="the pane to exec the agent")
    assert process.cwd() == str(cwd)
    environ = process.environ()
    assert environ["ODD"] == "ends with;" and environ["SWARM_TEAM"] == "alpha"
    assert environ["TMUX_PANE"] == pane  # tmux's own value, not the spawner's


def test_refuses_bad_input_and_foreign_panes(server: Server, session: Session) -> None:
    backend = TmuxBackend(team="alpha", socket=server.socket_name)
    with pytest.raises(BadInputError):
        TmuxBackend(team=None, socket=server.socket_name).create_pane("alice", None)
    pane = backend.create_pane("alice", None)
    with pytest.raises(BadInputError, match="does not exist"):
        backend.run_in_pane(pane, agent_argv(), {}, "/no/such/dir")
    foreign = user_pane(server, session)
    before = tmux(server, "display-message", "-p", "-t", foreign, "#{pane_pid}")
    with pytest.raises(TmuxError, match="not a swarm pane"):
        backend.run_in_pane(foreign, agent_argv(), {}, str(REPO))
    assert tmux(server, "display-message", "-p", "-t", foreign, "#{pane_pid}") == before


def test_protocol_attach_and_colors(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = TmuxBackend(team="alpha", socket="sock")
    assert isinstance(backend, PaneBackend) and backend.type == "tmux"
    assert backend.is_available() and not backend.is_running_inside()
    assert tmux_argv("sock") == ["tmux", "-L", "sock"]
    assert tmux_argv("/run/x.sock") == ["tmux", "-S", "/run/x.sock"]
    assert tmux_argv(None) == ["tmux"]
    assert inside_server("sock") is None  # outside tmux
    uid_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.geteuid()}"
    monkeypatch.setenv("TMUX", f"{uid_dir / 'sock'},1,0")
    assert inside_server("sock") is True
    assert inside_server("other") is False  # attach must not nest a client there
    assert [tmux_color(c) for c in ("bright_blue", "RED", "#12ab9f", "x]#[bg=red", None)] == [
        "brightblue", "red", "#12ab9f", "default", "default"]


def test_without_tmux_binary_reads_dead_and_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no tmux here
    backend = TmuxBackend(team="alpha", socket="nowhere")
    assert not backend.is_available()
    assert backend.is_pane_alive("%0") is False and backend.kill_pane("%0") is False
    with pytest.raises(TmuxError, match="tmux is not installed"):
        backend.create_pane("alice", None)
