"""One agent's mailbox: a lock-guarded JSON array of live messages plus an append-only archive.

Only unread (and not yet compacted) messages stay in the live file, so the cost of a send depends
on what is waiting, not on history. Read messages move to `<name>.archive.jsonl`.
Readers never lock: every write is an atomic rename, so a read is always a whole snapshot.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable

from pydantic import TypeAdapter, ValidationError

from swarm import paths
from swarm.protocol import Message
from swarm.store import ensure_dir, locked, read_adapted, warn, write_adapted
from swarm.watch import FileWatcher

MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class Mailbox:
    def __init__(self, team: str, name: str) -> None:
        self.team = team
        self.name = name
        self.path = paths.inbox(team, name)
        self.archive_path = paths.inbox_archive(team, name)

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
        with self.watcher() as watcher:
            return self.wait_with(watcher, timeout)

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
        ensure_dir(self.path.parent)
        with locked(self.path):
            live = self._load()
            live.extend(messages)
            write_adapted(self.path, MESSAGES, live)

    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int:
        """Mark these messages read; by default move every read message to the archive."""
        wanted = set(ids)
        if not wanted:
            return 0
        with locked(self.path):
            live = self._load()
            marked = 0
            for message in live:
                if message.id in wanted and not message.read:
                    message.read = True
                    marked += 1
            kept = self._archive_read(live) if compact else live
            if marked or len(kept) != len(live):
                write_adapted(self.path, MESSAGES, kept)
        return marked

    def compact(self) -> int:
        """Move read messages out of the live file into the archive; return how many moved."""
        if not self.path.exists():
            return 0
        with locked(self.path):
            live = self._load()
            kept = self._archive_read(live)
            moved = len(live) - len(kept)
            if moved:
                write_adapted(self.path, MESSAGES, kept)
        return moved

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


def dump_messages(messages: list[Message]) -> list[dict[str, object]]:
    return [json.loads(m.model_dump_json(by_alias=True)) for m in messages]
