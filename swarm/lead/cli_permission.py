"""`PermissionPrompt`: what an agent CLI teammate (Claude Code's `--permission-prompt-tool`)
calls when it would ask a person. Served by `swarm mcp serve --as NAME` inside that member's
own `swarm agent` process: the call is checked as any teammate's (its mode, the rules, file
scopes) and, where that says ask, goes to the lead as a `permission_request` with the real
input, through the same Asker. The answer is Claude Code's: allow (with the input to run) or
deny (with the reason its model sees).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from swarm.core.store import paths
from swarm.core.store.select import open_mailbox
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.runtime.permissions.asking import Asker
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.builtin import Tool, ToolContext, ToolResult
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.tools.schema import ToolInput

log = logging.getLogger(__name__)
T = TypeVar("T")


class PermissionPromptInput(ToolInput):
    tool_name: str
    input: dict[str, Any] = {}
    tool_use_id: str | None = None


class _Other(Tool):
    """A CLI tool swarm has no twin of (WebFetch, NotebookEdit, ...): checked by its name."""

    input_ref = None

    def __init__(self, name: str) -> None:
        self.name = name


class _Waiter:
    """The asker's waiter here: the pane and the state are the teammate process's own."""

    def set_state(self, **fields: Any) -> None:
        pass  # the member's state.json is written by its `swarm agent` process only

    def interruptible(self, call: Callable[[], T]) -> T:
        return call()

    def show(self, *lines: str) -> None:
        for line in lines:
            log.info("%s", line)


class PermissionPrompt(Tool):
    name = "PermissionPrompt"
    description = ("Asked by the agent CLI before a tool call its permission mode does not"
                   " allow: the team's rules decide, or the lead is asked.")
    input_model = PermissionPromptInput

    def run(self, args: PermissionPromptInput, ctx: ToolContext) -> ToolResult:
        team = Team.open(ctx.team.name)
        member = team.member(ctx.name)
        state = read_state(team.name, member.name)
        mode = (state.mode if state is not None and state.mode else member.permission_mode)
        if args.tool_name == "ExitPlanMode":  # never its own way out of plan mode
            return ToolResult(json.dumps({"behavior": "deny", "message": (
                "plan approval is not routed for agent CLI teammates yet: the lead sets your"
                " mode (swarm mode)")}))
        served = args.tool_name.removeprefix("mcp__swarm__")  # its own team tools: swarm's
        tool = all_tools().get(served) or _Other(args.tool_name)
        asker = Asker(team, member.name, open_mailbox(team.name, member.name), _Waiter())
        policy = PermissionPolicy.for_member(team, member, ctx.cwd, asker, mode=mode)
        decision = policy.check(tool, args.input, args.tool_use_id or "")
        # Its transcript says what the CLI asked and what swarm answered (`swarm report`).
        Transcript(paths.agent_transcript(team.name, member.name)).event(
            "permission_prompt", tool=args.tool_name, decision=decision.behavior,
            reason=decision.reason)
        if decision.behavior == "allow":
            answer = {"behavior": "allow", "updatedInput": decision.updated_input or args.input}
        else:
            answer = {"behavior": "deny", "message": decision.reason}
        return ToolResult(json.dumps(answer))
