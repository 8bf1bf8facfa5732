"""One agent's mailbox: an append-only JSON Lines file of live messages, plus an archive.

In `teams/<team>/inboxes/`: `<name>.jsonl` holds the live messages, one JSON object per line,
oldest first; `<name>.jsonl.lock` is its lock; `<name>.archive.jsonl` keeps read history.

A send takes the lock (waiting at most SWARM_LOCK_TIMEOUT), appends its lines with one write and
lets go: its cost does not depend on how many messages wait unread. Readers never lock. The file
only grows by whole lines under the lock, or is replaced by an atomic rename, so a read is a
consistent snapshot once a trailing line without its newline (an append in flight) is left out.
The reader compacts: `mark_read`/`compact` append the read messages to the archive, then rewrite
the live file without them. A line that does not parse is moved aside alone, to
`<name>.jsonl.corrupt-<timestamp>`, and every other message stays deliverable. A newer
`idle_notification` from a member supersedes its older unread ones: they read as read, and the
next compaction archives them.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from msgspec import Struct

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.protocol import Message
from swarm.core.store import paths
from swarm.core.store.api import Mailbox, Watcher, superseded
from swarm.core.store.disk import (
    FILE_MODE,
    append_line,
    ensure_dir,
    locked,
    signals_deferred,
    try_locked,
    warn,
    write_bytes_atomic,
)
from swarm.core.store.file.watch import FileWatcher
from swarm.errors import LockTimeoutError

_WATCHERS = threading.local()  # per thread: {mailbox path: (pid, FileWatcher)}
_WATCHERS_KEPT = 4


class _Entry(Struct, dict=True):
    raw: bytes  # the line as it is on disk, without its newline
    message: Message
    dirty: bool = False  # a flag changed: write it out again


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def _parse(lines: list[bytes]) -> tuple[list[_Entry], list[bytes]]:
    """Parsed entries, and the lines that do not parse (each on its own: one bad line is one)."""
    good, bad = [], []
    for line in lines:
        try:
            good.append(_Entry(line, records.decode(line, Message)))
        except (records.DecodeError, ValueError):
            bad.append(line)
    return good, bad


def _encode(messages: Iterable[Message]) -> bytes:
    return b"".join(records.encode(m) + b"\n" for m in messages)


class FileMailbox(Mailbox):
    """One member's mailbox file."""

    def __init__(self, team: str, name: str) -> None:
        super().__init__(team, name)
        self.path = paths.inbox(team, name)
        # The last parse: (complete lines as read, their entries, the lines that did not parse).
        # The file only grows until a compaction replaces it, so a later read that starts with
        # the same bytes parses only what was appended since. Entries are never mutated.
        self._cache: tuple[bytes, list[_Entry], list[bytes]] = (b"", [], [])

    @functools.cached_property
    def archive_path(self) -> Path:
        # Lazy: a send never touches the archive.
        return paths.inbox_archive(self.team, self.name)

    # -- reading (lock-free snapshots) -------------------------------------------------------
    def _read(self) -> bytes:
        try:
            with open(self.path, "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return b""

    def _parse_file(self, data: bytes) -> tuple[list[_Entry], list[bytes], bytes]:
        """Entries and unreadable lines of `data`'s complete lines, and the trailing piece that
        has no newline yet."""
        end = data.rfind(b"\n") + 1
        complete, rest = data[:end], data[end:]
        known, entries, bad = self._cache
        if known and complete.startswith(known):
            more, more_bad = _parse(_lines(complete[len(known):]))
            entries, bad = entries + more, bad + more_bad
        else:
            entries, bad = _parse(_lines(complete))
        self._cache = (complete, entries, bad)
        return list(entries), list(bad), rest

    def _load(self) -> list[Message]:
        entries, bad, _in_flight = self._parse_file(self._read())
        if bad:
            self._quarantine_soon(len(bad))
        view = [e.message for e in entries]
        for index in superseded([e.message for e in entries]):
            view[index] = records.replace(view[index], read=True)
        return view

    def _quarantine_soon(self, count: int) -> None:
        """Move unreadable lines aside now if the lock is free; otherwise the next read will."""
        with try_locked(self.path) as mine:
            if mine:
                self._rewrite(set(), archive=False)
                return
        warn(f"{self.path}: skipping {count} unreadable line(s); they are moved aside on a "
             "later read")

    def messages(self, unread_only: bool = False, include_archive: bool = False) -> list[Message]:
        live = self._load()
        if unread_only:
            return [m for m in live if not m.read]
        if not include_archive:
            return live
        archived = self.archived()  # after the live read: a message compacted meanwhile is here
        seen = {m.id for m in live}
        return [m for m in archived if m.id not in seen] + live

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
                message = records.decode(line, Message)
            except (records.DecodeError, ValueError):
                warn(f"{self.archive_path}: skipping unreadable line {number}")
                continue
            out.setdefault(message.id, message)
        return list(out.values())

    def watcher(self) -> Watcher:
        ensure_dir(self.path.parent)
        return FileWatcher([(self.path.parent, self.path.name)])

    def wait(self, timeout: float | None = None) -> list[Message]:
        """Block until unread messages exist (or `timeout` passes); return them."""
        return self.wait_with(_kept_watcher(self), timeout)

    # -- writing (under the mailbox lock) ----------------------------------------------------
    def deliver(self, messages: list[Message], timeout: float | None = None) -> None:
        """Append `messages`; returns once they are in the file. Waits for the lock at most
        `timeout` (default SWARM_LOCK_TIMEOUT), then raises LockTimeoutError naming the holder
        with nothing written: a send is delivered or withdrawn, never left to land later."""
        self.delivered = []
        if not messages:
            return
        payload = _encode(messages)
        if not self.path.parent.is_dir():
            ensure_dir(self.path.parent)
        wait = settings.lock_timeout() if timeout is None else timeout
        try:
            with locked(self.path, wait), signals_deferred():
                self._append(payload)
                self.delivered = [m.id for m in messages]
        except LockTimeoutError as exc:
            raise LockTimeoutError(f"could not deliver to {self.name}: {exc}; nothing was sent"
                                   ) from None

    def _append(self, payload: bytes) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            # A writer killed mid-line left no newline: end that line, so it is quarantined
            # alone instead of swallowing this message.
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
            except BaseException:
                os.ftruncate(fd, size)  # withdrawn whole (a full disk, an interrupt)
                raise
        finally:
            os.close(fd)

    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int:
        """Mark these messages read; by default move every read message to the archive."""
        wanted = set(ids)
        if not wanted:
            return 0
        self._parse_file(self._read())  # parse outside the lock: under it, only what was added
        with locked(self.path):
            return self._rewrite(wanted, archive=compact)[0]

    def compact(self) -> int:
        """Move read messages out of the live file into the archive; return how many moved."""
        if not self.path.exists():
            return 0
        self._parse_file(self._read())
        with locked(self.path):
            return self._rewrite(set(), archive=True)[1]

    def _rewrite(self, mark: set[str], archive: bool) -> tuple[int, int]:
        """Under the lock: mark `mark` (and superseded idle notifications) read, quarantine
        unreadable lines, archive read messages if `archive`, and rewrite the live file once if
        anything changed. Archive before rewrite: a crash in between re-delivers, never loses.
        Returns how many of `mark` were newly marked, and how many messages were archived."""
        entries, bad, torn = self._parse_file(self._read())
        if torn.strip():
            bad.append(torn)  # no writer is mid-append while we hold the lock: a dead one's
        marked = 0
        older_idle = superseded([e.message for e in entries])
        for index, entry in enumerate(entries):
            message = entry.message
            if not message.read and (message.id in mark or index in older_idle):
                entries[index] = _Entry(entry.raw, records.replace(message, read=True), True)
                marked += message.id in mark
        done = [e.message for e in entries if e.message.read] if archive else []
        kept = [e for e in entries if not e.message.read] if archive else entries
        if bad:
            self._set_aside(bad)
        if done:
            append_line(self.archive_path, _encode(done))
        if bad or done or any(e.dirty for e in kept):
            out = [_encode([e.message])[:-1] if e.dirty else e.raw for e in kept]
            data = b"".join(line + b"\n" for line in out)
            write_bytes_atomic(self.path, data, swap=True)
            fresh = [_Entry(line, e.message) for line, e in zip(out, kept, strict=True)]
            self._cache = (data, fresh, [])
        return marked, len(done)

    def _set_aside(self, bad: list[bytes]) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        append_line(aside, b"".join(line + b"\n" for line in bad))
        warn(f"{self.path}: {len(bad)} unreadable line(s) moved aside to {aside.name}; "
             "the other messages stay deliverable")


def _kept_watcher(box: FileMailbox) -> Watcher:
    """This thread's watcher on `box`, kept open across wait() calls: closing an inotify watcher
    costs the kernel 8-20 ms, which would otherwise follow every wake-up."""
    kept: dict[Path, tuple[int, Watcher]] | None = getattr(_WATCHERS, "kept", None)
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

