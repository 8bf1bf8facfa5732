"""A value derived from one document (a file, or the team file on Redis), derived again only when
the document changed: the one cache of its kind.

The key says whether the document changed, cheaply: for a file its (inode, mtime in ns, size)
(`stat_key`: every store write replaces the file, a new inode and mtime, so a changed file never
looks unchanged; a missing file has the key (0, 0, 0)); on Redis the team file's version counter
(`Team.config_key`). One stat, or one GET, per use instead of a read and a parse.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def stat_key(path: Path) -> tuple[int, int, int]:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0)
    return (info.st_ino, info.st_mtime_ns, info.st_size)


class ChangeCache(Generic[T]):
    """`load()`'s value while `key()` stays the same; an error from `load` is raised, not
    cached."""

    def __init__(self, key: Callable[[], object], load: Callable[[], T]) -> None:
        self._key = key
        self._load = load
        self._entry: tuple[object, T] | None = None
        self._lock = threading.Lock()  # subagent threads share their agent's caches

    @classmethod
    def of_file(cls, path: Path, load: Callable[[], T]) -> ChangeCache[T]:
        return cls(lambda: stat_key(path), load)

    def get(self) -> T:
        key = self._key()
        with self._lock:
            if self._entry is None or self._entry[0] != key:
                self._entry = (key, self._load())
            return self._entry[1]

    def changed(self) -> bool:
        """Has the document changed since the value was last loaded (or was it never loaded)?"""
        entry = self._entry
        return entry is None or entry[0] != self._key()
