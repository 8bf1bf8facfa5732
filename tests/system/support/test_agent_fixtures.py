"""`stop_tree` (tests/support/agent_fixtures.py) stops what a test started and nothing else:
never init or the test's own ancestors, whose trees hold the run. A member's pid is checked for
that member first (`core.team.state.member_process`: tests/system/teammate/test_team.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from tests.support.agent_fixtures import stop_tree
from tests.support.helpers import wait_until

IDLE = "import time; time.sleep(60)"


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
