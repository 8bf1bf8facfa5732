"""The store interface: what the team, its members and the CLI ask of where a team lives.

Two stores implement it: the file store (`SWARM_STORE` unset or `file`, `swarm.core.store.file`)
and the Redis store (`SWARM_STORE=redis://...`, `swarm.core.store.redis`). Neither imports the
other; `swarm.core.store.select.team_store()` is the one place that picks one. Callers ask it
for a mailbox, a task list or a team document, or ask a `Team` (`team.inbox(name)`,
`team.tasks`). What both share is here: the abstract operations, and the few rules that are
the same whatever holds the data (which idle notes are superseded, waiting for mail, blockers).
"""

from __future__ import annotations

import builtins
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from swarm.core.records.protocol import structured_type
from swarm.errors import BadInputError, NotFoundError

if TYPE_CHECKING:
    from swarm.core.records.protocol import Message
    from swarm.core.records.state import AgentState
    from swarm.core.records.task import Task
    from swarm.core.records.team_config import TeamConfig
    from swarm.core.store.waker import Waker

IDLE = "idle_notification"
ASIDE = ".corrupt-"  # what a reader moved aside: `<document>.corrupt-<timestamp>`


class Watcher(Protocol):
    """Blocks until something it watches changes: inotify on files, a blocking XREAD on Redis."""

    degraded: bool

    def wait(self, timeout: float | None) -> bool:
        """True when something changed, False when `timeout` ran out."""

    def close(self) -> None: ...

    def __enter__(self) -> Watcher: ...

    def __exit__(self, *exc: object) -> None: ...


def superseded(messages: Sequence[Message]) -> set[int]:
    """Positions of unread idle notifications followed by a newer unread one from the same
    member: the lead needs the current one per teammate, not hundreds (both stores)."""
    newest: dict[str, int] = {}
    out: set[int] = set()
    for index, message in enumerate(messages):
        if not message.read and structured_type(message.text) == IDLE:
            older = newest.get(message.sender)
            if older is not None:
                out.add(older)
            newest[message.sender] = index
    return out


class Mailbox(ABC):
    """One member's mailbox: append, read unread, mark read; history kept apart."""

    def __init__(self, team: str, name: str) -> None:
        self.team = team
        self.name = name
        self.delivered: builtins.list[str] = []  # ids the last deliver() put in the mailbox

    @abstractmethod
    def deliver(self, messages: builtins.list[Message], timeout: float | None = None) -> None:
        """Append whole; on failure nothing lands (`delivered` names what did)."""

    @abstractmethod
    def messages(self, unread_only: bool = False,
                 include_archive: bool = False) -> builtins.list[Message]: ...

    @abstractmethod
    def archived(self) -> builtins.list[Message]: ...

    @abstractmethod
    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int:
        """Mark these messages read; returns how many were newly marked."""

    @abstractmethod
    def compact(self) -> int:
        """Move read messages to the history; returns how many moved."""

    @abstractmethod
    def watcher(self) -> Watcher: ...

    @abstractmethod
    def wait(self, timeout: float | None = None) -> builtins.list[Message]:
        """Block until unread messages exist (or `timeout` passes); return them."""

    def unread(self) -> builtins.list[Message]:
        return self.messages(unread_only=True)

    def wait_with(self, watcher: Watcher, timeout: float | None) -> builtins.list[Message]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            unread = self.unread()
            if unread:
                return unread
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return []
            watcher.wait(remaining)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}@{self.team})"


