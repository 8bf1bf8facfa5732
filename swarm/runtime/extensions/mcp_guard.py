"""Run one MCP stdio server so that it cannot outlive the agent that started it.

`python -I mcp_guard.py AGENT_PID -- COMMAND [ARGS...]` (run as a file: standard library only,
nothing of swarm is imported, so it costs one bare Python start-up). The guard asks Linux to
send it SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG; elsewhere it polls its parent pid
every second), starts the server in a process group of its own with the guard's stdin/stdout
(the pipes to the agent) and lets go of its own copies. Then:

- the server exits (the agent closed its stdin: the SDK's normal shutdown): whatever it left
  in its group is killed and the guard exits with the server's code;
- the guard gets SIGTERM (the agent died, even by SIGKILL, or the SDK escalates its shutdown):
  SIGTERM to the server's group, SIGKILL after a grace, exit. A signal while the server is
  being started is noted and acted on once it runs (never raised inside Popen).

A server that puts itself in another session (setsid) escapes the group; none of the common
servers do.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
POLL_S = 1.0
GRACE_S = 2.0


class _Stop(Exception):
    pass


# Until the server runs and the guard's own pipes are let go, a stop is only noted (raising
# there would leave a server just started, or half of Popen, with nobody to end it).
_armed = False
_stop_noted = False


def die_with_parent() -> bool:
    """Ask the kernel for SIGTERM when our parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _on_signal(signum: int, frame: object) -> None:
    global _stop_noted, _armed
    _stop_noted = True
    if _armed:  # once: a second signal must not break off the ending of the group
        _armed = False
        raise _Stop()


def _end_group(child: subprocess.Popen[bytes], grace: float) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)  # stragglers of the group, or a server ignoring TERM
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(grace)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: mcp_guard.py AGENT_PID -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), argv[2:]
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _on_signal)
    die_with_parent()
    if os.getppid() != parent or _stop_noted:  # the agent died before we could ask to be told
        return 1
    try:
        child = subprocess.Popen(command, process_group=0)
    except FileNotFoundError:
        print(f"MCP server command not found: {command[0]}", file=sys.stderr)
        return 127
    except OSError as exc:
        print(f"MCP server command {command[0]} cannot start: {exc}", file=sys.stderr)
        return 126
    # The server alone holds the pipes now, so closing its stdin reaches it as EOF.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    global _armed
    try:
        _armed = True
        if _stop_noted:  # the agent died while the server was starting
            raise _Stop()
        while True:
            try:
                code = child.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                if os.getppid() != parent:  # no PR_SET_PDEATHSIG here: noticed by polling
                    raise _Stop() from None
    except _Stop:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        _end_group(child, GRACE_S)
        return 1
    _end_group(child, 0.0)  # the server is gone; so must be anything it left behind
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
