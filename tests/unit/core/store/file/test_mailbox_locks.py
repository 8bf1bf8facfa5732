"""No ghost deliveries: an interrupt after the append reports the message as sent, and SIGINT
waits for the end of the block it would break (against a stopped lock holder in another process:
tests/system/store/test_mailbox_locks.py and tests/system/store/test_file_mailbox_locks.py)."""

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

from swarm.core.store.disk import signals_deferred
from swarm.core.store.file.mailbox import FileMailbox
from swarm.core.team.team import Team
from swarm.errors import PartialSendError
from tests.support.cli_runner import SWARM
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
