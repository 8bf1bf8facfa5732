"""Block until files change, at no CPU cost: inotify on Linux, a gentle stat poll elsewhere.

Mailbox writers replace files by rename, so a watcher sees `IN_MOVED_TO` for the file name the
moment a message lands. Create the watcher *before* checking the files, then `wait()`: an event
between the check and the wait is not lost, it makes `wait()` return at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.store.waker import Waker, close_quietly

if TYPE_CHECKING:
    import ctypes

_IN_MODIFY = 0x00000002
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_MODIFY
_EVENT = struct.Struct("iIII")

_LIBC: ctypes.CDLL | None = None
_LIBC_PROBED = False


def _libc() -> ctypes.CDLL | None:
    """libc with inotify, loaded on first use: `swarm send` never watches, so never pays."""
    global _LIBC, _LIBC_PROBED
    if not _LIBC_PROBED:
        _LIBC_PROBED = True
        if sys.platform.startswith("linux"):
            import ctypes
            import ctypes.util

            try:
                # "libc.so.6" first: find_library runs ldconfig in a subprocess.
                try:
                    libc = ctypes.CDLL("libc.so.6", use_errno=True)
                except OSError:
                    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
                libc.inotify_init1  # noqa: B018 - probe that the symbol exists
                _LIBC = libc
            except (OSError, AttributeError, TypeError):
                _LIBC = None
    return _LIBC


def _close_later(fd: int) -> None:
    """Close an inotify fd off the caller's path: the kernel makes close() wait for an RCU grace
    period (8-20 ms measured), which would otherwise land on every wake-up."""
    if sys.is_finalizing():  # a kept watcher's __del__ at exit: Thread.start() hangs on 3.11
        close_quietly(fd)
        return
    try:
        threading.Thread(target=close_quietly, args=(fd,), daemon=True).start()
    except RuntimeError:  # interpreter shutting down: no new threads
        close_quietly(fd)


class FileWatcher:
    """Watch some files (by name in their directories) or whole directories (name None), and
    optionally a `Waker` that other threads set."""

    def __init__(self, targets: list[tuple[Path, str | None]], waker: Waker | None = None) -> None:
        self._targets = targets
        self._waker = waker
        self._fd = -1
        self._wd_names: dict[int, str | None] = {}
        self.degraded = False  # inotify lost a watched directory: polling from then on
        if settings.use_inotify() and _libc() is not None:
            self._init_inotify()
        self._snapshot = self._stat_all() if self._fd < 0 else None

    def _init_inotify(self) -> None:
        libc = _libc()
        assert libc is not None
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return
        by_dir: dict[Path, set[str | None]] = {}
        for directory, name in self._targets:
            by_dir.setdefault(directory, set()).add(name)
        self._filters: dict[int, set[str | None]] = {}
        for directory, names in by_dir.items():
            wd = libc.inotify_add_watch(fd, os.fsencode(directory), _MASK)
            if wd < 0:
                _close_later(fd)
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
        fds = [self._fd] if self._waker is None else [self._fd, self._waker.fileno()]
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(fds, [], [], remaining)
            if not ready:
                return False
            hit = False
            if self._waker is not None and self._waker.fileno() in ready:
                hit = self._waker.clear()
            if self._fd in ready:
                hit = self._drain() or hit  # drained either way: no stale event stays queued
            if hit:
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
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
                offset += _EVENT.size + length
                if mask & _IN_IGNORED:
                    # A watched directory was removed (e.g. the team was deleted): its watch is
                    # gone for good, so poll by stat from now on rather than sleep forever.
                    self._degrade()
                    return True
                if mask & _IN_Q_OVERFLOW or self._matches(
                    wd, raw.rstrip(b"\0").decode(errors="replace")
                ):
                    hit = True  # an overflow may have dropped our event: let the caller look

    def _degrade(self) -> None:
        self.degraded = True
        self.close()
        self._snapshot = self._stat_all()

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
            if self._waker is None:
                time.sleep(max(0.0, pause))
            elif (select.select([self._waker.fileno()], [], [], max(0.0, pause))[0]
                  and self._waker.clear()):
                return True
            interval = min(interval * 2, 0.1)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            _close_later(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> FileWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
