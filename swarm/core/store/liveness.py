"""Is a recorded process still the one we started (pid plus process start time: pids are reused),
and ending one: SIGTERM, then SIGKILL."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

# Start times are floats from the kernel's boot-relative clock; allow for rounding.
START_TIME_TOLERANCE = 1.0


def _proc_stat(pid: int) -> tuple[str, float | None]:
    """The process state letter (`Z`: zombie) and psutil's Linux `create_time()`, computed the
    same way from /proc without importing psutil (~10 ms of every teammate's start and of every
    `swarm status`): starttime ticks / SC_CLK_TCK + boot time."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rfind(b")") + 2:].split()
    state, ticks = fields[0].decode(), fields[19]
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"btime"):
                return state, float(ticks) / os.sysconf("SC_CLK_TCK") + float(line.split()[1])
    return state, None


def process_start_time(pid: int) -> float | None:
    if os.path.isdir("/proc/self"):
        try:
            start = _proc_stat(pid)[1]
            if start is not None:
                return start
        except FileNotFoundError:  # no such process
            return None
        except (OSError, ValueError, IndexError):  # unreadable or unexpected: ask psutil
            pass
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return None


def is_alive(pid: int | None, started_at: float | None = None) -> bool:
    """True when `pid` runs and, if `started_at` is known, is the same process as recorded."""
    if not pid or pid <= 0:
        return False
    created: float | None = None
    if os.path.isdir("/proc/self"):
        try:
            state, created = _proc_stat(pid)
        except FileNotFoundError:  # no such process
            return False
        except (OSError, ValueError, IndexError):  # unreadable or unexpected: ask psutil
            pass
        else:
            if state == "Z":
                return False
    if created is None:
        import psutil  # lazily: where /proc does not answer

        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            created = proc.create_time()
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
            return False
    return started_at is None or abs(created - started_at) <= START_TIME_TOLERANCE


def runs_agent(pid: int | None, agent_id: str) -> bool:
    """Does `pid` itself run `swarm agent --agent-id AGENT_ID`? What a pid recorded without its
    start time must show before anyone signals it: by now it may be any process's."""
    if not pid or pid <= 0:
        return False
    if os.path.isdir("/proc/self"):
        argv = next(_ancestor_argvs(pid, 1), None)
    else:  # no /proc here: ask psutil
        import psutil

        try:
            argv = [os.fsencode(a) for a in psutil.Process(pid).cmdline()]
        except (psutil.Error, ProcessLookupError):
            return False
    return argv is not None and _agent_id(argv) == agent_id


def process_state(pid: int) -> str:
    """'running', 'stopped' (SIGSTOP, Ctrl-Z, a debugger), 'zombie' or 'gone', for messages."""
    import psutil

    try:
        status = psutil.Process(pid).status()
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return "gone"
    if status in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
        return "stopped"
    return "zombie" if status == psutil.STATUS_ZOMBIE else "running"


def terminate(pid: int, started_at: float | None, grace: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after `grace` seconds. True when the process is gone."""
    import psutil

    if not is_alive(pid, started_at):
        return True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            psutil.Process(pid).send_signal(sig)
        except (psutil.NoSuchProcess, ProcessLookupError):
            return True
        # Poll rather than psutil's wait: an exited child of a process that has not reaped it
        # yet stays a zombie, which that wait counts as running (`is_alive` does not).
        deadline = time.monotonic() + grace
        while is_alive(pid, started_at):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        else:
            return True
    return False


def _ancestor_argvs(pid: int | None, depth: int) -> Iterator[list[bytes]]:
    """The command lines of the processes above `pid` (default: this process), nearest first."""
    current = os.getppid() if pid is None else pid
    for _ in range(depth):
        if current <= 1:
            return
        try:
            with open(f"/proc/{current}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{current}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            return
        yield argv
        current = int(stat[stat.rfind(b")") + 2:].split()[1])


def _run_by_swarm(argv: list[bytes], index: int) -> bool:
    """Is argv[index] an argument of a `swarm` command line (the executable, or -m swarm...)?"""
    return any(a.endswith(b"swarm") or a == b"swarm.cli.main" for a in argv[:index])


def agent_ancestor(pid: int | None = None, depth: int = 16) -> str | None:
    """The agent id of the nearest `swarm agent --agent-id ID` process above `pid` (default:
    this process), or None. Lets lead-only commands refuse a teammate's shell even when it
    unset SWARM_AGENT_ID (a process that double-forks away from its agent escapes this)."""
    for argv in _ancestor_argvs(pid, depth):
        found = _agent_id(argv)
        if found is not None:
            return found
    return None


def _agent_id(argv: list[bytes]) -> str | None:
    """ID when `argv` is a `swarm agent --agent-id ID` command line, else None."""
    if b"agent" in argv and b"--agent-id" in argv:
        index = argv.index(b"--agent-id")
        if index + 1 < len(argv) and _run_by_swarm(argv, index):
            return argv[index + 1].decode(errors="replace")
    return None


def lead_ancestor(pid: int | None = None, depth: int = 16) -> bool:
    """Is a `swarm lead` process above `pid`, so this is the lead's own command or hook?
    (Nothing a person types runs under it: the interactive lead has no shell escape.)"""
    for argv in _ancestor_argvs(pid, depth):
        index = argv.index(b"lead") if b"lead" in argv else 0
        if index and _run_by_swarm(argv[index - 1:], 1):  # `swarm lead`: the subcommand itself
            return True
    return False
