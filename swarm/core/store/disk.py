"""File locks and atomic JSON on disk: nothing else.

Locks are `flock` locks (fcntl on POSIX, portalocker elsewhere) on a sibling `<file>.lock`, so they die with the process
that holds them: a SIGKILLed holder never wedges the others. Data files are replaced atomically
(temp file in the same directory, then rename), so a reader never sees a half-written file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from swarm.core.records import base as records
from swarm.core.store.liveness import process_state
from swarm.core.text.terminal import visible
from swarm.errors import LockTimeoutError

log = logging.getLogger(__name__)

R = TypeVar("R", bound=records.Record)
T = TypeVar("T")

DIR_MODE = 0o700
FILE_MODE = 0o600


def warn(message: str) -> None:
    """A warning the user must see: one `swarm: warning:` line on stderr (and in the log)."""
    print(f"swarm: warning: {visible(message)}", file=sys.stderr)
    log.info("warning: %s", message)


def ensure_dir(path: Path) -> Path:
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        # mkdir(parents=True) would give new parents the default 0755: make each level 0700.
        ensure_dir(path.parent)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=DIR_MODE)
    return path


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


try:  # POSIX: flock directly. portalocker is the same flock underneath, but importing it
    import fcntl  # costs ~25 ms (it reads its own package metadata): too much for `swarm send`.

    def _lock(fd: int, blocking: bool, shared: bool = False) -> bool:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode if blocking else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows: portalocker's msvcrt locking
    import portalocker

    def _lock(fd: int, blocking: bool, shared: bool = False) -> bool:
        flags = portalocker.LockFlags.SHARED if shared else portalocker.LockFlags.EXCLUSIVE
        if not blocking:
            flags |= portalocker.LockFlags.NON_BLOCKING
        try:
            portalocker.lock(fd, flags)  # type: ignore[arg-type]
        except portalocker.AlreadyLocked:
            return False
        return True

    def _unlock(fd: int) -> None:
        portalocker.unlock(fd)  # type: ignore[arg-type]


def _open_lock(path: Path) -> int:
    target = lock_path(path) if not path.name.endswith(".lock") else path
    return os.open(target, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)


@contextlib.contextmanager
def _hold(path: Path, blocking: bool) -> Iterator[bool]:
    # A fresh open per lock, on purpose: flock belongs to the open file, so a cached fd would be
    # shared by threads and by forked children, and would outlive a deleted lock file.
    fd = _open_lock(path)
    try:
        if not _lock(fd, blocking=blocking):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock for `path` (on `path.lock`); blocks until it is free, or raises
    LockTimeoutError after `timeout` seconds naming the holder (a process *stopped* while holding
    it keeps it; a dead holder's lock is freed by the kernel at once)."""
    if timeout is None:
        with _hold(path, blocking=True):
            yield
        return
    deadline = time.monotonic() + timeout
    pause = 0.0002
    fd = _open_lock(path)
    try:
        while not _lock(fd, blocking=False):
            if time.monotonic() >= deadline:
                raise LockTimeoutError(f"{lock_path(path)} stayed locked for {timeout:g}s"
                                       f"{describe_holder(path)}")
            # Short first pauses: a send holds the lock for tens of microseconds.
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def lock_holder(path: Path) -> int | None:
    """The pid holding the flock on `path`'s lock file, from /proc/locks (Linux); None when
    free or unknown. Read only after a timeout: it costs nothing on the way in."""
    try:
        info = os.stat(lock_path(path))
        with open("/proc/locks", "rb") as handle:
            table = handle.read().decode(errors="replace")
    except OSError:
        return None
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; waiters read "1: -> FLOCK ...".
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            with contextlib.suppress(ValueError):
                return int(fields[4])
    return None


