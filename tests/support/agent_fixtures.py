"""Shared fixtures for tests that start real `swarm agent` processes (hidden backend).

`crew` gives a fresh team (SWARM_TEAM set, so CLI calls in subprocesses find it) and helpers to
spawn teammates through `swarm.ops.member.spawner.spawn` (the same code path as `swarm spawn`), run the CLI
in a subprocess, and read back what the agents did. Agents spawned in-process are our children:
the hidden backend instance we start them with keeps their `Popen`, so a test can read the real
exit code. At teardown every agent still running is stopped by its own pid (and any process it
started), so no test leaks one.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.backends.hidden import HiddenBackend
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import IdleNotification, Message
from swarm.core.records.state import AgentState
from swarm.core.records.task import Task
from swarm.core.records.team_config import Member
from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import member_process, read_state
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.ops.member.spawner import SpawnResult
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


def agent_processes(home: Path) -> list[psutil.Process]:
    """Live `swarm agent` processes working for this test's SWARM_HOME (never anyone else's)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if "--agent-id" not in cmdline or proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        with contextlib.suppress(psutil.Error):
            if proc.environ().get("SWARM_HOME") == str(home):
                found.append(proc)
    return found


def stop_tree(pid: int, grace: float = 3.0) -> None:
    """SIGTERM a process we started and everything under it; SIGKILL what lingers. Refuses
    init and this process's own ancestors: their trees hold the test run (and the machine)."""
    me = psutil.Process()
    if pid <= 1 or pid in {me.pid, *(p.pid for p in me.parents())}:
        raise AssertionError(f"refusing to stop the tree of pid {pid}: init, or above this test")
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.send_signal(sig)
        # Not psutil.wait_procs: an orphan's zombie lingers until init reaps it, and
        # is_alive already counts a zombie as gone.
        with contextlib.suppress(AssertionError):
            wait_until(lambda: not any(is_alive(p.pid, p.create_time()) for p in procs), grace)
            return


