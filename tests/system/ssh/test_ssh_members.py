"""Members on another host, steered from here: liveness from the heartbeat only (its pid is
that host's), and `kill`, `interrupt`, `logs` and `doctor` through ssh (a real sshd on loopback).

These register the member by hand on the file store: what is tested is how control commands
treat a member with a `host`, not the store (end-to-end teams over Redis: test_ssh_teams.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from swarm.core.records.state import AgentState
from swarm.core.records.task import Task
from swarm.core.team.state import read_state, write_state
from swarm.core.team.team import Team
from swarm.ops.member.health import death_reason, observe_member
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.support.sshd_fixtures import SshHost

# Something `ps` shows as member w's agent (`--agent-id w@alpha`), doing nothing.
LOOKALIKE = "import signal, time; signal.signal(signal.SIGINT, lambda *a: print('INT', flush=True)); time.sleep(600)"


def _remote_member(team: Team, host: str, pid: int | None, heartbeat: float | None = None
                   ) -> None:
    team.add_member("w", backend="ssh", host=host, pane_id="hidden:w", pid=pid)
    write_state(team.name, "w", AgentState(state="idle", pid=pid, heartbeat=heartbeat or
                                           time.time()))


def _free_pid() -> int:
    pid = 4_000_000
    while psutil.pid_exists(pid):
        pid -= 1
    return pid


def test_a_remote_member_lives_by_its_heartbeat_not_a_local_pid() -> None:
    team = Team.create("alpha")
    _remote_member(team, "build@hostb", _free_pid())  # no such process here: irrelevant
    member = team.member("w")
    assert death_reason(member, read_state("alpha", "w")) is None
    assert observe_member(team, member).state == "idle"
    stale = AgentState(state="working", pid=member.pid, heartbeat=time.time() - 3600)
    write_state("alpha", "w", stale)
    team.tasks.add("build it")
    team.tasks.claim("1", "w")
    status = observe_member(team, member)
    assert status.state == "dead"
    assert status.detail is not None and status.detail.startswith(
        "no heartbeat from build@hostb for ")
    task: Task = team.tasks.get("1")
    assert task.owner is None and task.status == "pending"  # its task went back


def test_a_local_member_with_a_gone_pid_is_still_dead() -> None:
    """The heartbeat rule is for remote members only: here a gone pid is death at once."""
    team = Team.create("alpha")
    team.add_member("w", backend="hidden", pid=_free_pid())
    write_state("alpha", "w", AgentState(state="idle", pid=team.member("w").pid))
    assert "is gone" in (death_reason(team.member("w"), read_state("alpha", "w")) or "")


def test_interrupt_and_kill_go_through_ssh(ssh_host: SshHost, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open(out, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", LOOKALIKE, "agent", "--agent-id",
                                 "w@alpha"], stdout=sink, start_new_session=True)
    try:
        team = Team.create("alpha")
        _remote_member(team, ssh_host.spec, proc.pid)
        done = run_swarm("interrupt", "w", "--team", "alpha")
        assert done.returncode == 0, done.stderr
        wait_until(lambda: "INT" in out.read_text(), timeout=20, message="SIGINT arrived")
        assert proc.poll() is None  # an interrupt ends a turn, not the process
        killed = run_swarm("kill", "w", "--team", "alpha")
        assert killed.returncode == 0, killed.stderr
        assert proc.wait(timeout=20) == -15
        state = read_state("alpha", "w")
        assert state is not None and state.state == "exited"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kill_leaves_a_process_that_is_not_the_members_alone(ssh_host: SshHost) -> None:
    """A pid reused on that host by something else is never signalled."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    try:
        team = Team.create("alpha")
        _remote_member(team, ssh_host.spec, other.pid)
        assert run_swarm("kill", "w", "--team", "alpha").returncode == 0
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_logs_and_doctor_reach_the_host(ssh_host: SshHost) -> None:
    team = Team.create("alpha")
    _remote_member(team, ssh_host.spec, None)
    log = ssh_host.remote_home / "hosts-local" / "alpha" / "agents" / "w" / "agent.log"
    log.parent.mkdir(parents=True)
    log.write_text("working on it\x1b]0;title\x07 \n")
    proc = run_swarm("logs", "w", "--team", "alpha")
    assert proc.returncode == 0, proc.stderr
    assert "working on it" in proc.stdout and "\x07" not in proc.stdout  # filtered as here
    log.unlink()  # no log yet: nothing printed, no error
    assert run_swarm("logs", "w", "--team", "alpha").stdout == ""
    report = json.loads(run_swarm("doctor", "--json").stdout)
    (host,) = report["ssh_hosts"]
    assert host["host"] == ssh_host.spec and host["members"] == ["alpha/w"]
    assert host["version"] == run_swarm("--version").stdout.strip()
    text = run_swarm("doctor", env={"SWARM_REMOTE_SWARM": "/nonexistent/swarm"}).stdout
    assert f"!!  ssh {ssh_host.spec} (alpha/w): " in text


def test_logs_of_an_unreachable_host_is_one_line(ssh_host: SshHost) -> None:
    team = Team.create("alpha")
    _remote_member(team, "root@127.0.0.1:1", None)
    proc = run_swarm("logs", "w", "--team", "alpha")
    assert proc.returncode == 1
    assert [line for line in proc.stderr.splitlines() if line] == [
        proc.stderr.strip().splitlines()[0]]
    assert "could not read w's log on root@127.0.0.1:1" in proc.stderr
    assert os.environ["SWARM_SSH_OPTIONS"]  # our client config was in use
