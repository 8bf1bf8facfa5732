"""Which store holds the teams (SWARM_STORE), and the watchers that wait on it.

`remote()` is None on the file store (the default: nothing changes, nothing is imported) and
the process's RedisStore when SWARM_STORE is a redis:// URL. Interface: `swarm.core.store.api`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.store import paths

if TYPE_CHECKING:
    from swarm.core.store.api import Watcher
    from swarm.core.store.file.watch import Waker
    from swarm.core.store.redis.connection import RedisStore

_STORES: dict[tuple[int, str], RedisStore] = {}  # per process (a fork gets its own pool)


def selected() -> str:
    """`file`, or the Redis URL."""
    return settings.store()


def remote() -> RedisStore | None:
    url = settings.store()
    if url == "file":
        return None
    key = (os.getpid(), url)
    found = _STORES.get(key)
    if found is None:
        from swarm.core.store.redis.connection import (
            RedisStore,  # MissingExtraError without redis-py
        )

        found = _STORES[key] = RedisStore(url)
    return found


def team_watcher(team: str, inboxes: list[str] | None, tasks: bool, states: list[str],
                 waker: Waker | None = None, reads: Sequence[str] = ()) -> Watcher:
    """Wakes when a message lands in one of `inboxes` (None: any member's), the task list
    changes (`tasks`), one of `states` is written, or one of `reads` marks messages read; or
    when `waker` is set."""
    store = remote()
    if store is not None:
        return store.watcher(team, inboxes, tasks, states, waker, reads)
    from swarm.core.store.file.watch import FileWatcher

    targets: list[tuple[object, str | None]] = []
    if inboxes is None:
        targets.append((paths.inboxes_dir(team), None))
    else:
        targets += [(paths.inboxes_dir(team), paths.inbox(team, n).name) for n in inboxes]
    # A reader rewrites its mailbox file (by rename) when it marks messages read.
    targets += [(paths.inboxes_dir(team), paths.inbox(team, n).name) for n in reads
                if inboxes is not None and n not in inboxes]
    if tasks:
        targets.append((paths.tasks_dir(team), None))
    for name in states:
        directory = paths.agent_dir(team, name)
        if directory.is_dir():
            targets.append((directory, "state.json"))
    return FileWatcher(targets, waker)  # type: ignore[arg-type]
