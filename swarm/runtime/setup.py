"""Wire a teammate together: member entry + agent definition + model + tools + permission hook."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core import rules as permissions
from swarm.core.definitions import AgentDefinition, effective_tools, get_definition
from swarm.core.names import LEAD_NAME, TEAM_TOOLS
from swarm.core.protocol import PlanApprovalResponse
from swarm.core.state import Usage
from swarm.core.team import Member
from swarm.runtime.asking import ask_lead, submit_plan
from swarm.runtime.compaction import Compactor
from swarm.runtime.console import brief
from swarm.runtime.loop import Loop
from swarm.runtime.models import default_model_spec, load_model
from swarm.runtime.prompts import system_prompt
from swarm.runtime.team_tools import all_tools
from swarm.runtime.tools import Tool, ToolContext

if TYPE_CHECKING:
    from swarm.runtime.agent import Agent


@dataclass
class Setup:
    agent: Agent
    member: Member
    definition: AgentDefinition
    cwd: Path
    mode: str
    working_mode: str  # the mode a plan-mode agent switches to once its plan is approved
    model_name: str
    loop: Loop
    base_tools: dict[str, Tool]

    def tools_for_mode(self) -> dict[str, Tool]:
        if self.mode == "plan":
            return self.base_tools
        return {k: v for k, v in self.base_tools.items() if k != "ExitPlanMode"}

    def refresh(self) -> None:
        """Rebuild what depends on the mode: the tool set and the system prompt."""
        self.loop.tools = self.tools_for_mode()
        self.loop.system = build_prompt(self.agent, self.member, self.definition, self.mode)

    def apply_plan_response(self, response: PlanApprovalResponse) -> None:
        if response.approve and self.mode == "plan":
            wanted = response.permission_mode or self.working_mode
            if wanted == "bypassPermissions" or wanted == "plan":
                wanted = "acceptEdits"  # never bypass for a plan-mode-required agent
            self.mode = wanted
            self.refresh()

    def permit(self, tool: Tool, args: dict[str, Any], use_id: str) -> permissions.Decision:
        config = self.agent.team.config()
        decision = permissions.check(
            tool.name, args, mode=self.mode, read_only=tool.read_only,
            edits_files=tool.edits_files, cwd=self.cwd,
            allow=[*self.member.allow_rules, *config.allowed_rules],
            deny=self.member.deny_rules,
        )
        if decision.behavior == "ask":
            return ask_lead(self.agent, tool, args, use_id, decision)
        return decision

    def stop_reason(self) -> str | None:
        state = self.agent.state
        if self.agent.shutdown_approved:
            return "available"
        max_turns = self.member.max_turns or self.definition.max_turns
        if max_turns is not None and state.turns >= max_turns:
            return "max_turns"
        budget = self.member.max_budget_usd
        if budget is not None and state.usage.cost_usd >= budget:
            return "budget_exhausted"
        return None


def _compacted(agent: Agent, summary: str, kept: list[dict[str, Any]]) -> None:
    agent.transcript.compaction(summary, kept)
    agent.console.say(f"compacted the conversation ({len(summary)} characters of summary)")


def build_prompt(agent: Agent, member: Member, definition: AgentDefinition, mode: str) -> str:
    config = agent.team.config()
    peers = [m.name for m in config.members if m.name not in (member.name, LEAD_NAME)]
    return system_prompt(definition.prompt, member.name, config.name, config.lead_agent_id, peers, mode)


def build(agent: Agent) -> Setup:
    member = agent.team.member(agent.name)
    cwd = Path(member.cwd or os.getcwd())
    definition = get_definition(member.agent_type, cwd)
    mode = "plan" if member.plan_mode_required else member.permission_mode
    working = member.permission_mode if member.permission_mode != "plan" else "acceptEdits"
    spec = member.model or definition.model or default_model_spec()[0]
    model = load_model(spec, cwd=str(cwd))
    every = all_tools()
    names = effective_tools(definition, list(every), TEAM_TOOLS)
    base = {n: every[n] for n in names if n in every}
    if member.plan_mode_required:
        base["ExitPlanMode"] = every["ExitPlanMode"]
    ctx = ToolContext(
        team=agent.team, name=agent.name, cwd=cwd,
        env={"SWARM_TEAM": agent.team.name, "SWARM_AGENT_ID": member.agent_id},
        on_process=agent.track_process,
        on_structured_sent=agent.on_structured_sent,
        pending_shutdown_id=lambda: agent.pending_shutdown.request_id
        if agent.pending_shutdown else None,
    )
    loop = Loop(model=model, tools={}, system="", ctx=ctx,
                messages=agent.transcript.conversation(),
                record=agent.transcript.message)
    # Resumed after a crash mid-tool: answer the open calls, or the API rejects the history.
    loop.close_dangling("not finished: the teammate process died and was restarted")
    setup = Setup(agent=agent, member=member, definition=definition, cwd=cwd, mode=mode,
                  working_mode=working, model_name=spec, loop=loop, base_tools=base)
    ctx.on_exit_plan = lambda plan: submit_plan(agent, plan)
    loop.permit = setup.permit
    loop.stop_reason = setup.stop_reason
    compactor = Compactor(on_compacted=lambda summary, kept: _compacted(agent, summary, kept),
                          on_usage=lambda usage: agent.add_usage(usage, turn=False))

    def on_usage(usage: Usage) -> None:
        compactor.last_input_tokens = (usage.input_tokens + usage.cache_read_input_tokens
                                       + usage.cache_creation_input_tokens)
        agent.add_usage(usage)

    loop.on_usage = on_usage
    loop.before_call = compactor
    loop.guard = agent.interruptible
    loop.trace = lambda line: agent.console.say(brief(line, 160))
    setup.refresh()
    return setup