class TaskList(ABC):
    """The team's task list; `claim`/`claim_next` are atomic with their blocked_by check.
    `check_owner` validates owner names (the team passes its members)."""

    def __init__(self, team: str, check_owner: Callable[[str], str] | None = None) -> None:
        self.team = team
        self._check_owner = check_owner or (lambda name: name)

    @abstractmethod
    def read(self, task_id: str) -> Task | None:
        """The task, or None when missing or unreadable."""

    @abstractmethod
    def list(self) -> builtins.list[Task]: ...

    @abstractmethod
    def add(self, subject: str, description: str = "",
            blocked_by: builtins.list[str] | None = None, owner: str | None = None,
            active_form: str | None = None, files: builtins.list[str] | None = None,
            created_by: str | None = None) -> Task: ...

    @abstractmethod
    def update(self, task_id: str, *, status: str | None = None, owner: object = ...,
               result: str | None = None, subject: str | None = None,
               description: str | None = None, active_form: str | None = None,
               actor: str | None = None) -> Task:
        """Change fields of a task. `actor`: the member asking (None: a person's shell); only
        the owner or the lead may change an owned task's owner or status."""

    @abstractmethod
    def claim(self, task_id: str, name: str, actor: str | None = None) -> Task: ...

    @abstractmethod
    def claim_next(self, name: str) -> Task | None: ...

    @abstractmethod
    def release(self, task_id: str, actor: str | None = None) -> Task: ...

    @abstractmethod
    def release_owned_by(self, name: str,
                         timeout: float | None = None) -> builtins.list[Task]: ...

    def checked_new(self, subject: str, description: str, owner: str | None,
                    active_form: str | None, files: builtins.list[str] | None
                    ) -> tuple[str | None, builtins.list[str]]:
        """A new task's fields checked before anything is written: its owner, its scopes."""
        from swarm.core.records.task import check_sizes, clean_globs  # tasks only, not sends

        if not subject.strip():
            raise BadInputError("a task needs a non-empty subject")
        scopes = clean_globs(files or [])
        check_sizes(subject=subject, description=description, active_form=active_form)
        return (self._check_owner(owner) if owner else None), scopes

    def checked_change(self, status: str | None, owner: object, subject: str | None,
                       description: str | None, active_form: str | None,
                       result: str | None) -> object:
        """A change's fields checked before anything is written; the new owner (UNSET: kept)."""
        from swarm.core.records.task import STATUSES, UNSET, check_sizes

        if status is not None and status not in STATUSES:
            raise BadInputError(f"invalid status {status!r}: use one of {', '.join(STATUSES)}")
        check_sizes(subject=subject, description=description, active_form=active_form,
                    result=result)
        return owner if owner is UNSET or owner is None else self._check_owner(str(owner))

    def get(self, task_id: str) -> Task:
        task = self.read(str(task_id))
        if task is None:
            raise NotFoundError(f"no task {task_id!r} in team {self.team!r}; see `swarm tasks list`")
        return task

    def unfinished_blockers(self, task: Task) -> builtins.list[str]:
        """The blockers not known to be completed: a blocker that cannot be read (missing,
        corrupt, not the task it names) keeps its dependents blocked."""
        from swarm.core.records.task import completed

        return [b for b in task.blocked_by if not completed(self.read(b), b)]

    def is_available(self, task: Task, name: str | None = None) -> bool:
        return (task.status == "pending" and (task.owner is None or task.owner == name)
                and not self.unfinished_blockers(task))


class DocumentMissing(Exception):
    """The team document is missing or unreadable (moved aside): the team says why."""


class TeamDocument(ABC):
    """Where one team's document lives (`config.json`, or a key on Redis), and how a send
    reaches its members' mailboxes against it."""

    def __init__(self, name: str, local_dir: Path) -> None:
        self.name = name
        self.dir = local_dir  # this host's files of the team (worktrees, logs, transcripts)

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def location(self) -> str:
        """Where the document is, for messages: its path (its key on Redis)."""

    @abstractmethod
    def version(self) -> object:
        """Changes whenever the document does (cheap), for caches of what it says."""

    @abstractmethod
    def read(self) -> TeamConfig:
        """The document; DocumentMissing when it is missing or unreadable."""

    @abstractmethod
    def update(self, change: Callable[[TeamConfig], None]) -> TeamConfig:
        """Read-modify-write under the document's lock."""

    @abstractmethod
    def remove(self) -> None: ...

    @abstractmethod
    def config_for_send(self, stand_in: TeamConfig | None) -> TeamConfig:
        """The document a send checks its recipients against (`stand_in` when salvaged)."""

    @abstractmethod
    def deliver(self, recipients: builtins.list[str],
                messages: builtins.list[Message]) -> builtins.list[str]:
        """One message per recipient; the ids delivered. PartialSendError when only some
        landed."""

    def sending(self, send: Callable[[], builtins.list[str]]) -> builtins.list[str]:
        """Run a whole send (checks, then `deliver`); a store may run it again when the
        document changed under it."""
        return send()