def describe_holder(path: Path) -> str:
    """' by pid N (stopped: ...)' for an error message; '' when the holder is unknown."""
    pid = lock_holder(path)
    if pid is None:
        return " (holder unknown)"
    state = process_state(pid)
    if state == "stopped":
        return f" by pid {pid}, which is stopped (`kill -CONT {pid}` resumes it)"
    return f" by pid {pid} ({state})"


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold off SIGINT/SIGTERM handlers (Python ones, main thread) for a few calls that must
    finish together, e.g. an append and the record that it happened; run them right after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: dict[int, Any] = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        if callable(signal.getsignal(number)):
            previous[number] = signal.signal(number, lambda got, _frame: caught.append(got))
    try:
        yield
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
        for late in caught:
            signal.raise_signal(late)


@contextlib.contextmanager
def try_locked(path: Path) -> Iterator[bool]:
    """Like `locked`, but one non-blocking attempt: yields False (holding nothing) when busy."""
    with _hold(path, blocking=False) as mine:
        yield mine


_renameat2: Any = None  # libc renameat2, resolved on first use; False when unavailable


def _exchange(a: str, b: Path) -> bool:
    """Atomically swap two existing paths (Linux renameat2 RENAME_EXCHANGE). False when either
    is missing or the platform/filesystem cannot: the caller then renames as usual."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                func = ctypes.CDLL(None, use_errno=True).renameat2
                func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                 ctypes.c_uint]
                _renameat2 = func
            except (OSError, AttributeError):
                pass
    if not _renameat2:
        return False
    at_cwd, rename_exchange = -100, 2
    return bool(_renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), rename_exchange) == 0)


def write_bytes_atomic(path: Path, data: bytes, swap: bool = False) -> None:
    """Write `data` to a temp file beside `path`, then rename it over `path`.

    `swap` exchanges the two names instead and unlinks the temp (now the old content). Readers see
    the same atomic switch, but ext4 skips the flush it forces on a rename over an existing file
    (auto_da_alloc: 0.5-1.5 ms of I/O wait, measured), which caps a hot mailbox at ~1000 writes/s.
    Neither way fsyncs, so neither promises the newest data after a power cut (see PERFORMANCE.md).
    """
    import tempfile  # random and shutil come with it: only a command that writes a file

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if swap and _exchange(tmp, path):
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def append_line(path: Path, data: bytes) -> None:
    """Append one or more whole lines to a JSON Lines file (0600). After a crash mid-append the
    last line is torn: start on a new line, or the next entry would be glued to it and lost.
    An OSError names the file ("disk full writing <path>")."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_model(path: Path, record: records.Record) -> None:
    write_bytes_atomic(path, records.encode(record, indent=2))


def quarantine(path: Path, reason: str) -> Path:
    """Move a file that fails to parse aside to `<file>.corrupt-<timestamp>` and warn."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, aside)
    warn(f"{path} could not be parsed ({reason}); moved aside to {aside.name}")
    return aside


def _read_parsed(path: Path, parse: Callable[[bytes], T]) -> T | None:
    """Parse `path`; None when missing. A corrupt file is quarantined and reads as missing."""
    for _ in range(3):
        try:
            with open(path, "rb") as handle:
                inode = os.fstat(handle.fileno()).st_ino
                data = handle.read()
        except FileNotFoundError:
            return None
        try:
            return parse(data)
        except (records.DecodeError, ValueError) as exc:
            try:
                if os.stat(path).st_ino != inode:
                    continue  # a writer replaced it meanwhile: parse the new file, move nothing
            except FileNotFoundError:
                return None
            with contextlib.suppress(FileNotFoundError):
                quarantine(path, records.short_error(exc))
            return None
    return None


def read_model(path: Path, kind: type[R]) -> R | None:
    return _read_parsed(path, lambda data: records.decode(data, kind))


def utcnow() -> datetime:
    return datetime.now(UTC)


def utcnow_iso() -> str:
    return utcnow().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_at(seconds: float) -> str:
    """Epoch seconds as our timestamps are written: ISO 8601 UTC, milliseconds, `Z`."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
