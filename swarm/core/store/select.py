"""Which store holds the teams (SWARM_STORE): the one place that picks the file or the Redis
store. Callers ask a `Team` for its document, mailboxes and tasks (`team.inbox(name)`,
`team.tasks`), and `team_store()` for what is not one team's (member state, the watcher, and
what a store says of itself: `shared`, `be_patient`, `describe`). Interface:
`swarm.core.store.api`. The file store is the default (nothing of Redis is imported).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarm import settings

if TYPE_CHECKING:
    from swarm.core.store.api import Store, Watcher
    from swarm.core.store.waker import Waker

_STORES: dict[tuple[int, str], Store] = {}  # per process (a fork gets its own pool)


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


def team_watcher(team: str, inboxes: list[str] | None, tasks: bool, states: list[str],
                 waker: Waker | None = None, reads: Sequence[str] = ()) -> Watcher:
    """Wakes when a message lands in one of `inboxes` (None: any member's), the task list
    changes (`tasks`), one of `states` is written, or one of `reads` marks messages read; or
    when `waker` is set."""
    return team_store().watcher(team, inboxes, tasks, states, waker, reads)
