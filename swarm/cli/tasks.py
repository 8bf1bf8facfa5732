"""`swarm tasks ...`: the shared task list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from swarm.cli.caller import acting_member
from swarm.cli.common import (
    emit,
    fit_table,
    json_option,
    open_team,
    team_option,
    wide_option,
)
from swarm.cli.completion import complete_member, complete_task
from swarm.cli.helptext import examples
from swarm.core.records.task import STATUSES, Task, clean_globs
from swarm.core.store.disk import warn
from swarm.core.team.scopes import unmatched


@click.group(epilog=examples("swarm tasks add 'write the parser'", "swarm tasks list"))
def tasks() -> None:
    """Add, list, show, update, claim and release tasks."""


def _render_one(task: Task) -> str:
    lines = [f"#{task.id} {task.subject}", f"status: {task.status}   owner: {task.owner or '-'}"]
    if task.blocked_by:
        lines.append("blocked by: " + ", ".join(f"#{i}" for i in task.blocked_by))
    if task.blocks:
        lines.append("blocks: " + ", ".join(f"#{i}" for i in task.blocks))
    if task.files:
        lines.append("files: " + ", ".join(task.files))
    if task.description:
        lines += ["", task.description]
    if task.result:
        lines += ["", "result:", task.result]
    return "\n".join(lines)


@tasks.command("add", epilog=examples(
    "swarm tasks add 'write the parser' --description 'src/parse.py, with tests'",
    "swarm tasks add 'wire it up' --blocked-by 1 --owner worker",
    "swarm tasks add 'docs' --files 'docs/**' --files README.md"))
@click.argument("subject")
@click.option("--description", "-d", default="", help="What to do (shell teammates run its commands).")
@click.option("--blocked-by", multiple=True, shell_complete=complete_task,
              help="Id of a task that must complete first.")
@click.option("--owner", default=None, shell_complete=complete_member, help="Assign to a member.")
@click.option("--files", "files", multiple=True, metavar="GLOB",
              help="File scope (repeatable): while the task is in progress its owner may "
                   "Write/Edit only there, and others not there.")
@team_option
@json_option
def add(subject: str, description: str, blocked_by: tuple[str, ...], owner: str | None,
        files: tuple[str, ...], team_name: str | None, as_json: bool) -> None:
    """Add a task."""
    globs = clean_globs(files)
    task = open_team(team_name).tasks.add(
        subject, description=description, blocked_by=list(blocked_by), owner=owner, files=globs,
        created_by=acting_member(),
    )
    for glob in unmatched(globs, Path.cwd()) if globs else []:
        warn(f"--files {glob!r} matches nothing under {Path.cwd()} yet (kept as given)")
    emit(task, as_json, lambda t: f"added task #{t.id}: {t.subject}")


@tasks.command("list", epilog=examples(
    "swarm tasks list", "swarm tasks list --wide", "swarm tasks list --json"))
@team_option
@wide_option
@json_option
def list_tasks(team_name: str | None, wide: bool, as_json: bool) -> None:
    """List tasks."""
    items = open_team(team_name).tasks.list()

    def human(_: Any) -> str:
        if not items:
            return "(no tasks)"
        rows = [[f"#{t.id}", t.status, t.owner or "-",
                 ",".join(t.blocked_by) or "-", t.subject] for t in items]
        return fit_table(rows, ["ID", "STATUS", "OWNER", "BLOCKED BY", "SUBJECT"], wide,
                         ("BLOCKED BY",), ("SUBJECT",))

    emit(items, as_json, human)


@tasks.command("show", epilog=examples("swarm tasks show 3", "swarm tasks show 3 --json"))
@click.argument("task_id", shell_complete=complete_task)
@team_option
@json_option
def show(task_id: str, team_name: str | None, as_json: bool) -> None:
    """Show one task."""
    emit(open_team(team_name).tasks.get(task_id), as_json, _render_one)


@tasks.command("update", epilog=examples(
    "swarm tasks update 3 --status completed --result 'merged in 4f1c2e0'",
    "swarm tasks update 3 --owner ''"))
@click.argument("task_id", shell_complete=complete_task)
@click.option("--status", type=click.Choice(STATUSES), default=None,
              help="The new status (pending, in_progress, completed).")
@click.option("--owner", default=None, shell_complete=complete_member,
              help="New owner ('' to clear).")
@click.option("--result", default=None, help="Record a result.")
@team_option
@json_option
def update(task_id: str, status: str | None, owner: str | None, result: str | None,
           team_name: str | None, as_json: bool) -> None:
    """Change a task's status, owner or result."""
    fields: dict[str, Any] = {"status": status, "result": result}
    if owner is not None:
        fields["owner"] = owner or None
    task = open_team(team_name).tasks.update(task_id, actor=acting_member(), **fields)
    emit(task, as_json, _render_one)


@tasks.command("claim", epilog=examples("swarm tasks claim 3 --as worker"))
@click.argument("task_id", shell_complete=complete_task)
@click.option("--as", "name", required=True, shell_complete=complete_member,
              help="The member taking the task.")
@team_option
@json_option
def claim(task_id: str, name: str, team_name: str | None, as_json: bool) -> None:
    """Claim a task for a member (atomic)."""
    task = open_team(team_name).tasks.claim(task_id, name, actor=acting_member())
    emit(task, as_json, lambda t: f"{t.owner} claimed task #{t.id}")


@tasks.command("release", epilog=examples("swarm tasks release 3"))
@click.argument("task_id", shell_complete=complete_task)
@team_option
@json_option
def release(task_id: str, team_name: str | None, as_json: bool) -> None:
    """Give a task back to the pool."""
    task = open_team(team_name).tasks.release(task_id, actor=acting_member())
    emit(task, as_json, lambda t: f"released task #{t.id} ({t.status})")
