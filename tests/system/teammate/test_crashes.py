"""Stopping and crashing look like what they are: an interrupt and SIGTERM work in the
middle of a slow model call; a crash is a death with its reason (tasks released, the lead told
once, `swarm wait` exits 1), never a clean shutdown; a dead teammate's command does not linger."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.records.protocol import TeammateTerminated
from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.helpers import child_named, command_group_recorded, process_gone, wait_until

SLOW_CALL_S = 30.0  # far longer than any wait below: finishing early means the stop worked


@pytest.fixture
def slow_api(fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The fake API's next answer takes SLOW_CALL_S seconds (set the event to release it)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    release = threading.Event()

    def slow(body: dict[str, Any]) -> Scripted:
        release.wait(SLOW_CALL_S)
        return Scripted(200, {"content": [{"type": "text", "text": "late answer"}]})

    fake_api.push(slow)
    yield release
    release.set()


def in_model_call(crew: Crew, fake_api: FakeAnthropic, name: str) -> None:
    # A wait, not a bound: a teammate that imports the SDK starts slowly on a busy machine.
    wait_until(lambda: fake_api.messages_requests(), 60, message=f"{name}'s model call")
    crew.wait_state(name, "working", timeout=60)


def test_interrupt_ends_the_turn_during_a_model_call(
        crew: Crew, fake_api: FakeAnthropic, slow_api: threading.Event) -> None:
    crew.spawn("w1", prompt="think hard", model="sonnet")
    in_model_call(crew, fake_api, "w1")
    proc = crew.cli("interrupt", "w1")
    assert proc.returncode == 0 and "interrupted w1" in proc.stdout, proc.stderr
    (note,) = crew.wait_idle_notes("w1", 1, timeout=10)
    assert note.idle_reason == "interrupted"
    assert len(fake_api.messages_requests()) == 1  # no retry of the abandoned call
    assert crew.procs["w1"].poll() is None  # the turn ended, not the process


def test_sigterm_ends_the_process_during_a_model_call(
        crew: Crew, fake_api: FakeAnthropic, slow_api: threading.Event) -> None:
    crew.team.tasks.add("the work")
    crew.spawn("w1", model="sonnet")
    in_model_call(crew, fake_api, "w1")
    crew.procs["w1"].send_signal(signal.SIGTERM)
    assert crew.exit_code("w1", timeout=10) == 143
    state = crew.wait_state("w1", "exited")
    assert state.detail == "killed (SIGTERM)"
    assert [t.status for t in crew.team.tasks.list()] == ["pending"]  # given back


def test_a_crash_is_a_death_with_its_reason(crew: Crew) -> None:
    """ENOSPC while writing the transcript (it points at /dev/full): the agent dies, says what
    failed and where, gives back its task, tells the lead once, and `swarm wait` exits 1."""
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    # The transcript first: the idle agent may claim the new task and write at once.
    transcript = paths.agent_transcript(crew.team.name, "w1")
    transcript.unlink()
    transcript.symlink_to("/dev/full")
    task = crew.team.tasks.add("owned", owner="w1")  # w1 claims it, and crashes writing
    crew.send("w1", "$ echo hi", summary="work")
    assert crew.exit_code("w1") == 1
    state = crew.wait_state("w1", "dead")
    assert state.detail is not None and state.detail.startswith("crashed: disk full writing ")
    assert str(transcript) in state.detail and "(ENOSPC)" in state.detail
    assert crew.team.tasks.get(task.id).status == "pending"
    told = [k for m in crew.lead_messages() if isinstance(k := m.structured(), TeammateTerminated)]
    assert len(told) == 1 and told[0].reason == state.detail
    waited = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert waited.returncode == 1 and "w1" in waited.stderr and "disk full" in waited.stderr
    status = crew.cli("status")  # an observer records nothing twice
    assert status.returncode == 0
    assert len([m for m in crew.lead_messages()
                if isinstance(m.structured(), TeammateTerminated)]) == 1


def test_a_corrupt_team_file_is_a_crash_not_a_shutdown(crew: Crew) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    Path(crew.team.document()).write_text("{not json")
    crew.team.tasks.add("wake up")  # the agent claims it, works, and must report to the lead
    assert crew.exit_code("w1") == 1
    state = crew.wait_state("w1", "dead")
    assert state.detail is not None and "team file" in state.detail
    told = [k for m in crew.lead_messages() if isinstance(k := m.structured(), TeammateTerminated)]
    assert len(told) == 1


def test_a_sigkilled_teammates_command_is_ended_when_its_death_is_recorded(
        crew: Crew, strays: list[psutil.Process]) -> None:
    result = crew.spawn("w1", prompt="$ sleep 60")
    assert result.pid is not None
    sleeper = child_named(result.pid, "sleep")
    strays.append(sleeper)
    command_group_recorded(crew.team.name, "w1", sleeper)
    os.kill(result.pid, signal.SIGKILL)
    crew.exit_code("w1")
    assert crew.cli("status").returncode == 0  # the observer records the death
    crew.wait_state("w1", "dead")
    wait_until(lambda: process_gone(sleeper), 10,
               message="the dead teammate's sleep to end")


def test_agent_log_is_private(crew: Crew) -> None:
    crew.spawn("w1", prompt="$ echo hi")
    crew.wait_idle_notes("w1", 1)
    assert paths.agent_log(crew.team.name, "w1").stat().st_mode & 0o777 == 0o600
