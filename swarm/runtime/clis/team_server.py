"""The team's MCP server on this host (`swarm mcp hub`, mcp_server/hub.py), as its members'
drivers reach it: one process per team per host serves the team tools of every agent CLI
teammate there, each connection bound to one member by a token only that member's driver holds.

The token: each `swarm agent` driving a CLI makes a random one in its own (non-dumpable) memory
and writes only its SHA-256, with its own pid and process start time, to
`mcp-hub/members/NAME.json` (harmless to read). It hands the token to its CLI over its own pipe
(an ACP `session/new`, Codex's thread config, Claude Code's `mcp_set_servers`), never in an
environment, a command line or a file: a teammate's shell reads all three for every process of
the same user. The hub takes a request only with a token whose hash is registered for a live
driver, and serves it as that member; never as the lead (no registration names it).

The hub: started on demand by the first driver of the team on the host, under the run file's
lock; `mcp-hub/hub.json` says its pid, start time and port, so a file left by a dead hub is seen
(pid and start time) and a new hub started. It runs in its own session (a teammate's death does
not end it) and ends by itself when the team is gone or no registered driver has lived for
SWARM_MCP_HUB_GRACE seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm import settings
from swarm.core.records.names import LEAD_NAME, validate_agent_name
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir, locked, write_bytes_atomic
from swarm.core.store.liveness import is_alive, process_start_time
from swarm.errors import SwarmError

HUB_PATH = "/mcp"
START_TIMEOUT = 60.0  # seconds for a new hub to listen (its imports, on a busy machine)
TOKEN_BYTES = 32


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TeamServer:
    """Where a CLI reaches its member's team tools: the hub's URL and the member's token."""

    url: str
    token: str  # never in an environment, a command line or a file

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass(frozen=True)
class Registration:
    member: str
    pid: int
    started_at: float | None

    def live(self) -> bool:
        return is_alive(self.pid, self.started_at)


@dataclass(frozen=True)
class HubRun:
    pid: int
    started_at: float | None
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{HUB_PATH}"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def register(team: str, name: str, token: str) -> None:
    """This process (member NAME's driver) holds `token`: its hash, pid and start time."""
    path = paths.mcp_hub_member(team, name)
    ensure_dir(path.parent)
    pid = os.getpid()
    write_bytes_atomic(path, json.dumps({"member": name, "sha256": token_hash(token), "pid": pid,
                                         "started_at": process_start_time(pid)}).encode())


def unregister(team: str, name: str) -> None:
    """Its driver is ending: the member's token counts no more (its pid would not either)."""
    path = paths.mcp_hub_member(team, name)
    data = _read_json(path)
    if data is not None and data.get("pid") == os.getpid():
        path.unlink(missing_ok=True)


def registrations(team: str) -> dict[str, Registration]:
    """SHA-256 -> the member whose driver registered it, for drivers that are alive now. The
    lead is never one: no token names it."""
    found: dict[str, Registration] = {}
    with contextlib.suppress(OSError):
        for path in paths.mcp_hub_members(team).glob("*.json"):
            data = _read_json(path)
            if data is None:
                continue
            name, digest = data.get("member"), data.get("sha256")
            pid, started = data.get("pid"), data.get("started_at")
            if not isinstance(name, str) or name != path.stem or name == LEAD_NAME:
                continue
            try:
                validate_agent_name(name)
            except SwarmError:
                continue
            if not isinstance(digest, str) or len(digest) != 64 or not isinstance(pid, int):
                continue
            entry = Registration(name, pid, float(started) if isinstance(started, (int, float))
                                 else None)
            if entry.live():
                found[digest] = entry
    return found


