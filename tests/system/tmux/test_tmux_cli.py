"""The tmux backend through the real `swarm` CLI, on a private tmux server (libtmux's `server` and
`session` fixtures). Every swarm subprocess gets SWARM_TMUX_SOCKET = the fixture's socket name,
so the user's own tmux server is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import member_process
from swarm.core.team.team import Team
from tests.support.agent_fixtures import stop_tree
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.helpers import process_gone, started_with, wait_until
from tests.support.tmux_helpers import tmux

SHELL = ("--model", "shell", "--permission-mode", "bypassPermissions")
TEAM = "alpha"


@pytest.fixture
def session_params() -> dict[str, Any]:
    return {"x": 200, "y": 50}  # the 30% check needs a known window width


@pytest.fixture
def tmux_env(server: Server, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """os.environ (private SWARM_HOME) + the private tmux socket + the team, for subprocesses."""
    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))  # in-process calls too
    return {**os.environ, "SWARM_TMUX_SOCKET": str(server.socket_name), "SWARM_TEAM": TEAM}


@pytest.fixture
def team(tmux_env: dict[str, str]) -> Iterator[Team]:
    """A fresh team; at teardown every agent process still alive is stopped by its own pid."""
    created = Team.create(TEAM)
    assert created.name == TEAM
    try:
        yield created
    finally:
        for member in (m for t in Team.list() for m in t.members()):
            if found := member_process(member.agent_id.partition("@")[2], member):
                stop_tree(found[0])


def swarm(env: dict[str, str], *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return run_swarm(*args, env=env, timeout=timeout)


def ok(env: dict[str, str], *args: str, timeout: float = 30.0) -> str:
    proc = swarm(env, *args, timeout=timeout)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def panes(server: Server) -> dict[str, dict[str, str]]:
    """Every pane on the server: id -> session, window, title, marker, pid."""
    fields = ("pane_id", "session_name", "window_id", "pane_title", "@swarm_agent", "pane_pid")
    result = server.cmd("list-panes", "-a", "-F", "\t".join("#{" + f + "}" for f in fields))
    if result.returncode != 0:  # no server (it exits with its last session)
        return {}
    rows = [line.split("\t") for line in result.stdout]
    return {row[0]: dict(zip(fields[1:], row[1:], strict=True)) for row in rows}


def statuses(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in json.loads(ok(env, "status", "--json"))}


def wait_states(env: dict[str, str], names: list[str], *states: str,
                timeout: float = 20.0) -> dict[str, dict[str, Any]]:
    def reached() -> dict[str, dict[str, Any]] | None:
        now = statuses(env)
        return now if all(now.get(n, {}).get("state") in states for n in names) else None

    found = wait_until(reached, timeout, interval=0.1, message=f"{names} in {states}")
    assert found is not None
    return found


def spawn_all(env: dict[str, str], names: list[str], *extra: str) -> dict[str, dict[str, Any]]:
    """`swarm spawn` for every name, all subprocesses started at once."""
    procs = {name: subprocess.Popen(  # noqa: S603
        [SWARM, "spawn", name, "--backend", "tmux", *SHELL, "--json", *extra], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in names}
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"spawn {name}: {err}"
        results[name] = json.loads(out)
    return results


def gone(results: dict[str, dict[str, Any]]) -> None:
    """Every spawned agent process ends (it may still be writing its last state a moment)."""
    wait_until(lambda: not any(is_alive(r["pid"]) for r in results.values()), 10,
               message="agent processes end")


def agent_cmdline(pid: int) -> list[str]:
    return psutil.Process(pid).cmdline()


def user_pane(server: Server, session: Session) -> str:
    """An unrelated pane of the user's: a split in the fixture session, running a shell."""
    return tmux(server, "split-window", "-d", "-t", str(session.session_id), "-P", "-F",
                "#{pane_id}")[0]


