"""The team tools: SendMessage, the Task* tools, and ExitPlanMode (plan mode only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarm.core.records import base as records
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ShutdownResponse, structured_object, validate_structured
from swarm.core.team.state import looks_stopped, read_state
from swarm.core.text.readable import will_not_read
from swarm.errors import ToolError
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from swarm.runtime.tools.schema import NoInput
    from swarm.runtime.tools.team_tool_inputs import (
        ExitPlanModeInput,
        SendMessageInput,
        TaskCreateInput,
        TaskGetInput,
        TaskUpdateInput,
    )


class SendMessage(Tool):
    name = "SendMessage"
    description = (
        "Send a message to a teammate by name, to 'team-lead', or to '*' (everyone; plain text"
        " only). `message` is plain text (then `summary`, a 5-10 word preview, is required) or a"
        " structured protocol object such as {\"type\": \"shutdown_response\", \"request_id\":"
        " ..., \"approve\": true} (shutdown_response goes only to team-lead; a refusal needs a"
        " reason)."
    )
    input_ref = "swarm.runtime.tools.team_tool_inputs:SendMessageInput"

    def run(self, args: SendMessageInput, ctx: ToolContext) -> ToolResult:
        to, message = args.to, args.message
        if isinstance(message, str) and not message.strip():  # to a subagent too (Team.send: the rest)
            raise ToolError("the message is empty: there is nothing to send")
        if ctx.subagents is not None and ctx.subagents.owns(to.strip()):
            if not isinstance(message, str):  # continues (or reaches) one of our subagents
                raise ToolError("a subagent takes plain-text messages only")
            return ctx.subagents.message(to.strip(), message, args.summary or None)
        message = structured_object(message) or message  # JSON text of a protocol object too
        if isinstance(message, dict):
            if message.get("type") == "shutdown_response" and not message.get("request_id"):
                message = {**message, "request_id": ctx.host.pending_shutdown_id() or ""}
            structured = validate_structured(message)
            ctx.team.send(to, structured, sender=ctx.name)
            ctx.host.structured_sent(structured)
            verdict = ""
            if isinstance(structured, ShutdownResponse):
                verdict = " (approved: finishing)" if structured.approve else " (refused)"
            return ToolResult(f"sent {structured.type} to {to}{verdict}")
        summary = args.summary
        if not summary or not summary.strip():
            raise ToolError("summary is required for a plain-text message (a 5-10 word preview)")
        ids = ctx.team.send(to, message, sender=ctx.name, summary=summary)
        return ToolResult(f"sent to {to} ({len(ids)} recipient(s))" + _not_reading(ctx, to))

    def describe(self, args: dict[str, Any]) -> str:
        return f"SendMessage to {args.get('to')}"


def _not_reading(ctx: ToolContext, to: str) -> str:
    """A peer that exited or died will not read the message: say so (cheap: its state record
    and /proc). Waking it is the lead's (`swarm respawn`), so the teammate is not told to."""
    name = to.strip().lower()
    if name in ("*", LEAD_NAME) or not looks_stopped(ctx.team.name, name):
        return ""
    state = read_state(ctx.team.name, name)
    recorded = state is not None and state.state in ("exited", "dead")
    was = state.state if recorded and state is not None else "dead"
    detail = state.detail if recorded and state is not None else "its process is gone"
    return "\n" + will_not_read(name, was, detail, by_lead=False)


class TaskCreate(Tool):
    name = "TaskCreate"
    description = ("Add a task to the team's shared task list. `files`: globs its owner may"
                   " Write/Edit only inside (and others not) while it is in progress.")
    input_ref = "swarm.runtime.tools.team_tool_inputs:TaskCreateInput"

    def run(self, args: TaskCreateInput, ctx: ToolContext) -> ToolResult:
        task = ctx.team.tasks.add(args.subject, description=args.description or "",
                                  blocked_by=args.blocked_by or [], files=args.files or [],
                                  created_by=ctx.name)
        return ToolResult(f"created task #{task.id}: {task.subject}")


class TaskListTool(Tool):
    name = "TaskList"
    description = "List the team's tasks: id, status, owner, blockers, file scopes, subject."
    read_only = True

    def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        tasks = ctx.team.tasks.list()
        if not tasks:
            return ToolResult("(no tasks)")
        lines = []
        for t in tasks:
            blocked = f" blocked_by={','.join(t.blocked_by)}" if t.blocked_by else ""
            blocked += f" files={','.join(t.files)}" if t.files else ""
            lines.append(f"#{t.id} [{t.status}] owner={t.owner or '-'}{blocked} {t.subject}")
        return ToolResult("\n".join(lines))


class TaskGet(Tool):
    name = "TaskGet"
    description = "Show one task in full."
    input_ref = "swarm.runtime.tools.team_tool_inputs:TaskGetInput"
    read_only = True

    def run(self, args: TaskGetInput, ctx: ToolContext) -> ToolResult:
        return ToolResult(records.encode(ctx.team.tasks.get(args.task_id), indent=2).decode())


class TaskUpdate(Tool):
    name = "TaskUpdate"
    description = ("Update a task: status (pending|in_progress|completed|failed), owner, result,"
                   " subject, description, active_form. Mark your task completed when done, or"
                   " failed (with the reason as its result) when the work could not be done.")
    input_ref = "swarm.runtime.tools.team_tool_inputs:TaskUpdateInput"

    def run(self, args: TaskUpdateInput, ctx: ToolContext) -> ToolResult:
        fields = args.model_dump(include={"status", "result", "subject", "description",
                                          "active_form"}, exclude_none=True)
        if "owner" in args.model_fields_set:  # sent, even empty or null: the task is unowned
            fields["owner"] = args.owner or None
        task = ctx.team.tasks.update(args.task_id, actor=ctx.name, **fields)
        return ToolResult(f"task #{task.id} is {task.status} (owner {task.owner or '-'})")


class ExitPlanMode(Tool):
    name = "ExitPlanMode"
    description = "Submit your plan to the team lead for approval; wait for the answer."
    input_ref = "swarm.runtime.tools.team_tool_inputs:ExitPlanModeInput"
    read_only = True

    def run(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
        return ToolResult(ctx.host.exit_plan(args.plan))
