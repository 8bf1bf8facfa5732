"""`PermissionPrompt`: what an agent CLI teammate (Claude Code's `--permission-prompt-tool`)
calls when it would ask a person. Served by `swarm mcp serve --as NAME` inside that member's
own `swarm agent` process: the call is checked as any teammate's (its mode, the rules, file
scopes) and, where that says ask, goes to the lead as a `permission_request` with the real
input (runtime.permissions.cli_calls, shared with Gemini CLI's driver). The answer is Claude
Code's: allow (with the input to run) or deny (with the reason its model sees).
"""

from __future__ import annotations

import json
from typing import Any

from swarm.runtime.permissions.cli_calls import check_cli_call
from swarm.runtime.tools.builtin import Tool, ToolContext, ToolResult
from swarm.runtime.tools.schema import ToolInput


class PermissionPromptInput(ToolInput):
    tool_name: str
    input: dict[str, Any] = {}
    tool_use_id: str | None = None


class PermissionPrompt(Tool):
    name = "PermissionPrompt"
    description = ("Asked by the agent CLI before a tool call its permission mode does not"
                   " allow: the team's rules decide, or the lead is asked.")
    input_model = PermissionPromptInput

    def run(self, args: PermissionPromptInput, ctx: ToolContext) -> ToolResult:
        if args.tool_name == "ExitPlanMode":  # never its own way out of plan mode
            return ToolResult(json.dumps({"behavior": "deny", "message": (
                "plan approval is not routed for agent CLI teammates yet: the lead sets your"
                " mode (swarm mode)")}))
        decision = check_cli_call(ctx.team.name, ctx.name, ctx.cwd, args.tool_name,
                                  args.input, args.tool_use_id or "")
        if decision.behavior == "allow":
            answer = {"behavior": "allow", "updatedInput": decision.updated_input or args.input}
        else:
            answer = {"behavior": "deny", "message": decision.reason}
        return ToolResult(json.dumps(answer))