def test_four_concurrent_cli_spawns_get_their_own_titled_panes(
    server: Server, session: Session, team: Team, tmux_env: dict[str, str]
) -> None:
    unrelated = {*panes(server), user_pane(server, session)}
    names = ["alice", "bob", "carol", "dave"]
    results = spawn_all(tmux_env, names)
    assert {r["backend"] for r in results.values()} == {"tmux"}

    on_server = panes(server)
    ours = {pid: row for pid, row in on_server.items() if row["session_name"] == f"swarm-{TEAM}"}
    assert set(ours) == {r["pane_id"] for r in results.values()}  # exactly 4, one each
    assert len({row["window_id"] for row in ours.values()}) == 1  # all in the swarm-view window
    for name, result in results.items():
        row = ours[result["pane_id"]]
        assert (row["pane_title"], row["@swarm_agent"]) == (name, name)
        assert int(row["pane_pid"]) == result["pid"]
        # The pane's own process is exactly this agent's command: nothing typed, nothing mixed
        # (once tmux's forked child has exec'd it: until then it shows tmux's own arguments).
        command = [SWARM, "agent", "--agent-id", f"{name}@{TEAM}"]
        wait_until(lambda pid=result["pid"], want=command: agent_cmdline(pid)[-4:] == want, 10,
                   message=f"{name}'s pane running its agent")
        assert Team.open(TEAM).member(name).pane_id == result["pane_id"]

    final = wait_states(tmux_env, names, "idle")
    assert {n: (s["backend"], s["pane_id"]) for n, s in final.items()} == {
        n: ("tmux", r["pane_id"]) for n, r in results.items()}

    def greeting(name: str) -> bool:
        lines = tmux(server, "capture-pane", "-p", "-t", results[name]["pane_id"])
        return any(f"{name}@{TEAM} started (model shell, mode bypassPermissions, "
                   f"pid {results[name]['pid']})" in line for line in lines)

    for name in names:  # each pane shows its own agent's console
        wait_until(partial(greeting, name), 10, message=f"{name}'s pane output")

    out = ok(tmux_env, "shutdown", "--all", "--json", timeout=60)
    assert {o["name"]: o["result"] for o in json.loads(out)} == dict.fromkeys(names, "exited")
    assert set(panes(server)) == unrelated  # every team pane closed, the user's untouched
    assert not server.has_session(f"swarm-{TEAM}")  # the team's own session went with them
    assert server.has_session(str(session.session_name))
    gone(results)


def test_inside_tmux_spawns_split_the_leaders_window(
    server: Server, session: Session, team: Team, tmux_env: dict[str, str]
) -> None:
    leader = tmux(server, "display-message", "-p", "-t", str(session.session_id), "#{pane_id}")[0]
    socket_path, server_pid, session_id = tmux(
        server, "display-message", "-p", "-t", leader,
        "#{socket_path}\t#{pid}\t#{session_id}")[0].split("\t")
    inside = {**tmux_env, "TMUX": f"{socket_path},{server_pid},{session_id.lstrip('$')}",
              "TMUX_PANE": leader}

    spawned = []
    for name in ("alice", "bob"):
        proc = swarm(inside, "spawn", name, *SHELL)  # auto: inside tmux -> tmux
        assert proc.returncode == 0, proc.stderr
        assert "backend: tmux (running inside tmux" in proc.stdout
        pane_id = Team.open(TEAM).member(name).pane_id
        assert pane_id is not None
        spawned.append(pane_id)

    fields = ("#{pane_id}", "#{pane_left}", "#{pane_width}", "#{window_width}", "#{pane_title}")
    rows = {r[0]: r[1:] for r in (line.split("\t") for line in tmux(
        server, "list-panes", "-t", leader, "-F", "\t".join(fields)))}
    assert set(rows) == {leader, *spawned}  # both teammates split the leader's own window
    left, width, window_width, _ = rows[leader]
    assert left == "0" and int(window_width) == 200
    assert abs(int(width) / int(window_width) - 0.30) <= 0.02  # leader keeps about 30%
    for pane, name in zip(spawned, ("alice", "bob"), strict=True):
        assert int(rows[pane][0]) >= 58 and rows[pane][3] == name  # on the right, titled
    assert f"swarm-{TEAM}" not in {row["session_name"] for row in panes(server).values()}
    wait_states(tmux_env, ["alice", "bob"], "idle")

    # team delete --force: the teammates' splits go; the leader's pane and sessions stay.
    before = panes(server)
    ok(tmux_env, "team", "delete", TEAM, "--force")
    after = panes(server)
    assert set(after) == set(before) - set(spawned)
    assert leader in after and server.has_session(str(session.session_name))
    assert not Path(os.environ["SWARM_HOME"], "teams", TEAM).exists()


