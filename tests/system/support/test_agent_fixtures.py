"""The teardown helpers of tests/support/agent_fixtures.py: they stop what a test started and
nothing else. Pids are reused within minutes on a busy machine, so a pid from a record or a
parent is checked before its tree is stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest

from swarm.core.team.team import Team
from tests.support.agent_fixtures import member_pid, stop_tree
from tests.support.helpers import wait_until

IDLE = "import time; time.sleep(60)"


@pytest.fixture
def idle() -> Iterator[subprocess.Popen[bytes]]:
    """A process that is not an agent, though the team file may name its pid."""
    proc = subprocess.Popen([sys.executable, "-c", IDLE])
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("which", ["init", "this process", "its parent", "its grandparent"])
def test_stop_tree_refuses_init_and_this_tests_own_ancestors(which: str) -> None:
    me = psutil.Process()
    pid = {"init": 1, "this process": me.pid, "its parent": os.getppid(),
           "its grandparent": me.parents()[1].pid}[which]
    with pytest.raises(AssertionError, match=f"refusing to stop the tree of pid {pid}"):
        stop_tree(pid)


def test_stop_tree_stops_a_child_and_what_it_started() -> None:
    shell = subprocess.Popen(["bash", "--noprofile", "--norc", "-c", f"{sys.executable} -c "
                              f"'{IDLE}' & wait"])
    try:
        grandchild = wait_until(lambda: next(iter(psutil.Process(shell.pid).children()), None),
                                timeout=30, message="the shell's child")
        stop_tree(shell.pid)
        assert shell.wait(10) is not None
        assert not grandchild.is_running() or grandchild.status() == psutil.STATUS_ZOMBIE
    finally:
        shell.kill()


def test_member_pid_is_none_for_a_recorded_pid_that_runs_something_else(
        swarm_home: object, idle: subprocess.Popen[bytes]) -> None:
    team = Team.create("alpha")
    team.add_member("w1", pid=idle.pid)  # no state record: only the team file's pid
    assert member_pid("alpha", team.member("w1")) is None
    assert idle.poll() is None


def test_member_pid_finds_the_members_own_agent_process(swarm_home: object) -> None:
    agent = subprocess.Popen([sys.executable, "-c", IDLE, "agent", "--agent-id", "w1@alpha"])
    try:
        team = Team.create("alpha")
        team.add_member("w1", pid=agent.pid)
        assert member_pid("alpha", team.member("w1")) == agent.pid
        team.add_member("w2", pid=agent.pid)  # the same pid, another member's name: not it
        assert member_pid("alpha", team.member("w2")) is None
    finally:
        agent.kill()
        agent.wait()
