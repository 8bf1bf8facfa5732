"""One way to build an agent's turn: its extensions (the user's hooks and MCP servers), its
permission policy and tools (`equip`), the tools' context (`tool_context`) and its loop
(`build_loop`), for the teammate (`runtime/teammate/agent.py`), the lead (`lead/process.py`) and
a subagent (`runtime/subagents/`).

Every object is complete when it is made, never patched afterwards: the policy and the loop get
the user's `ToolHooks` (PreToolUse, PostToolUse) at construction, the tools' context its host
and subagent runner, the loop its `Permits` (the policy), its `TurnControl` and its observers.
An agent equips itself first, makes what asks the policy (its control, its tool host), then its
loop. A new host passes what differs (`AgentParts`, `LoopParts`) and gets the same wiring; a new
hook event is one method of `Extensions`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from swarm.core.records.names import agent_id
from swarm.runtime.extensions.loader import Extensions
from swarm.runtime.permissions.policy import Asks, PermissionPolicy
from swarm.runtime.tools.base import SubagentRunner, Tool, ToolContext, ToolHost
from swarm.runtime.turn.hooks import LoopHooks, Permits, ToolHooks, TurnControl
from swarm.runtime.turn.loop import Loop

if TYPE_CHECKING:
    from swarm.core.agents.agent_definition import AgentDefinition
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team
    from swarm.core.trust.workspace import ProjectConfig
    from swarm.runtime.models.base import Model


class LoopParts(Struct, dict=True):
    """What one loop starts with: its model, tools, system prompt and conversation."""

    model: Model
    tools: dict[str, Tool]
    system: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    cache_marks: tuple[int, ...] = ()  # a fork's parent prefix (ModelRequest.cache_marks)
    effort: str | None = None  # how hard it thinks (ModelRequest.effort)


class AgentParts(Struct, dict=True):
    """What differs between a teammate and the lead."""

    team: Team
    member: Member
    definition: AgentDefinition  # its hooks, MCP servers and disallowed tools
    cwd: Path
    project: ProjectConfig  # the project configuration it trusts
    say: Callable[[str], None]  # a warning line (a bad hook entry, an unknown server)
    asker: Asks | None  # who answers an "ask" (None: nobody, deny)
    mode: str | None  # the mode it starts in (None: its member entry's)
    loop: LoopParts
    dangling: str  # the answer to a tool call an earlier process left open


class Equipment(Struct, dict=True):
    """What an agent is equipped with before its loop is made."""

    extensions: Extensions  # the user's hooks (its ToolHooks) and MCP servers
    policy: PermissionPolicy
    tools: dict[str, Tool]  # every tool it has (the Task tools with their hooks)


def tool_env(team: str, name: str) -> dict[str, str]:
    """Who its commands and hooks say they are (a subagent's: its parent's)."""
    return {"SWARM_TEAM": team, "SWARM_AGENT_ID": agent_id(name, team)}


def equip(parts: AgentParts,
          track_process: Callable[[subprocess.Popen[bytes] | None], None]) -> Equipment:
    """A teammate's or the lead's extensions, policy and tools. `track_process`: where a hook's
    command is told (an interrupt kills it)."""
    team, member = parts.team, parts.member
    extensions = Extensions.load(team, member, parts.definition, parts.cwd, parts.say,
                                 track_process, project=parts.project)
    policy = PermissionPolicy.for_member(team, member, parts.cwd, parts.asker, mode=parts.mode,
                                         tool_hooks=extensions)
    return Equipment(extensions=extensions, policy=policy,
                     tools=extensions.wrap_task_tools(parts.loop.tools))


def tool_context(parts: AgentParts, host: ToolHost,
                 subagents: SubagentRunner | None) -> ToolContext:
    """The context of a teammate's or the lead's tools: its host and its subagent runner."""
    return ToolContext(team=parts.team, name=parts.member.name, cwd=parts.cwd, host=host,
                       env=tool_env(parts.team.name, parts.member.name), subagents=subagents)


def build_loop(parts: LoopParts, ctx: ToolContext, permits: Permits, control: TurnControl,
               hooks: tuple[LoopHooks, ...], tool_hooks: ToolHooks,
               dangling: str | None = None) -> Loop:
    """The loop of any host, with its policy, control, observers and the user's tool hooks.
    `dangling`: the answer to the tool calls an earlier process left open (resumed after a
    crash mid-tool: answered, or the API rejects the history)."""
    loop = Loop(model=parts.model, tools=parts.tools, system=parts.system, ctx=ctx,
                permits=permits, control=control, hooks=hooks, tool_hooks=tool_hooks,
                messages=parts.messages, cache_marks=parts.cache_marks, effort=parts.effort)
    if dangling is not None:
        loop.close_dangling(dangling)
    return loop