def test_kill_and_team_delete_force_touch_nothing_unrelated(
    server: Server, session: Session, team: Team, tmux_env: dict[str, str]
) -> None:
    unrelated_pane = user_pane(server, session)
    # A user session whose name extends the team session's: no prefix match may take it.
    server.new_session("swarm-alphabet")
    unrelated = set(panes(server))
    assert unrelated_pane in unrelated

    results = spawn_all(tmux_env, ["alice", "bob", "carol"])
    mine = {name: r["pane_id"] for name, r in results.items()}
    wait_states(tmux_env, list(mine), "idle")

    ok(tmux_env, "kill", "alice")
    gone({"alice": results["alice"]})
    assert set(panes(server)) == unrelated | {mine["bob"], mine["carol"]}
    assert statuses(tmux_env)["alice"]["state"] == "exited"

    ok(tmux_env, "shutdown", "bob")
    assert set(panes(server)) == unrelated | {mine["carol"]}
    assert server.has_session(f"swarm-{TEAM}")  # carol still lives in it

    # team delete --force with carol still running: only what is ours goes.
    ok(tmux_env, "team", "delete", TEAM, "--force")
    gone(results)
    assert set(panes(server)) == unrelated
    assert not server.has_session(f"swarm-{TEAM}")
    assert server.has_session("swarm-alphabet") and server.has_session(str(session.session_name))
    assert not Path(os.environ["SWARM_HOME"], "teams", TEAM).exists()


def test_pane_closed_by_the_user_is_detected_dead_and_its_task_released(
    server: Server, session: Session, team: Team, tmux_env: dict[str, str]
) -> None:
    (result,) = spawn_all(tmux_env, ["alice"]).values()
    ok(tmux_env, "tasks", "add", "long job", "--description", "$ sleep 30")

    def working() -> dict[str, Any] | None:
        status = statuses(tmux_env)["alice"]
        return status if status["state"] == "working" and status["current_task"] == "1" else None

    wait_until(working, 15, interval=0.1, message="alice works on task #1")
    agent = psutil.Process(result["pid"])

    def job_children() -> list[psutil.Process]:
        # "working" is written just before the job's process starts, so poll for it.
        found = agent.children(recursive=True)
        with contextlib.suppress(psutil.NoSuchProcess):
            return found if any("sleep" in " ".join(c.cmdline()) for c in found) else []
        return []

    children = wait_until(job_children, 10, interval=0.05, message="the job runs")

    tmux(server, "kill-pane", "-t", result["pane_id"])  # the user closes the pane by hand
    try:
        dead = wait_until(
            lambda: (s := statuses(tmux_env)["alice"])["state"] == "dead" and s, 10,
            interval=0.1, message="alice reported dead")
        assert dead["current_task"] is None
        (task,) = json.loads(ok(tmux_env, "tasks", "list", "--json"))
        assert (task["id"], task["status"], task["owner"]) == ("1", "pending", None)
        assert not is_alive(result["pid"])
        wait_until(lambda: all(process_gone(c) for c in children), 10, message="the job is stopped too")
    finally:
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.send_signal(signal.SIGKILL)
    inbox = json.loads(ok(tmux_env, "inbox", "--json"))
    notes = [m for m in inbox if '"teammate_terminated"' in m["text"]]
    assert len(notes) == 1 and "alice@alpha" in notes[0]["text"]  # the lead is told, once
    assert server.has_session(str(session.session_name))


def test_status_watch_renders_a_live_table(
    server: Server, team: Team, tmux_env: dict[str, str]
) -> None:
    for name in ("alice", "bob"):
        ok(tmux_env, "spawn", name, "--backend", "hidden", *SHELL)
    wait_states(tmux_env, ["alice", "bob"], "idle")
    env_args = [a for k in ("SWARM_HOME", "SWARM_TEAM", "PATH")
                for a in ("-e", f"{k}={tmux_env[k]}")]
    # bash around it reports the exit status on screen (tmux's own pane_dead_status is sometimes
    # left empty). bash, not dash: it only dies of the Ctrl-C itself if its child did.
    script = f"{SWARM} status --watch; echo watch-exit-$?"
    pane = tmux(server, "new-session", "-d", "-s", "watcher", "-x", "160", "-y", "30", *env_args,
                "-P", "-F", "#{pane_id}", "/bin/bash", "-c", script)[0]
    tmux(server, "set-option", "-p", "-t", pane, "remain-on-exit", "on")

    def screen() -> str:
        return "\n".join(tmux(server, "capture-pane", "-p", "-t", pane))

    def shows(*needles: str) -> bool:
        text = screen()
        return all(n in text for n in needles)

    wait_until(lambda: shows("team alpha", "NAME", "STATE", "alice", "bob", "idle",
                             "tasks 0/0 done"), 15, message="the live table")
    ok(tmux_env, "tasks", "add", "say hi", "--description", "$ echo hi")
    wait_until(lambda: shows("tasks 1/1 done"), 15, message="a redraw after the task is done")

    tmux(server, "send-keys", "-t", pane, "C-c")
    wait_until(lambda: "watch-exit-" in screen(), 10, message="status --watch ends on Ctrl-C")
    assert "watch-exit-0" in screen()  # a clean exit, not killed by the signal
    assert "Traceback" not in screen()


