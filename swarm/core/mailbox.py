"""One agent's mailbox: a lock-guarded JSON array of live messages plus an append-only archive.

Only unread (and not yet compacted) messages stay in the live file, so the cost of a send depends
on what is waiting, not on history. Read messages move to `<name>.archive.jsonl`.
Readers never lock: every write is an atomic rename, so a read is always a whole snapshot.

Senders combine under contention. A sender that finds the mailbox lock taken appends its message
to `<name>.json.pending` (under a shared lock on that file) and then waits for the mailbox lock;
whoever holds that lock next moves every queued message into the live file with one rewrite and
removes the queue. N waiting senders thus cost one rename, not N (a rename over a file costs
0.5-1.5 ms on ext4), and a sender still returns only once its message is in the live file.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from pydantic import TypeAdapter, ValidationError

from swarm.core import paths
from swarm.core.protocol import Message
from swarm.core.store import (
    ensure_dir,
    lock_fd,
    locked,
    read_adapted,
    try_locked,
    warn,
    write_adapted,
)
from swarm.core.watch import FileWatcher

MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_WATCHERS = threading.local()  # per thread: {mailbox path: (pid, FileWatcher)}
_WATCHERS_KEPT = 4


class Mailbox:
    def __init__(self, team: str, name: str) -> None:
        self.team = team
        self.name = name
        self.path = paths.inbox(team, name)
        self.pending_path = self.path.with_name(self.path.name + ".pending")

    @functools.cached_property
    def archive_path(self) -> Path:
        # Lazy: a send never touches the archive, and building paths is a tenth of its cost.
        return paths.inbox_archive(self.team, self.name)

    def __repr__(self) -> str:
        return f"Mailbox({self.name}@{self.team})"

    # -- reading (lock-free snapshots) -------------------------------------------------------
    def _load(self) -> list[Message]:
        return read_adapted(self.path, MESSAGES) or []

    def messages(self, unread_only: bool = False, include_archive: bool = False) -> list[Message]:
        live = self._load()
        if unread_only:
            return [m for m in live if not m.read]
        if not include_archive:
            return live
        archived = self.archived()
        seen = {m.id for m in live}
        return [m for m in archived if m.id not in seen] + live

    def unread(self) -> list[Message]:
        return self.messages(unread_only=True)

    def archived(self) -> list[Message]:
        """Every compacted message, oldest first; a torn line (a crash mid-append) is skipped."""
        try:
            lines = self.archive_path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        out: dict[str, Message] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                message = Message.model_validate_json(line)
            except (ValidationError, ValueError):
                warn(f"{self.archive_path}: skipping unreadable line {number}")
                continue
            out.setdefault(message.id, message)
        return list(out.values())

    def watcher(self) -> FileWatcher:
        ensure_dir(self.path.parent)
        return FileWatcher([(self.path.parent, self.path.name)])

    def wait(self, timeout: float | None = None) -> list[Message]:
        """Block until unread messages exist (or `timeout` passes); return them."""
        return self.wait_with(_kept_watcher(self), timeout)

    def wait_with(self, watcher: FileWatcher, timeout: float | None) -> list[Message]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            unread = self.unread()
            if unread:
                return unread
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return []
            watcher.wait(remaining)

    # -- writing (under the mailbox lock) ----------------------------------------------------
    def deliver(self, messages: list[Message]) -> None:
        """Put `messages` into the live file; returns once they are there."""
        if not messages:
            return
        if not self.path.parent.is_dir():
            ensure_dir(self.path.parent)
        with try_locked(self.path) as mine:
            if mine:
                self._update(lambda live: [*live, *messages])
                return
        # Busy: queue, then wait for the lock. Whoever holds it next writes our messages too.
        queued = self._enqueue(messages)
        with locked(self.path):
            try:
                current = os.stat(self.pending_path).st_ino
            except FileNotFoundError:
                current = None
            # Our queue file is gone only once its messages are live (a committer writes, then
            # unlinks). Then leave later messages to their own senders: they come in bigger
            # batches. A reused inode number only costs one needless commit, never a loss.
            if current == queued:
                self._update(lambda live: None)

    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int:
        """Mark these messages read; by default move every read message to the archive."""
        wanted = set(ids)
        if not wanted:
            return 0
        marked = 0

        def change(live: list[Message]) -> list[Message] | None:
            nonlocal marked
            for message in live:
                if message.id in wanted and not message.read:
                    message.read = True
                    marked += 1
            kept = self._archive_read(live) if compact else live
            return kept if marked or len(kept) != len(live) else None

        with locked(self.path):
            self._update(change)
        return marked

    def compact(self) -> int:
        """Move read messages out of the live file into the archive; return how many moved."""
        if not self.path.exists():
            return 0
        moved = 0

        def change(live: list[Message]) -> list[Message] | None:
            nonlocal moved
            kept = self._archive_read(live)
            moved = len(live) - len(kept)
            return kept if moved else None

        with locked(self.path):
            self._update(change)
        return moved

    def _update(self, change: Callable[[list[Message]], list[Message] | None]) -> None:
        """Under the mailbox lock: take in queued messages, apply `change` (None: unchanged),
        write the live file once, then drop the queue. Queue before rewrite: a crash in between
        re-queues (ids already live are skipped), it never loses."""
        try:  # os.open: a missing queue (the usual case) fails faster than io.open
            queue: BinaryIO | None = os.fdopen(os.open(self.pending_path, os.O_RDWR), "r+b")
        except FileNotFoundError:
            queue = None
        try:
            live = self._load()
            grown = False
            if queue is not None:
                # Exclusive: waits out appends in progress, and blocks new ones until unlinked.
                lock_fd(queue.fileno())
                known = {m.id for m in live}
                for message in self._parse_queue(queue.read()):
                    if message.id not in known:
                        known.add(message.id)
                        live.append(message)
                        grown = True
            changed = change(live)
            if changed is not None or grown:
                write_adapted(self.path, MESSAGES, live if changed is None else changed, swap=True)
            if queue is not None:
                os.unlink(self.pending_path)
        finally:
            if queue is not None:
                queue.close()

    def _enqueue(self, messages: list[Message]) -> int:
        """Append to the queue file; return its inode number."""
        payload = b"".join(m.model_dump_json(by_alias=True).encode() + b"\n" for m in messages)
        while True:
            fd = os.open(self.pending_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "ab", buffering=0):  # closes fd (and the lock)
                lock_fd(fd, shared=True)
                info = os.fstat(fd)
                if info.st_nlink == 0:
                    continue  # taken in and unlinked while we waited for the lock: a new queue
                os.write(fd, payload)
                return info.st_ino

    def _parse_queue(self, data: bytes) -> list[Message]:
        out = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(Message.model_validate_json(line))
            except (ValidationError, ValueError):
                warn(f"{self.pending_path}: skipping unreadable line {number}")
        return out

    def _archive_read(self, live: list[Message]) -> list[Message]:
        done = [m for m in live if m.read]
        if not done:
            return live
        # Archive first, then rewrite the live file: a crash in between re-delivers (at least
        # once), it never loses. The archive de-duplicates by id when read.
        payload = b"".join(m.model_dump_json(by_alias=True).encode() + b"\n" for m in done)
        fd = os.open(self.archive_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # A torn last line (a crash mid-append) must not swallow the next message.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            os.write(fd, payload)
        finally:
            os.close(fd)
        return [m for m in live if not m.read]


def _kept_watcher(box: Mailbox) -> FileWatcher:
    """This thread's watcher on `box`, kept open across wait() calls: closing an inotify watcher
    costs the kernel 8-20 ms, which would otherwise follow every wake-up."""
    kept: dict[Path, tuple[int, FileWatcher]] | None = getattr(_WATCHERS, "kept", None)
    if kept is None:
        kept = _WATCHERS.kept = {}
    pid = os.getpid()
    entry = kept.pop(box.path, None)
    if entry is not None and (entry[0] != pid or entry[1].degraded):
        entry[1].close()  # inherited across fork, or its directory went away
        entry = None
    if entry is None:
        entry = (pid, box.watcher())
    kept[box.path] = entry  # most recently used last
    while len(kept) > _WATCHERS_KEPT:
        kept.pop(next(iter(kept)))[1].close()
    return entry[1]
