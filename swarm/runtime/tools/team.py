"""The team tools: SendMessage, the Task* tools, and ExitPlanMode (plan mode only)."""

from __future__ import annotations

from typing import Any

from swarm.core.protocol import ShutdownResponse, structured_object, validate_structured
from swarm.core.tasks import STATUSES
from swarm.errors import SwarmError, ToolError
from swarm.runtime.subagents.tools import subagent_tools
from swarm.runtime.tools.builtin import (
    Bash,
    Edit,
    Glob,
    Grep,
    Read,
    Tool,
    ToolContext,
    ToolResult,
    Write,
    _schema,
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
    input_schema = _schema(
        ["to", "message"],
        to={"type": "string"},
        message={"anyOf": [{"type": "string"}, {"type": "object"}]},
        summary={"type": "string"},
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        to, message = str(args["to"]), args["message"]
        if isinstance(message, str) and not message.strip():  # to a subagent too (Team.send: the rest)
            raise ToolError("the message is empty: there is nothing to send")
        if ctx.subagents is not None and ctx.subagents.owns(to.strip()):
            if not isinstance(message, str):  # continues (or reaches) one of our subagents
                raise ToolError("a subagent takes plain-text messages only")
            summary = args.get("summary")
            return ctx.subagents.message(to.strip(), message, str(summary) if summary else None)
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
        summary = args.get("summary")
        if not summary or not str(summary).strip():
            raise ToolError("summary is required for a plain-text message (a 5-10 word preview)")
        ids = ctx.team.send(to, str(message), sender=ctx.name, summary=str(summary))
        return ToolResult(f"sent to {to} ({len(ids)} recipient(s))")

    def describe(self, args: dict[str, Any]) -> str:
        return f"SendMessage to {args.get('to')}"


class TaskCreate(Tool):
    name = "TaskCreate"
    description = ("Add a task to the team's shared task list. `files`: globs its owner may"
                   " Write/Edit only inside (and others not) while it is in progress.")
    input_schema = _schema(["subject"], subject={"type": "string"},
                           description={"type": "string"},
                           blocked_by={"type": "array", "items": {"type": "string"}},
                           files={"type": "array", "items": {"type": "string"}})

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = ctx.team.tasks.add(str(args["subject"]), description=str(args.get("description") or ""),
                                  blocked_by=[str(b) for b in args.get("blocked_by") or []],
                                  files=[str(f) for f in args.get("files") or []])
        return ToolResult(f"created task #{task.id}: {task.subject}")


class TaskList(Tool):
    name = "TaskList"
    description = "List the team's tasks: id, status, owner, blockers, file scopes, subject."
    input_schema = _schema([])
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
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
    input_schema = _schema(["task_id"], task_id={"type": "string"})
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(ctx.team.tasks.get(str(args["task_id"])).model_dump_json(indent=2))


class TaskUpdate(Tool):
    name = "TaskUpdate"
    description = ("Update a task: status (pending|in_progress|completed|failed), owner, result,"
                   " subject, description, active_form. Mark your task completed when done, or"
                   " failed (with the reason as its result) when the work could not be done.")
    input_schema = _schema(
        ["task_id"], task_id={"type": "string"},
        status={"type": "string", "enum": list(STATUSES)},
        owner={"type": "string"}, result={"type": "string"}, subject={"type": "string"},
        description={"type": "string"}, active_form={"type": "string"},
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        fields = {k: args[k] for k in ("status", "result", "subject", "description", "active_form")
                  if args.get(k) is not None}
        if "owner" in args:
            fields["owner"] = args["owner"] or None
        task = ctx.team.tasks.update(str(args["task_id"]), actor=ctx.name, **fields)
        return ToolResult(f"task #{task.id} is {task.status} (owner {task.owner or '-'})")


class ExitPlanMode(Tool):
    name = "ExitPlanMode"
    description = "Submit your plan to the team lead for approval; wait for the answer."
    input_schema = _schema(["plan"], plan={"type": "string"})
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(ctx.host.exit_plan(str(args["plan"])))


def run_tool(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run a tool; any failure is an error result for the model, never a crash."""
    try:
        return tool.run(args, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    except SwarmError as exc:
        return ToolResult(str(exc), is_error=True)
    except KeyError as exc:
        return ToolResult(f"missing required input {exc}", is_error=True)
    # Broad, but not `Exception`: TurnInterrupted/AgentStopped (raised by signal handlers while a
    # tool runs) must get through. RuntimeError covers e.g. Glob's NotImplementedError for an
    # absolute pattern, which used to end the agent.
    except (OSError, ValueError, TypeError, LookupError, RuntimeError, ArithmeticError,
            AttributeError) as exc:
        return ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)


def all_tools() -> dict[str, Tool]:

    items: list[Tool] = [Read(), Write(), Edit(), Bash(), Glob(), Grep(),
                         SendMessage(), TaskCreate(), TaskList(), TaskGet(), TaskUpdate(),
                         ExitPlanMode(), *subagent_tools()]
    return {tool.name: tool for tool in items}
