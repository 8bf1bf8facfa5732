"""No ghost deliveries: a send that waits on a stopped lock holder fails within
SWARM_LOCK_TIMEOUT naming the holder, an interrupted one is withdrawn, and neither lands later.

The tests of tests/unit/core/store/file/test_mailbox_locks.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import time

import psutil

from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.unit.core.store.file.test_mailbox_locks import (
    release,
    send_cli,
    stopped_holder,  # noqa: F401 - the fixtures
)


def test_stopped_lock_holder_makes_a_send_fail_in_time_and_nothing_lands_later(
    team: Team, stopped_holder: psutil.Process
) -> None:
    start = time.monotonic()
    proc = send_cli(team, "cancel the shutdown", SWARM_LOCK_TIMEOUT="1")
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - start
    assert proc.returncode == 1, err
    [line] = err.splitlines()
    assert line.startswith("swarm: error: could not deliver to alice:")
    assert f"pid {stopped_holder.pid}, which is stopped" in line
    assert "nothing was sent" in line and out == ""
    assert 1.0 <= took < 6.0
    release(stopped_holder)
    box = team.inbox("alice", checked=False)
    assert box.messages() == []
    assert sorted(p.name for p in paths.inboxes_dir(team.name).iterdir()) == ["alice.jsonl.lock"]
    [sent] = team.send("alice", "after")  # the mailbox works again at once
    assert [m.id for m in box.messages()] == [sent]
