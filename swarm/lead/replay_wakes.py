"""In a replay, the lead wakes as it woke in the recording.

When the lead wakes depends on when its teammates' messages arrive, which a rerun does not
reproduce: one run wakes with two messages where the other woke with one, or at a status change
where the other waited for the team to go quiet. The recorded reply would then answer another
moment (a shutdown request while a task is still open) and the replay would go another way. So a
replaying lead's wake policy (`Watch.steer`) asks what to deliver:

- the recorded wake's messages and kind once they are all there; what came sooner waits for
  the next wake (a quiet team is told as a status change if the recording's wake was one);
- nothing yet while some of it is still to come, for at most HOLD_AT_MOST seconds;
- everything when a message it waits for was delivered already (the run went otherwise), past
  the recording's end, or once any member diverged: the difference is reported as it is.
A turn's arrivals (messages that reach its next call) are never held: those the recording's
call had go, the rest wait for the next wake.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from swarm.lead.wake_policy import Choice
from swarm.runtime.models.recording import ReplayModel
from swarm.runtime.models.replay_diff import normalise

HOLD_AT_MOST = 10.0  # seconds a wake waits for the rest of what the recording's wake held
HEADS = {"<team-quiet>": "quiet", "<team-status>": "status", "<team-stalled>": "stalled"}


def head_kind(text: str) -> str:
    return next((kind for prefix, kind in HEADS.items() if text.startswith(prefix)), "none")


def recorded_input(request: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The kind of wake and the other text blocks of a recorded request's newest message (a
    user message: a wake, or tool results with what arrived meanwhile); None if not that."""
    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content")
    if last.get("role") != "user" or not isinstance(content, list):
        return None
    texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
    kind = head_kind(texts[0]) if texts else "none"
    return kind, texts[1:] if kind != "none" else texts


class ReplayedWakes:
    def __init__(self, model: ReplayModel, team: str, out: Path | None) -> None:
        self.model, self.team, self.out = model, team, out
        self.since: float | None = None  # when the wake being held was first held
        self.delivered: Counter[str] = Counter()  # what the replay's lead was given so far

    def choose(self, kind: str, items: list[str]) -> Choice | None:
        """`kind` none: a turn's arrivals (never held: the turn's call is due)."""
        everything = Choice(list(range(len(items))))
        upcoming = self.model.upcoming()
        found = recorded_input(upcoming[0]) if upcoming is not None else None
        if upcoming is None or found is None or self._someone_diverged():
            return self._give(everything, items)
        recorded_kind, recorded = found
        want = Counter(normalise(text, upcoming[1]) for text in recorded)
        have = [normalise(text, self.team) for text in items]
        missing = want - Counter(have)
        fits = kind == recorded_kind or (kind, recorded_kind) == ("quiet", "status")
        if kind == "none" or (fits and not missing):
            self.since = None
            picked: list[int] = []  # in the recorded order, which the comparison keeps
            for text in (normalise(t, upcoming[1]) for t in recorded):
                index = next((i for i, t in enumerate(have) if t == text and i not in picked),
                             None)
                if index is not None:
                    picked.append(index)
            return self._give(Choice(picked, as_status=kind != recorded_kind), items)
        # Still to come (a message the replay's lead was never given, the team going quiet):
        # hold. A message it was given already will not come again: the run went otherwise.
        if not any(self.delivered[text] for text in missing):
            now = time.monotonic()
            self.since = self.since or now
            if now - self.since < HOLD_AT_MOST:
                return None
        self.since = None
        return self._give(everything, items)

    def _give(self, choice: Choice, items: list[str]) -> Choice:
        self.delivered.update(normalise(items[i], self.team) for i in choice.deliver)
        return choice

    def _someone_diverged(self) -> bool:
        """A member whose replay went another way (its scratch file says so): nothing it
        sends will match the recording, so holding would only wait."""
        for path in self.out.glob("*.json") if self.out is not None else []:
            try:
                found = json.loads(path.read_text()).get("divergence")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(found, dict) and not found.get("timing"):
                return True
        return False
