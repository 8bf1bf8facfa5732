"""A teammate whose team file is gone (deleted, moved aside as corrupt, lost by a Redis
restarted without persistence) for SWARM_TEAM_GONE_GRACE seconds leaves on its own, as an
orphan does (orphan.py): nobody could stop it by name any more.

Checked on every heartbeat with `Team.exists` (a stat, or one EXISTS on Redis, retried through
an outage: an unreachable store is not a gone document). The grace keeps a document that is
missing for a moment (restored by hand, a store failing over) from ending the team.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from swarm import settings
from swarm.core.team.team import Team


class TeamGoneCheck:
    def __init__(self, team: Team, say: Callable[[str], None]) -> None:
        self.team, self.say = team, say
        self._missing_since: float | None = None  # monotonic time the document was first missed

    def check(self, read: bool = False) -> str | None:
        """Why it leaves, once the document has been gone for the grace; None otherwise.
        `read`: the caller has just read the document (no need to ask again)."""
        if read or self.team.exists():
            if self._missing_since is not None:
                self.say("the team file is back: staying")
            self._missing_since = None
            return None
        now = time.monotonic()
        grace = settings.team_gone_grace()
        if self._missing_since is None:
            self._missing_since = now
            self.say(f"the team file {self.team.document()} is gone; leaving in {grace:g}s "
                     "unless it comes back")
        if now - self._missing_since >= grace:
            return f"team_gone: the team file {self.team.document()} is gone"
        return None
