"""The shared task list: one JSON file per task, a list lock, and a high-water mark for ids.

Every change takes the list lock, so claims are atomic across processes and ids are never reused.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Literal

from swarm import settings
from swarm.core.model.names import LEAD_NAME
from swarm.core.model.protocol import check_size
from swarm.core.model.records import Record, field
from swarm.core.store import paths
from swarm.core.store.disk import (
    ensure_dir,
    locked,
    read_model,
    utcnow_iso,
    write_bytes_atomic,
    write_model,
)
from swarm.core.team.scopes import clean_globs
from swarm.errors import BadInputError, NotAllowedError, NotFoundError, TaskConflictError

# Text limits (UTF-8 bytes): a task is read by every teammate's model, whole.
MAX_SUBJECT_BYTES = 1024  # subject, active_form
MAX_DESCRIPTION_BYTES = 64 * 1024  # description, result

TaskStatus = Literal["pending", "in_progress", "completed", "failed"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "failed")
# Finished either way: no one works on it any more. A failed task still blocks what it blocks,
# until the lead or a person sets it back to pending.
ENDED: tuple[str, ...] = ("completed", "failed")
_UNSET: object = object()


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
    created_at: str = field(default_factory=utcnow_iso)
    updated_at: str = field(default_factory=utcnow_iso)


def completed(blocker: Task | None, blocker_id: str) -> bool:
    return blocker is not None and blocker.id == blocker_id and blocker.status == "completed"


def _refuse_unless_owner(task: Task, actor: str | None) -> None:
    """An owned task changes owner or status only by its owner or the lead (or a person: no
    actor), so a file scope lasts while its task is owned: no peer can lift it."""
    if task.owner and actor is not None and actor not in (task.owner, LEAD_NAME):
        raise NotAllowedError(f"task #{task.id} is owned by {task.owner}: only {task.owner} or"
                              " the lead may change its owner or status")


def _check_sizes(**fields: str | None) -> None:
    for name, value in fields.items():
        limit = MAX_SUBJECT_BYTES if name in ("subject", "active_form") else MAX_DESCRIPTION_BYTES
        check_size(f"task {name}", value, limit)


class TaskList:
    """Tasks of one team. `check_owner` validates owner names (the team passes its members).
    On the Redis store (SWARM_STORE=redis://...) this builds a `RedisTaskList` instead."""

    def __new__(cls, team: str, check_owner: Callable[[str], str] | None = None) -> TaskList:
        if cls is TaskList and settings.store() != "file":
            from swarm.core.store.redis.tasks import RedisTaskList

            return super().__new__(RedisTaskList)
        return super().__new__(cls)

    def __init__(self, team: str, check_owner: Callable[[str], str] | None = None) -> None:
        self.team = team
        self.dir = paths.tasks_dir(team)
        self._lock = paths.tasks_lock(team)
        self._check_owner = check_owner or (lambda name: name)

    # -- reading -----------------------------------------------------------------------------
    def _read(self, task_id: str) -> Task | None:
        if not task_id.isdigit():
            return None
        return read_model(paths.task_file(self.team, task_id), Task)

    def get(self, task_id: str) -> Task:
        task = self._read(str(task_id))
        if task is None:
            raise NotFoundError(f"no task {task_id!r} in team {self.team!r}; see `swarm tasks list`")
        return task

    def list(self) -> builtins.list[Task]:
        if not self.dir.is_dir():
            return []
        # The listed paths are read as they are: rebuilding each from $SWARM_HOME costs more
        # than reading the file (a 12,500-task list: 60% of its time).
        files = sorted((int(p.stem), p) for p in self.dir.glob("*.json") if p.stem.isdigit())
        return [t for t in (read_model(p, Task) for _, p in files) if t is not None]

    def unfinished_blockers(self, task: Task) -> builtins.list[str]:
        """The blockers not known to be completed: a blocker that cannot be read (missing,
        corrupt, not the task it names) keeps its dependents blocked."""
        return [b for b in task.blocked_by if not completed(self._read(b), b)]

    def is_available(self, task: Task, name: str | None = None) -> bool:
        return (
            task.status == "pending"
            and (task.owner is None or task.owner == name)
            and not self.unfinished_blockers(task)
        )

    # -- writing (under the list lock) -------------------------------------------------------
    def _write(self, task: Task) -> None:
        task.updated_at = utcnow_iso()
        write_model(paths.task_file(self.team, task.id), task)

    def _high_water(self) -> int:
        try:
            mark = int(paths.tasks_highwater(self.team).read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            mark = 0
        # Never trust the mark alone: a lost or damaged mark must not reuse an id.
        existing = [int(p.name.split(".")[0]) for p in self.dir.glob("*.json*")
                    if p.name.split(".")[0].isdigit()]
        return max([mark, *existing])

    def add(
        self,
        subject: str,
        description: str = "",
        blocked_by: builtins.list[str] | None = None,
        owner: str | None = None,
        active_form: str | None = None,
        files: builtins.list[str] | None = None,
    ) -> Task:
        if not subject.strip():
            raise BadInputError("a task needs a non-empty subject")
        scopes = clean_globs(files or [])
        _check_sizes(subject=subject, description=description, active_form=active_form)
        owner = self._check_owner(owner) if owner else None
        ensure_dir(self.dir)
        with locked(self._lock):
            blockers = [self.get(str(b)) for b in (blocked_by or [])]
            new_id = str(self._high_water() + 1)
            task = Task(
                id=new_id,
                subject=subject,
                description=description,
                owner=owner,
                blocked_by=[b.id for b in blockers],
                active_form=active_form,
                files=scopes,
            )
            write_bytes_atomic(paths.tasks_highwater(self.team), new_id.encode())
            self._write(task)
            for blocker in blockers:
                if new_id not in blocker.blocks:
                    blocker.blocks.append(new_id)
                    self._write(blocker)
        return task

    def update(
        self,
        task_id: str,
        *,
        status: str | None = None,
        owner: object = _UNSET,
        result: str | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        actor: str | None = None,
    ) -> Task:
        """Change fields of a task. `actor`: the member asking (None: a person's shell); only
        the owner or the lead may change an owned task's owner or status."""
        if status is not None and status not in STATUSES:
            raise BadInputError(f"invalid status {status!r}: use one of {', '.join(STATUSES)}")
        _check_sizes(subject=subject, description=description, active_form=active_form,
                     result=result)
        new_owner = owner if owner is _UNSET or owner is None else self._check_owner(str(owner))
        ensure_dir(self.dir)
        with locked(self._lock):
            task = self.get(task_id)
            if (new_owner is not _UNSET and new_owner != task.owner) or \
                    (status is not None and status != task.status):
                _refuse_unless_owner(task, actor)
            if status == "in_progress" and task.status != "in_progress":
                self._refuse_if_blocked(task)
            if new_owner is not _UNSET:
                task.owner = new_owner  # type: ignore[assignment]
            if status is not None:
                task.status = status  # type: ignore[assignment]
            if result is not None:
                task.result = result
            if subject is not None:
                task.subject = subject
            if description is not None:
                task.description = description
            if active_form is not None:
                task.active_form = active_form
            self._write(task)
        return task

    def _refuse_if_blocked(self, task: Task) -> None:
        waiting = self.unfinished_blockers(task)
        if waiting:
            ids = ", ".join(f"#{i}" for i in waiting)
            raise TaskConflictError(f"task #{task.id} is blocked by unfinished task(s) {ids}")

    def _claim_locked(self, task: Task, name: str) -> Task:
        if task.status == "completed":
            raise TaskConflictError(f"task #{task.id} is already completed")
        if task.status == "failed":
            raise TaskConflictError(f"task #{task.id} failed; the lead sets it back to pending"
                                    " (`swarm tasks update ID --status pending`) to retry it")
        if task.owner and task.owner != name:
            raise TaskConflictError(f"task #{task.id} is already owned by {task.owner}")
        self._refuse_if_blocked(task)
        task.owner = name
        task.status = "in_progress"
        self._write(task)
        return task

    def claim(self, task_id: str, name: str, actor: str | None = None) -> Task:
        """Atomically take a task for `name`; TaskConflictError says why when refused. An
        unowned task anyone may claim; an owned one moves only by its owner or the lead."""
        name = self._check_owner(name)
        ensure_dir(self.dir)
        with locked(self._lock):
            task = self.get(task_id)
            if task.owner == name:  # moving its owner's task to in_progress
                _refuse_unless_owner(task, actor)
            return self._claim_locked(task, name)

    def claim_next(self, name: str) -> Task | None:
        """Claim the lowest-id task available to `name` (unowned or assigned to it, unblocked)."""
        ensure_dir(self.dir)
        with locked(self._lock):
            for task in self.list():
                if self.is_available(task, name):
                    return self._claim_locked(task, name)
        return None

    def release(self, task_id: str, actor: str | None = None) -> Task:
        """Give a task back: no owner, and `pending` unless it ended (completed or failed); by
        its owner, the lead or a person."""
        ensure_dir(self.dir)
        with locked(self._lock):
            task = self.get(task_id)
            _refuse_unless_owner(task, actor)
            task.owner = None
            if task.status not in ENDED:
                task.status = "pending"
            self._write(task)
        return task

    def release_owned_by(self, name: str, timeout: float | None = None) -> builtins.list[Task]:
        """Return every unfinished task of `name` to `pending` (an agent died or shut down)."""
        if not self.dir.is_dir():
            return []
        released = []
        with locked(self._lock, timeout):
            for task in self.list():
                if task.owner == name and task.status not in ENDED:
                    task.owner = None
                    task.status = "pending"
                    self._write(task)
                    released.append(task)
        return released
