"""A self-pipe that ends a watcher's wait from another thread, on either store."""

from __future__ import annotations

import contextlib
import os


def close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


class Waker:
    """A self-pipe another thread sets to end a `FileWatcher.wait` (e.g. a subagent finished
    while its parent waits for mail). Setting it twice before a wait wakes the wait once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()  # close-on-exec already (PEP 446)
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def fileno(self) -> int:
        return self._read

    def set(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):  # full pipe: already set
            os.write(self._write, b"!")

    def clear(self) -> bool:
        """Drain the pipe; True if it was set."""
        drained = False
        while True:
            try:
                drained = bool(os.read(self._read, 4096)) or drained
            except (BlockingIOError, OSError):
                return drained

    def close(self) -> None:
        close_quietly(self._read)
        close_quietly(self._write)
