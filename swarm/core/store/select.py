"""Which store holds the teams (SWARM_STORE): the one place that picks the file or the Redis
store. Callers ask `team_store()` for a mailbox, a task list or a team document (or a `Team`
for its own: `team.inbox(name)`, `team.tasks`). Interface: `swarm.core.store.api`.

The file store is the default (nothing of Redis is imported). `remote()` is the process's
Redis connection when SWARM_STORE is a redis:// URL, None on files: for what only Redis has
(patience with an unreachable server, its info for `doctor`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarm import settings

if TYPE_CHECKING:
    from swarm.core.store.api import Mailbox, Store, Watcher
    from swarm.core.store.redis.connection import RedisConnection
    from swarm.core.store.waker import Waker

_STORES: dict[tuple[int, str], Store] = {}  # per process (a fork gets its own pool)


def selected() -> str:
    """`file`, or the Redis URL."""
    return settings.store()


def team_store() -> Store:
    """The store SWARM_STORE names, made once per process."""
    url = settings.store()
    key = (os.getpid(), url)
    found = _STORES.get(key)
    if found is None:
        if url == "file":
            from swarm.core.store.file.store import FileStore

            found = FileStore()
        else:
            from swarm.core.store.redis.connection import RedisConnection  # MissingExtraError
            from swarm.core.store.redis.store import RedisStore

            found = RedisStore(RedisConnection(url))
        _STORES[key] = found
    return found


def remote() -> RedisConnection | None:
    """The Redis connection, or None on the file store."""
    store = team_store()
    if store.kind == "file":
        return None
    from swarm.core.store.redis.store import RedisStore

    assert isinstance(store, RedisStore)
    return store.connection


def open_mailbox(team: str, name: str) -> Mailbox:
    """A member's mailbox, without checking that it is a member (`Team.inbox` checks)."""
    return team_store().mailbox(team, name)


def team_watcher(team: str, inboxes: list[str] | None, tasks: bool, states: list[str],
                 waker: Waker | None = None, reads: Sequence[str] = ()) -> Watcher:
    """Wakes when a message lands in one of `inboxes` (None: any member's), the task list
    changes (`tasks`), one of `states` is written, or one of `reads` marks messages read; or
    when `waker` is set."""
    return team_store().watcher(team, inboxes, tasks, states, waker, reads)
