"""What one turn talks through, as small protocols and base classes with defaults.

- `LoopHooks`: observers of the turn (the pane, the state and usage, the transcript, the turn's
  record). Like openai-agents' `RunHooks`: every method has a default that does nothing, none
  decides anything, and a loop has any number of them.
- `TurnControl`: the turn's decisions, one owner (interrupts, limits, compaction, what arrives
  during the turn). The defaults: never interrupted, no limits, nothing arrives.
- `Permits`: "may this call run?", answered without side effects but asking (the permission
  policy, `swarm.runtime.permissions.policy`); `AllowAll` answers yes (a loop with no policy).
- `ToolHooks`: the user's PreToolUse and PostToolUse, one object for every host.

All are given at construction (`swarm.runtime.turn.builder`). What a tool asks of its agent is
`swarm.runtime.tools.base.ToolHost`; what the subagent runner asks of its parent,
`swarm.runtime.subagents.host.SubagentHost`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swarm.core.records.permissions import Decision

if TYPE_CHECKING:
    from swarm.core.records.state import Usage
    from swarm.runtime.models.base import ModelReply, ModelRequest
    from swarm.runtime.tools.base import Tool, ToolResult

T = TypeVar("T")
Block = dict[str, Any]


class LoopHooks:
    """An observer of the turn: subclass it and override what you watch."""

    def activity(self, what: str | None) -> None:
        """What the loop starts now: "thinking" (a model call) or a tool call's one line; None
        once it is over (the pane and the prompt show its elapsed time, `status --watch` too)."""

    def on_text(self, text: str) -> None:
        """A piece of the reply's text as the model streams it (what the pane shows live)."""

    def on_reply(self, reply: ModelReply) -> None:
        """After each model reply (usage, what the pane shows)."""

    def on_tool_start(self, tool: Tool, args: dict[str, Any]) -> None:
        """A tool call with a valid input, before anyone is asked about it."""

    def tool_output(self, text: str) -> None:
        """A piece of a running command's output as it comes (the pane shows it live)."""

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        """After each tool call, with the result the model sees (the user's PostToolUse ran)."""

    def record(self, message: dict[str, Any]) -> None:
        """A message entered the conversation (the transcript)."""

    def trace(self, line: str) -> None:
        """One line for the pane and the log."""


class Conversation(Protocol):
    """What a `before_call` step may change of the loop: its tools and system prompt (a mode
    changed), its conversation (compaction)."""

    tools: dict[str, Tool]
    system: str
    messages: list[Block]
    cache_marks: tuple[int, ...]

    def complete(self, request: ModelRequest) -> ModelReply:
        """A model call of the turn's own (a summary), guarded as the turn's calls are."""


class TurnControl:
    """The turn's decisions: whoever runs the loop (a teammate, the lead, a subagent) subclasses
    it. Passed to the `Loop` at construction, as its `control`."""

    def guard(self, call: Callable[[], T]) -> T:
        """Run a blocking call (a model request) so that an interrupt can abandon it."""
        return call()

    def before_call(self, conversation: Conversation) -> None:
        """Just before each model call (compaction; a prompt rebuilt)."""

    def retry_wait(self, problem: str, delay: float) -> None:
        """A model call failed (`problem`, one line) and will be retried after `delay` seconds:
        wait them. May raise a SwarmError to give the call up (a teammate asked to shut down)."""
        time.sleep(delay)

    def spend_limit(self, pending: Usage) -> str | None:
        """Between the streamed chunks of a model call, with its usage so far: one line to cut
        the reply off (a spending cap is reached), or None."""
        return None

    def stop_reason(self) -> str | None:
        """A reason to end the turn before the next model call (a limit, an approved shutdown)."""
        return None

    def before_tool(self, tool: Tool, args: dict[str, Any]) -> None:
        """Before a valid call is checked: what must hold for it (the lead's orders that arrived
        meanwhile apply to it); may raise to end the turn (an interrupt)."""

    def arrivals(self) -> tuple[list[Block], Callable[[], None]]:
        """Inputs that arrived during the turn, for the next model call (after the tool results),
        and what to call once they are in the conversation (mark them read)."""
        return [], _nothing


def _nothing() -> None:
    pass


class Permits(Protocol):
    """Who answers "may this call run?" (a permission policy). Asking has no other effect than
    the asking itself: the policy may ask the lead or the person and wait for the answer."""

    def check(self, tool: Tool, args: dict[str, Any], use_id: str,
              must_ask: str | None = None) -> Decision: ...


class AllowAll:
    """`Permits` for a loop with no permission policy (tests, scripts): every call may run."""

    def check(self, tool: Tool, args: dict[str, Any], use_id: str,
              must_ask: str | None = None) -> Decision:
        return Decision("allow", "no permission policy")


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
