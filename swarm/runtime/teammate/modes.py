"""A teammate's permission mode as the lead sets it (a signed `mode_change` order, or a plan it
approves through ExitPlanMode), and what depends on the mode: the tool set (ExitPlanMode only in
plan mode) and the system prompt, brought up to date before the next model call (`apply`; the
prompt is rebuilt too when the team or the day changed)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, ModeChange
from swarm.core.team import decisions
from swarm.core.team.transcript import Transcript
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.teammate.base import StateKeeper
from swarm.runtime.teammate.prompts import TeammatePrompt
from swarm.runtime.tools.base import Tool
from swarm.runtime.turn.hooks import Conversation

log = logging.getLogger(__name__)


class Modes:
    def __init__(self, policy: PermissionPolicy, prompt: TeammatePrompt,
                 tools: dict[str, Tool], keeper: StateKeeper, transcript: Transcript,
                 say: Callable[[str], None]) -> None:
        self.policy, self.prompt, self.keeper = policy, prompt, keeper
        self.transcript, self.say = transcript, say
        self.all_tools = tools  # every tool it has; MCP tools join once their servers start
        self._changed = False

    def tools(self) -> dict[str, Tool]:
        """Its tools in the current mode."""
        return {k: v for k, v in self.all_tools.items()
                if k != "ExitPlanMode" or self.policy.mode == "plan"}

    def system(self) -> str:
        return self.prompt.build(self.policy.mode)

    def apply(self, loop: Conversation) -> None:
        """Before a model call: the tools and the prompt of the mode it is in now."""
        if self._changed or self.prompt.stale():
            self._changed = False
            loop.tools, loop.system = self.tools(), self.system()

    def add_tools(self, tools: dict[str, Tool]) -> None:
        """Tools that came later (its MCP servers'): offered from the next model call."""
        self.all_tools.update(tools)
        self._changed = True

    def change(self, change: ModeChange, order: Message) -> None:
        """The lead set the mode (a `mode_change` in `order`): from the next tool call on. An
        order not newer than the last one obeyed is a replay: ignored."""
        newest = self.keeper.state.mode_order
        if newest is not None and (order.timestamp, order.id) <= _order_key(newest):
            log.warning("mode_change %s ignored: not newer than the last one obeyed", order.id)
            return  # an older order arriving late, or a signed one copied back in: a replay
        if change.mode == "auto":  # set again: its reviewer's denial counts start anew
            decisions.resume_auto(self.policy.team.name, self.policy.member.name)
        if change.mode == self.policy.mode:
            self.keeper.set(mode_order=f"{order.timestamp} {order.id}")
            return
        was, self.policy.mode = self.policy.mode, change.mode
        if change.mode != "plan":
            self.policy.working_mode = change.mode  # where an approved plan would lead anyway
        self._changed = True
        self.keeper.set(mode=change.mode, mode_order=f"{order.timestamp} {order.id}")
        self.transcript.event("mode_changed", mode=change.mode, previous=was)
        why = f": {change.reason}" if change.reason else ""
        self.say(f"mode: {was} -> {change.mode} (set by {LEAD_NAME}){why}")

    def exit_plan(self, plan: str) -> str:
        """ExitPlanMode: the plan submitted to the lead; on approval, its working mode."""
        text, changed = self.policy.exit_plan(plan)
        if changed:
            self._changed = True
            self.keeper.set(mode=self.policy.mode)
        return text


def _order_key(recorded: str) -> tuple[str, str]:
    timestamp, _, message_id = recorded.partition(" ")
    return timestamp, message_id
