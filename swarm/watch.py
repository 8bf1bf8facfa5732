"""Block until files change, at no CPU cost: inotify on Linux, a gentle stat poll elsewhere.

Mailbox writers replace files by rename, so a watcher sees `IN_MOVED_TO` for the file name the
moment a message lands. Create the watcher *before* checking the files, then `wait()`: an event
between the check and the wait is not lost, it makes `wait()` return at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import struct
import sys
import time
from pathlib import Path

_IN_MODIFY = 0x00000002
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_MODIFY
_EVENT = struct.Struct("iIII")


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - probe that the symbol exists
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc()


class FileWatcher:
    """Watch some files (by name in their directories) or whole directories (name None)."""

    def __init__(self, targets: list[tuple[Path, str | None]]) -> None:
        self._targets = targets
        self._fd = -1
        self._wd_names: dict[int, str | None] = {}
        if _LIBC is not None and os.environ.get("SWARM_NO_INOTIFY") != "1":
            self._init_inotify()
        self._snapshot = self._stat_all() if self._fd < 0 else None

    def _init_inotify(self) -> None:
        assert _LIBC is not None
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return
        by_dir: dict[Path, set[str | None]] = {}
        for directory, name in self._targets:
            by_dir.setdefault(directory, set()).add(name)
        self._filters: dict[int, set[str | None]] = {}
        for directory, names in by_dir.items():
            wd = _LIBC.inotify_add_watch(fd, os.fsencode(directory), _MASK)
            if wd < 0:
                os.close(fd)
                return
            self._filters[wd] = names
        self._fd = fd

    def _matches(self, wd: int, name: str) -> bool:
        if name.endswith(".lock"):
            # Lock files carry no data, and closing one we locked reads as IN_CLOSE_WRITE: a
            # watcher of the tasks directory would wake itself on every claim attempt, forever.
            return False
        names = self._filters.get(wd, set())
        return None in names or name in names

    def wait(self, timeout: float | None) -> bool:
        """Return True when a watched file changed, False when `timeout` ran out."""
        if self._fd < 0:
            return self._poll(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                return False
            if self._drain():
                return True

    def _drain(self) -> bool:
        hit = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return hit
            offset = 0
            while offset < len(data):
                wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
                offset += _EVENT.size + length
                if self._matches(wd, raw.rstrip(b"\0").decode(errors="replace")):
                    hit = True

    def _stat_all(self) -> list[tuple[int, int, int] | None]:
        out: list[tuple[int, int, int] | None] = []
        for directory, name in self._targets:
            path = directory if name is None else directory / name
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except FileNotFoundError:
                out.append(None)
        return out

    def _poll(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = 0.005
        while True:
            current = self._stat_all()
            if current != self._snapshot:
                self._snapshot = current
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            pause = interval if deadline is None else min(interval, deadline - time.monotonic())
            time.sleep(max(0.0, pause))
            interval = min(interval * 2, 0.1)

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> FileWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
