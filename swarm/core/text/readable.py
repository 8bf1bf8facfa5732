"""One readable line for a protocol message or a tool call: what `swarm inbox`, the run report and
an agent's pane show, so all three say the same thing the same way."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from swarm.core.records import base as records
from swarm.core.records.protocol import (
    IdleNotification,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownRequest,
    ShutdownResponse,
    StructuredMessage,
    TaskAssignment,
    TeammateTerminated,
)
from swarm.core.text.real_input import request_line

# The input field that says the most about a call, per tool (else the first string field).
_KEY_FIELD = {"Bash": "command", "Read": "file_path", "Write": "file_path", "Edit": "file_path",
              "Glob": "pattern", "Grep": "pattern", "TaskGet": "task_id", "TaskUpdate": "task_id",
              "TaskCreate": "subject", "Agent": "description"}


def flat(text: str) -> str:
    """All whitespace runs (newlines too) as one space: a value on one line."""
    return " ".join(str(text).split())


def short_id(request_id: str) -> str:
    return request_id[:8]


def tool_call(name: str, args: Any) -> str:
    """`Bash "make test"`, `SendMessage to bob`, `TaskUpdate #3 completed`."""
    if not isinstance(args, dict) or not args:
        return name
    if name == "SendMessage":
        return f"SendMessage to {args.get('to')}"
    if name == "TaskUpdate":
        status = f" {args['status']}" if args.get("status") else ""
        return f"TaskUpdate #{args.get('task_id')}{status}"
    field = _KEY_FIELD.get(name)
    value = args.get(field) if field else None
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str)), None)
    if value is None:
        value = json.dumps(args, ensure_ascii=False)
    return f'{name} "{flat(str(value))}"'


def _verdict(approve: bool) -> str:
    return "approved" if approve else "refused"


def structured_line(kind: StructuredMessage) -> str:
    """The message on one line with its fields, e.g.
    `permission_request bob: Bash: rm -rf build [id 1a2b3c4d]`."""
    if isinstance(kind, IdleNotification):
        line = f"idle_notification: {kind.idle_reason}"
        if kind.completed_task_id:
            line += f", completed #{kind.completed_task_id} ({kind.completed_status or '?'})"
        if kind.failure_reason:
            line += f", failure: {flat(kind.failure_reason)}"
        return line + (f": {flat(kind.summary)}" if kind.summary else "")
    if isinstance(kind, PermissionRequest):
        who = kind.agent_id.partition("@")[0]
        return f"permission_request {who}: {request_line(kind)} [id {short_id(kind.request_id)}]"
    if isinstance(kind, PermissionResponse):
        line = f"permission_response: {_verdict(kind.approve)}"
        line += " (always)" if kind.always else ""
        line += " with edited input" if kind.updated_input else ""
        line += f" [id {short_id(kind.request_id)}]"
        return line + (f": {flat(kind.feedback)}" if kind.feedback else "")
    if isinstance(kind, ShutdownRequest):
        line = f"shutdown_request [id {short_id(kind.request_id)}]"
        return line + (f": {flat(kind.reason)}" if kind.reason else "")
    if isinstance(kind, ShutdownResponse):
        line = f"shutdown_response: {_verdict(kind.approve)} [id {short_id(kind.request_id)}]"
        return line + (f": {flat(kind.reason)}" if kind.reason else "")
    if isinstance(kind, PlanApprovalRequest):
        return f"plan_approval_request [id {short_id(kind.request_id)}]: {flat(kind.plan)}"
    if isinstance(kind, PlanApprovalResponse):
        line = f"plan_approval_response: {_verdict(kind.approve)}"
        line += f" (mode {kind.permission_mode})" if kind.permission_mode else ""
        line += f" [id {short_id(kind.request_id)}]"
        return line + (f": {flat(kind.feedback)}" if kind.feedback else "")
    if isinstance(kind, TaskAssignment):
        return f'task_assignment #{kind.task_id} "{flat(kind.subject)}" by {kind.assigned_by}'
    if isinstance(kind, TeammateTerminated):
        return f"teammate_terminated {kind.agent_id}" + (f": {flat(kind.reason)}" if kind.reason else "")
    fields = records.to_dict(kind, drop_none=True)
    kind_name = fields.pop("type", type(kind).__name__)
    return f"{kind_name}: " + ", ".join(f"{k}={flat(json.dumps(v))}" for k, v in fields.items())


def clip(line: str, width: int) -> str:
    """`line` cut to `width` characters, with an ellipsis when it was longer."""
    return line if len(line) <= width else line[: max(width - 3, 0)] + "..."


def fold(text: str, width: int, indent: str = "", max_lines: int | None = None) -> list[str]:
    """`text` wrapped to `width` (its own line breaks kept), at most `max_lines` lines; the cut is
    marked with '... N more lines'."""
    lines: list[str] = []
    inner = max(width - len(indent), 20)
    for raw in text.splitlines() or [""]:
        wrapped = textwrap.wrap(raw.expandtabs(4), inner, replace_whitespace=False,
                                drop_whitespace=False, break_on_hyphens=False) or [""]
        lines.extend(indent + part.rstrip() for part in wrapped)
    if max_lines is not None and len(lines) > max_lines:
        more = len(lines) - max_lines + 1
        lines = [*lines[: max_lines - 1], f"{indent}... {more} more lines"]
    return lines


def will_not_read(name: str, was: str, detail: str | None, by_lead: bool = True) -> str:
    """One line for a sender whose recipient has exited or died (`was`): it will not read the
    message (it stays in its mailbox), and how to wake it; a teammate is not told to run the
    lead's commands. What `swarm send --wait-read` and both SendMessage tools say."""
    why = f" ({detail})" if detail else ""
    verb = "has exited" if was == "exited" else "is dead"
    if not by_lead:
        return f"{name} {verb}{why}: it will not read this until the lead wakes it"
    if was == "exited":
        return (f"{name} {verb}{why}: it will not read this until it is woken: "
                f"`swarm send {name} ... --wake` or `swarm respawn {name}`")
    return (f"{name} {verb}{why}: it will not read this (it stays in its mailbox); respawn it"
            f" with `swarm respawn {name}` (it keeps its conversation) or give its work to"
            " another teammate")
