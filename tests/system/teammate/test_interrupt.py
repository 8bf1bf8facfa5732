"""The two levels of abort on real processes: `swarm interrupt` ends the turn (and its Bash
process tree) but not the agent; `swarm kill` ends the agent and gives its task back."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import psutil
import pytest

from swarm.core.records.protocol import TeammateTerminated
from swarm.core.store import paths
from swarm.lead.interactive import TerminalUI, command
from tests.support.agent_fixtures import Crew
from tests.support.helpers import (
    child_named,
    process_gone,
    wait_until,
)


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")


def running_sleep(crew: Crew, name: str, pid: int) -> psutil.Process:
    return child_named(pid, "sleep", message=f"a sleep under {name} (log: {crew.log(name)[-600:]})")


def reports_from(crew: Crew, name: str) -> list[str]:
    return [m.text for m in crew.lead_messages() if m.sender == name and m.structured() is None]


SLEEP_S = 600  # the interrupted command's length: it can only end sooner by being ended


def test_interrupt_kills_the_running_command_and_the_agent_lives_on(crew: Crew) -> None:
    result = crew.spawn("w1", prompt=f"$ sleep {SLEEP_S}")
    assert result.pid is not None
    sleeper = running_sleep(crew, "w1", result.pid)
    assert crew.state("w1").state == "working"  # type: ignore[union-attr]

    proc = crew.cli("interrupt", "w1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "interrupted w1 (working)"
    # Gone a small part of its length after it started: the interrupt ended it (a bound of a
    # few seconds was the CLI's start on a busy machine as much as the interrupt).
    wait_until(lambda: process_gone(sleeper), 60, message="the sleep to be killed")
    assert time.time() - sleeper.create_time() < SLEEP_S / 10
    state = crew.wait_state("w1", "idle", timeout=60)
    assert state.idle_reason == "interrupted" and state.pid == result.pid
    assert psutil.Process(result.pid).is_running()
    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.idle_reason == "interrupted"
    status = crew.cli("status")
    assert "idle (interrupted)" in status.stdout
    events = [e.get("event") for e in crew.transcript("w1") if e["kind"] == "event"]
    assert "interrupted" in events

    # Still alive and answering; the same process takes the next message.
    crew.send("w1", "$ echo still-here")
    notes = crew.wait_idle_notes("w1", 2)
    assert notes[1].idle_reason == "available"
    assert reports_from(crew, "w1")[-1] == "$ echo still-here\nstill-here"
    assert crew.state("w1").pid == result.pid  # type: ignore[union-attr]
    assert crew.procs["w1"].poll() is None


def test_an_interrupt_before_the_command_started_still_ends_it(crew: Crew) -> None:
    """SIGINT kills the command it finds running. One that comes in the turn before the Bash
    command is running (here while a PreToolUse hook runs; or while the call is checked, or
    the command starting) must still end the turn: the command is killed as it starts."""
    hooked = crew.workdir / "hooked"
    paths.user_settings().parent.mkdir(parents=True, exist_ok=True)
    paths.user_settings().write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "command": f"touch {hooked}; sleep {SLEEP_S}"}]}}))
    result = crew.spawn("w1", prompt=f"$ sleep {SLEEP_S}")
    assert result.pid is not None
    hook = child_named(result.pid, "sleep", message=f"the hook's sleep (log: {crew.log('w1')})")
    assert hooked.exists()  # the hook's sleep, not the command's

    proc = crew.cli("interrupt", "w1")
    assert proc.stdout.strip() == "interrupted w1 (working)", proc.stderr
    state = crew.wait_state("w1", "idle", timeout=60)
    assert state.idle_reason == "interrupted" and state.pid == result.pid
    assert process_gone(hook)
    # Whatever it started is gone long before the command's length: nothing sleeps under it.
    assert not [p for p in psutil.Process(result.pid).children(recursive=True)
                if p.name() == "sleep"]
    events = [e.get("event") for e in crew.transcript("w1") if e["kind"] == "event"]
    assert "interrupted" in events and "interrupt" in crew.log("w1").lower()


def test_interrupt_while_idle_changes_nothing(crew: Crew) -> None:
    result = crew.spawn("w1", prompt="$ echo one")
    crew.wait_idle_notes("w1", 1)
    crew.wait_state("w1", "idle")
    proc = crew.cli("interrupt", "w1")
    assert proc.returncode == 0
    assert proc.stdout.strip() == "w1 is idle: there was no turn to interrupt"
    # The next turn is a barrier: a stray notification from the interrupt would come first.
    crew.send("w1", "$ echo two")
    notes = crew.wait_idle_notes("w1", 2)
    assert [n.idle_reason for n in notes] == ["available", "available"]
    assert crew.state("w1").pid == result.pid  # type: ignore[union-attr]


def test_kill_ends_the_process_and_its_command_and_releases_its_task(crew: Crew) -> None:
    result = crew.spawn("w1")
    assert result.pid is not None
    crew.wait_state("w1", "idle")
    task = crew.team.tasks.add("long job", description="$ sleep 60")
    sleeper = running_sleep(crew, "w1", result.pid)
    assert crew.team.tasks.get(task.id).owner == "w1"

    began = time.monotonic()
    assert crew.cli("status").returncode == 0  # a command's own start, for comparison
    started = time.monotonic()
    proc = crew.cli("kill", "w1")
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "killed w1"
    # It exits on SIGTERM at once; `kill` must not sit out its grace period on the zombie (we,
    # its parent, have not reaped it yet): 3 s for the SIGTERM, 3 more after a SIGKILL. Beyond
    # the command's own start (what a busy machine slows), not the whole command.
    assert took - (started - began) < 5, (took, started - began)
    assert crew.exit_code("w1", timeout=5) == 143  # it ran its SIGTERM handler
    assert not psutil.pid_exists(result.pid)
    wait_until(lambda: process_gone(sleeper), 3, message="its sleep to be killed with it")
    released = crew.team.tasks.get(task.id)
    assert released.status == "pending" and released.owner is None
    state = crew.state("w1")
    assert state is not None and state.state == "exited"
    assert "exited" in crew.cli("status").stdout
    # Killing is not dying: the lead is not told of a termination it asked for.
    assert not [m for m in crew.lead_messages() if isinstance(m.structured(), TeammateTerminated)]
    # Nothing left to interrupt.
    refused = crew.cli("interrupt", "w1")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "swarm: error: w1 is exited: nothing to interrupt"


def test_slash_interrupt_of_an_idle_teammate_says_nothing_was_running(
    crew: Crew, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interactive lead's `/interrupt NAME` (the shell's `swarm interrupt` says it too)."""
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    session = SimpleNamespace(lead=SimpleNamespace(team=crew.team))
    command(session, TerminalUI(), "/interrupt w1")  # type: ignore[arg-type]
    assert "w1 is idle: there was no turn to interrupt" in capsys.readouterr().out
    assert crew.cli("interrupt", "w1").stdout.strip() == (
        "w1 is idle: there was no turn to interrupt")
    assert crew.state("w1").state == "idle"  # type: ignore[union-attr]

