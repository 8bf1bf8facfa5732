"""Deleting a team whose members' processes may be alive (`Team`, core.team.team, with real
`sleep` processes as members): refused while one lives, `--force` stops them, dead or reused
pids do not block (the team file and lifecycle in-process: tests/unit/core/team/test_team.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import member_process
from swarm.core.team.team import Team
from swarm.errors import TeamBusyError
from swarm.ops.member.control import stop_members
from tests.support.helpers import wait_until
from tests.unit.core.team.test_team import record_process


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A real member process. A thread reaps it the moment it dies, so it never lingers as a
    zombie that would look alive to another process."""
    proc = subprocess.Popen(["sleep", "30"])
    reaper = threading.Thread(target=proc.wait, daemon=True)
    reaper.start()
    yield proc
    if proc.poll() is None:
        proc.kill()
    reaper.join(10)


def test_delete_refuses_while_a_member_process_is_alive(sleeper: subprocess.Popen[bytes]) -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    team.add_member("bob")
    record_process(team, "alice", sleeper.pid)
    assert [m.name for m in team.live_members()] == ["alice"]
    with pytest.raises(TeamBusyError) as info:
        Team.delete("alpha")
    assert "alice" in str(info.value) and "--force" in str(info.value)
    assert info.value.exit_code == 1
    assert paths.team_config("alpha").exists()  # nothing removed
    assert sleeper.poll() is None  # and nothing killed


def test_delete_force_kills_the_member_process(sleeper: subprocess.Popen[bytes]) -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    record_process(team, "alice", sleeper.pid)
    task = team.tasks.add("work")
    team.tasks.claim(task.id, "alice")
    started = psutil.Process(sleeper.pid).create_time()
    assert Team.delete("alpha", force=True, stop=stop_members) == ["alice"]
    wait_until(lambda: not is_alive(sleeper.pid, started), timeout=10, message="sleep to die")
    assert not paths.team_dir("alpha").exists()


def test_member_pid_in_the_team_file_counts_while_it_runs_the_members_agent() -> None:
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "swarm", "agent",
                              "--agent-id", "alice@alpha"])
    try:
        team = Team.create("alpha")
        team.add_member("alice")
        team.update_member("alice", pid=agent.pid)  # no state.json: the team file's pid is used
        with pytest.raises(TeamBusyError):
            Team.delete("alpha")
        assert paths.team_dir("alpha").exists()
    finally:
        agent.kill()
        agent.wait()


def test_a_team_file_pid_now_anothers_is_never_signalled(
        sleeper: subprocess.Popen[bytes]) -> None:
    """A member with no state record (it died before writing one, or the store lost it) has
    only the team file's pid, which by now may be any process's: `swarm team delete --force`
    and `swarm kill` leave that process alone; the process running the member's own
    `swarm agent --agent-id` is the member, and is stopped."""
    from swarm.ops.member.control import delete_team, kill

    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "swarm", "agent",
                              "--agent-id", "w2@alpha"])
    try:
        team = Team.create("alpha")
        team.add_member("w1", pid=sleeper.pid)
        team.add_member("w2", pid=agent.pid)
        assert [m.name for m in team.live_members()] == ["w2"]
        kill(team, "w1")
        assert sleeper.poll() is None
        assert delete_team("alpha", force=True).stopped == ["w2"]
        assert agent.wait(10) is not None
        assert sleeper.poll() is None
    finally:
        agent.kill()
        agent.wait()


def test_dead_or_reused_pids_do_not_block_delete(sleeper: subprocess.Popen[bytes]) -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    team.add_member("bob")
    finished = subprocess.Popen(["true"])
    finished.wait()
    record_process(team, "alice", finished.pid, started_at=1.0)
    # bob's pid is a live process, but not the one recorded (another start time): a reused pid.
    record_process(team, "bob", sleeper.pid, started_at=psutil.Process(sleeper.pid).create_time()
                   - 1000)
    assert team.live_members() == []
    assert Team.delete("alpha") == []
    assert sleeper.poll() is None  # the stranger was not touched


def test_delete_force_from_the_python_api_stops_members_by_default(
        sleeper: subprocess.Popen[bytes]) -> None:
    """`Team.delete(name, force=True)` as its Python API shows it must not leave a member
    process running behind a deleted team directory."""
    team = Team.create("alpha")
    team.add_member("alice")
    record_process(team, "alice", sleeper.pid)
    started = psutil.Process(sleeper.pid).create_time()
    assert Team.delete("alpha", force=True) == ["alice"]
    wait_until(lambda: not is_alive(sleeper.pid, started), timeout=10, message="sleep to die")
    assert not paths.team_dir("alpha").exists()


def test_member_process_is_none_for_a_recorded_pid_that_runs_something_else(
        sleeper: subprocess.Popen[bytes]) -> None:
    team = Team.create("alpha")
    team.add_member("w1", pid=sleeper.pid)  # no state record: only the team file's pid
    assert member_process("alpha", team.member("w1")) is None
    assert sleeper.poll() is None


def test_member_process_finds_the_members_own_agent_process() -> None:
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "swarm",
                              "agent", "--agent-id", "w1@alpha"])
    try:
        team = Team.create("alpha")
        team.add_member("w1", pid=agent.pid)
        assert member_process("alpha", team.member("w1")) == (agent.pid, None)
        team.add_member("w2", pid=agent.pid)  # the same pid, another member's name: not it
        assert member_process("alpha", team.member("w2")) is None
    finally:
        agent.kill()
        agent.wait()
