"""A real redis-server for the tests: its own process on a free loopback port, its own config
(no RDB snapshots, no append-only file, its own directory), stopped after.

`redis_url` (a fixture) starts one per test; `store` parametrizes a test over the file store
and Redis (`SWARM_STORE` set for the test and every process it starts).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process; `url` points at it. `stop()`/`start()` for fault tests (the
    same port again: a restart without persistence)."""

    def __init__(self, directory: Path, *options: str, password: str | None = None) -> None:
        self.directory = directory
        self.options = options  # more redis-server options, e.g. "--maxmemory", "1mb"
        self.port = free_port()
        self.password = password  # requirepass (and AUTH for our own PING)
        self.socket = directory / "redis.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start it and wait until it answers; a port taken meanwhile (free_port's port is free
        only when it is picked: another test's server or client may take it before ours binds
        it) is a new port, never another server answering in ours' place."""
        for _attempt in range(3):
            if self._start(timeout):
                return
            self.port = free_port()
        raise RuntimeError(f"redis-server found no free port: {self.log_tail()}")

    def _start(self, timeout: float) -> bool:
        self.directory.mkdir(parents=True, exist_ok=True)
        # The password goes in a private config file, never on the command line: the secrets
        # tests read every process's command line, other tests' servers included.
        config = self.directory / "redis.conf"
        config.touch(mode=0o600)
        config.write_text(f"requirepass {self.password}\nunixsocket {self.socket}\n"
                          "unixsocketperm 700\n" if self.password else "")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, str(config), "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.directory),
             "--daemonize", "no", "--logfile", str(self.directory / "redis.log"),
             *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while self._answering_pid() != self.proc.pid:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log_tail():
                    self.proc = None
                    return False
                raise RuntimeError(f"redis-server exited {self.proc.returncode}: "
                                   f"{self.log_tail()}")
            if time.monotonic() >= deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not answer PING in {timeout}s")
            time.sleep(0.02)
        return True

    def ping(self) -> bool:
        """PING over a plain socket (RESP inline command): no client library needed."""
        return self._answering_pid() is not None

    def _answering_pid(self) -> int | None:
        """The process id of the server answering on our port (INFO server), or None."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                if self.password:
                    sock.sendall(f"AUTH {self.password}\r\n".encode())
                    if not sock.recv(64).startswith(b"+OK"):
                        return None
                sock.sendall(b"INFO server\r\n")
                reply = b""
                while b"process_id:" not in reply or not reply.endswith(b"\r\n\r\n"):
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
        except OSError:
            return None
        found = re.search(rb"process_id:(\d+)", reply)
        return int(found.group(1)) if found else None

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.directory / "redis.log").read_text()[-500:]
        return ""

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh Redis, selected as the store for this test and the processes it starts."""
    monkeypatch.setenv("SWARM_STORE", redis_server.url)
    return redis_server.url


@pytest.fixture(params=["file", "redis"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test on each store: `file` ($SWARM_HOME) and `redis` (a server of its own)."""
    if request.param == "file":
        monkeypatch.setenv("SWARM_STORE", "file")
        return "file"
    return str(request.getfixturevalue("redis_url"))
