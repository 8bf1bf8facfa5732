"""`PermissionPrompt`: what an agent CLI teammate (Claude Code's `--permission-prompt-tool`)
calls when it would ask a person. Served by `swarm mcp serve --as NAME` inside that member's
own `swarm agent` process: the call is checked as any teammate's (its mode, the rules, file
scopes) and, where that says ask, goes to the lead as a `permission_request` with the real
input, through the same Asker. The answer is Claude Code's: allow (with the input to run) or
deny (with the reason its model sees).

Its ExitPlanMode (in plan mode) is swarm's plan approval: the plan goes to the lead as a
`plan_approval_request` and this call waits; approved, the answer is allow (Claude Code leaves its
plan mode as it runs the tool; the `swarm agent` process records the working mode and tells the
CLI, see runtime/clis/teammate.py); rejected, deny with the lead's feedback, and it plans on.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from swarm.core import paths
from swarm.core.mailbox import Mailbox
from swarm.core.state import read_state
from swarm.core.team import Team
from swarm.core.transcript import Transcript
from swarm.errors import OperationFailedError
from swarm.runtime.permissions.asking import Asker
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.builtin import Tool, ToolContext, ToolResult
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.tools.schema import ToolInput

log = logging.getLogger(__name__)
T = TypeVar("T")
PLAN_WAIT = 10.0  # seconds for the plan to reach the transcript from the CLI's stream


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

    def __init__(self) -> None:
        self.parent = os.getppid()  # the CLI that asked

    def set_state(self, **fields: Any) -> None:
        pass  # the member's state.json is written by its `swarm agent` process only

    def interruptible(self, call: Callable[[], T]) -> T:
        """A wait (a plan's has no timeout) ends with the CLI that asked: killed, it never
        closes this server's calls, and the request is withdrawn from the lead's list."""
        result = call()
        if os.getppid() != self.parent:
            raise OperationFailedError("the agent CLI that asked has exited")
        return result

    def show(self, *lines: str) -> None:
        for line in lines:
            log.info("%s", line)


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
        member = team.member(ctx.name)
        state = read_state(team.name, member.name)
        mode = (state.mode if state is not None and state.mode else
                "plan" if member.plan_mode_required else member.permission_mode)
        if mode != "plan":
            self.approved = None  # recorded (or the lead has set another mode since)
        elif self.approved is not None:
            mode = self.approved
        asker = Asker(team, member.name, Mailbox(team.name, member.name), _Waiter())
        policy = PermissionPolicy.for_member(team, member, ctx.cwd, asker, mode=mode)
        transcript = Transcript(paths.agent_transcript(team.name, member.name))
        if args.tool_name == "ExitPlanMode":
            answer, reason = self._exit_plan(policy, args.input, transcript)
            # `mode`: what the plan was approved into, for the member's own process to record.
            transcript.event("permission_prompt", tool=args.tool_name,
                             decision=answer["behavior"], reason=reason,
                             mode=self.approved if answer["behavior"] == "allow" else None)
            return ToolResult(json.dumps(answer))
        served = args.tool_name.removeprefix("mcp__swarm__")  # its own team tools: swarm's
        tool = all_tools().get(served) or _Other(args.tool_name)
        decision = policy.check(tool, args.input, args.tool_use_id or "")
        # Its transcript says what the CLI asked and what swarm answered (`swarm report`).
        transcript.event("permission_prompt", tool=args.tool_name, decision=decision.behavior,
                         reason=decision.reason)
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
