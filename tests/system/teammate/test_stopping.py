"""Stopping members that cannot stop themselves:

- a teammate whose model provider is down (its model call retrying with backoff) answers a
  shutdown request at once, and `shutdown --force` ends a member that did not answer an earlier
  request after a short grace, not a second full timeout;
- `swarm report` does not count a SIGKILLed member's dead time (until its respawn) as busy or
  idle: the lane shows it as `dead`;
- a SIGKILLed `swarm lead`'s own Bash command ends when its death is noticed (its teammates,
  or the next `swarm status`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from tests.support.agent_fixtures import Crew, stop_tree
from tests.support.cli_runner import SWARM
from tests.support.fake_anthropic import ERROR_TYPES, FakeAnthropic, Received, Scripted, reply
from tests.support.helpers import (
    child_named,
    command_group_recorded,
    turn_over,
    wait_until,
)


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A key for the fake API, and retries that back off from half a second, doubling (as against
    a real outage, if sooner)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.5")
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "20")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)


def failing(status: int) -> Any:
    """A responder: the API answers every request with `status` (retryable, no retry-after:
    the teammate backs off on its own schedule)."""
    body = {"type": "error", "error": {"type": ERROR_TYPES[status], "message": "down"}}
    return lambda received: Scripted(status, body, {"x-should-retry": "true"})


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def timed_cli(crew: Crew, *args: str, timeout: float = 40.0
              ) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = crew.cli(*args, timeout=timeout)
    return proc, time.monotonic() - began


@pytest.mark.parametrize("outage", ["529", "500", "closed-port"])
def test_shutdown_is_answered_while_the_provider_is_down(
        crew: Crew, fake_api: FakeAnthropic, provider_env: None,
        monkeypatch: pytest.MonkeyPatch, outage: str) -> None:
    if outage == "closed-port":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", closed_port())
    else:
        fake_api.fallback = failing(int(outage))
    result = crew.spawn("w1", "Say hello.", model="sonnet")
    crew.wait_state("w1", "working")
    if outage != "closed-port":  # in its retries
        wait_until(lambda: len(fake_api.messages_requests()) >= 2, 15,
                   message=f"a retry (log: {crew.log('w1')[-600:]})")
    # `swarm status` says why it is stuck.
    wait_until(lambda: "model API failing" in (crew.state("w1").detail or ""), 15,  # type: ignore[union-attr]
               message=f"the failing call in state.json ({crew.state('w1')})")

    proc, took = timed_cli(crew, "shutdown", "w1", "--timeout", "30")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert took < 15, took  # not the 30 s timeout
    (line,) = proc.stdout.splitlines()
    assert line.startswith("w1: exited (") and "model API failing" in line, line
    assert crew.exit_code("w1") == 0
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]
    assert not is_alive(result.pid)


def test_force_kills_a_member_that_ignored_an_earlier_request_after_a_short_grace(
        crew: Crew, fake_api: FakeAnthropic, provider_env: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A model call that hangs (no error to retry on) cannot be answered: the first shutdown
    says what the member is doing; `--force` then kills it after a short grace."""
    release = threading.Event()

    def hang(received: Received) -> Scripted:
        release.wait(120)
        return reply("late")

    fake_api.fallback = hang
    monkeypatch.setenv("SWARM_UNANSWERED_GRACE", "1")
    try:
        result = crew.spawn("w1", "Say hello.", model="sonnet")
        crew.wait_state("w1", "working")
        wait_until(lambda: fake_api.messages_requests(), 15, message="the model call")
        proc, took = timed_cli(crew, "shutdown", "w1", "--timeout", "1")
        assert proc.returncode == 1
        assert "w1: timeout (no exit within 1s; it is working" in proc.stdout, proc.stdout
        proc, took = timed_cli(crew, "shutdown", "w1", "--timeout", "60", "--force")
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
        assert took < 20, took  # not the 60 s timeout again
        assert proc.stdout.startswith("w1: killed (it did not answer an earlier shutdown "
                                      "request; no exit within 1s"), proc.stdout
        wait_until(lambda: not is_alive(result.pid), 10, message="w1 killed")
    finally:
        release.set()


def test_force_still_waits_for_a_member_asked_for_the_first_time(
        crew: Crew) -> None:
    """The short grace is only for a member that already ignored a request: a busy shell
    teammate asked once with --force finishes its command and exits by itself."""
    crew.spawn("w1", "$ sleep 3")
    crew.wait_state("w1", "working")
    proc, took = timed_cli(crew, "shutdown", "w1", "--timeout", "30", "--force")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proc.stdout.startswith("w1: exited"), proc.stdout
    assert crew.exit_code("w1") == 0


