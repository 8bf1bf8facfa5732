"""The inputs of the team tools (tools/team.py), as pydantic models: imported at a tool's
first use, not when an agent starts (`Tool.input_ref`)."""

from __future__ import annotations

from typing import Any

from swarm.core.records.task import TaskStatus
from swarm.runtime.tools.schema import ToolInput


class SendMessageInput(ToolInput):
    to: str
    message: str | dict[str, Any]
    summary: str | None = None


class TaskCreateInput(ToolInput):
    subject: str
    description: str | None = None
    blocked_by: list[str] | None = None
    files: list[str] | None = None


class TaskGetInput(ToolInput):
    task_id: str


class TaskUpdateInput(TaskGetInput):
    status: TaskStatus | None = None
    owner: str | None = None
    result: str | None = None
    subject: str | None = None
    description: str | None = None
    active_form: str | None = None


class ExitPlanModeInput(ToolInput):
    plan: str
