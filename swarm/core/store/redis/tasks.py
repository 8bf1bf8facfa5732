"""The task list on Redis: one hash of task documents, and claims as one server-side script.

Keys: `swarm:<team>:tasks` (hash: id -> task JSON), `...:tasks:hw` (the id counter: INCR, so
ids are never reused) and `...:tasks:open` (sorted set of the pending ids, by id: where
`claim_next` looks). A claim is the Lua script `_CLAIM`: it reads the task and its blockers,
checks status, owner and blocked_by, and writes the claim, all inside one script, which Redis
runs alone, so two claimers can never both win and a blocked task is never taken. Every other
change is an optimistic transaction (WATCH the hash, read, check, MULTI/EXEC; start again if
anyone wrote meanwhile), so it can never overwrite a claim.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from swarm.core.records import base as records
from swarm.core.records.task import ENDED, UNSET, Task, completed, refuse_unless_owner
from swarm.core.store.api import TaskList
from swarm.core.store.disk import utcnow_iso
from swarm.core.store.redis.connection import EVENTS_KEPT, RedisConnection
from swarm.errors import NotFoundError, TaskConflictError

# KEYS: tasks hash, open set, events. ARGV: name, now (ISO), task id or '' (the lowest-id
# available one). Returns {'ok', json} or {why, detail}. cjson decodes `[]` as an empty table
# and encodes it back as `{}`: `take` writes the task's empty lists back as `[]`, so what is
# stored is always a Task's JSON. (A quote inside a JSON string is escaped: `"files":{}` with
# bare quotes is only ever the field itself.)
_CLAIM = """
local function unfinished(task)
  local waiting = {}
  for _, blocker in ipairs(task.blocked_by or {}) do
    local raw = redis.call('HGET', KEYS[1], tostring(blocker))
    local done = false
    if raw then  -- a missing, corrupt or foreign entry is no completed blocker
      local ok, other = pcall(cjson.decode, raw)
      done = ok and type(other) == 'table' and other.id == tostring(blocker)
        and other.status == 'completed'
    end
    if not done then table.insert(waiting, tostring(blocker)) end
  end
  return waiting
end
local function owner(task)
  if task.owner == nil or task.owner == cjson.null then return nil end
  return task.owner
end
local function take(task)
  task.owner = ARGV[1]
  task.status = 'in_progress'
  task.updated_at = ARGV[2]
  local out = cjson.encode(task)
  for _, key in ipairs({'blocked_by', 'blocks', 'files'}) do
    out = string.gsub(out, '"' .. key .. '":{}', '"' .. key .. '":[]')
  end
  redis.call('HSET', KEYS[1], task.id, out)
  redis.call('ZREM', KEYS[2], task.id)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'kind', 'tasks', 'name', ARGV[1])
  return {'ok', out}
end
if ARGV[3] ~= '' then
  local raw = redis.call('HGET', KEYS[1], ARGV[3])
  if not raw then return {'missing', ''} end
  local task = cjson.decode(raw)
  if task.status == 'completed' or task.status == 'failed' then return {task.status, ''} end
  local held = owner(task)
  if held and held ~= ARGV[1] then return {'owned', held} end
  local waiting = unfinished(task)
  if #waiting > 0 then return {'blocked', table.concat(waiting, ', #')} end
  return take(task)
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local raw = redis.call('HGET', KEYS[1], id)
  local ok, task = false, nil
  if raw then ok, task = pcall(cjson.decode, raw) end
  if ok and type(task) == 'table' then  -- a corrupt entry is skipped, not an error
    local held = owner(task)
    if task.status == 'pending' and (not held or held == ARGV[1]) and #unfinished(task) == 0 then
      return take(task)
    end
  end
