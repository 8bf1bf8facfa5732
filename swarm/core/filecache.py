"""A value derived from one file, derived again only when the file changed on disk.

The key is the file's (inode, mtime in ns, size): every store write replaces the file (a new
inode and mtime), so a changed file never looks unchanged; a missing file has the key
(0, 0, 0). One stat per use instead of a read and a parse.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
Key = tuple[int, int, int]


def stat_key(path: Path) -> Key:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0)
    return (info.st_ino, info.st_mtime_ns, info.st_size)


class FileCache(Generic[T]):
    """`load()`'s value for `path` as it is now; an error from `load` is raised, not cached."""

    def __init__(self, path: Path, load: Callable[[], T]) -> None:
        self.path = path
        self._load = load
        self._entry: tuple[Key, T] | None = None
        self._lock = threading.Lock()  # subagent threads share their agent's caches

    def get(self) -> T:
        key = stat_key(self.path)
        with self._lock:
            if self._entry is None or self._entry[0] != key:
                self._entry = (key, self._load())
            return self._entry[1]

    def changed(self) -> bool:
        """Has the file changed since the value was last loaded (or was it never loaded)?"""
        entry = self._entry
        return entry is None or entry[0] != stat_key(self.path)
