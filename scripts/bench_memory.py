"""Memory of idle processes: RSS, USS and PSS per kind, and a fleet's total.

Used by scripts/bench_agents.py (`--memory`, `--swarm DIR`). Every checkout given runs the same
steps in turn, kind by kind, so a baseline and this tree are measured in the same minutes:
- one idle teammate of each kind: `shell`; `sonnet` (the anthropic SDK against the fake Messages
  API, tests/support/fake_anthropic.py) before its first call (spawned without a prompt) and after one
  call (spawned with one); `openai:` (the openai SDK against tests/support/fake_openai.py) after one call;
  and an interactive `swarm lead` (sonnet) in a tmux pane on a private server after one call;
- a fleet: N teammates spawned at once (shell, then sonnet with a prompt), time until all are
  idle and their total PSS.

A checkout may be measured with SWARM_FORKSERVER=1 too (teammates forked from one preloaded
parent): then the parent's memory is counted with its teammates'.

USS: the pages only this process maps (what ending it frees); PSS: USS plus each shared page
divided by the number of processes mapping it, so a fleet's PSS adds up to what it costs the
machine. Both from /proc/PID/smaps (psutil's `memory_full_info`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import IdleNotification
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team

MB = 1024 * 1024
SETTLE = 2.0  # seconds idle before measuring: start-up garbage collected, threads parked


@dataclass
class Memory:
    rss: float
    uss: float
    pss: float

    @staticmethod
    def of(pids: list[int]) -> Memory:
        infos = [psutil.Process(pid).memory_full_info() for pid in pids]
        return Memory(sum(i.rss for i in infos) / MB, sum(i.uss for i in infos) / MB,
                      sum(i.pss for i in infos) / MB)

    def per(self, count: int) -> Memory:
        return Memory(self.rss / count, self.uss / count, self.pss / count)

    def cells(self) -> str:
        return f"{self.pss:7.1f} {self.uss:7.1f} {self.rss:7.1f}"


@dataclass
class Checkout:
    """A tree whose `.venv/bin/swarm` is measured (this one, or a baseline worktree)."""

    label: str
    root: Path
    env: dict[str, str] = field(default_factory=dict)  # e.g. SWARM_FORKSERVER=1

    @property
    def swarm(self) -> str:
        return str(self.root / ".venv" / "bin" / "swarm")


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)


def _state(team: str, name: str) -> str | None:
    state = read_state(team, name)
    return state.state if state else None


def _pid(team: str, name: str) -> int:
    state = read_state(team, name)
    assert state is not None and state.pid is not None
    return state.pid


def _answered(team: str, name: str) -> bool:
    """Its first turn is over: its idle notification is in the lead's mailbox."""
    return any(m.sender == name and isinstance(m.structured(), IdleNotification)
               for m in Team(team).inbox(LEAD_NAME, checked=False).unread())


