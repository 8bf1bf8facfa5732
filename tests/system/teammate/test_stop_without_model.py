"""A stop that does not need the model: a teammate that cannot make a model
call (idle after a failed turn, its provider unreachable, its shutdown turn failing) approves a
shutdown request itself at once; one that does not answer is ended after a short grace, never
the whole timeout; `--force` ends it at once."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm.core.records.state import AgentState
from swarm.core.store.liveness import is_alive, process_start_time
from swarm.core.team.state import write_state
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import ERROR_TYPES, FakeAnthropic, Scripted
from tests.support.helpers import process_gone, turn_over, wait_until


@pytest.fixture
def unreachable_ollama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The issue's provider that is down: Ollama on a port nothing listens on; retries short."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:1")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.1")
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "1")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")


def timed(crew: Crew, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = crew.cli(*args, timeout=60)
    return proc, time.monotonic() - began


def failed_turn(crew: Crew, name: str) -> int:
    """Spawn `name` on the unreachable provider and wait until its first turn has failed."""
    result = crew.spawn(name, "Say hello.", model="ollama:qwen3-coder")
    wait_until(lambda: turn_over(crew.team.name, name)
               and crew.state(name).idle_reason == "failed", 20,  # type: ignore[union-attr]
               message=f"{name}'s failed turn (log: {crew.log(name)[-600:]})")
    assert result.pid is not None
    return result.pid


def test_a_teammate_whose_last_turn_failed_approves_a_shutdown_at_once(
        crew: Crew, unreachable_ollama: None) -> None:
    pid = failed_turn(crew, "o")
    proc, took = timed(crew, "shutdown", "o", "--timeout", "30")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert took < 5, took  # not the 30 s timeout
    (line,) = proc.stdout.splitlines()
    assert line.startswith("o: exited (its last turn failed: Ollama API"), line
    assert "shutting down without the model" in line, line
    assert crew.exit_code("o") == 0
    assert crew.state("o").state == "exited"  # type: ignore[union-attr]
    assert not is_alive(pid)


@pytest.mark.parametrize("status", [500, 401])
def test_a_shutdown_turn_that_cannot_reach_the_model_is_approved_at_once(
        crew: Crew, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        status: int) -> None:
    """The provider fails only once the shutdown request has come: its turn's first call
    fails (a 500 it would retry for a long while, a 401 it does not retry at all)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "2")
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "20")
    crew.spawn("w1", "Say hello.", model="sonnet")
    wait_until(lambda: turn_over(crew.team.name, "w1") and crew.idle_notes("w1"), 15,
               message=f"w1's first turn (log: {crew.log('w1')[-600:]})")
    body = {"type": "error", "error": {"type": ERROR_TYPES[status], "message": "down"}}
    retry = {"x-should-retry": "true"} if status == 500 else {}
    fake_api.fallback = lambda received: Scripted(status, body, retry)

    proc, took = timed(crew, "shutdown", "w1", "--timeout", "30")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert took < 15, took  # not the 30 s timeout
    (line,) = proc.stdout.splitlines()
    assert line.startswith("w1: exited (") and "without the model" in line, line
    assert crew.exit_code("w1") == 0


@pytest.fixture
def silent(crew: Crew) -> Iterator[int]:
    """A member `o` whose last turn failed and whose process reads no mail: a real process (a
    `sleep`) recorded as its pid, with the state a failed turn leaves."""
    crew.register("o", model="ollama:qwen3-coder")
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    write_state(crew.team.name, "o", AgentState(
        state="idle", idle_reason="failed", pid=proc.pid,
        started_at=process_start_time(proc.pid),
        detail="Ollama API at http://127.0.0.1:1/v1/ unreachable after 2 attempts"))
    yield proc.pid
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_a_failed_teammate_that_does_not_answer_is_ended_after_a_grace(
        crew: Crew, silent: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its process does not answer: the wait is a short grace (SWARM_UNANSWERED_GRACE), not
    the timeout, and then the process is ended without --force."""
    monkeypatch.setenv("SWARM_UNANSWERED_GRACE", "1")
    proc, took = timed(crew, "shutdown", "o", "--timeout", "60")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert took < 20, took  # the grace, not the 60 s timeout
    assert proc.stdout.startswith("o: killed (its last turn failed: Ollama API"), proc.stdout
    assert "no exit within 1s" in proc.stdout, proc.stdout
    wait_until(lambda: process_gone(silent), 10, message="o ended")
    assert crew.state("o").state == "exited"  # type: ignore[union-attr]


def test_force_ends_a_teammate_that_cannot_reach_its_model_at_once(
        crew: Crew, silent: int) -> None:
    proc, took = timed(crew, "shutdown", "o", "--timeout", "60", "--force")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proc.stdout.startswith("o: killed (its last turn failed: Ollama API"), proc.stdout
    assert "no exit within" not in proc.stdout, proc.stdout  # not waited for
    assert took < 5, took
    wait_until(lambda: process_gone(silent), 10, message="o ended")
