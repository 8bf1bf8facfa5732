"""Agent definitions' processes: a process's start time as psutil reads it, and a zombie is
not alive (a real child of the test; the definitions in-process:
tests/unit/core/agents/test_definitions.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.helpers import wait_until

pytestmark = pytest.mark.usefixtures("trust_projects")


def test_process_start_time_matches_psutil() -> None:
    """liveness reads /proc itself (no psutil import in a starting teammate); observers compare
    its value with psutil's create_time, so the two must agree exactly."""
    import psutil

    from swarm.core.store.liveness import is_alive, process_start_time

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        for pid in (os.getpid(), child.pid):
            assert process_start_time(pid) == psutil.Process(pid).create_time()
        started = process_start_time(child.pid)
        assert is_alive(child.pid, started)
        assert not is_alive(child.pid, started - 5)  # a reused pid: another start time
    finally:
        child.kill()
        child.wait()
    assert process_start_time(child.pid) is None
    assert not is_alive(child.pid)


def test_a_zombie_is_not_alive_without_asking_psutil() -> None:
    """is_alive reads the state from /proc too (`swarm status` imports no psutil): a child that
    exited and was not reaped yet is a zombie, which is not alive, as psutil says."""
    import psutil

    from swarm.core.store.liveness import is_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        wait_until(lambda: psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE, 10,
                   message="the child to exit unreaped")
        assert not is_alive(child.pid)
        code = f"import sys; from swarm.core.store.liveness import is_alive; is_alive({os.getpid()}); " \
               "print('psutil' in sys.modules)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.strip()
        assert out == "False"
    finally:
        child.wait()
