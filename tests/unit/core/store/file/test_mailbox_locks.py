"""No ghost deliveries: a send that waits on a stopped lock holder fails within
SWARM_LOCK_TIMEOUT naming the holder, an interrupted one is withdrawn, and neither lands later."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.store.disk import lock_path, signals_deferred
from swarm.core.store.file.mailbox import FileMailbox
from swarm.core.team.team import Team
from swarm.errors import PartialSendError
from tests.support.agent_fixtures import SWARM
from tests.support.helpers import wait_until

ROOT = Path(__file__).resolve().parents[5]


@pytest.fixture
def stopped_holder(team: Team, tmp_path: Path) -> Iterator[psutil.Process]:
    """A process that took alice's mailbox lock and was then stopped (as by Ctrl-Z)."""
    ready = tmp_path / "ready"
    code = f"""
        import pathlib, time
        from swarm.core.store import paths
        from swarm.core.store.disk import locked
        with locked(paths.inbox({team.name!r}, "alice")):
            pathlib.Path({str(ready)!r}).write_text("held")
            time.sleep(60)
        """
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT)
    try:
        wait_until(ready.exists, timeout=20, message="child to hold the mailbox lock")
        os.kill(child.pid, signal.SIGSTOP)
        holder = psutil.Process(child.pid)
        wait_until(lambda: holder.status() == psutil.STATUS_STOPPED, message="child stopped")
        yield holder
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
            child.wait()


def send_cli(team: Team, text: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([SWARM, "send", "alice", text, "--team", team.name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})


def release(holder: psutil.Process) -> None:
    holder.send_signal(signal.SIGCONT)
    holder.kill()  # its lock dies with it
    wait_until(lambda: holder.status() == psutil.STATUS_ZOMBIE, message="holder gone")


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


def test_an_interrupt_after_the_append_reports_the_message_as_sent(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT landing while the message is written is held until it is in, then raised as
    'delivered' (exit 130), never as a plain failure for a message that did arrive."""
    append = FileMailbox._append

    def append_then_interrupt(box: FileMailbox, payload: bytes) -> None:
        append(box, payload)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # give Python a chance to run the handler right here: it must not

    monkeypatch.setattr(FileMailbox, "_append", append_then_interrupt)
    with pytest.raises(PartialSendError) as info:
        team.send("alice", "landed")
    [message] = team.inbox("alice").messages()
    assert str(info.value) == (f"interrupted, but the message was delivered to alice "
                               f"(id {message.id})")
    assert info.value.exit_code == 130


def test_signals_deferred_holds_sigint_until_the_block_ends() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt), signals_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
        steps.append("finished")
    assert steps == ["finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
