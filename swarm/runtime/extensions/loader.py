"""What users plug into an agent: hooks (runtime/extensions/user_hooks.py) and MCP servers (runtime/extensions/mcp_client.py).

The agent owns one `Extensions`, built with it (`swarm.runtime.turn.builder`), and calls it at fixed
points. It is the `ToolHooks` of the agent's permission policy and loop, and of its subagents':
- `pre_tool_use` from the permission policy: PreToolUse, after the deny rules, before allow/ask;
- `post_tool_use` from the loop, for a call that ran: PostToolUse (exit 2 adds the hook's
  stderr to the result);
- the TaskCreate/TaskUpdate tools are wrapped: TaskCreated before a task is created (exit 2:
  not created), TaskCompleted before a task is marked completed (exit 2: it stays in progress and
  the stderr is the tool's error result);
- `follow_up` when a turn ends: a completion a hook refused is handed back (the feedback and the
  task again) instead of going idle; then TeammateIdle (exit 2: its stderr is the next input);
- `session_end` and `close` when the agent exits, however it exits (but SIGKILL: then the MCP
  guard stops the servers).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import escape
from swarm.core.records.state import SubagentInfo
from swarm.core.store import paths
from swarm.core.trust.child_env import minimal_env
from swarm.core.trust.workspace import ProjectConfig
from swarm.errors import SwarmError
from swarm.runtime.extensions.user_hooks import HookRunner, load_hooks, parse_hooks
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult
from swarm.runtime.turn.hooks import ToolHooks

if TYPE_CHECKING:
    import subprocess

    from swarm.core.agents.agent_definition import AgentDefinition
    from swarm.core.records.task import Task
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team
    from swarm.runtime.extensions.mcp_client import McpManager
    from swarm.runtime.tools.team_tool_inputs import TaskCreateInput, TaskUpdateInput

# Turns a hook may add after an input (a refused completion handed back, TeammateIdle's exit 2)
# before the agent goes idle anyway: a hook that always exits 2 must not spin it forever.
FOLLOW_UP_LIMIT = 10


def feedback_block(event: str, text: str) -> dict[str, Any]:
    return {"type": "text",
            "text": f'<hook-feedback event="{event}">\n{escape(text)}\n</hook-feedback>'}


def checkout_of(member: Member) -> Path | None:
    """For a teammate in a worktree: the same directory in the checkout it was made from, where
    project configuration that is not committed (.swarm/settings.json, .mcp.json, definitions)
    still is; it is used under the same trust as the rest (core/trust/workspace.py)."""
    if not (member.worktree_path and member.worktree_repo and member.cwd):
        return None
    try:
        inside = Path(member.cwd).relative_to(member.worktree_path)
    except ValueError:
        return None
    return Path(member.worktree_repo) / inside


class HookedTool(Tool):
    """A tool with a hook before it: a reason from `before` is the error result instead."""

    def __init__(self, inner: Tool, before: Callable[[Any, ToolContext], str | None]) -> None:
        self.inner, self.before = inner, before
        self.name, self.description = inner.name, inner.description
        self.read_only, self.edits_files = inner.read_only, inner.edits_files

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.inner.input_schema

    def parse(self, args: dict[str, Any], exact: bool = False) -> Any:
        return self.inner.parse(args, exact)

    def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        reason = self.before(args, ctx)
        if reason is not None:
            return ToolResult(reason, is_error=True)
        return self.inner.run(args, ctx)

    def describe(self, args: dict[str, Any]) -> str:
        return self.inner.describe(args)


@dataclass
class Extensions(ToolHooks):
    team: Team
    name: str
    hooks: HookRunner
    say: Callable[[str], None]
    mcp: McpManager | None = None
    disallowed: list[str] = field(default_factory=list)
    refused_completion: tuple[str, str] | None = None  # (task id, the hook's stderr)
    follow_ups: int = 0

    @classmethod
    def load(cls, team: Team, member: Member, definition: AgentDefinition, cwd: Path,
             say: Callable[[str], None],
             track_process: Callable[[subprocess.Popen[bytes] | None], None], *,
             project: ProjectConfig) -> Extensions:
        """Read hook settings and MCP config (the project's only when `project` is the trusted
        configuration); bad entries are one warning each, never fatal. Hooks and servers get
        a minimal environment plus what their entry's `env` names (core/trust/child_env.py)."""
        hooks, problems = load_hooks(cwd, project=project)
        if definition.hooks:  # the definition's own hooks, for this agent only
            own, own_problems = parse_hooks({"hooks": definition.hooks}, definition.path)
            hooks, problems = [*hooks, *own], [*problems, *own_problems]
        for problem in problems:
            say(f"warning: {problem} (skipped)")
        ids = {"SWARM_TEAM": team.name, "SWARM_AGENT_ID": member.agent_id}
        base_env = minimal_env(os.environ, str(cwd), ids)
        runner = HookRunner(hooks, team=team.name, agent_id=member.agent_id, cwd=cwd,
                            env=base_env, warn=say, on_process=track_process)
        extensions = cls(team=team, name=member.name, hooks=runner, say=say,
                         disallowed=list(definition.disallowed_tools))
        if member.mcp_servers or definition.mcp_servers:
            from swarm.core.trust.mcp_config import load_mcp_config, resolve_servers  # pydantic

            config = load_mcp_config(cwd, project=project)
            for problem in config.problems:
                say(f"warning: {problem} (skipped)")
            servers, unknown = resolve_servers(member.mcp_servers, definition.mcp_servers,
                                               config, f"agent definition {definition.path}")
            for line in unknown:
                say(f"warning: {line}")
            if servers:
                # Only an agent with servers pays for the MCP layer (asyncio, ssl: ~25 ms).
                from swarm.runtime.extensions.mcp_client import McpManager

                extensions.mcp = McpManager(servers, cwd=cwd, warn=say, base_env=base_env,
                                            log_dir=paths.agent_dir(team.name, member.name))
        return extensions

    # -- MCP -----------------------------------------------------------------------------------
    def start_mcp(self, abort: threading.Event) -> dict[str, Tool]:
        """Start the servers (bounded by SWARM_MCP_TIMEOUT); their tools, minus disallowed."""
        if self.mcp is None:
            return {}
        from swarm.runtime.extensions.mcp_client import McpToolAdapter

        self.mcp.start(settings.mcp_timeout())
        tools: dict[str, Tool] = {}
        for tool in self.mcp.tools():
            if tool.qualified in self.disallowed or f"mcp__{tool.server}" in self.disallowed:
                continue
            tools[tool.qualified] = McpToolAdapter(self.mcp, tool, settings.mcp_tool_timeout,
                                                   abort)
        if tools:
            self.say(f"MCP tools: {', '.join(tools)}")
        return tools

    def close(self) -> None:
        if self.mcp is not None:
            self.mcp.close()

    # -- tool hooks ----------------------------------------------------------------------------
    def pre_tool_use(self, tool: Tool, args: dict[str, Any]) -> Decision | None:
        """PreToolUse: exit 2 denies the call with the hook's stderr as the reason."""
        result = self.hooks.run("PreToolUse", tool.name, tool_input=args)
        if result.blocked:
            return Decision("deny", f"blocked by a PreToolUse hook: {result.reason}")
        return None

    def post_tool_use(self, tool: Tool, args: dict[str, Any], result: ToolResult,
                      decision: Decision | None) -> ToolResult:
        """PostToolUse, for calls that ran (the host's or a subagent's: any thread): the hook
        gets the result; exit 2 adds its stderr."""
        if decision is None or decision.behavior != "allow":
            return result
        outcome = self.hooks.run("PostToolUse", tool.name, tool_input=args,
                                 tool_result={"content": result.content,
                                              "is_error": result.is_error})
        if outcome.blocked:
            return ToolResult(f"{result.content}\n[PostToolUse hook: {outcome.reason}]",
                              result.is_error)
        return result

    # -- task hooks ----------------------------------------------------------------------------
    def wrap_task_tools(self, tools: dict[str, Tool]) -> dict[str, Tool]:
        out = dict(tools)
        if "TaskCreate" in out and self.hooks.has("TaskCreated"):
            out["TaskCreate"] = HookedTool(out["TaskCreate"], self._before_create)
        if "TaskUpdate" in out:
            out["TaskUpdate"] = HookedTool(out["TaskUpdate"], self._before_update)
        return out

    def _before_create(self, args: TaskCreateInput, ctx: ToolContext) -> str | None:
        proposed = {"id": None, "subject": args.subject, "description": args.description or "",
                    "blocked_by": args.blocked_by or [], "status": "pending",
                    "created_by": self.name}
        result = self.hooks.run("TaskCreated", task=proposed)
        if result.blocked:
            return f"task not created: a TaskCreated hook refused it: {result.reason}"
        return None

    def _before_update(self, args: TaskUpdateInput, ctx: ToolContext) -> str | None:
        if args.status != "completed" or not self.hooks.has("TaskCompleted"):
            return None
        try:
            task = self.team.tasks.get(args.task_id)
        except SwarmError:
            return None  # the tool itself says what is wrong
        if task.status == "completed":
            return None
        proposed = records.to_dict(task)
        proposed.update(args.model_dump(include={"status", "result", "subject", "description"},
                                        exclude_none=True))
        result = self.hooks.run("TaskCompleted", task=proposed)
        if not result.blocked:
            if self.refused_completion and self.refused_completion[0] == task.id:
                self.refused_completion = None
            return None
        self.refused_completion = (task.id, result.reason)
        return (f"task #{task.id} was NOT completed: a TaskCompleted hook refused it; it stays "
                f"in progress. Fix this, then mark it completed again:\n{result.reason}")

    # -- end of a turn -------------------------------------------------------------------------
    def new_input(self) -> None:
        """A new input (message or task) arrived: hooks may add turns after it again."""
        self.follow_ups = 0

    def follow_up(self, reason: str, last_text: str, can_continue: bool,
                  render_task: Callable[[Task], list[dict[str, Any]]]
                  ) -> list[dict[str, Any]] | None:
        """What the agent does next instead of going idle, or None (go idle)."""
        if can_continue and self.follow_ups >= FOLLOW_UP_LIMIT:
            self.say(f"warning: hooks kept this teammate busy for {FOLLOW_UP_LIMIT} more turns;"
                     " going idle")
            can_continue = False
        refused, self.refused_completion = self.refused_completion, None
        if refused is not None and can_continue:
            task = self._own_task(refused[0])
            if task is not None and task.status == "in_progress":
                self.follow_ups += 1
                return [feedback_block("TaskCompleted", refused[1]), *render_task(task)]
        result = self.hooks.run("TeammateIdle", last_summary=last_text[:2000], idle_reason=reason)
        if result.blocked and can_continue:
            self.follow_ups += 1
            return [feedback_block("TeammateIdle", result.reason)]
        return None

    def _own_task(self, task_id: str) -> Task | None:
        try:
            task = self.team.tasks.get(task_id)
        except SwarmError:
            return None
        return task if task.owner == self.name else None

    def subagent_stop(self, info: SubagentInfo, final_text: str) -> None:
        """A subagent ended: informational (its result is already decided), so exit 2 only
        warns like any other failure."""
        self.hooks.run("SubagentStop", subagent_id=info.agent_id,
                       subagent_type=info.subagent_type, description=info.description,
                       status=info.status, last_summary=final_text[:2000])

    def session_end(self, detail: str) -> None:
        self.hooks.run("SessionEnd", reason=detail)