# -- the report: a dead member is not busy ------------------------------------------------------

DEAD_GAP = 2.0  # seconds the member stays dead before its respawn


def report(crew: Crew) -> dict[str, Any]:
    proc = crew.cli("report", "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def member_row(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in data["members"] if r["name"] == name)


def lane(data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return next(la for la in data["lanes"] if la["name"] == name)["spans"]


def kill_and_wait(crew: Crew, name: str, pid: int) -> float:
    os.kill(pid, signal.SIGKILL)
    assert crew.exit_code(name) == -signal.SIGKILL
    killed = time.time()
    # The member stays dead for a while: the time the report must not count as work.
    time.sleep(DEAD_GAP)
    return killed


def overlap(span: dict[str, Any], start: float, end: float) -> float:
    return max(0.0, min(span["end"], end) - max(span["start"], start))


@pytest.mark.parametrize("when", ["mid-turn", "idle"])
def test_report_does_not_count_a_killed_members_dead_time(crew: Crew, when: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    result = crew.spawn("w1", "$ sleep 300" if when == "mid-turn" else "$ echo hi")
    stray = None
    if when == "mid-turn":
        stray = child_named(result.pid, "sleep", message=f"the sleep (log: {crew.log('w1')})")
        command_group_recorded(crew.team.name, "w1", stray)
    else:
        crew.wait_idle_notes("w1", 1)
    killed = kill_and_wait(crew, "w1", result.pid)
    proc = crew.cli("respawn", "w1")
    assert proc.returncode == 0, proc.stderr
    respawned = time.time()
    if stray is not None:  # recorded dead: its command went with it
        wait_until(lambda: not is_alive(stray.pid, stray.create_time()), 10,
                   message="the killed member's sleep ended")
    crew.wait_state("w1", "idle", timeout=20)
    crew.send("w1", "$ echo after")
    crew.wait_idle_notes("w1", 1 if when == "mid-turn" else 2, timeout=20)

    data = report(crew)
    row = member_row(data, "w1")
    began = _epoch(data["start"])
    gap = (killed - began, respawned - began)
    spans = lane(data, "w1")
    # Neither work nor idle nor a tool call spans the time it was dead.
    for span in spans:
        if span["kind"] in ("work", "idle", "tool", "model"):
            assert overlap(span, gap[0] + 0.5, gap[1] - 0.5) == 0, (span, gap)
    # Busy only while alive (however long its turns took on a busy machine).
    assert row["busy_s"] <= data["duration_s"] - (gap[1] - gap[0]) + 0.5, (row, gap)
    assert row["wall_s"] <= data["duration_s"] - DEAD_GAP + 1.0, (row, data["duration_s"])
    dead = [s for s in spans if s["kind"] == "dead"]
    assert dead and sum(s["end"] - s["start"] for s in dead) >= DEAD_GAP - 1.0, spans
    assert row["dead_s"] >= DEAD_GAP - 1.0, row


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


def test_report_of_a_member_killed_and_never_respawned(crew: Crew,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Dead till the end of the run: its lane says dead, not busy, from its death on."""
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    result = crew.spawn("w1", "$ sleep 300")
    stray = child_named(result.pid, "sleep", message="the sleep")
    command_group_recorded(crew.team.name, "w1", stray)
    killed = kill_and_wait(crew, "w1", result.pid)
    crew.cli("status")  # records the death
    wait_until(lambda: not is_alive(stray.pid, stray.create_time()), 10, message="sleep ended")
    crew.spawn("w2", "$ echo later")  # the run goes on after the death
    crew.wait_idle_notes("w2", 1)
    data = report(crew)
    row = member_row(data, "w1")
    assert row["busy_s"] <= killed - _epoch(data["start"]) + 0.5, row  # busy only while alive
    dead = [s for s in lane(data, "w1") if s["kind"] == "dead"]
    assert dead and dead[-1]["end"] == pytest.approx(data["duration_s"], abs=0.01), dead


# -- a SIGKILLed lead's Bash command -----------------------------------------------------------

LEAD_SCRIPT = """\
turns:
{spawn}
  - tool_uses:
      - name: Bash
        input: {{command: "sleep 300; echo never", timeout: 600000}}
"""
SPAWN = """\
  - tool_uses:
      - name: SpawnTeammate
        input: {name: ada, model: shell, permission_mode: bypassPermissions,
                prompt: "$ echo ready"}
"""


@pytest.fixture
def lead_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, swarm_home: Path) -> Path:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "30")  # the command ends at once, not after it
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SWARM_TEAM", raising=False)
    return swarm_home


@pytest.mark.parametrize("noticed_by", ["swarm status", "its teammate"])
def test_a_killed_leads_bash_command_ends(lead_home: Path, tmp_path: Path,
                                           noticed_by: str) -> None:
    script = tmp_path / "lead.yaml"
    with_teammate = noticed_by == "its teammate"
    script.write_text(LEAD_SCRIPT.format(spawn=SPAWN if with_teammate else ""))
    work = tmp_path / "work"
    work.mkdir()
    argv = [SWARM, "lead", "--headless", "--model", f"scripted:{script}", "--team", "solo",
            "--permission-mode", "bypassPermissions", "--backend", "hidden", "go"]
    lead = subprocess.Popen(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "SWARM_TRUST_PROJECT": "1"})
    strays: list[psutil.Process] = []
    try:
        sleep = child_named(lead.pid, "sleep", timeout=30, message="the lead's sleep")
        strays.append(sleep)
        if with_teammate:
            wait_until(lambda: turn_over("solo", "ada"), 20, message="ada's turn over")
        command_group_recorded("solo", LEAD_NAME, sleep)
        lead.kill()
        lead.wait(10)
        if not with_teammate:
            proc = subprocess.run([SWARM, "status", "--team", "solo"], capture_output=True,
                                  text=True, timeout=30)
            assert proc.returncode == 0, proc.stderr
            assert "dead" in proc.stdout
        wait_until(lambda: not is_alive(sleep.pid, sleep.create_time()), 15,
                   message=f"the dead lead's sleep {sleep.pid} ended")
        if with_teammate:  # it stays (the grace lets a resumed lead adopt it)
            state = read_state("solo", "ada")
            assert state is not None and state.state == "idle"
    finally:
        for proc in strays:
            if proc.is_running():
                proc.kill()
        if lead.poll() is None:
            stop_tree(lead.pid)
        for member in ("ada",):
            state = read_state("solo", member) if (lead_home / "teams" / "solo").exists() else None
            if state is not None and state.pid and is_alive(state.pid, state.started_at):
                stop_tree(state.pid)


def test_each_retry_wait_is_told_the_failure_and_can_give_the_call_up(
        fake_api: FakeAnthropic, provider_env: None) -> None:
    """In-process: the model hands each wait to `on_retry` with the failure in one line;
    what `on_retry` raises ends the call (no further request)."""
    from swarm.errors import ModelAPIError
    from swarm.runtime.models.anthropic_model import AnthropicModel
    from swarm.runtime.models.base import ModelRequest

    fake_api.fallback = failing(529)
    waits: list[tuple[str, float]] = []

    def on_retry(problem: str, delay: float) -> None:
        waits.append((problem, delay))
        if len(waits) == 2:
            raise ModelAPIError("asked to shut down")

    model = AnthropicModel("sonnet", max_retries=5)
    request = ModelRequest("", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                           [], on_retry=on_retry)
    with pytest.raises(ModelAPIError, match="asked to shut down"):
        model.complete(request)
    assert len(fake_api.messages_requests()) == 2
    assert [p for p, _ in waits] == [
        "Anthropic API 529 overloaded_error: down",
        "Anthropic API 529 overloaded_error after 2 attempts: down"]
    assert all(0 < d <= 4 for _, d in waits)  # SWARM_API_RETRY_BASE=2, jittered backoff


def test_kill_of_a_stopped_member_says_it_is_not_running(crew: Crew) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    first = crew.cli("kill", "w1")
    assert first.returncode == 0 and first.stdout.strip() == "killed w1", first
    again = crew.cli("kill", "w1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "w1 is not running (exited: killed): nothing to kill", again
    # A member that shut down keeps its own words: a kill does not rewrite them as `killed`.
    crew.spawn("w2")
    crew.wait_state("w2", "idle")
    assert crew.cli("shutdown", "w2").returncode == 0
    late = crew.cli("kill", "w2")
    assert late.stdout.strip() == "w2 is not running (exited: shut down): nothing to kill", late
    assert crew.state("w2").detail == "shut down"  # type: ignore[union-attr]

