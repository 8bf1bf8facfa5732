"""Teams across machines, end to end: `swarm spawn --backend ssh:...` starts a real `swarm agent`
on "another host" (a real sshd on loopback, tests/support/sshd_fixtures.py) that shares the team through
a real Redis (tests/support/redis_server.py). Its report arrives here, `swarm shutdown` ends it, and one
SIGKILLed there is `dead` once its heartbeat expires, its task back on the list."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.team.team import Team
from tests.support.cli_runner import run_swarm
from tests.support.helpers import children_with, process_gone, wait_until
from tests.support.sshd_fixtures import SshHost

SHELL = ("--model", "shell", "--permission-mode", "bypassPermissions")


def ok(*args: str, timeout: float = 60.0) -> str:
    proc = run_swarm(*args, "--team", "alpha", timeout=timeout)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def status_of(name: str) -> dict[str, Any]:
    rows = json.loads(ok("status", "--json"))
    rows = rows["members"] if isinstance(rows, dict) else rows
    return next(row for row in rows if row["name"] == name)


def spawn_there(ssh_host: SshHost, *extra: str) -> dict[str, Any]:
    out = ok("spawn", "w", "--backend", f"ssh:{ssh_host.spec}", *SHELL, "--json", *extra)
    return dict(json.loads(out))


def test_a_teammate_on_another_host_reports_and_is_shut_down(
        ssh_host: SshHost, redis_url: str) -> None:
    assert run_swarm("team", "create", "alpha").returncode == 0
    result = spawn_there(ssh_host, "--prompt", "$ echo hello-from-$((6 * 7))")
    assert result["backend"] == "ssh" and result["pane_id"].startswith("%")
    member = Team.open("alpha").member("w")
    assert member.host == ssh_host.spec and member.backend == "ssh"

    def report() -> list[dict[str, Any]]:
        inbox = json.loads(ok("inbox", "--json"))
        return [m for m in inbox if m["from"] == "w" and "hello-from-42" in m["text"]]

    wait_until(report, 60, interval=0.2, message="w's report, sent from the other host")
    # Its transcript stays on its host (SWARM_REMOTE_HOME there); nothing of it lands here.
    there = ssh_host.remote_home / "hosts-local" / "alpha" / "agents" / "w" / "transcript.jsonl"
    assert there.exists()
    assert not list(Path(os.environ["SWARM_HOME"]).rglob("transcript.jsonl"))
    assert "hello-from-42" in ok("logs", "w")  # read through ssh
    pid = result["pid"]
    assert psutil.Process(pid).cmdline()[-2:] == ["--agent-id", "w@alpha"]

    shut = json.loads(ok("shutdown", "w", "--json", timeout=90))
    outcomes = shut if isinstance(shut, list) else shut["outcomes"]
    assert [(o["name"], o["result"]) for o in outcomes] == [("w", "exited")]
    assert status_of("w")["state"] == "exited"
    wait_until(lambda: process_gone(pid), 20,
               message="the remote agent process ended")
    panes = ssh_host.ssh("tmux", "-L", os.environ["SWARM_TMUX_SOCKET"], "list-panes", "-a",
                         "-F", "#{pane_id}")
    assert result["pane_id"] not in panes.stdout.split()  # its pane there was closed


def test_a_remote_teammate_killed_there_is_dead_after_its_heartbeat_expires(
        ssh_host: SshHost, redis_url: str, monkeypatch: pytest.MonkeyPatch,
        strays: list[psutil.Process]) -> None:
    # Short heartbeats for this team (its agent there inherits them).
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.5")
    monkeypatch.setenv("SWARM_HEARTBEAT_STALE", "3")
    assert run_swarm("team", "create", "alpha").returncode == 0
    result = spawn_there(ssh_host)
    ok("tasks", "add", "long job", "--description", "$ sleep 300")
    wait_until(lambda: (s := status_of("w"))["state"] == "working" and s["current_task"] == "1",
               60, interval=0.2, message="w works on task #1 over there")
    agent = psutil.Process(result["pid"])
    # Its `sleep` outlives a SIGKILL; "working" is written just before the job starts.
    strays.extend(wait_until(lambda: children_with(agent, lambda argv: "sleep" in " ".join(argv)),
                             20, message="its job"))
    agent.send_signal(signal.SIGKILL)  # the host "vanishes" for this member: no more heartbeats
    assert status_of("w")["state"] in ("working", "dead")  # dead only once the key expires
    dead = wait_until(lambda: (s := status_of("w"))["state"] == "dead" and s, 30, interval=0.2,
                      message="w dead after its heartbeat expired")
    assert "no heartbeat from " + ssh_host.spec in dead["detail"]
    (task,) = json.loads(ok("tasks", "list", "--json"))
    assert (task["id"], task["status"], task["owner"]) == ("1", "pending", None)
    inbox = json.loads(ok("inbox", "--json"))
    assert sum('"teammate_terminated"' in m["text"] for m in inbox) == 1
    # Gone, or a zombie until its tmux server there reaps it (that server ends with the test).
    wait_until(lambda: process_gone(agent), 10,
               message="the killed agent is gone")

    # `respawn` starts it there again; it takes its task back; `kill` ends it through ssh,
    # its Bash command there too.
    again = json.loads(ok("respawn", "w", "--json"))
    assert again["pid"] and again["pid"] != result["pid"]
    wait_until(lambda: (s := status_of("w"))["state"] == "working" and s["current_task"] == "1",
               60, interval=0.2, message="the respawned w works on task #1 again")
    second = psutil.Process(again["pid"])
    job = wait_until(lambda: children_with(second, lambda argv: "sleep" in " ".join(argv)),
                     20, message="its job")
    strays.extend(job)
    ok("kill", "w")
    assert status_of("w")["state"] == "exited"
    psutil.wait_procs(job, timeout=20)
    assert all(process_gone(c) for c in job)
    (task,) = json.loads(ok("tasks", "list", "--json"))
    assert (task["status"], task["owner"]) == ("pending", None)


@pytest.mark.parametrize("ssh_host", ["no-tmux"], indirect=True)
def test_a_host_without_tmux_runs_the_teammate_detached(
        ssh_host: SshHost, redis_url: str) -> None:
    assert "tmux" not in ssh_host.ssh("command -v tmux || echo none").stdout
    assert run_swarm("team", "create", "alpha").returncode == 0
    result = spawn_there(ssh_host, "--prompt", "$ echo detached-$((6 * 7))")
    assert result["pane_id"] == "hidden:w"

    def report() -> list[dict[str, Any]]:
        inbox = json.loads(ok("inbox", "--json"))
        return [m for m in inbox if m["from"] == "w" and "detached-42" in m["text"]]

    wait_until(report, 60, interval=0.2, message="w's report from a host without tmux")
    assert "detached-42" in ok("logs", "w")  # its stdout went to agent.log there
    shut = json.loads(ok("shutdown", "w", "--json", timeout=90))
    outcomes = shut if isinstance(shut, list) else shut["outcomes"]
    assert [(o["name"], o["result"]) for o in outcomes] == [("w", "exited")]
    wait_until(lambda: process_gone(result["pid"]), 20,
               message="the detached agent ended")
