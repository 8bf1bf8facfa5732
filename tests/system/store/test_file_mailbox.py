"""Mailboxes of the file store against another process: a SIGKILLed lock holder does not block
senders, and a wait wakes promptly when another process sends (the rest in-process:
tests/unit/core/store/file/test_mailbox.py)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from swarm.core.team.team import Team
from tests.support.helpers import wait_until
from tests.unit.core.store.file.test_mailbox import run_child


def test_wait_wakes_promptly_when_another_process_sends(team: Team, tmp_path: Path) -> None:
    armed, go, stamp = tmp_path / "armed", tmp_path / "go", tmp_path / "sent_at"
    child = run_child(
        f"""
        import pathlib, time
        from swarm.core.team.team import Team
        team = Team.open({team.name!r})
        pathlib.Path({str(armed)!r}).write_text("1")
        go = pathlib.Path({str(go)!r})
        deadline = time.monotonic() + 20
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        pathlib.Path({str(stamp)!r}).write_text(repr(time.time()))
        team.send("alice", "wake up", sender="bob")
        """
    )
    try:
        wait_until(armed.exists, timeout=20, message="child ready")
        box = team.inbox("alice")
        go.write_text("1")
        got = box.wait(timeout=30)
        returned = time.time()
        assert child.wait(20) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert [m.text for m in got] == ["wake up"]
    latency = returned - float(stamp.read_text())
    # Milliseconds in practice (see bench_mailbox); a missed wake would sit out the 30 s.
    assert latency < 5, f"wait() took {latency:.3f}s to notice a send"


# -- crashes and concurrency --------------------------------------------------------------------
def test_sigkilled_lock_holder_does_not_block_senders(team: Team, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    holder = run_child(
        f"""
        import pathlib, time
        from swarm.core.store import paths
        from swarm.core.store.disk import locked
        with locked(paths.inbox({team.name!r}, "alice")):
            pathlib.Path({str(ready)!r}).write_text("held")
            time.sleep(120)
        """
    )
    try:
        wait_until(ready.exists, timeout=20, message="child to hold the mailbox lock")
        holder.send_signal(signal.SIGKILL)
        assert holder.wait(10) == -signal.SIGKILL
        start = time.monotonic()
        [sent] = team.send("alice", "after the kill")
        took = time.monotonic() - start
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    # A lock still held would make the send wait its SWARM_LOCK_TIMEOUT (10 s), then fail.
    assert took < 5, f"send took {took:.3f}s after the lock holder died"
    assert [m.id for m in team.inbox("alice").messages()] == [sent]
