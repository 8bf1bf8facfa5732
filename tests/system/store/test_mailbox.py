"""Mailboxes through the Team API: addressing rules, limits, read/compaction, wait, crashes.

The tests of tests/unit/core/store/file/test_mailbox.py that start processes."""

from __future__ import annotations

from pathlib import Path

from swarm.core.team.team import Team
from tests.support.helpers import wait_until
from tests.unit.core.store.file.test_mailbox import run_child


def test_sends_wait_for_a_live_lock_holder_and_lose_nothing(team: Team, tmp_path: Path) -> None:
    """While a live process holds the lock a send blocks (no timeout, no loss), then lands."""
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = run_child(
        f"""
        import pathlib, time
        from swarm.core.store import paths
        from swarm.core.store.disk import locked
        with locked(paths.inbox({team.name!r}, "alice")):
            pathlib.Path({str(ready)!r}).write_text("held")
            while not pathlib.Path({str(release)!r}).exists():
                time.sleep(0.01)
        """
    )
    sender = None
    try:
        wait_until(ready.exists, timeout=20, message="child to hold the mailbox lock")
        sender = run_child(
            f"""
            from swarm.core.team.team import Team
            Team.open({team.name!r}).send("alice", "queued", sender="bob")
            """
        )
        assert team.inbox("alice").wait(timeout=0.3) == []  # still blocked behind the lock
        release.write_text("1")
        got = team.inbox("alice").wait(timeout=10)
        assert [m.text for m in got] == ["queued"]
        assert sender.wait(20) == 0 and holder.wait(20) == 0
    finally:
        for proc in (holder, sender):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()



def test_concurrent_senders_lose_nothing(team: Team) -> None:
    writers = [
        run_child(
            f"""
            from swarm.core.team.team import Team
            team = Team.open({team.name!r})
            for i in range(40):
                team.send("alice", "w{w}-" + str(i), sender={sender!r})
            """
        )
        for w, sender in enumerate(["bob", "team-lead", "bob", "team-lead"])
    ]
    box = team.inbox("alice")
    for proc in writers:
        assert proc.wait(60) == 0
    texts = [m.text for m in box.messages()]
    assert sorted(texts) == sorted(f"w{w}-{i}" for w in range(4) for i in range(40))
    for w in range(4):  # each writer's messages stay in its own order
        mine = [t for t in texts if t.startswith(f"w{w}-")]
        assert mine == [f"w{w}-{i}" for i in range(40)]
