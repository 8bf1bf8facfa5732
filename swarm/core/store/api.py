"""The store interface: what Team, Mailbox, TaskList and the state functions ask of where a team
lives. Typing only: nothing here runs.

Two stores implement it. The file store (`SWARM_STORE` unset or `file`) is `Mailbox`,
`TaskList`, `Team` and `swarm.core.model.state` themselves, on files under `$SWARM_HOME/teams`. The
Redis store (`SWARM_STORE=redis://...`, `swarm.core.redis_*`) subclasses them: constructing a
`Mailbox`, `TaskList` or `Team` while Redis is selected gives the Redis class (as
`pathlib.Path()` gives a `PosixPath`), so callers and the CLI never choose. `swarm.core.store.select`
picks the store and builds watchers.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from swarm.core.model.protocol import Message
    from swarm.core.model.state import AgentState
    from swarm.core.store.file.tasks import Task


class Watcher(Protocol):
    """Blocks until something it watches changes: inotify on files, a blocking XREAD on Redis."""

    degraded: bool

    def wait(self, timeout: float | None) -> bool:
        """True when something changed, False when `timeout` ran out."""

    def close(self) -> None: ...

    def __enter__(self) -> Watcher: ...

    def __exit__(self, *exc: object) -> None: ...


class MailboxStore(Protocol):
    """One member's mailbox: append, read unread, mark read; history kept apart."""

    delivered: builtins.list[str]

    def deliver(self, messages: builtins.list[Message], timeout: float | None = None) -> None:
        """Append whole; on failure nothing lands (`delivered` names what did)."""

    def messages(self, unread_only: bool = False,
                 include_archive: bool = False) -> builtins.list[Message]: ...

    def unread(self) -> builtins.list[Message]: ...

    def archived(self) -> builtins.list[Message]: ...

    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int: ...

    def compact(self) -> int: ...

    def watcher(self) -> Watcher: ...

    def wait(self, timeout: float | None = None) -> builtins.list[Message]: ...


class TaskStore(Protocol):
    """The team's task list; `claim`/`claim_next` are atomic with their blocked_by check."""

    def get(self, task_id: str) -> Task: ...

    def list(self) -> builtins.list[Task]: ...

    def add(self, subject: str, description: str = "",
            blocked_by: builtins.list[str] | None = None, owner: str | None = None,
            active_form: str | None = None, files: builtins.list[str] | None = None) -> Task: ...

    def claim(self, task_id: str, name: str, actor: str | None = None) -> Task: ...

    def claim_next(self, name: str) -> Task | None: ...

    def release(self, task_id: str, actor: str | None = None) -> Task: ...

    def release_owned_by(self, name: str,
                         timeout: float | None = None) -> builtins.list[Task]: ...


class TeamDocs(Protocol):
    """Team-wide documents that are not mailboxes or tasks: the team file, member state and
    heartbeats, and the watcher over all of a team's changes."""

    kind: str  # "file" | "redis"

    def team_names(self) -> builtins.list[str]: ...

    def read_state(self, team: str, name: str) -> AgentState | None: ...

    def write_state(self, team: str, name: str, state: AgentState) -> None: ...

    def update_state(self, team: str, name: str, change: Callable[[AgentState], None],
                     timeout: float | None = None) -> AgentState: ...

    def heartbeat_age(self, team: str, name: str) -> float | None:
        """Seconds since the member's last heartbeat; None when it has none (or it expired)."""

    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: object | None = None,
                reads: Sequence[str] = ()) -> Watcher: ...
