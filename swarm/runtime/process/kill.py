"""Killing what an agent started: a command's whole process tree (its own process group)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
