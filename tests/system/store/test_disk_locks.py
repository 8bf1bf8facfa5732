"""The store layer's locks die with their holder: one held by a SIGKILLed process is free
again (the rest in-process: tests/unit/core/store/test_disk.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from swarm.core.store import disk as store
from tests.support.helpers import wait_until
from tests.unit.core.store.test_disk import _lock_is_held


def _hold_lock_in_child(path: Path, ready: Path) -> subprocess.Popen[bytes]:
    code = textwrap.dedent(
        f"""
        import pathlib, time
        from swarm.core.store.disk import locked
        with locked(pathlib.Path({str(path)!r})):
            pathlib.Path({str(ready)!r}).write_text("held")
            time.sleep(120)
        """
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[3])


def test_lock_dies_with_a_sigkilled_holder(tmp_path: Path) -> None:
    path = tmp_path / "box.json"
    ready = tmp_path / "ready"
    holder = _hold_lock_in_child(path, ready)
    try:
        wait_until(ready.exists, timeout=10, message="child to take the lock")
        assert _lock_is_held(path)
        holder.send_signal(signal.SIGKILL)
        assert holder.wait(10) == -signal.SIGKILL
        # The kernel frees a dead holder's flock at once: a lock that stayed taken would raise.
        with store.locked(path, timeout=5):
            assert _lock_is_held(path)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
