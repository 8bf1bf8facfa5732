"""A teammate adopts its commands' orphans, so they stay its descendants.

A command its Bash tool starts can leave its shell behind (`setsid -f`, `nohup ... &`, a double
fork); the kernel hands such an orphan to the nearest ancestor that asked to be a "child
subreaper" (Linux: `prctl(PR_SET_CHILD_SUBREAPER)`), else to init. The agent asks at start, so
a `swarm` command run anywhere below it finds it among its ancestors
(`core.store.liveness.agent_ancestor`) and speaks as that teammate, never as the lead.

An adopted orphan that exits is the agent's zombie until the agent waits for it. `Reaper.reap`
(every heartbeat) waits only for zombies it saw at the previous beat too: a child the agent
started itself is waited for at once by whoever started it (subprocess, asyncio), so taking
only zombies nobody claimed for a whole beat never steals another waiter's exit status.

macOS and the other BSDs have no subreaper (orphans go to launchd): there, a detached command
is not found under its agent and the signatures of the lead's orders are the only guard.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def become_subreaper() -> bool:
    """Ask the kernel to give this process its descendants' orphans. False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: no other part of an agent needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        done = False
    if not done:
        log.warning("could not become a child subreaper: detached commands escape this agent")
    return done


def _zombie_children() -> set[int]:
    """This process's children that have exited and wait to be reaped. One peek (`waitid`
    with WNOWAIT: nothing is reaped) says whether there is any; only then is /proc read."""
    try:
        if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return set()
    except ChildProcessError:  # no children at all
        return set()
    me, found = os.getpid(), set[int]()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2:].split()
            if fields[0] == b"Z" and int(fields[1]) == me:
                found.add(int(entry))
    return found


class Reaper:
    """Waits for adopted orphans that have exited (see the module's note)."""

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self.active = False  # a subreaper (Linux): there is something to reap

    def start(self) -> bool:
        """Become this process's descendants' subreaper; False where the system has none."""
        self.active = become_subreaper()
        return self.active

    def reap(self) -> int:
        """Reap the zombies seen unclaimed since the last call; returns how many."""
        if not self.active:
            return 0
        zombies = _zombie_children()
        reaped = 0
        for pid in zombies & self._seen:
            with contextlib.suppress(ChildProcessError, OSError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    reaped += 1
        self._seen = zombies - (zombies & self._seen)
        return reaped
