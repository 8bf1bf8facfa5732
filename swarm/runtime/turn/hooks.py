"""The interfaces the runtime's pieces talk through.

`LoopHooks`: what the agentic loop asks of whoever runs it (a teammate, the lead, a subagent): a
base class with defaults that do nothing. `ToolHooks`: the user's PreToolUse and PostToolUse,
one object for every host. `ToolHost`: what a tool may ask of the agent it runs in (typing
only). All are passed in at construction (`swarm.runtime.turn.builder`).
`SubagentHost`: what the subagent runner (`swarm.runtime.subagents.runner.Subagents`) asks of the agent
whose `Agent` tool it serves. To host subagents, an agent gets `Subagents(self)` in its tools'
`ToolContext.subagents` from `builder.build_agent`, adds `subagent_tools()` to its tools, hands
`take_arrivals()` to its model at the next call (in `arrivals()`) or as a new turn when idle
(its waits watch `waker`), and calls `stop_all()` when it exits.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swarm.core.shell.rules import Decision

if TYPE_CHECKING:
    from pathlib import Path

    from swarm.core.records.state import SubagentInfo, Usage
    from swarm.core.team.team import Team
    from swarm.core.trust.workspace import ProjectConfig
    from swarm.runtime.models.base import ModelReply
    from swarm.runtime.permissions.policy import PermissionPolicy
    from swarm.runtime.tools.builtin import Tool, ToolResult
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


class ToolHost(Protocol):
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        """The Bash child now running (None: finished), so an interrupt can kill its tree."""

    def structured_sent(self, message: Any) -> None:
        """A structured message this agent sent (an approved shutdown ends it)."""

    def pending_shutdown_id(self) -> str | None:
        """The request id of the shutdown request the agent is answering, if any."""

    def exit_plan(self, plan: str) -> str:
        """ExitPlanMode: submit `plan` for approval and return what the model is told."""


class SubagentHost(Protocol):
    """The agent subagents run in (a teammate, the lead). Called from subagent threads too."""

    team: Team
    name: str  # the host's member name: its subagents are `<name>.sub-<n>`
    cwd: Path  # a subagent works here (unless it gets a worktree)
    model_name: str  # what `inherit` means
    policy: PermissionPolicy  # a subagent's mode, rules, and (foreground only) its asker
    # A fork starts from `loop.last_request`; `loop.model` lends its HTTP client; a subagent's
    # calls get `loop.tool_hooks` (the user's PreToolUse and PostToolUse) as the host's own do.
    loop: Loop
    project: ProjectConfig  # the project configuration it trusts (definitions of subagent types)

    @property
    def environment(self) -> str:
        """Its system prompt's environment part: a subagent in its cwd reuses it."""

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        """Count a subagent's model call toward the host's usage and cost (turn=False)."""

    def interruptible(self, call: Callable[[], T]) -> T:
        """Run a blocking wait (a foreground subagent) that interrupting the host's turn ends."""

    def set_state(self, **fields: Any) -> None:
        """Record state (`subagents=[SubagentInfo...]` for `swarm status`)."""

    def trace(self, line: str) -> None:
        """One line for the host's pane and log."""

    def subagent_limit(self) -> str | None:
        """A reason every subagent must stop now (the host's budget is spent), or None."""

    def spend_limit(self, pending: Usage) -> str | None:
        """A subagent's call under way (`pending` so far) on top of the host's spend reaches
        the host's cap: the line that cuts it off, or None."""

    depth: int  # the host's delegation depth from the person (its subagents are one more)

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        """A subagent ended (completed, failed or stopped): the `SubagentStop` event."""

    def mcp_tools(self) -> dict[str, Tool]:
        """The host's MCP tools (`mcp__server__tool`): its subagents may use them too."""

    def lends(self, tool_name: str) -> bool:
        """May its subagents have this tool? Only one the host has (SPEC: no member grants
        more than it has): a subagent's tools are its type's that the host lends."""



class NoHost:
    """A `ToolHost` for tools run outside an agent (tests, scripts)."""

    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        pass

    def structured_sent(self, message: Any) -> None:
        pass

    def pending_shutdown_id(self) -> str | None:
        return None

    def exit_plan(self, plan: str) -> str:
        return "plan mode is not active"
