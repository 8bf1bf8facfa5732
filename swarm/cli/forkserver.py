"""SWARM_FORKSERVER=1: hidden teammates forked from one preloaded parent.

Each `swarm agent` imports the runtime and a provider SDK on its own: ~75 MB of live objects a
sonnet teammate, the same in every one. This parent (`python -m swarm.cli.forkserver SOCKET`,
started by the hidden backend on first use) imports them once; a teammate forked from it shares
those pages copy-on-write (figures in docs/PERFORMANCE.md). What each child does first makes it
what the hidden backend's Popen would have started: its own session, stdin from /dev/null,
output to its agent.log, the member's environment and directory (signal dispositions are a fresh
interpreter's: the parent never changes them), and its own command line in /proc (core.store.liveness.agent_ancestor reads it); then `swarm agent`.

The parent answers only its own user (SO_PEERCRED), runs no thread (it forks), reaps its
children, and exits when it has had neither child nor request for IDLE_EXIT seconds or when the
installed swarm is not the one it loaded (backends.forkserver.stamp). Linux only (/proc,
SO_PEERCRED).

It holds no secret: started with an environment without one
(backends.forkserver.server_env), it never reads a member's environment: the child reads it
from the socket after the fork. Parent and children are not dumpable (PR_SET_DUMPABLE 0, kept
across fork): another process of the same user cannot read their /proc/PID/environ, mem, maps
or fds, nor ptrace them; /proc/PID/stat and cmdline stay readable (liveness, agent_ancestor).
A teammate's Bash commands are exec'd, so dumpable again, with an environment without secrets.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import struct
import sys
import time
from typing import NoReturn

from swarm.backends.forkserver import agent_args, stamp
from swarm.core.trust.process_memory import make_non_dumpable

IDLE_EXIT = 60.0  # seconds with no child and no request before the parent leaves


def serve(path: str) -> None:
    from swarm.big_import import big_import

    if not make_non_dumpable():  # the parent holds members' code, never their secrets
        raise OSError("prctl(PR_SET_DUMPABLE, 0) failed: the fork server will not start")

    with big_import():  # what every teammate would import: shared from here on
        import anthropic  # noqa: F401
        import openai  # noqa: F401

        import swarm.cli.agent  # noqa: F401
        import swarm.cli.main  # noqa: F401
    mine = stamp()
    # Bound under another name, listening, then renamed over `path` (a stale one's too): a
    # spawn that sees the path connects at once, and a path there before the listen refused it.
    fresh = f"{path}.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(fresh)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        server.bind(fresh)
    finally:
        os.umask(old)
    bound = os.stat(fresh).st_ino  # ours to remove at the end, unless replaced by then
    server.listen(64)
    os.rename(fresh, path)
    children: set[int] = set()
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([server], [], [], 1.0)
        children -= _reap()
        if ready:
            last = time.monotonic()
            conn, _ = server.accept()
            with conn:
                pid = _answer(server, conn, mine)
                if pid is not None:
                    children.add(pid)
        elif not children and time.monotonic() - last > IDLE_EXIT:
            break
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == bound:
            os.unlink(path)
    server.close()


def _reap() -> set[int]:
    done = set[int]()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.add(pid)


def _answer(server: socket.socket, conn: socket.socket, mine: str) -> int | None:
    """One request: fork its teammate and say the pid, or say why not."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    if struct.unpack("3i", creds)[1] != os.getuid():
        return None
    conn.settimeout(10)
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    request = json.loads(data)  # argv, cwd, log, stamp: never an environment
    args = agent_args(request.get("argv", []))
    if request.get("stamp") != mine or args is None:
        conn.sendall(json.dumps({"error": "stale" if args else "not an agent"}).encode() + b"\n")
        return None
    pid = os.fork()
    if pid == 0:
        server.close()
        _child(request, args, conn)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    return pid


def _child(request: dict[str, object], args: list[str], conn: socket.socket) -> NoReturn:
    """In the fork: become the process HiddenBackend.run_in_pane starts, run `swarm agent`, and
    end as any Python process does: its SystemExit unwinds out of serve() (nothing there runs
    on the way) to the interpreter's own exit (threads joined, exit handlers, stdio flushed)."""
    set_cmdline(["swarm", *args])  # first: until then it looks like the parent, not its member
    env = _own_environment(conn)
    conn.close()
    os.setsid()
    log = os.open(str(request["log"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((null, 0), (log, 1), (log, 2)):
        os.dup2(fd, target)
    os.close(null)
    os.close(log)
    os.chdir(str(request["cwd"]))
    if env is None:
        raise SystemExit("swarm: error: the fork server's child got no environment")
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["swarm", *args]
    from swarm.cli.main import run

    run()  # ends in sys.exit
    raise SystemExit(0)


def _own_environment(conn: socket.socket) -> dict[str, str] | None:
    """This member's environment, sent by whoever asked once the fork was made (the parent
    has stopped reading the socket); None when it does not come whole."""
    data = b""
    try:
        conn.settimeout(30)
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        env = json.loads(data).get("env")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None
    return env


def set_cmdline(argv: list[str]) -> None:
    """Rewrite this process's argument area (what /proc/PID/cmdline and ps show) in place, as
    setproctitle does; the parent's PAD argument leaves the room."""
    import ctypes

    with open("/proc/self/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rfind(b")") + 2:].split()
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end: proc(5) fields 48, 49
    data = b"\0".join(os.fsencode(a) for a in argv) + b"\0"
    if len(data) > end - start:
        raise SystemExit(f"swarm: error: command line too long to show: {argv!r}")
    ctypes.memmove(start, data.ljust(end - start, b"\0"), end - start)


if __name__ == "__main__":
    serve(sys.argv[1])
