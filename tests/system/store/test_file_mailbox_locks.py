"""No ghost deliveries, with a real lock holder in another process: an interrupted send is
withdrawn, and a broadcast stopped part way says who has it (in-process:
tests/unit/core/store/file/test_mailbox_locks.py)."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import signal

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.store.disk import lock_path
from swarm.core.team.team import Team
from swarm.errors import PartialSendError
from tests.support.helpers import wait_until
from tests.unit.core.store.file.test_mailbox_locks import (
    release,
    send_cli,
    stopped_holder,  # noqa: F401 - the fixtures
)


def test_interrupted_send_is_withdrawn(team: Team, stopped_holder: psutil.Process) -> None:
    proc = send_cli(team, "never", SWARM_LOCK_TIMEOUT="60")
    lock = str(lock_path(paths.inbox(team.name, "alice")))
    waiting = psutil.Process(proc.pid)
    wait_until(lambda: lock in [f.path for f in waiting.open_files()], timeout=20,
               message="the send to wait on the lock")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.strip() == "swarm: error: interrupted"
    release(stopped_holder)
    box = team.inbox("alice", checked=False)
    assert box.messages() == []
    [sent] = team.send("alice", "later")  # the next writer finds nothing queued to take in
    assert [m.id for m in box.messages()] == [sent]


def test_a_broadcast_stopped_part_way_says_who_has_it(
    team: Team, stopped_holder: psutil.Process, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_LOCK_TIMEOUT", "0.3")
    with pytest.raises(PartialSendError) as info:
        team.send("*", "standup", sender="bob")
    message = str(info.value)
    assert "could not deliver to alice" in message and "stopped" in message
    assert "delivered to team-lead (id " in message and "not to alice" in message
    assert info.value.exit_code == 1
    assert [m.text for m in team.inbox().messages()] == ["standup"]
    release(stopped_holder)
    assert team.inbox("alice").messages() == []