class Bench:
    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home, self.env = home, env
        self._teams = 0

    def team(self) -> str:
        self._teams += 1
        return Team.create(f"mem-{self._teams}").name

    def spawn(self, checkout: Checkout, team: str, names: list[str], model: str,
              prompt: str | None) -> float:
        """Start `names` at once; seconds until all are idle (after their first turn if
        prompted)."""
        extra = ["--prompt", prompt] if prompt else []
        start = time.monotonic()
        procs = [subprocess.Popen(
            [checkout.swarm, "spawn", n, "--team", team, "--backend", "hidden", "--model", model,
             "--permission-mode", "bypassPermissions", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**self.env, **checkout.env},
            cwd=self.home) for n in names]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            if proc.returncode != 0:
                raise SystemExit(f"spawn failed ({checkout.label}): {err.strip()}")
        wait_for(lambda: all(_state(team, n) == "idle" and (not prompt or _answered(team, n))
                             for n in names), 300, f"{len(names)} idle {model} teammates")
        return time.monotonic() - start

    def stop(self, team: str, names: list[str]) -> None:
        pids = []
        for name in names:
            state = read_state(team, name)
            if state and state.pid and is_alive(state.pid, state.started_at):
                psutil.Process(state.pid).terminate()
                pids.append((state.pid, state.started_at))
        wait_for(lambda: not any(is_alive(p, s) for p, s in pids), 30, "teammates to exit")

    def teammates(self, checkout: Checkout, count: int, model: str,
                  prompt: str | None) -> tuple[Memory, float]:
        team = self.team()
        names = [f"m{i}" for i in range(1, count + 1)]
        seconds = self.spawn(checkout, team, names, model, prompt)
        time.sleep(SETTLE)
        pids = [_pid(team, n) for n in names]
        # Forked teammates: their preloaded parent counts too (SWARM_FORKSERVER=1).
        parents = {psutil.Process(pid).ppid() for pid in pids} - {1}
        parents = {p for p in parents if "swarm.cli.forkserver" in psutil.Process(p).cmdline()}
        memory = Memory.of(pids + sorted(parents))
        self.stop(team, names)
        for parent in parents:  # gone before the next measurement: it shares .so pages
            psutil.Process(parent).terminate()
            psutil.Process(parent).wait(10)
        return memory, seconds

    def lead(self, checkout: Checkout, api_requests: Callable[[], int]) -> Memory | None:
        """An interactive `swarm lead` (sonnet) in a pane of a private tmux server, idle at its
        prompt after answering one request."""
        if shutil.which("tmux") is None:
            return None
        self._teams += 1
        socket = f"swarm-bench-mem-{os.getpid()}-{self._teams}"
        before = api_requests()
        command = f"exec {checkout.swarm} lead --model sonnet --team lead-{self._teams} 'say hi'"
        try:
            subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-x", "200", "-y", "50",
                            "-c", str(self.home), command], check=True,
                           env={**self.env, **checkout.env})
            wait_for(lambda: api_requests() > before, 60, "the lead's first call")
            pid = int(subprocess.run(["tmux", "-L", socket, "display", "-p", "#{pane_pid}"],
                                     capture_output=True, text=True, check=True).stdout)
            time.sleep(SETTLE + 1.0)
            return Memory.of([pid])
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


@contextmanager
def fake_apis(home: Path) -> Iterator[tuple[dict[str, str], Callable[[], int]]]:
    """Both fakes up; the environment that points both SDKs at them."""
    from tests.support.fake_anthropic import FakeAnthropic
    from tests.support.fake_openai import FakeOpenAI

    with FakeAnthropic() as anthropic_api, FakeOpenAI() as openai_api:
        env = {**os.environ, "ANTHROPIC_API_KEY": "bench-key",
               "ANTHROPIC_BASE_URL": anthropic_api.base_url, "OPENAI_API_KEY": "bench-key",
               "OPENAI_BASE_URL": openai_api.api_url, "NO_PROXY": "127.0.0.1,localhost",
               "no_proxy": "127.0.0.1,localhost", "HOME": str(home),
               "SWARM_MAX_TEAMMATES": "200"}
        yield env, lambda: len(anthropic_api.messages_requests())


class _Lines(list[str]):
    def append(self, line: str) -> None:
        print(line, flush=True)
        super().append(line)


KINDS: list[tuple[str, str, str | None]] = [  # label, model, prompt
    ("shell teammate", "shell", None),
    ("sonnet teammate, before its first call", "sonnet", None),
    ("sonnet teammate, after one call", "sonnet", "say hi"),
    ("openai teammate, after one call", "openai:gpt-4o-mini", "say hi"),
]


def run(checkouts: list[Checkout], home: Path, fleet: int, sdk_fleet: int) -> list[str]:
    """Every measurement for each checkout in turn; the report's lines (printed as they come)."""
    lines = _Lines()
    lines.append(f"memory, MB ({len(checkouts)} checkouts, measured in turn; PSS USS RSS;"
             " spawn -> idle in s)")
    with fake_apis(home) as (env, requests):
        bench = Bench(home, env)
        for label, model, prompt in KINDS:
            for checkout in checkouts:
                memory, seconds = bench.teammates(checkout, 1, model, prompt)
                lines.append(f"  {label:40s} {checkout.label:10s} {memory.cells()}"
                             f"   {seconds:5.2f} s")
        for checkout in checkouts:
            lead = bench.lead(checkout, requests)
            lines.append(f"  {'lead (sonnet, interactive, after one call)':40s} "
                         f"{checkout.label:10s} " + (lead.cells() if lead else "no tmux"))
        for count, model, prompt in ((fleet, "shell", None), (sdk_fleet, "sonnet", "say hi")):
            if count <= 0:
                continue
            for checkout in checkouts:
                memory, seconds = bench.teammates(checkout, count, model, prompt)
                label = f"{count} idle {model} teammates, total"
                lines.append(f"  {label:40s} {checkout.label:10s} {memory.cells()}"
                             f"   {seconds:5.2f} s (all idle)")
    return lines