class Store(ABC):
    """Where the teams live: their documents, mailboxes, task lists, member state and
    heartbeats, and the watcher over all of a team's changes. It also answers what a caller
    would otherwise ask of one kind of store: whether other hosts share it, how patient to be
    with it, what `swarm doctor` says of it; no caller knows which store it has."""

    kind: str  # "file" | "redis", for messages and reports only
    shared: bool  # other hosts reach the same teams (an ssh teammate needs one that is)

    @abstractmethod
    def mailbox(self, team: str, name: str) -> Mailbox: ...

    @abstractmethod
    def tasks(self, team: str, check_owner: Callable[[str], str] | None = None) -> TaskList: ...

    @abstractmethod
    def team_document(self, team: str) -> TeamDocument: ...

    @abstractmethod
    def create_team(self, base: str, description: str, before: Callable[[str], object]) -> str:
        """Create a team named `base` (or `base-xxxx` on a clash); returns the name. `before`
        runs with the name before the document is written (the lead's key)."""

    @abstractmethod
    def team_names(self) -> builtins.list[str]: ...

    @abstractmethod
    def read_state(self, team: str, name: str) -> AgentState | None: ...

    @abstractmethod
    def write_state(self, team: str, name: str, state: AgentState) -> None: ...

    @abstractmethod
    def update_state(self, team: str, name: str, change: Callable[[AgentState], None],
                     timeout: float | None = None) -> AgentState:
        """Read-modify-write under the state's lock (the agent and observers may both write)."""

    @abstractmethod
    def heartbeat_age(self, team: str, name: str) -> float | None:
        """Seconds since the member's last heartbeat; None when it has none (or it expired)."""

    def heartbeat_expired(self, team: str, name: str) -> bool:
        """The member's heartbeat ran out (a store whose heartbeats expire, shared by hosts
        that cannot see each other's processes); False where its pid tells instead."""
        return False

    def be_patient(self, say: Callable[[str], None]) -> None:
        """From now on, wait out the store's outages instead of failing (an agent process:
        `say` tells its pane). A store with no outages has nothing to wait for."""
        return None

    def give_up_after(self, seconds: float) -> None:
        """Exiting: wait out an outage for `seconds` more at most, then fail."""
        return None

    @abstractmethod
    def describe(self) -> dict[str, object]:
        """What `swarm doctor` says of it: `kind`, `ok`, `where`, a one-line `summary` (or the
        `error` when not ok), `warnings` (lines), and whatever the store adds."""

    @abstractmethod
    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: Waker | None = None,
                reads: Sequence[str] = ()) -> Watcher:
        """Wakes when a message lands in one of `inboxes` (None: any member's), the task list
        changes (`tasks`), one of `states` is written, or one of `reads` marks messages read;
        or when `waker` is set."""

    # -- what is left of a team whose document is gone (core.team.gone) -----------------------
    @abstractmethod
    def state_names(self, team: str) -> builtins.list[str]:
        """The members with a state record, sorted (the team lead's too, when it has one)."""

    @abstractmethod
    def moved_aside(self, team: str) -> builtins.list[str]:
        """Corrupt copies of the team document that a reader moved aside, oldest first."""

    @abstractmethod
    def remains(self, team: str) -> bool:
        """Something of the team is left without its document (so it is not a wrong name)."""

    @abstractmethod
    def gone_teams(self) -> builtins.list[str]:
        """Teams with member state records but no document (what `swarm doctor` reports)."""

    # -- the lead's key (core.team.lead_key) --------------------------------------------------
    @abstractmethod
    def lead_key(self, team: str) -> bytes | None:
        """The stored key as written (hex), None when there is none."""

    @abstractmethod
    def add_lead_key(self, team: str, key_hex: str) -> None:
        """Store the key unless the team has one already (never replaced)."""

    @abstractmethod
    def lead_key_location(self, team: str) -> str:
        """Where the key is, for messages."""
