"""Spending caps: `--max-budget-usd` and `--max-tokens` of one agent (its subagents' spend
included), checked before each model call and between the streamed chunks of one.

`Budget.check(pending)` says, in one line, why no more may be spent: the agent's usage so far
plus `pending` (the call under way, its output estimated from what has streamed) reaches a
cap. The same line goes to the pane, the idle note and the model's conversation.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.state import Usage
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.settings import max_subagent_depth

CHARS_PER_TOKEN = 4  # a streamed reply's output tokens, until the API says how many


def estimate_output(reported: int, streamed_chars: int) -> int:
    """The output tokens of a reply still streaming: the API's count once it sends one (the
    final one comes last), else the characters streamed so far over four."""
    return max(reported, math.ceil(streamed_chars / CHARS_PER_TOKEN))


class Budget:
    def __init__(self, used: Callable[[], Usage], lock: threading.Lock,
                 max_usd: float | None, max_tokens: int | None) -> None:
        self._used = used
        self._lock = lock
        self.max_usd = max_usd
        self.max_tokens = max_tokens
        # The team's budget (the lead's --max-budget-usd) and the other members' spend, as
        # read before the current model call (`read_team`): between chunks only ours moves.
        self.team_usd: float | None = None
        self.others_usd = 0.0

    def read_team(self, team: Team, me: str) -> None:
        """Before each model call: the team's cap and what the rest of the team has spent."""
        try:
            config = team.config()
        except (SwarmError, OSError):
            return  # a lost team file is the team-gone check's to handle: keep what we knew
        lead = config.member(LEAD_NAME)
        self.team_usd = lead.max_budget_usd if lead is not None else None
        if self.team_usd is None:
            return
        states = (read_state(team.name, m.name) for m in config.members if m.name != me)
        self.others_usd = sum(s.usage.cost_usd for s in states if s is not None)

    def check(self, pending: Usage | None = None) -> str | None:
        if self.max_usd is None and self.max_tokens is None and self.team_usd is None:
            return None
        with self._lock:
            spent = Usage()
            spent.add(self._used())
        if pending is not None:
            spent.add(pending)
        if self.max_usd is not None and spent.cost_usd >= self.max_usd:
            return (f"budget_exhausted: spent ${spent.cost_usd:.4f} of its"
                    f" --max-budget-usd ${self.max_usd:g}; it makes no more model calls")
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            return (f"budget_exhausted: used {spent.total_tokens} tokens of its --max-tokens"
                    f" {self.max_tokens}; it makes no more model calls")
        team = self.others_usd + spent.cost_usd
        if self.team_usd is not None and team >= self.team_usd:
            return (f"budget_exhausted: the team spent ${team:.4f} of the lead's"
                    f" --max-budget-usd ${self.team_usd:g}; it makes no more model calls")
        return None


def depth_refusal(depth: int, what: str) -> str | None:
    """One line when `what` would sit at `depth` in the delegation chain from the person
    (the lead 1, its teammate 2, that one's subagent 3) past SWARM_MAX_SUBAGENT_DEPTH."""
    cap = max_subagent_depth()
    if depth <= cap:
        return None
    return (f"{what} refused: it would be at delegation depth {depth}, past"
            f" SWARM_MAX_SUBAGENT_DEPTH={cap} (person -> lead -> teammate -> subagent is 3);"
            " do the work yourself")
