"""SWARM_FORKSERVER=1, the hidden backend's side: ask the preloaded parent (cli/forkserver.py)
to fork a teammate, starting it on first use, and fall back to a plain start where it cannot.

One parent per SWARM_HOME: its socket in a directory of this user's own under the temporary
directory (a socket's path has ~100 bytes at most; SWARM_HOME may be deeper), named after
SWARM_HOME; its output in $SWARM_HOME/run/forkserver.log.

The parent holds no secret: it starts with `SERVER_ENV` of this environment and no
secret (core.trust.secrets), so the environment every fork shows in /proc/PID/environ has none;
a request carries no environment, and each child reads its own member's from the socket after
the fork, which the parent never reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import swarm
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir
from swarm.core.trust.secrets import without_secrets

PAD = "-" * 1024  # the parent's last argument: room for a child's command line
PROTOCOL = 2  # 2: the environment comes after the fork, to the child
# What the parent starts with: enough to start Python and import swarm, no more (a child's own
# environment replaces it after the fork).
SERVER_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
              "PYTHONPATH", "VIRTUAL_ENV", "SWARM_HOME")


def stamp() -> str:
    """Which swarm this is: the parent refuses a request from another install (an upgrade)."""
    init = Path(swarm.__file__)
    # PYTHONPATH: set at the parent's start, it decides what a child imports.
    return (f"{sys.executable}|{init}|{swarm.__version__}|{init.stat().st_mtime_ns}"
            f"|{os.environ.get('PYTHONPATH', '')}|{PROTOCOL}")


def server_env() -> dict[str, str]:
    """The parent's environment: SERVER_ENV of this one, none holding a secret."""
    return without_secrets({k: v for k, v in os.environ.items() if k in SERVER_ENV})


def agent_args(argv: list[str]) -> list[str] | None:
    """`agent --agent-id ID` from a `swarm agent` command line, or None for any other."""
    if len(argv) >= 3 and argv[-3:-1] == ["agent", "--agent-id"]:
        return argv[-3:]
    return None


def fork_from_server(argv: Sequence[str], env: Mapping[str, str], cwd: str,
                     log: Path) -> int | None:
    """SWARM_FORKSERVER=1: `swarm agent` forked by the preloaded parent (cli/forkserver.py),
    started here on first use; None (start it as usual) where that cannot be done."""
    if not sys.platform.startswith("linux"):
        return None
    path = socket_path()
    if path is None:
        return None
    if agent_args(list(argv)) is None:
        return None
    request = json.dumps({"argv": list(argv), "cwd": cwd, "log": str(log),
                          "stamp": stamp()}).encode() + b"\n"
    own = json.dumps({"env": dict(env)}).encode() + b"\n"  # for the child alone
    answer = _ask(path, request, own)
    if answer is None or answer.get("error") == "stale":
        with _starting(path):  # concurrent spawns: one starts it, the others wait, then ask
            answer = _ask(path, request, own)
            if answer is None or answer.get("error") == "stale":
                _start_server(path)
                answer = _ask(path, request, own)
    pid = answer.get("pid") if answer else None
    return pid if isinstance(pid, int) else None


@contextlib.contextmanager
def _starting(path: Path) -> Iterator[None]:
    import fcntl

    fd = os.open(path.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def socket_path() -> Path | None:
    """Where this SWARM_HOME's parent listens; None when the directory is not safely ours."""
    home = os.fsencode(paths.home().resolve())
    folder = Path(tempfile.gettempdir()) / f"swarm-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    path = folder / f"fork-{hashlib.sha256(home).hexdigest()[:16]}.sock"
    # sockaddr_un's sun_path has 108 bytes: room for the ".PID" the parent binds first.
    return path if len(os.fsencode(path)) < 100 else None


def _ask(path: Path, request: bytes, own: bytes, wait: float = 0.0) -> dict[str, object] | None:
    """Send the request; once a pid answers (the fork is made), send `own` on the same socket:
    the child reads it, the parent has stopped reading."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(30)
                sock.connect(str(path))
                sock.sendall(request)
                data = b""
                while not data.endswith(b"\n"):
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                answer = json.loads(data) if data else None
                if isinstance(answer, dict) and isinstance(answer.get("pid"), int):
                    with contextlib.suppress(OSError):  # a child gone already: seen as dead
                        sock.sendall(own)
            return answer if isinstance(answer, dict) else None
        except OSError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)


def _start_server(path: Path) -> None:
    """Start the preloaded parent and wait (its imports: a few seconds) until it listens."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale one's: it exits at its next request or idle check
    log = paths.home() / "run" / "forkserver.log"
    ensure_dir(log.parent)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        server = subprocess.Popen(  # noqa: S603 - argv is built by swarm
            [sys.executable, "-m", "swarm.cli.forkserver", str(path), PAD],
            stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.STDOUT, env=server_env(),
            start_new_session=True, close_fds=True)
    finally:
        os.close(fd)
    deadline = time.monotonic() + 60
    while not path.exists() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
