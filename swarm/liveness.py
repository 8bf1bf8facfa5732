"""Is a recorded process still the one we started? pid plus process start time (pids are reused)."""

from __future__ import annotations

import psutil

# Start times are floats from the kernel's boot-relative clock; allow for rounding.
START_TIME_TOLERANCE = 1.0


def process_start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return None


def is_alive(pid: int | None, started_at: float | None = None) -> bool:
    """True when `pid` runs and, if `started_at` is known, is the same process as recorded."""
    if not pid or pid <= 0:
        return False
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        created = proc.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return False
    return started_at is None or abs(created - started_at) <= START_TIME_TOLERANCE
