"""The shared task list: one JSON file per task, a list lock, and a high-water mark for ids.

Every change takes the list lock, so claims are atomic across processes and ids are never reused.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from swarm.core.records.task import ENDED, UNSET, Task, refuse_unless_owner
from swarm.core.store import paths
from swarm.core.store.api import TaskList
from swarm.core.store.disk import (
    ensure_dir,
    locked,
    read_model,
    utcnow_iso,
    write_bytes_atomic,
    write_model,
)
from swarm.errors import TaskConflictError


class FileTaskList(TaskList):
    """Tasks of one team, one file each."""

    def __init__(self, team: str, check_owner: Callable[[str], str] | None = None) -> None:
        super().__init__(team, check_owner)
        self.dir = paths.tasks_dir(team)
        self._lock = paths.tasks_lock(team)

    # -- reading -----------------------------------------------------------------------------
    def read(self, task_id: str) -> Task | None:
        if not task_id.isdigit():
            return None
        return read_model(paths.task_file(self.team, task_id), Task)

    def list(self) -> builtins.list[Task]:
        if not self.dir.is_dir():
            return []
        # The listed paths are read as they are: rebuilding each from $SWARM_HOME costs more
        # than reading the file (a 12,500-task list: 60% of its time).
        files = sorted((int(p.stem), p) for p in self.dir.glob("*.json") if p.stem.isdigit())
        return [t for t in (read_model(p, Task) for _, p in files) if t is not None]

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
        created_by: str | None = None,
    ) -> Task:
        owner, scopes = self.checked_new(subject, description, owner, active_form, files)
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
                created_by=created_by,
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
        owner: object = UNSET,
        result: str | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        actor: str | None = None,
    ) -> Task:
        """Change fields of a task. `actor`: the member asking (None: a person's shell); only
        the owner or the lead may change an owned task's owner or status."""
        new_owner = self.checked_change(status, owner, subject, description, active_form, result)
        ensure_dir(self.dir)
        with locked(self._lock):
            task = self.get(task_id)
            if (new_owner is not UNSET and new_owner != task.owner) or \
                    (status is not None and status != task.status):
                refuse_unless_owner(task, actor)
            if status == "in_progress" and task.status != "in_progress":
                self._refuse_if_blocked(task)
            if new_owner is not UNSET:
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
                refuse_unless_owner(task, actor)
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
            refuse_unless_owner(task, actor)
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
