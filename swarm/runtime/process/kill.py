"""Killing what an agent started: a command's whole process tree (its own process group), and
the command its turn runs now (`CurrentCommand`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def end_group(proc: subprocess.Popen[Any], close_grace: float, stop_grace: float) -> None:
    """End an agent CLI that leads its own process group: close its input and give it
    `close_grace` seconds, then SIGTERM its group (it ends its own children, such as its MCP
    servers), then SIGKILL, `stop_grace` seconds each."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    for end in (None, signal.SIGTERM, signal.SIGKILL):
        if end is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, end)
        try:
            proc.wait(close_grace if end is None else stop_grace)
            return
        except subprocess.TimeoutExpired:
            continue


class CurrentCommand:
    """The command an agent's turn runs now (a Bash call's, a hook's): an interrupt kills its
    tree (`kill`), and `record` is told its process group (None once it ended), so whoever
    records the agent's death ends it too. `mine`: whether a command started on this thread is
    the turn's own (not a subagent's, whose own run ends it)."""

    def __init__(self, record: Callable[[int | None], None],
                 mine: Callable[[], bool] = lambda: True) -> None:
        self.record, self.mine = record, mine
        self.proc: subprocess.Popen[bytes] | None = None

    def track(self, proc: subprocess.Popen[bytes] | None) -> None:
        if not self.mine():
            return
        self.proc = proc
        self.record(proc.pid if proc is not None else None)

    def kill(self) -> None:
        proc = self.proc
        if proc is not None:
            kill_tree(proc)
