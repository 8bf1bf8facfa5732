"""A burst of teammates' reports is one lead turn: the settle window.

Each lead turn re-reads the whole conversation, so reports that land a few hundred milliseconds
apart, each its own turn, cost the lead its conversation once per report. When a report arrives
while other teammates are still working on tasks (their reports are coming), the lead waits a
short window before it wakes, and what arrives meanwhile is in the same turn. The window is
measured from the team's own report spacing (twice the median of its recent gaps between
reports, within bounds), slides with each report, and never holds a report longer than
MAX_HOLD in all. Nothing but plain reports is ever held: a permission request, a plan, a death,
a refused shutdown, the person's input and a quiet team wake the lead at once (wake_policy).
"""

from __future__ import annotations

import statistics
import time
from collections import deque

MIN_WINDOW = 0.25  # seconds: below this a window batches nothing a turn would not
MAX_WINDOW = 2.0  # seconds one window may last after the newest report
MAX_HOLD = 3.0  # seconds the oldest held report may wait, however reports keep coming
FIRST_WINDOW = 1.0  # seconds, before the team has shown any spacing of its own
GAPS_KEPT = 8  # the recent gaps the window is measured from
PHASE_GAP = 2 * MAX_HOLD  # a longer gap is another phase of the work, not a burst's spacing


class Settle:
    """Arrival times of the team's reports, and whether to hold the ones waiting."""

    def __init__(self) -> None:
        self.gaps: deque[float] = deque(maxlen=GAPS_KEPT)
        self.last_arrival: float | None = None
        self.held_since: float | None = None
        self.until: float | None = None  # the session looks again by then

    def arrived(self, now: float | None = None) -> None:
        """A report came (classified now)."""
        now = time.monotonic() if now is None else now
        if self.last_arrival is not None and now - self.last_arrival < PHASE_GAP:
            self.gaps.append(now - self.last_arrival)
        self.last_arrival = now

    def window(self) -> float:
        if not self.gaps:
            return FIRST_WINDOW
        return min(MAX_WINDOW, max(MIN_WINDOW, 2 * statistics.median(self.gaps)))

    def hold(self, others_working: bool, now: float | None = None) -> bool:
        """Hold the waiting reports (only reports wait) while others work, within the window;
        False: wake the lead now (and the next held batch starts afresh)."""
        now = time.monotonic() if now is None else now
        if not others_working or self.last_arrival is None:
            return self._release()
        if self.held_since is None:
            self.held_since = now
        until = min(self.held_since + MAX_HOLD, self.last_arrival + self.window())
        if now >= until:
            return self._release()
        self.until = until
        return True

    def _release(self) -> bool:
        self.held_since = self.until = None
        return False
