"""Orphans: a teammate whose `swarm lead` process is gone for SWARM_ORPHAN_GRACE seconds leaves
(tasks released, state exited with reason lead_gone) and closes its own tmux pane.

The same liveness test as `swarm status` (pid plus start time), checked on every heartbeat. A
lead that comes back within the grace (a resumed `swarm lead`) adopts the teammate. A team led
from the shell has no lead_pid: its teammates are never orphans.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable

from swarm import settings
from swarm.core.liveness import end_group, is_alive
from swarm.core.names import LEAD_NAME
from swarm.core.state import read_state
from swarm.core.team import Team
from swarm.errors import SwarmError


class OrphanCheck:
    def __init__(self, team: Team, say: Callable[[str], None], remote: bool = False) -> None:
        self.team, self.say = team, say
        # On another host than the lead (an ssh: member), the lead's pid is not ours to check:
        # its heartbeat in the shared store tells instead.
        self.remote = remote
        self.orphaned: str | None = None  # why it leaves: its lead process is gone
        self._lead_gone_since: float | None = None  # monotonic time the lead was first missed

    def check(self) -> bool:
        """True once: when the lead has been gone for the grace period (the teammate leaves)."""
        try:
            config = self.team.config()
        except (SwarmError, OSError):
            return False  # the team file is gone or unreadable: not a verdict on the lead
        pid = config.lead_pid
        if not pid or self._lead_alive(pid, config.lead_started_at):
            if self._lead_gone_since is not None and pid:
                self.say(f"a lead (pid {pid}) leads the team again: staying")
            self._lead_gone_since = None  # a resumed lead adopts us
            return False
        now = time.monotonic()
        if self._lead_gone_since is None:
            self._lead_gone_since = now
            self.say(f"the lead (pid {pid}) is gone; leaving in "
                     f"{settings.orphan_grace():g}s unless it comes back")
        if now - self._lead_gone_since >= settings.orphan_grace() and not self.orphaned:
            self.orphaned = f"lead_gone: the lead process {pid} is gone"
            if not self.remote:  # a SIGKILLed lead could not end its own Bash command
                lead = read_state(self.team.name, LEAD_NAME)
                if lead is not None:
                    end_group(lead.child_pgid, lead.child_started_at)
            return True
        return False

    def _lead_alive(self, pid: int, started_at: float | None) -> bool:
        if not self.remote:
            return is_alive(pid, started_at)
        state = read_state(self.team.name, LEAD_NAME)
        return state is None or (state.pid == pid and state.state not in ("exited", "dead") and
                                 time.time() - state.heartbeat <= settings.heartbeat_stale())


def close_own_pane() -> None:
    """An orphan closes its own tmux pane as it leaves (panes keep a dead agent's output
    otherwise), and nothing else: it only turns off remain-on-exit for the pane it runs in."""
    pane = settings.tmux_pane()
    if not pane or not settings.tmux_env():
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # no tmux: nothing to close
        subprocess.run(["tmux", "set-option", "-p", "-t", pane, "remain-on-exit", "off"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=5, check=False)
