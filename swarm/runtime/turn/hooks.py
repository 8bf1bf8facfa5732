"""The hooks one turn talks through.

`LoopHooks`: what the agentic loop asks of whoever runs it (a teammate, the lead, a subagent): a
base class with defaults that do nothing. `ToolHooks`: the user's PreToolUse and PostToolUse,
one object for every host. Both are passed in at construction (`swarm.runtime.turn.builder`).
What a tool asks of its agent is `swarm.runtime.tools.base.ToolHost`; what the subagent runner
asks of its parent, `swarm.runtime.subagents.host.SubagentHost`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from swarm.core.records.permissions import Decision

if TYPE_CHECKING:
    from swarm.core.records.state import Usage
    from swarm.runtime.models.base import ModelReply
    from swarm.runtime.tools.base import Tool, ToolResult
    from swarm.runtime.turn.loop import Loop

T = TypeVar("T")
Block = dict[str, Any]


class LoopHooks:
    """What the agentic loop asks of whoever runs it (a teammate, the lead, a subagent, a test).
    Like openai-agents' `RunHooks`: subclass it and override what you need; every method has a
    default that does nothing (every call allowed, nothing recorded). Passed to the `Loop` at
    construction, as its `hooks`."""

    def permit(self, tool: Tool, args: dict[str, Any], use_id: str) -> Decision:
        """May this call run? (The permission policy; it may ask the lead and wait.)"""
        return Decision("allow", "no permission policy")

    def guard(self, call: Callable[[], T]) -> T:
        """Run a blocking call (a model request) so that an interrupt can abandon it."""
        return call()

    def before_call(self, loop: Loop) -> None:
        """Just before each model call (compaction)."""

    def on_text(self, text: str) -> None:
        """A piece of the reply's text as the model streams it (what the pane shows live)."""

    def retry_wait(self, problem: str, delay: float) -> None:
        """A model call failed (`problem`, one line) and will be retried after `delay` seconds:
        wait them. May raise a SwarmError to give the call up (a teammate asked to shut down)."""
        time.sleep(delay)

    def spend_limit(self, pending: Usage) -> str | None:
        """Between the streamed chunks of a model call, with its usage so far: one line to cut
        the reply off (a spending cap is reached), or None."""
        return None

    def on_reply(self, reply: ModelReply) -> None:
        """After each model reply (usage, what the pane shows)."""

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> ToolResult:
        """After each tool call (and the user's PostToolUse hooks); may replace the result the
        model sees."""
        return result

    def stop_reason(self) -> str | None:
        """A reason to end the turn before the next model call (a limit, an approved shutdown)."""
        return None

    def arrivals(self) -> tuple[list[Block], Callable[[], None]]:
        """Inputs that arrived during the turn, for the next model call (after the tool results),
        and what to call once they are in the conversation (mark them read)."""
        return [], _nothing

    def record(self, message: dict[str, Any]) -> None:
        """A message entered the conversation (the transcript)."""

    def trace(self, line: str) -> None:
        """One line for the pane and the log."""

    def activity(self, what: str | None) -> None:
        """What the loop starts now: "thinking" (a model call) or a tool call's one line; None
        once it is over (the pane and the prompt show its elapsed time, `status --watch` too)."""

    def tool_output(self, text: str) -> None:
        """A piece of a running command's output as it comes (the pane shows it live)."""


def _nothing() -> None:
    pass


class ToolHooks:
    """The user's hooks around a tool call, the same for every host (teammate, lead, subagent):
    `pre_tool_use` is asked by the permission policy (after its deny rules, before allow or
    ask), `post_tool_use` by the loop once a call has its result. Given at construction to both
    (`swarm.runtime.turn.builder`); a subagent gets its parent's. The defaults do nothing."""

    def pre_tool_use(self, tool: Tool, args: dict[str, Any]) -> Decision | None:
        """PreToolUse: a Decision blocks the call (None: go on)."""
        return None

    def post_tool_use(self, tool: Tool, args: dict[str, Any], result: ToolResult,
                      decision: Decision | None) -> ToolResult:
        """PostToolUse, for every call with a result: `decision` says whether it ran (allowed)
        or was refused (denied; None: its input was invalid, nobody was asked)."""
        return result