end
return {'none', ''}
"""


def _decoded(raw: bytes | str | None) -> Task | None:
    """A stored task; None when missing or corrupt (as the file store reads a corrupt file)."""
    try:
        return None if raw is None else records.decode(raw, Task)
    except records.DecodeError:
        return None


class RedisTaskList(TaskList):
    """Tasks of one team, in one hash."""

    def __init__(self, connection: RedisConnection, team: str,
                 check_owner: Callable[[str], str] | None = None) -> None:
        super().__init__(team, check_owner)
        self.connection = connection
        self.hash = connection.key(team, "tasks")
        self.open = connection.key(team, "tasks", "open")
        self.counter = connection.key(team, "tasks", "hw")
        self._claim_script = connection.script(_CLAIM)

    # -- reading -----------------------------------------------------------------------------
    def read(self, task_id: str) -> Task | None:
        if not task_id.isdigit():
            return None
        return _decoded(self.connection.run(lambda: self.connection.client.hget(self.hash, task_id)))

    def list(self) -> builtins.list[Task]:
        raw = self.connection.run(lambda: self.connection.client.hgetall(self.hash))
        tasks = [t for k, v in raw.items() if k.isdigit() and (t := _decoded(v)) is not None]
        return sorted(tasks, key=lambda t: int(t.id))

    # -- writing -----------------------------------------------------------------------------
    def _queue(self, pipe: Any, task: Task, touch: bool = True) -> None:
        if touch:
            task.updated_at = utcnow_iso()
        pipe.hset(self.hash, task.id, records.encode(task))
        if task.status == "pending":
            pipe.zadd(self.open, {task.id: int(task.id)})
        else:
            pipe.zrem(self.open, task.id)

    def _transact(self, change: Callable[[Callable[[str], Task | None]], builtins.list[Task]]
                  ) -> builtins.list[Task]:
        """WATCH the list, let `change` read tasks (through the watching connection) and say
        which to write, then write them in MULTI/EXEC; again from the start on a conflict."""
        out: list[Task] = []

        def attempt(pipe: Any) -> None:
            def read(task_id: str) -> Task | None:
                return _decoded(pipe.hget(self.hash, task_id) if task_id.isdigit() else None)

            changed = change(read)
            pipe.multi()
            for task in changed:
                self._queue(pipe, task)
            if changed:
                self.connection.event(pipe, self.team, "tasks", "")
            out[:] = changed

        self.connection.run(lambda: self.connection.client.transaction(attempt, self.hash))
        return out

    @staticmethod
    def _get(read: Callable[[str], Task | None], task_id: str, team: str) -> Task:
        task = read(str(task_id))
        if task is None:
            raise NotFoundError(f"no task {task_id!r} in team {team!r}; see `swarm tasks list`")
        return task

    def add(self, subject: str, description: str = "",
            blocked_by: builtins.list[str] | None = None, owner: str | None = None,
            active_form: str | None = None, files: builtins.list[str] | None = None,
            created_by: str | None = None) -> Task:
        owner, scopes = self.checked_new(subject, description, owner, active_form, files)
        wanted = [str(b) for b in (blocked_by or [])]
        for blocker_id in wanted:
            self.get(blocker_id)  # a clear error before an id is spent
        new_id = str(self.connection.run(lambda: self.connection.client.incr(self.counter)))

        def create(read: Callable[[str], Task | None]) -> builtins.list[Task]:
            blockers = [self._get(read, b, self.team) for b in wanted]
            task = Task(id=new_id, subject=subject, description=description, owner=owner,
                        blocked_by=[b.id for b in blockers], active_form=active_form,
                        files=scopes, created_by=created_by)
            for blocker in blockers:
                if new_id not in blocker.blocks:
                    blocker.blocks.append(new_id)
            return [task, *blockers]

        return self._transact(create)[0]

    def update(self, task_id: str, *, status: str | None = None, owner: object = UNSET,
               result: str | None = None, subject: str | None = None,
               description: str | None = None, active_form: str | None = None,
               actor: str | None = None) -> Task:
        new_owner = self.checked_change(status, owner, subject, description, active_form, result)

        def change(read: Callable[[str], Task | None]) -> builtins.list[Task]:
            task = self._get(read, task_id, self.team)
            if (new_owner is not UNSET and new_owner != task.owner) or \
                    (status is not None and status != task.status):
                refuse_unless_owner(task, actor)
            if status == "in_progress" and task.status != "in_progress":
                waiting = [b for b in task.blocked_by if not completed(read(b), b)]
                if waiting:
                    ids = ", ".join(f"#{i}" for i in waiting)
                    raise TaskConflictError(f"task #{task.id} is blocked by unfinished task(s) "
                                            f"{ids}")
            if new_owner is not UNSET:
                task.owner = new_owner  # type: ignore[assignment]
            if status is not None:
                task.status = status  # type: ignore[assignment]
            for field, value in (("result", result), ("subject", subject),
                                 ("description", description), ("active_form", active_form)):
                if value is not None:
                    setattr(task, field, value)
            return [task]

        return self._transact(change)[0]

    def _claim(self, task_id: str, name: str) -> Task | None:
        def run() -> Any:
            return self._claim_script(keys=[self.hash, self.open, self.connection.key(self.team,
                                                                                 "events")],
                                      args=[name, utcnow_iso(), task_id, EVENTS_KEPT])

        why, detail = (part.decode() for part in self.connection.run(run))
        if why == "ok":
            return records.decode(detail, Task)
        if why == "none":
            return None
        if why == "missing":
            raise NotFoundError(f"no task {task_id!r} in team {self.team!r}; see `swarm tasks list`")
        if why == "completed":
            raise TaskConflictError(f"task #{task_id} is already completed")
        if why == "failed":
            raise TaskConflictError(f"task #{task_id} failed; the lead sets it back to pending"
                                    " (`swarm tasks update ID --status pending`) to retry it")
        if why == "owned":
            raise TaskConflictError(f"task #{task_id} is already owned by {detail}")
        raise TaskConflictError(f"task #{task_id} is blocked by unfinished task(s) #{detail}")

    def claim(self, task_id: str, name: str, actor: str | None = None) -> Task:
        name = self._check_owner(name)
        task = self.get(task_id)
        if task.owner == name:
            refuse_unless_owner(task, actor)
        claimed = self._claim(str(task_id), name)
        assert claimed is not None
        return claimed

    def claim_next(self, name: str) -> Task | None:
        return self._claim("", name)

    def release(self, task_id: str, actor: str | None = None) -> Task:
        def give_back(read: Callable[[str], Task | None]) -> builtins.list[Task]:
            task = self._get(read, task_id, self.team)
            refuse_unless_owner(task, actor)
            task.owner = None
            if task.status not in ENDED:
                task.status = "pending"
            return [task]

        return self._transact(give_back)[0]

    def release_owned_by(self, name: str, timeout: float | None = None) -> builtins.list[Task]:
        def give_back(_read: Callable[[str], Task | None]) -> builtins.list[Task]:
            out = []
            for task in self.list():
                if task.owner == name and task.status not in ENDED:
                    task.owner, task.status = None, "pending"
                    out.append(task)
            return out

        return self._transact(give_back)
