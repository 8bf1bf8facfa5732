"""`SubagentHost`: what the subagent runner (`swarm.runtime.subagents.runner.Subagents`) asks of
the agent whose `Agent` tool it serves (a teammate, the lead). To host subagents, an agent gets
`Subagents(self)` in its tools' `ToolContext.subagents` (`builder.tool_context`), adds
`subagent_tools()` to its tools, hands `take_arrivals()` to its model at the next call (in
`arrivals()`) or as a new turn when idle (its waits watch `waker`), and calls `stop_all()` when
it exits."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

    from swarm.core.records.state import SubagentInfo, Usage
    from swarm.core.team.team import Team
    from swarm.core.trust.workspace import ProjectConfig
    from swarm.runtime.permissions.policy import PermissionPolicy
    from swarm.runtime.tools.base import Tool
    from swarm.runtime.turn.loop import Loop

T = TypeVar("T")


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
        """May its subagents have this tool? Only one the host has (no member grants more than
        it has): a subagent's tools are its type's that the host lends."""