def test_attach_opens_the_team_session(
    server: Server, team: Team, tmux_env: dict[str, str]
) -> None:
    hidden = swarm(tmux_env, "spawn", "bob", "--backend", "hidden", *SHELL)
    assert hidden.returncode == 0, hidden.stderr
    refused = swarm(tmux_env, "attach")
    assert refused.returncode == 1
    assert refused.stderr.strip() == ("swarm: error: team 'alpha' has no tmux teammates; "
                                      "see `swarm logs NAME` for hidden ones")

    (alice,) = spawn_all(tmux_env, ["alice"]).values()
    # A terminal for the user: a pane on the same private server, outside tmux as far as
    # swarm can tell (no $TMUX), so `swarm attach` runs a real `tmux attach-session` client.
    env_args = [a for k in ("SWARM_HOME", "SWARM_TEAM", "SWARM_TMUX_SOCKET", "PATH")
                for a in ("-e", f"{k}={tmux_env[k]}")]
    tmux(server, "new-session", "-d", "-s", "terminal", "-x", "120", "-y", "30", *env_args,
         "/usr/bin/env", "-u", "TMUX", SWARM, "attach")

    def attached() -> list[str]:
        return [line for line in tmux(server, "list-clients", "-F", "#{client_session}")
                if line == f"swarm-{TEAM}"]

    wait_until(attached, 10, message="a client attached to the team session")
    tmux(server, "detach-client", "-s", f"=swarm-{TEAM}:")
    wait_until(lambda: not attached(), 10, message="the client detached")
    assert alice["pane_id"] in panes(server)  # attaching and detaching leaves the team as it was


def test_a_tmux_server_swarm_starts_keeps_no_secret_and_logs_are_private(
    server: Server, team: Team, tmux_env: dict[str, str]
) -> None:
    """Pane backends: secrets never enter a tmux server's global environment. Here no
    server runs yet: `swarm spawn` starts it, with an API key in its environment."""
    assert not server.is_alive()
    env = {**tmux_env, "ANTHROPIC_API_KEY": "sk-secret-value", "MY_TOKEN": "t0k3n"}
    result = json.loads(ok(env, "spawn", "w1", "--backend", "tmux", *SHELL, "--json",
                           "--prompt", "$ echo hi"))
    assert server.is_alive()
    shown = "\n".join(tmux(server, "show-environment", "-g"))
    assert "sk-secret-value" not in shown and "t0k3n" not in shown
    # ...yet the teammate was started with it (through a 0600 file its pane's shell read and
    # removed), then zeroed it where its commands could read it: as long as it was, all NULs.
    wait_until(lambda: started_with(result["pid"], "ANTHROPIC_API_KEY") == b"\0" * len(
        "sk-secret-value"), 10, message="the teammate's environment")
    wait_states(env, ["w1"], "idle")
    log = paths.agent_log(TEAM, "w1")
    assert log.stat().st_mode & 0o777 == 0o600


def test_a_teammates_pane_shows_what_its_commands_printed(
    server: Server, session: Session, team: Team, tmux_env: dict[str, str]
) -> None:
    """The pane shows each tool call with the first lines of its output (then how many more),
    and incoming messages with their text."""
    out = ok(tmux_env, "spawn", "w1", "--backend", "tmux", *SHELL, "--json", "--prompt",
             "$ echo pane-output-line && seq 101 130")
    pane = json.loads(out)["pane_id"]

    def screen() -> str:
        return "\n".join(tmux(server, "capture-pane", "-p", "-J", "-S", "-", "-t", pane))

    wait_until(lambda: "idle (available)" in screen(), 20, message=f"w1 idle:\n{screen()}")
    text = screen()
    assert '-> Bash "echo pane-output-line && seq 101 130"' in text
    assert "| pane-output-line" in text  # the command's output, under its call
    assert "| 101" in text and "| 104" in text and "... 26 more lines" in text
    assert "| 105" not in text  # the rest is cut (`swarm transcript` has it all)
    assert "<- team-lead: initial prompt" in text and "$ echo pane-output-line" in text
    full = ok(tmux_env, "transcript", "w1")
    assert "| 130" in full and "more lines" not in full
    ok(tmux_env, "shutdown", "w1", timeout=60)
