"""This process's memory and starting environment, closed to the commands it runs.

A teammate's commands run as the same user as its `swarm agent` process, which holds the model
credential: they could read it from `/proc/<agent>/environ` (the environment the process was
started with, whatever it removed since) or `/proc/<agent>/mem`. Two steps close that (Linux):

- `make_non_dumpable()` (prctl PR_SET_DUMPABLE 0): a process of the same user without
  CAP_SYS_PTRACE can no longer open its `environ`, `mem`, `maps`, nor attach to it (and it
  leaves no core dump). A child's `execve` makes the child dumpable again: this one process is
  closed, not its tree. Whoever forks a process that holds a secret calls it (`swarm agent`;
  the fork server does for its own processes).
- `scrub_starting_environ(secret)`: the values of the variables `secret` names are zeroed in
  the block `/proc/<pid>/environ` shows (its bytes from the kernel's `env_start` to `env_end`)
  and unset from the C environment a child without an explicit one inherits, so not even a
  process with CAP_SYS_PTRACE (root) reads them there. Python's `os.environ`, read at start, is
  untouched: the process keeps what it needs.

Elsewhere (macOS has no /proc and no such prctl) both do nothing and say so.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4  # <linux/prctl.h>
PR_GET_DUMPABLE = 3
ENV_FIELDS = (49, 50)  # /proc/PID/stat fields 50 and 51 (env_start, env_end), 0-based after pid


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def make_non_dumpable() -> bool:
    """Close this process's memory and environment to other processes of its user (Linux).
    False where that cannot be done."""
    libc = _libc()
    try:
        done = libc is not None and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except AttributeError:
        done = False
    if not done:
        log.warning("could not make this process non-dumpable: its memory is readable by its"
                    " user's other processes")
    return done


def is_dumpable() -> bool:
    libc = _libc()
    return libc is None or libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0


def _environ_block() -> tuple[int, int] | None:
    """Where the environment this process was started with lies in its memory."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = (int(fields[i - 2]) for i in ENV_FIELDS)  # after `pid (comm)`
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def scrub_starting_environ(secret: Callable[[str, str], bool]) -> list[str]:
    """Zero the values of the starting environment's variables that `secret(name, value)` names
    (what /proc/<pid>/environ shows) and unset them from the C environment; their names."""
    block = _environ_block()
    if block is None:
        return []
    start, end = block
    data = ctypes.string_at(start, end - start)
    scrubbed: list[str] = []
    offset = 0
    for entry in data.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        text_name = name.decode("utf-8", "replace")
        if sep and value and secret(text_name, value.decode("utf-8", "replace")):
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            scrubbed.append(text_name)
        offset += len(entry) + 1
    for variable in scrubbed:
        os.unsetenv(variable)  # a child started without an explicit environment inherits none
    return scrubbed
