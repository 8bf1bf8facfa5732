"""Orphans: a teammate whose `swarm lead` process is gone for SWARM_ORPHAN_GRACE seconds leaves
(tasks released, state exited with reason lead_gone) and closes its own tmux pane; so does one
whose team file is gone for SWARM_TEAM_GONE_GRACE seconds (team_gone.py, reason team_gone). The
first teammate to miss its lead ends the lead's Bash command (in its own process group, it would
outlive the lead): at once, not after the grace, as a resumed lead would not own it.

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
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.state import end_child_command
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.runtime.process.team_gone import TeamGoneCheck


class OrphanCheck:
    def __init__(self, team: Team, say: Callable[[str], None], remote: bool = False) -> None:
        self.team, self.say = team, say
        # On another host than the lead (an ssh: member), the lead's pid is not ours to check:
        # its heartbeat in the shared store tells instead.
        self.remote = remote
        self.orphaned: str | None = None  # why it leaves: its lead process or team is gone
        self.team_gone = TeamGoneCheck(team, say)
        self._lead_gone_since: float | None = None  # monotonic time the lead was first missed

    def check(self) -> bool:
        """True once: when the lead, or the team file, has been gone for its grace period
        (the teammate leaves)."""
        try:
            config = self.team.config()  # a corrupt document is moved aside here
        except (SwarmError, OSError):
            config = None  # gone or unreadable: not a verdict on the lead
        gone = self.team_gone.check(read=config is not None)
        if gone and not self.orphaned:
            self.orphaned = gone
            return True
        if config is None:
            return False
        pid = config.lead_pid
        if not pid or self._lead_alive(pid, config.lead_started_at):
            if self._lead_gone_since is not None and pid:
                self.say(f"a lead (pid {pid}) leads the team again: staying")
            self._lead_gone_since = None  # a resumed lead adopts us
            return False
        now = time.monotonic()
        if self._lead_gone_since is None:
            self._lead_gone_since = now
            if not self.remote:  # its Bash command dies with it (a new lead would not own it)
                end_child_command(read_state(self.team.name, LEAD_NAME))
            self.say(f"the lead (pid {pid}) is gone; leaving in "
                     f"{settings.orphan_grace():g}s unless it comes back")
        if now - self._lead_gone_since >= settings.orphan_grace() and not self.orphaned:
            self.orphaned = f"lead_gone: the lead process {pid} is gone"
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
