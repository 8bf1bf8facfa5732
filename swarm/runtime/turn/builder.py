"""One way to build an agent's runtime: its extensions (the user's hooks and MCP servers), its
permission policy, tools, subagent runner, tools' context and loop, for the teammate
(`runtime/teammate/agent.py`), the lead (`lead/process.py`) and a subagent (`runtime/subagents/`).

Every object is complete when it is made, never patched afterwards: the policy and the loop get
the user's `ToolHooks` (PreToolUse, PostToolUse) at construction, the tools' context its subagent
runner, the loop its `LoopHooks` (the host). A new host passes what differs (`AgentParts`,
`LoopParts`) and gets the same wiring; a new hook event is one method of `Extensions`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct, field

from swarm.core.records.names import agent_id
from swarm.runtime.extensions.loader import Extensions
from swarm.runtime.permissions.policy import Asks, PermissionPolicy
from swarm.runtime.subagents.host import SubagentHost
from swarm.runtime.tools.base import Tool, ToolContext, ToolHost
from swarm.runtime.turn.hooks import LoopHooks, ToolHooks
from swarm.runtime.turn.loop import Loop

if TYPE_CHECKING:
    from swarm.core.agents.agent_definition import AgentDefinition
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team
    from swarm.core.trust.workspace import ProjectConfig
    from swarm.runtime.models.base import Model
    from swarm.runtime.subagents.runner import Subagents


class AgentHost(ToolHost, SubagentHost, Protocol):
    """An agent process that runs a loop (a teammate, the lead): the `ToolHost` of its tools
    and the `SubagentHost` of its Agent tools."""


class LoopParts(Struct, dict=True):
    """What one loop starts with: its model, tools, system prompt and conversation."""

    model: Model
    tools: dict[str, Tool]
    system: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    cache_marks: tuple[int, ...] = ()  # a fork's parent prefix (ModelRequest.cache_marks)


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


class Runtime(Struct, dict=True):
    """An agent's runtime, as `build_agent` assembled it."""

    extensions: Extensions
    policy: PermissionPolicy
    tools: dict[str, Tool]  # every tool it has (the Task tools with their hooks)
    subagents: Subagents
    loop: Loop


def tool_env(team: str, name: str) -> dict[str, str]:
    """Who its commands and hooks say they are (a subagent's: its parent's)."""
    return {"SWARM_TEAM": team, "SWARM_AGENT_ID": agent_id(name, team)}


def build_loop(hooks: LoopHooks, ctx: ToolContext, parts: LoopParts,
               tool_hooks: ToolHooks) -> Loop:
    """The loop of any host: its hooks and the user's tool hooks given at construction."""
    return Loop(model=parts.model, tools=parts.tools, system=parts.system, ctx=ctx,
                hooks=hooks, tool_hooks=tool_hooks, messages=parts.messages,
                cache_marks=parts.cache_marks)


def build_agent(parts: AgentParts, hooks: LoopHooks, host: AgentHost) -> Runtime:
    """A teammate's or the lead's runtime. `hooks` and `host` are the agent itself (its loop's
    `LoopHooks`; its tools' and subagents' host), which calls this while it is being built:
    only its team, name and `track_process` are used now."""
    # The runner imports this module (a subagent's loop): imported here, not at the top.
    from swarm.runtime.subagents.runner import Subagents

    team, member = parts.team, parts.member
    extensions = Extensions.load(team, member, parts.definition, parts.cwd, parts.say,
                                 host.track_process, project=parts.project)
    policy = PermissionPolicy.for_member(team, member, parts.cwd, parts.asker, mode=parts.mode,
                                         tool_hooks=extensions)
    tools = extensions.wrap_task_tools(parts.loop.tools)
    subagents = Subagents(host)  # the Agent tools' runner (subagents are threads here)
    ctx = ToolContext(team=team, name=member.name, cwd=parts.cwd, host=host,
                      env=tool_env(team.name, member.name), subagents=subagents)
    loop = build_loop(hooks, ctx, LoopParts(parts.loop.model, dict(tools), parts.loop.system,
                                            parts.loop.messages), extensions)
    # Resumed after a crash mid-tool: answer the open calls, or the API rejects the history.
    loop.close_dangling(parts.dangling)
    return Runtime(extensions=extensions, policy=policy, tools=tools, subagents=subagents,
                   loop=loop)
