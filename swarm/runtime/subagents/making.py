"""How the runner makes a subagent: a fork of its parent (the parent's last request byte for
byte, then the directive), or one of a type (its definition's prompt, tools, model, mode and
MCP servers, never more than its parent has)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.agents.definitions import get_definition
from swarm.core.agents.memory import memory_part, memory_tools, own_memory
from swarm.core.records.permissions import mode_at_most
from swarm.core.store import paths
from swarm.errors import NotFoundError, ToolError
from swarm.runtime.models import check_model_spec, load_model, provider_of
from swarm.runtime.subagents.tools import SubagentRequest, fork_tools, lent_tools, usable_tools
from swarm.runtime.teammate.prompts import (
    DEFAULT_BODY,
    environment,
    project_memory,
    subagent_part,
    system_prompt,
)
from swarm.runtime.tools.base import Tool
from swarm.runtime.turn.builder import LoopParts
from swarm.settings import mcp_timeout, mcp_tool_timeout

if TYPE_CHECKING:
    from swarm.runtime.extensions.mcp_client import McpManager
    from swarm.runtime.models.base import Model
    from swarm.runtime.subagents.runner import Subagents
    from swarm.runtime.subagents.subagent import Subagent


FORK_PLACEHOLDER = "Forked: a worker took this call over; its report arrives separately."
FORK_RULE = ("<fork-rule>You are a forked worker: a copy of the conversation above, started to do"
             " the directive below. Do it yourself, directly, with your own tools; do not fork or"
             " start subagents (the Agent tool refuses). When it is done, end your turn with a"
             " short report: it goes back to the agent you were forked from.</fork-rule>")


def fork(runner: Subagents, request: SubagentRequest) -> tuple[Subagent, list[dict[str, Any]]]:
    """The parent's last request byte for byte, its reply, a placeholder result for each
    of its tool calls, then the directive."""
    host = runner.host
    spec, model = _model(runner, request.model or "inherit")
    last = host.loop.last_request
    if last is None or not host.loop.messages or host.loop.messages[-1]["role"] != "assistant":
        raise ToolError("nothing to fork yet: give a subagent_type")
    agent_id, worktree, cwd, directive = runner.place(request, None)
    from swarm.runtime.subagents.subagent import SubagentParts

    reply = host.loop.messages[-1]
    tools = fork_tools(last.tools, runner.tools, runner.message_tool(agent_id),
                       host.mcp_tools(), host.lends)
    # Its parent's thinking configuration too: the same request fields, the same cached prefix.
    parts = LoopParts(model, tools, last.system, [*last.messages, reply],
                      cache_marks=(len(last.messages) - 1,) if last.messages else (),
                      effort=last.effort)
    content = [{"type": "tool_result", "tool_use_id": b["id"], "content": FORK_PLACEHOLDER}
               for b in reply["content"] if b.get("type") == "tool_use"]
    content.append({"type": "text", "text": f"{FORK_RULE}\n\n{directive}"})
    sub = runner.new(request, agent_id, spec, SubagentParts(
        info=runner.info_for(request, None, agent_id, worktree), cwd=cwd, worktree=worktree,
        policy=replace(host.policy, cwd=cwd), max_turns=None, loop=parts))
    return sub, content

def typed(runner: Subagents, request: SubagentRequest) -> tuple[Subagent, list[dict[str, Any]]]:
    """A subagent of a type: its definition's prompt, tools, model, mode and servers."""
    host = runner.host
    try:
        definition = get_definition(str(request.subagent_type), host.cwd,
                                    project=host.project,
                                    policy_dir=host.team.config().policy_dir)
    except NotFoundError as exc:
        raise ToolError(f"subagent_type: {exc}") from None
    spec, model = _model(runner, request.model or definition.model or "inherit")
    agent_id, worktree, cwd, directive = runner.place(request, definition)
    from swarm.runtime.subagents.subagent import SubagentParts

    stopped = threading.Event()  # AgentStop: ends an MCP call in flight
    mcp, own = _own_servers(runner, agent_id, definition, cwd, stopped)
    # Its type's tools AND its parent's: no member grants more than it has.
    tools, withheld = lent_tools(usable_tools(
        definition, runner.tools, runner.message_tool(agent_id), {**host.mcp_tools(), **own}),
        host.lends)
    if withheld and not set(tools) - {"SendMessage"}:  # a message to the parent is no work
        runner.release(agent_id, mcp, worktree)  # made for it: undone
        raise ToolError(f"subagent_type {definition.name!r} is refused: its tools"
                        f" ({', '.join(withheld)}) are all ones you do not have, and a"
                        " subagent gets only tools its parent has; do it yourself or pick"
                        " another type")
    # Its memory on and no Write/Edit: given them for its memory file alone, when its parent
    # has them to lend (no member grants more than it has).
    only = [t for t in memory_tools(definition, list(tools)) if host.lends(t)]
    tools.update({t: runner.tools[t] for t in only})
    part = subagent_part(agent_id, host.name, host.team.name, request.description,
                         "SendMessage" in tools, host.policy.mode, withheld)
    own_part = memory_part(definition, cwd, only)
    body = f"{(definition.prompt or DEFAULT_BODY).strip()}\n\n{own_part}" if own_part \
        else definition.prompt
    memory = "" if definition.omit_project_memory else project_memory(cwd)
    # Its own environment part when it works elsewhere or leaves out the git status.
    env = (host.environment if cwd == host.cwd and not definition.omit_git_status
           else environment(cwd, git=not definition.omit_git_status))
    system = system_prompt(body, memory, part, env)
    its_memory = own_memory(definition, cwd)  # its own memory file, never its parent's
    policy = replace(host.policy, cwd=cwd, own_files=(its_memory,) if its_memory else (),
                     own_only=frozenset(only))
    if definition.permission_mode:
        # Its definition's mode, but never more than the parent has (the mode cap).
        policy.mode = mode_at_most(definition.permission_mode, host.policy.mode)
    sub = runner.new(request, agent_id, spec, SubagentParts(
        info=runner.info_for(request, definition, agent_id, worktree), cwd=cwd,
        worktree=worktree, policy=policy, max_turns=definition.max_turns,
        loop=LoopParts(model, tools, system, effort=definition.effort or host.loop.effort),
        mcp=mcp, stopped=stopped, withheld=withheld,
        one_shot=definition.one_shot))
    return sub, [{"type": "text", "text": directive}]