@dataclass
class Crew:
    team: Team
    workdir: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    # -- starting ----------------------------------------------------------------------------
    def spawn(self, name: str, prompt: str | None = None, **options: Any) -> SpawnResult:
        """`swarm spawn NAME --backend hidden` through the Python API; keeps the child's Popen."""
        from swarm.ops.member.spawner import SpawnRequest, spawn

        options.setdefault("backend", "hidden")
        options.setdefault("model", "shell")
        options.setdefault("permission_mode", "bypassPermissions")
        options.setdefault("cwd", str(self.workdir))
        backend = HiddenBackend(self.team.name)
        result = spawn(self.team, SpawnRequest(name, prompt=prompt, **options),
                       pane_backend=backend)
        (proc,) = backend.processes.values()
        assert proc.pid == result.pid
        self.procs[result.name] = proc
        return result

    def register(self, name: str, **fields: Any) -> Member:
        """Add a member without starting it (so a test can queue its mail first)."""
        fields.setdefault("model", "shell")
        fields.setdefault("permission_mode", "bypassPermissions")
        fields.setdefault("backend", "hidden")
        fields.setdefault("cwd", str(self.workdir))
        return self.team.add_member(name, **fields)

    def launch(self, name: str) -> int:
        """Start a registered member's `swarm agent` process, as spawn does; returns its pid."""
        from swarm.ops.member.spawner import launch

        backend = HiddenBackend(self.team.name)
        _, pid = launch(self.team, self.team.member(name), backend)
        (proc,) = backend.processes.values()
        assert pid is not None and proc.pid == pid
        self.procs[name] = proc
        return pid

    def cli(self, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return run_swarm(*args, timeout=timeout, cwd=self.workdir)

    def send(self, to: str, text: str, sender: str = LEAD_NAME, summary: str | None = "s") -> str:
        return self.team.send(to, text, sender=sender, summary=summary)[0]

    # -- observing ---------------------------------------------------------------------------
    def state(self, name: str) -> AgentState | None:
        return read_state(self.team.name, name)

    def wait_state(self, name: str, *states: str, timeout: float = 15.0) -> AgentState:
        def reached() -> AgentState | None:
            state = self.state(name)
            return state if state is not None and state.state in states else None

        found = wait_until(reached, timeout, message=f"{name} in state {states} "
                           f"(now {self.state(name)}; log: {self.log(name)[-800:]})")
        assert found is not None
        return found

    def lead_messages(self) -> list[Message]:
        return Team(self.team.name).inbox(LEAD_NAME, checked=False).messages(include_archive=True)

    def idle_notes(self, name: str) -> list[IdleNotification]:
        return [s for m in self.lead_messages() if m.sender == name
                and isinstance(s := m.structured(), IdleNotification)]

    def wait_idle_notes(self, name: str, count: int, timeout: float = 15.0) -> list[IdleNotification]:
        """Wait for `count` idle notifications from `name`; then it must be idle (one per turn)."""
        wait_until(lambda: len(self.idle_notes(name)) >= count, timeout,
                   message=f"{count} idle notifications from {name} (log: {self.log(name)[-800:]})")
        self.wait_state(name, "idle")
        return self.idle_notes(name)

    def six_jobs_over_two_teammates(
            self, timeout: float = 20.0) -> tuple[list[Task], subprocess.CompletedProcess[str]]:
        """`swarm spawn` two shell teammates, give the team six short jobs, `swarm wait` until
        they are done; the tasks as they ended, and what `swarm wait` printed."""
        for name in ("w1", "w2"):
            proc = self.cli("spawn", name, "--backend", "hidden", "--model", "shell",
                            "--permission-mode", "bypassPermissions", "--cwd", str(self.workdir))
            assert proc.returncode == 0, proc.stderr
        for name in ("w1", "w2"):
            self.wait_state(name, "idle")
        # Each task takes a moment, so both teammates get some while the other is busy.
        tasks = [self.team.tasks.add(f"job {i}", description=f"$ sleep 0.2; echo job-{i}")
                 for i in range(1, 7)]
        proc = self.cli("wait", "--until", "tasks-done", "--timeout", str(timeout))
        assert proc.returncode == 0, proc.stderr
        return [self.team.tasks.get(t.id) for t in tasks], proc

    def transcript(self, name: str) -> list[dict[str, Any]]:
        path = paths.agent_transcript(self.team.name, name)
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]

    def inputs(self, name: str) -> list[list[str]]:
        """The text blocks of each user message that carried input (not tool results)."""
        out = []
        for entry in self.transcript(name):
            message = entry.get("message") or {}
            if entry.get("kind") == "message" and message["role"] == "user":
                texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
                if texts:
                    out.append(texts)
        return out

    def log(self, name: str) -> str:
        try:
            return paths.agent_log(self.team.name, name).read_text()
        except FileNotFoundError:
            return ""

    def exit_code(self, name: str, timeout: float = 15.0) -> int:
        proc = self.procs[name]
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{name} (pid {proc.pid}) still running {timeout} s on; its threads:\n"
                f"{threads_report(proc.pid)}\nstate: {self.state(name)}\n"
                f"log: {self.log(name)[-800:]}") from None

    # -- stopping ----------------------------------------------------------------------------
    def cleanup(self) -> None:
        try:
            members = [m for m in self.team.members() if m.name != LEAD_NAME]
        except SwarmError:  # a test broke the team file on purpose: our own children remain
            members = []
        for member in members:
            if found := member_process(self.team.name, member):
                stop_tree(found[0])
        for proc in self.procs.values():
            if proc.poll() is None:
                stop_tree(proc.pid)
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)


@pytest.fixture(name="crew")
def crew_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Crew]:
    team = Team.create("crew")
    monkeypatch.setenv("SWARM_TEAM", team.name)
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = Crew(team, workdir)
    try:
        yield result
    finally:
        result.cleanup()


# A `shell` teammate on the hidden backend that runs every command unasked.
HIDDEN_SHELL = ("--backend", "hidden", "--model", "shell", "--permission-mode", "bypassPermissions")


def spawn_shell(crew: Crew, name: str, prompt: str, *extra: str) -> Path:
    """`swarm spawn NAME` a HIDDEN_SHELL teammate running `prompt`; returns once its first turn
    is over, with its worktree's path ("" without one)."""
    proc = crew.cli("spawn", name, *HIDDEN_SHELL, *extra, "--prompt", prompt)
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes(name, 1, timeout=30)
    return Path(crew.team.member(name).worktree_path or "")


def threads_report(pid: int) -> str:
    """Each thread of a process as the kernel sees it: where it sleeps and which signals wait
    for it (a process-directed signal picked up by a thread other than the one blocked in a
    system call leaves that call blocked)."""
    lines = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            status = dict(line.split(":\t", 1) for line in
                          (task / "status").read_text().splitlines() if ":\t" in line)
            wchan = (task / "wchan").read_text()
        except OSError as exc:
            lines.append(f"{task.name}: {exc}")
            continue
        lines.append(" ".join(f"{k}={status.get(k, '?').strip()}" for k in
                              ("Name", "State", "SigPnd", "ShdPnd", "SigBlk", "SigCgt"))
                     + f" wchan={wchan} tid={task.name}")
    return "\n".join(lines)
