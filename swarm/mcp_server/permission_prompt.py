"""`PermissionPrompt`: what an agent CLI teammate (Claude Code's `--permission-prompt-tool`)
calls when it would ask a person. Served by `swarm mcp serve --as NAME` inside that member's
own `swarm agent` process: decided by `runtime.clis.permission.decide`, as Codex's approval
requests are (its mode, the rules, file scopes; where that says ask, the lead is asked with the
real input). The answer is Claude Code's: allow (with the input to run) or
deny (with the reason its model sees).

Its ExitPlanMode (in plan mode) is swarm's plan approval: the plan goes to the lead as a
`plan_approval_request` and this call waits; approved, the answer is allow (Claude Code leaves its
plan mode as it runs the tool; the `swarm agent` process records the working mode and tells the
CLI, see runtime/teammate/cli_teammate.py); rejected, deny with the lead's feedback, and it plans on.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.runtime.clis.permission import current_mode, decide, member_policy
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult
from swarm.runtime.tools.schema import ToolInput

PLAN_WAIT = 10.0  # seconds for the plan to reach the transcript from the CLI's stream


class PermissionPromptInput(ToolInput):
    tool_name: str
    input: dict[str, Any] = {}
    tool_use_id: str | None = None


class PermissionPrompt(Tool):
    name = "PermissionPrompt"
    description = ("Asked by the agent CLI before a tool call its permission mode does not"
                   " allow: the team's rules decide, or the lead is asked.")
    input_model = PermissionPromptInput

    def __init__(self) -> None:
        # The mode a plan was just approved into, until the member's state says so (its
        # `swarm agent` records it once the CLI reports ExitPlanMode's result): the calls
        # between are already past plan mode.
        self.approved: str | None = None

    def run(self, args: PermissionPromptInput, ctx: ToolContext) -> ToolResult:
        team = Team.open(ctx.team.name)
        mode = current_mode(team, ctx.name)
        # A wait on the lead ends when the CLI that asked is gone (the host says how to tell).
        probe = getattr(ctx.host, "client_probe", None)
        present = probe() if probe is not None else None
        if mode != "plan":
            self.approved = None  # recorded (or the lead has set another mode since)
        elif self.approved is not None:
            mode = self.approved
        if args.tool_name == "ExitPlanMode":
            policy = member_policy(team, ctx.name, ctx.cwd, mode, present=present)
            transcript = Transcript(paths.agent_transcript(team.name, ctx.name))
            answer, reason = self._exit_plan(policy, args.input, transcript)
            # `mode`: what the plan was approved into, for the member's own process to record.
            transcript.event("permission_prompt", tool=args.tool_name,
                             decision=answer["behavior"], reason=reason,
                             mode=self.approved if answer["behavior"] == "allow" else None)
            return ToolResult(json.dumps(answer))
        decision = decide(team.name, ctx.name, ctx.cwd, args.tool_name, args.input,
                          args.tool_use_id or "", mode=mode, present=present)
        if decision.behavior == "allow":
            answer = {"behavior": "allow", "updatedInput": decision.updated_input or args.input}
        else:
            answer = {"behavior": "deny", "message": decision.reason}
        return ToolResult(json.dumps(answer))

    def _exit_plan(self, policy: PermissionPolicy, given: dict[str, Any],
                   transcript: Transcript) -> tuple[dict[str, Any], str]:
        """The plan to the lead and the verdict back: (Claude Code's answer, why)."""
        plan = plan_text(given) or streamed_plan(transcript)
        text, changed = policy.exit_plan(plan)  # the lead's answer, as swarm's teammates get it
        if not changed:  # rejected (the feedback is in `text`), not in plan mode, or a shutdown
            return {"behavior": "deny", "message": text}, text
        self.approved = policy.mode
        note = text.partition(" Lead's note: ")[2]
        # Claude Code needs the plan in its input (it echoes it back as the approved plan).
        updated = {**given, "plan": plan + (f"\n\nLead's note: {note}" if note else "")}
        return {"behavior": "allow", "updatedInput": updated}, text


def plan_text(given: dict[str, Any]) -> str:
    """The plan in an ExitPlanMode call's input: its `plan`, else the plan file it names."""
    plan = given.get("plan")
    if isinstance(plan, str) and plan.strip():
        return plan
    path = given.get("planFilePath")
    if isinstance(path, str) and path:
        with contextlib.suppress(OSError):
            return Path(path).expanduser().read_text(errors="replace")
    return ""


def streamed_plan(transcript: Transcript, wait: float = PLAN_WAIT) -> str:
    """Claude Code asks without the plan (measured: an empty input): the plan is the call's
    input in its stream, which the member's `swarm agent` process writes into the transcript
    (`cli_tool_use`) as it reads it, about when this call comes: the newest ExitPlanMode there
    since the last one answered, waited for a moment."""
    deadline = time.monotonic() + wait
    while True:
        entries = transcript.entries()
        answered = max((str(e.get("ts")) for e in entries if e.get("event") == "permission_prompt"
                        and e.get("tool") == "ExitPlanMode"), default="")
        uses = [e for e in entries if e.get("event") == "cli_tool_use"
                and e.get("tool") == "ExitPlanMode" and str(e.get("ts")) >= answered]
        if uses:
            return plan_text(uses[-1].get("input") or {}) or "(no plan was given)"
        if time.monotonic() >= deadline:
            return "(the plan did not reach swarm)"
        time.sleep(0.05)  # the other process's write: a file with no watcher of its own
