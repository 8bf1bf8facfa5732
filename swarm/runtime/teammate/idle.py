"""Going idle: the one `idle_notification` a teammate sends the lead when a turn ends.

Its summary is the turn's last text or, when the model wrote none, its last tool call. Its task
is the one the turn was about, with what became of it (`completed_status`): `failed` (marked
failed, or the turn failed with it unfinished), `completed`, or `blocked` (it waits on unfinished tasks). Only the
teammate's current task and those it updated this turn are read. `TurnLog` is the loop's
observer that keeps what the turn did (and records the files it wrote, for overlaps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from msgspec import Struct, field

from swarm.core.records.protocol import IdleNotification
from swarm.core.records.task import ENDED, Task
from swarm.core.shell.rules import tool_path
from swarm.core.team.overlaps import record_write
from swarm.core.team.team import Team
from swarm.errors import NotFoundError
from swarm.runtime.teammate.console import brief
from swarm.runtime.tools.base import Tool, ToolResult
from swarm.runtime.turn.hooks import LoopHooks
from swarm.runtime.turn.loop import TurnOutcome

SUMMARY_LIMIT = 200  # characters of the idle note's summary (whitespace collapsed)


class TurnRecord(Struct, dict=True):
    """What a turn did that its idle note tells: the tasks the model updated, its last call."""

    updated_tasks: list[str] = field(default_factory=list)
    last_action: str | None = None  # the last tool call of the turn, described

    def tool_ran(self, tool: Tool, args: dict[str, Any]) -> None:
        self.last_action = tool.describe(args)
        if tool.name == "TaskUpdate" and args.get("task_id") is not None:
            self.updated_tasks.append(str(args["task_id"]))  # even refused: blocked, say


class TurnLog(LoopHooks):
    """The loop's observer that keeps what a teammate's turn did (`turn`, for its idle note),
    and records each file it wrote, for overlapping writes among members sharing a checkout."""

    def __init__(self, team: Team, name: str, cwd: Path) -> None:
        self.team, self.name, self.cwd = team, name, cwd
        self.turn = TurnRecord()

    def begin(self) -> None:
        """A new turn: nothing done yet."""
        self.turn = TurnRecord()

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        self.turn.tool_ran(tool, args)
        path = tool_path(args, self.cwd) if tool.edits_files and not result.is_error else None
        if path is not None:
            record_write(self.team, self.name, path)


class TaskReport(NamedTuple):
    task: Task | None  # the task the idle note is about
    status: str | None  # what became of it: failed | completed | blocked
    current: str | None  # the task the teammate is still on


def task_report(team: Team, name: str, current: str | None, outcome: TurnOutcome,
                turn: TurnRecord) -> TaskReport:
    tasks: list[Task] = []
    for task_id in dict.fromkeys([*([current] if current is not None else []),
                                  *turn.updated_tasks]):
        try:
            task = team.tasks.get(task_id)
        except NotFoundError:
            continue
        if task.owner == name or task.id == current:
            tasks.append(task)
    if current is not None and not any(t.id == current and t.status not in ENDED
                                       and t.owner == name for t in tasks):
        current = None
    marked_failed = [t for t in tasks if t.status == "failed"]
    if marked_failed:
        return TaskReport(marked_failed[-1], "failed", current)
    unfinished = [t for t in tasks if t.status not in ENDED]
    if outcome.reason == "failed" and unfinished:
        return TaskReport(unfinished[0], "failed", current)
    done = [t for t in tasks if t.status == "completed"]
    if done:
        return TaskReport(done[-1], "completed", current)
    blocked = [t for t in unfinished if team.tasks.unfinished_blockers(t)]
    if blocked:
        return TaskReport(blocked[0], "blocked", current)
    return TaskReport(None, None, current)


def idle_notification(name: str, outcome: TurnOutcome, turn: TurnRecord, report: TaskReport,
                      turns: int) -> IdleNotification:
    said = brief(outcome.last_text, SUMMARY_LIMIT) if outcome.last_text.strip() else None
    did = f"(wrote nothing; last tool call: {turn.last_action})" if turn.last_action else None
    return IdleNotification(
        sender=name, idle_reason=outcome.reason,  # type: ignore[arg-type]
        summary=said or (brief(did, SUMMARY_LIMIT) if did else None),
        completed_task_id=report.task.id if report.task else None,
        completed_status=report.status,
        failure_reason=outcome.failure, turns=turns,
    )