def read_run(team: str) -> HubRun | None:
    """The hub running for `team` on this host, None when none is (or its file is stale)."""
    data = _read_json(paths.mcp_hub_run(team))
    if data is None:
        return None
    pid, port, started = data.get("pid"), data.get("port"), data.get("started_at")
    if not isinstance(pid, int) or not isinstance(port, int):
        return None
    run = HubRun(pid, float(started) if isinstance(started, (int, float)) else None, port)
    return run if is_alive(run.pid, run.started_at) else None


def write_run(team: str, port: int) -> None:
    path = paths.mcp_hub_run(team)
    ensure_dir(path.parent)
    pid = os.getpid()
    write_bytes_atomic(path, json.dumps({"pid": pid, "started_at": process_start_time(pid),
                                         "port": port}).encode())


def forget_run(team: str) -> None:
    """The hub is ending: its run file goes if it is still its own."""
    data = _read_json(paths.mcp_hub_run(team))
    if data is not None and data.get("pid") == os.getpid():
        paths.mcp_hub_run(team).unlink(missing_ok=True)


def hub_env() -> dict[str, str]:
    """What the hub is started with: where the team lives, nothing of the driver's secrets
    (its model credential) but the store's URL, which the hub scrubs from its own environ."""
    env = {"SWARM_HOME": str(paths.home())}
    for name in ("PATH", "HOME", "SWARM_STORE", "SWARM_MCP_HUB_GRACE", "SWARM_TEAM_GONE_GRACE",
                 "PYTHONPATH", "SWARM_DEBUG", "LANG", "LC_ALL", "TMPDIR"):
        if settings.raw(name):
            env[name] = settings.raw(name)
    return env


def ensure_hub(team: str, log: Callable[[str], None]) -> HubRun:
    """The team's hub on this host, started when none runs (under the run file's lock, so two
    drivers starting at once start one)."""
    run_file = paths.mcp_hub_run(team)
    ensure_dir(run_file.parent)
    with locked(run_file, timeout=START_TIMEOUT + 30):
        run = read_run(team)
        if run is not None:
            return run
        hub_log = paths.mcp_hub_dir(team) / "hub.log"
        with open(hub_log, "ab") as errors:
            proc = subprocess.Popen(
                [sys.executable, "-m", "swarm", "mcp", "hub", "--team", team],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                cwd=str(paths.home()), env=hub_env(), start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            run = read_run(team)
            if run is not None and run.pid == proc.pid:
                log(f"started the team's MCP server (pid {proc.pid}, port {run.port})")
                return run
            if proc.poll() is not None:
                break
            time.sleep(0.05)  # another process's start: nothing to wait on but its file
        with contextlib.suppress(OSError):
            proc.kill()
        raise SwarmError(f"the team's MCP server did not start (exit {proc.poll()}): see"
                         f" {hub_log}")


class HubLink:
    """A member driver's side of the hub: its token (in this process only) and where the hub
    listens, the hub started again if it has gone since."""

    def __init__(self, team: str, name: str, log: Callable[[str], None]) -> None:
        self.team, self.name, self.log = team, name, log
        self._token = secrets.token_urlsafe(TOKEN_BYTES)
        self._registered = False
        self._warming: threading.Thread | None = None

    def warm(self) -> None:
        """Register and start the hub now, beside the CLI's own start, so the driver's later
        `endpoint` finds it listening (a failure here is met again there, and said)."""
        def start() -> None:
            with contextlib.suppress(SwarmError, OSError):
                self._register()
                ensure_hub(self.team, self.log)

        if self._warming is None:
            self._warming = threading.Thread(target=start, name="mcp-hub-start", daemon=True)
            self._warming.start()

    def endpoint(self) -> TeamServer:
        if self._warming is not None:
            self._warming.join()
            self._warming = None
        self._register()
        return TeamServer(ensure_hub(self.team, self.log).url, self._token)

    def _register(self) -> None:
        if not self._registered:
            register(self.team, self.name, self._token)
            self._registered = True

    def close(self) -> None:
        if self._registered:
            with contextlib.suppress(OSError):
                unregister(self.team, self.name)
            self._registered = False