def _model(runner: Subagents, wanted: str) -> tuple[str, Model]:
    """`inherit` keeps the parent's model (and so its provider); a bare id that is not
    Anthropic's stays on the parent's provider too."""
    host = runner.host
    spec = host.model_name if wanted.strip().lower() == "inherit" else check_model_spec(
        wanted, cwd=str(host.cwd), parent=provider_of(host.loop.model))
    return spec, load_model(spec, cwd=str(host.cwd), like=host.loop.model)

def _own_servers(runner: Subagents, agent_id: str, definition: AgentDefinition, cwd: Path,
                 stopped: threading.Event) -> tuple[McpManager | None, dict[str, Tool]]:
    """A definition's `mcpServers`, started for this subagent (and stopped when it ends)."""
    if not definition.mcp_servers:
        return None, {}
    from swarm.core.trust.mcp_config import load_mcp_config, resolve_servers  # pydantic

    config = load_mcp_config(cwd)
    servers, unknown = resolve_servers([], definition.mcp_servers, config,
                                       f"agent definition {definition.path}")
    for line in [*unknown, *(str(p) for p in config.problems)]:
        runner.host.trace(f"{agent_id}: warning: {line}")
    if not servers:
        return None, {}
    from swarm.runtime.extensions.mcp_client import McpManager, McpToolAdapter

    mcp = McpManager(servers, cwd=cwd, warn=runner.host.trace,
                     log_dir=paths.subagents_dir(runner.host.team.name, runner.host.name))
    mcp.start(mcp_timeout())
    return mcp, {t.qualified: McpToolAdapter(mcp, t, mcp_tool_timeout, stopped)
                 for t in mcp.tools()}
