"""Waiting on the Redis store: a blocking XREAD on the team's change feed, never a poll.

Every write that a waiter may care about (a message delivered, a task changed, a member state
written, the team file changed) adds one entry to `swarm:<team>:events` in the same
transaction. A watcher remembers the last entry it saw and blocks in XREAD until a newer one
comes; entries for others (another member's mailbox) are skipped without waking the caller.
With a `Waker` (a self-pipe other threads of the process set), a helper thread does the
blocking read and wakes a private pipe, and `wait` selects on both.
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from swarm.core.store.redis.connection import BLOCK_SLICE_MS

if TYPE_CHECKING:
    from swarm.core.store.redis.connection import RedisConnection
    from swarm.core.store.waker import Waker


class RedisWatcher:
    def __init__(self, connection: RedisConnection, team: str, inboxes: list[str] | None, tasks: bool,
                 states: list[str], waker: object | None = None,
                 reads: Sequence[str] = ()) -> None:
        self.connection = connection
        self.feed = connection.key(team, "events")
        self.inboxes = None if inboxes is None else set(inboxes)
        self.tasks = tasks
        self.states = set(states)
        self.reads = set(reads)  # members whose reading wakes us (`swarm send --wait-read`)
        self.degraded = False
        self._closed = threading.Event()
        self._last = self._newest()  # created before the caller checks: nothing is missed
        self._waker: Waker | None = waker  # type: ignore[assignment]
        self._pipe: Waker | None = None
        self._thread: threading.Thread | None = None
        if self._waker is not None:
            from swarm.core.store.waker import Waker

            self._pipe = Waker()
            self._thread = threading.Thread(target=self._follow, name="store-watch", daemon=True)
            self._thread.start()

    def _newest(self) -> str:
        found: Any = self.connection.run(lambda: self.connection.client.xrevrange(self.feed, count=1))
        return found[0][0].decode() if found else "0-0"

    def _wanted(self, fields: dict[bytes, bytes]) -> bool:
        kind = fields.get(b"kind", b"").decode()
        name = fields.get(b"name", b"").decode()
        if kind == "inbox":
            return self.inboxes is None or name in self.inboxes
        if kind == "tasks":
            return self.tasks
        if kind == "state":
            return name in self.states
        if kind == "read":
            return name in self.reads
        return kind == "config" and self.inboxes is None  # a team-wide watcher: members changed

    def _read(self, block_ms: int) -> bool:
        """One blocking XREAD of at most `block_ms`; True when a wanted entry came."""
        def read() -> Any:
            return self.connection.client.xread({self.feed: self._last}, count=256, block=block_ms)

        reply = self.connection.run(read)
        hit = False
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                self._last = entry_id.decode()
                hit = hit or self._wanted(fields)
        return hit

    def wait(self, timeout: float | None) -> bool:
        if self._pipe is not None:
            return self._wait_both(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            # BLOCK 0 would block forever; a slice keeps the socket timeout meaningful.
            block = BLOCK_SLICE_MS if remaining is None else min(BLOCK_SLICE_MS,
                                                                 max(1, int(remaining * 1000)))
            if self._read(block):
                return True

    def _wait_both(self, timeout: float | None) -> bool:
        assert self._pipe is not None and self._waker is not None
        ready, _, _ = select.select([self._pipe.fileno(), self._waker.fileno()], [], [], timeout)
        hit = False
        if self._waker.fileno() in ready:
            hit = self._waker.clear()
        if self._pipe.fileno() in ready:
            hit = self._pipe.clear() or hit
        return hit

    def _follow(self) -> None:
        pipe = self._pipe  # its own reference: `close` drops the attribute while this runs
        assert pipe is not None
        while not self._closed.is_set():
            try:
                if self._read(1000):
                    pipe.set()
            except Exception:  # the store went away for good (not patient): wake the caller
                pipe.set()
                self._closed.wait(1.0)

    def close(self) -> None:
        self._closed.set()
        if self._pipe is not None:
            pipe, self._pipe = self._pipe, None
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                with contextlib.suppress(RuntimeError):
                    thread.join(2.0)
            pipe.close()

    def __enter__(self) -> RedisWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
