"""What the lead's loop asks of it, each answered by a small object the Lead owns:
`LeadControl` (the turn's decisions: an interrupt from the terminal or a signal, the team's
budget, compaction, what arrived during the turn: teammates' news, the person's lines, its
subagents' ends), `TeamBudget` (the lead's `--max-budget-usd`) and `LeadView` (the turn shown
on the terminal or the CI log). Its tools' host is the Lead itself (lead.lead_tools.LeadHost:
they spawn, steer and end its team).

Its turns run in one thread while the terminal (or a signal handler) may interrupt them from
another, so a model call runs in a helper thread the turn can abandon (`guard`), and every
other step polls the interrupt."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from swarm.core.records.state import Usage
from swarm.core.team.team import Team
from swarm.errors import TurnInterrupted
from swarm.lead.wake_policy import Watch
from swarm.ops.member.health import observe
from swarm.runtime.teammate.base import StateKeeper
from swarm.runtime.tools.base import Tool
from swarm.runtime.turn.compaction import Compactor
from swarm.runtime.turn.hooks import Block, Conversation, LoopHooks, TurnControl

if TYPE_CHECKING:
    from swarm.lead.process import LeadUI
    from swarm.runtime.models.base import ModelReply
    from swarm.runtime.subagents.runner import Subagents

T = TypeVar("T")


class TeamBudget:
    """The team's budget (the lead's `--max-budget-usd`): the members' spend when the current
    model call began, the lead's own now, plus the call under way."""

    def __init__(self, team: Team, keeper: StateKeeper, max_usd: float | None) -> None:
        self.team, self.keeper, self.max_usd = team, keeper, max_usd
        self.others = 0.0  # the teammates' spend when the current model call began

    def team_cost(self) -> float:
        return self.keeper.state.usage.cost_usd + sum(s.cost_usd for s in observe(self.team))

    def over(self) -> bool:
        return self.max_usd is not None and self.team_cost() >= self.max_usd

    def read_others(self) -> None:
        """The others' spend, read once a model call (none without a budget)."""
        if self.max_usd is not None:
            self.others = self.team_cost() - self.keeper.state.usage.cost_usd

    def spend_limit(self, pending: Usage) -> str | None:
        spent = self.others + self.keeper.state.usage.cost_usd + pending.cost_usd
        if self.max_usd is None or spent < self.max_usd:
            return None
        return (f"budget_exhausted: the team spent ${spent:.4f} of the lead's --max-budget-usd"
                f" ${self.max_usd:g}; the lead makes no more model calls")


class LeadControl(TurnControl):
    def __init__(self, interrupt: threading.Event, budget: TeamBudget, compactor: Compactor,
                 watch: Watch, person: queue.Queue[str], subagents: Subagents) -> None:
        self.interrupt, self.budget, self.compactor = interrupt, budget, compactor
        self.watch, self.person, self.subagents = watch, person, subagents

    def check_interrupt(self) -> None:
        if self.interrupt.is_set():
            raise TurnInterrupted()

    def guard(self, call: Callable[[], T]) -> T:
        """Run `call` (a model request) in a helper thread; an interrupt abandons it."""
        self.check_interrupt()
        box: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                box.append((True, call()))
            except BaseException as exc:  # handed to the turn's thread below
                box.append((False, exc))
            finally:
                done.set()

        threading.Thread(target=run, name="model-call", daemon=True).start()
        while not done.wait(0.05):
            self.check_interrupt()  # the helper finishes on its own; its reply is dropped
        ok, value = box[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def before_call(self, conversation: Conversation) -> None:
        self.compactor(conversation)
        self.budget.read_others()

    def spend_limit(self, pending: Usage) -> str | None:
        return self.budget.spend_limit(pending)

    def stop_reason(self) -> str | None:
        self.check_interrupt()
        return "budget_exhausted" if self.budget.over() else None

    def before_tool(self, tool: Tool, args: dict[str, Any]) -> None:
        self.check_interrupt()

    def arrivals(self) -> tuple[list[Block], Callable[[], None]]:
        wake = self.watch.arrivals()
        blocks = list(wake.blocks) if wake else []
        while True:
            try:
                blocks.append({"type": "text", "text": self.person.get_nowait()})
            except queue.Empty:
                break
        blocks += self.subagents.take_arrivals()
        return blocks, (wake.done if wake else lambda: None)


class LeadView(LoopHooks):
    """The lead's turn on its terminal (interactive) or the CI log (headless)."""

    def __init__(self, ui: LeadUI) -> None:
        self.ui = ui

    def on_reply(self, reply: ModelReply) -> None:
        text = reply.text().strip()
        if text:
            self.ui.lead_text(text)

    def trace(self, line: str) -> None:
        self.ui.tool_line(line)

