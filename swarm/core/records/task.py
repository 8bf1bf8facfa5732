"""A task of the shared task list: its record, its limits and the checks both stores make."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

from swarm.core.records.base import Record, field
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import check_size
from swarm.core.store.disk import utcnow_iso
from swarm.errors import BadInputError, NotAllowedError

# Text limits (UTF-8 bytes): a task is read by every teammate's model, whole.
MAX_SUBJECT_BYTES = 1024  # subject, active_form
MAX_DESCRIPTION_BYTES = 64 * 1024  # description, result

TaskStatus = Literal["pending", "in_progress", "completed", "failed"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "failed")
# Finished either way: no one works on it any more. A failed task still blocks what it blocks,
# until the lead or a person sets it back to pending.
ENDED: tuple[str, ...] = ("completed", "failed")
UNSET: object = object()  # `update(owner=...)` not given (None: no owner)


class Task(Record, kw_only=True):
    id: str
    subject: str
    description: str = ""
    status: TaskStatus = "pending"
    owner: str | None = None
    blocked_by: list[str] = []  # msgspec copies an empty default per task
    blocks: list[str] = []
    active_form: str | None = None
    # File scopes (globs): while in progress, its owner writes only there, others not there.
    files: list[str] = []
    result: str | None = None
    # Who added it: a member's name (the lead's too), None: a person's shell. auto's reviewer
    # tells the lead's and the person's tasks from a member's own (core.team.review).
    created_by: str | None = None
    created_at: str = field(default_factory=utcnow_iso)
    updated_at: str = field(default_factory=utcnow_iso)


def completed(blocker: Task | None, blocker_id: str) -> bool:
    return blocker is not None and blocker.id == blocker_id and blocker.status == "completed"


def refuse_unless_owner(task: Task, actor: str | None) -> None:
    """An owned task changes owner or status only by its owner or the lead (or a person: no
    actor), so a file scope lasts while its task is owned: no peer can lift it."""
    if task.owner and actor is not None and actor not in (task.owner, LEAD_NAME):
        raise NotAllowedError(f"task #{task.id} is owned by {task.owner}: only {task.owner} or"
                              " the lead may change its owner or status")


def check_sizes(**fields: str | None) -> None:
    for name, value in fields.items():
        limit = MAX_SUBJECT_BYTES if name in ("subject", "active_form") else MAX_DESCRIPTION_BYTES
        check_size(f"task {name}", value, limit)


def clean_globs(globs: Iterable[str]) -> list[str]:
    """File scopes (`tasks add --files GLOB`) as stored: non-empty, normalised."""
    out = []
    for glob in globs:
        text = str(glob).strip()
        if not text:
            raise BadInputError("a file scope must not be empty (e.g. --files 'src/api/**')")
        out.append(os.path.normpath(text))
    return out
