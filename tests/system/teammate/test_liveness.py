"""Death detection with real `swarm agent` processes: a SIGKILLed pid, a reused pid, a stale
heartbeat. Each is reported `dead` with its reason, the agent's task goes back to `pending`,
and the lead hears of it exactly once however many observers look."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import TeammateTerminated
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.team.state import read_state, update_state, write_state
from swarm.core.team.team import Team
from swarm.ops.member.health import observe
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.helpers import (
    child_named,
    process_gone,
    wait_until,
)


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")  # inherited by spawned agents


def running_sleep(pid: int) -> psutil.Process:
    """The `sleep` the agent's Bash tool is running (fails the test if none appears)."""
    return child_named(pid, "sleep", message=f"a sleep under agent {pid}")


def holds_a_lock(pid: int) -> bool:
    with open("/proc/locks") as locks:
        return any(line.split()[4] == str(pid) for line in locks if len(line.split()) > 4)


def stop_outside_locks(pid: int) -> None:
    """SIGSTOP `pid` at a moment it holds no file lock. (Stopped inside one, it would block
    every observer on that lock: a separate problem, not what these tests are about.)"""
    def stopped_clean() -> bool:
        os.kill(pid, signal.SIGSTOP)
        wait_until(lambda: psutil.Process(pid).status() == psutil.STATUS_STOPPED, 5)
        if not holds_a_lock(pid):
            return True
        os.kill(pid, signal.SIGCONT)
        return False

    wait_until(stopped_clean, 10, interval=0.01, message=f"{pid} stopped holding no lock")


def status_rows(crew: Crew, **env: str) -> dict[str, dict[str, object]]:
    proc = run_swarm("status", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return {row["name"]: row for row in json.loads(proc.stdout)}


def terminated_notes(crew: Crew) -> list[TeammateTerminated]:
    return [s for m in crew.team.inbox(LEAD_NAME, checked=False).messages(include_archive=True)
            if isinstance(s := m.structured(), TeammateTerminated)]


def test_sigkill_mid_task_is_dead_task_pending_and_the_lead_told_once(
        crew: Crew, strays: list[psutil.Process]) -> None:
    result = crew.spawn("w1")
    assert result.pid is not None
    crew.wait_state("w1", "idle")
    task = crew.team.tasks.add("long job", description="$ sleep 30")
    sleeper = running_sleep(result.pid)
    strays.append(sleeper)
    assert crew.team.tasks.get(task.id).owner == "w1"
    assert status_rows(crew)["w1"]["state"] == "working"

    killed_at = time.monotonic()
    os.kill(result.pid, signal.SIGKILL)
    assert crew.exit_code("w1") == -signal.SIGKILL

    # Several observers at once: each sees `dead`, only the first acts on it.
    observers = [subprocess.Popen([SWARM, "status", "--json"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=30) for p in observers]
    assert all(p.returncode == 0 for p in observers), [err for _, err in outputs]
    rows = [{r["name"]: r for r in json.loads(out)}["w1"] for out, _ in outputs]
    assert time.monotonic() - killed_at < 10
    assert {r["state"] for r in rows} == {"dead"}
    assert rows[0]["detail"] == f"process {result.pid} is gone"
    released = crew.team.tasks.get(task.id)
    assert released.status == "pending" and released.owner is None

    # More looking (the human table, wait, the Python API) tells the lead nothing new.
    table = crew.cli("status")
    assert f"dead (process {result.pid} is gone)" in table.stdout
    waited = crew.cli("wait", "--until", "idle", "--timeout", "5")
    assert waited.returncode == 1
    assert f"teammate died: w1 (process {result.pid} is gone)" in waited.stderr
    assert [s.state for s in observe(crew.team)] == ["dead"]
    notes = terminated_notes(crew)
    assert len(notes) == 1
    assert notes[0].agent_id == "w1@crew" and notes[0].reason == f"process {result.pid} is gone"
    # Released, not re-owned: nobody is alive to claim it.
    assert crew.team.tasks.get(task.id).status == "pending"


def test_a_reused_pid_is_dead_and_the_unrelated_process_is_left_alone(crew: Crew) -> None:
    result = crew.spawn("w1")
    crew.wait_state("w1", "idle")
    os.kill(result.pid or 0, signal.SIGKILL)
    crew.exit_code("w1")
    # The pid now names an unrelated live process. Start times within a second count as the
    # same process (the kernel's boot time jitters), so the agent is recorded as having started
    # a minute before the pid was reused, as a real reuse would be.
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        def reuse(state: AgentState) -> None:
            assert state.started_at is not None
            state.pid, state.started_at = stranger.pid, state.started_at - 60

        update_state(crew.team.name, "w1", reuse)

        row = status_rows(crew)["w1"]
        assert row["state"] == "dead"
        assert row["detail"] == f"pid {stranger.pid} now belongs to another process"
        assert len(terminated_notes(crew)) == 1
        # `swarm kill` of the dead member must not signal the process that owns the pid now.
        assert crew.cli("kill", "w1").returncode == 0
        assert stranger.poll() is None and psutil.Process(stranger.pid).status() != "zombie"
    finally:
        stranger.kill()
        stranger.wait()


def test_a_stopped_process_goes_dead_once_its_heartbeat_is_stale(crew: Crew) -> None:
    result = crew.spawn("w1")
    assert result.pid is not None
    crew.wait_state("w1", "idle")
    first = crew.state("w1").heartbeat  # type: ignore[union-attr]
    # The heartbeat is kept while the process lives, without any work to do.
    wait_until(lambda: crew.state("w1").heartbeat > first, 5)  # type: ignore[union-attr]
    assert status_rows(crew, SWARM_HEARTBEAT_STALE="1.5")["w1"]["state"] == "idle"

    stop_outside_locks(result.pid)
    try:
        stopped_at = time.monotonic()
        def dead_row() -> dict[str, object] | None:
            row = status_rows(crew, SWARM_HEARTBEAT_STALE="1.5")["w1"]
            return row if row["state"] == "dead" else None

        row = wait_until(dead_row, 10, interval=0.2)
        assert row is not None
        assert time.monotonic() - stopped_at >= 1.0  # not before the heartbeat went stale
        assert str(row["detail"]).startswith("no heartbeat for ")
        assert psutil.Process(result.pid).status() == psutil.STATUS_STOPPED  # observed, not killed
        assert len(terminated_notes(crew)) == 1
    finally:
        os.kill(result.pid, signal.SIGKILL)
        os.kill(result.pid, signal.SIGCONT)
    crew.exit_code("w1")


def test_an_idle_teammate_keeps_its_heartbeat_without_spinning(crew: Crew) -> None:
    """Idle means asleep on inotify: no busy loop (its own lock-file closes once woke it,
    ~600 task-list claims a second, which also made a stopped agent likely to hold the lock)."""
    result = crew.spawn("w1")
    crew.wait_state("w1", "idle")
    agent = psutil.Process(result.pid)
    before = sum(agent.cpu_times()[:2])
    beats: list[float] = []

    def five_beats() -> bool:
        beat = crew.state("w1").heartbeat  # type: ignore[union-attr]
        if not beats or beat != beats[-1]:
            beats.append(beat)
        return len(beats) > 5

    wait_until(five_beats, 5)
    used = sum(agent.cpu_times()[:2]) - before
    window = beats[-1] - beats[0]
    assert used < 0.25 * window, f"{used:.2f}s of CPU in {window:.2f}s idle"


def test_a_teammate_declared_dead_that_wakes_up_leaves_instead_of_resuming(crew: Crew) -> None:
    """Stopped long enough to be declared dead, its tasks went back to the pool. Continued, it
    must not write its old state over the verdict (it would look idle and alive again while
    another teammate takes its work): it exits, and the record stays `dead`."""
    result = crew.spawn("w1")
    assert result.pid is not None
    crew.wait_state("w1", "idle")
    stop_outside_locks(result.pid)
    try:
        wait_until(lambda: status_rows(crew, SWARM_HEARTBEAT_STALE="1.0")["w1"]["state"] == "dead",
                   10, interval=0.2)
    finally:
        os.kill(result.pid, signal.SIGCONT)
    wait_until(lambda: process_gone(result.pid), 10,
               message="the woken teammate to exit")
    state = crew.state("w1")
    assert state is not None and state.state == "dead"
    assert str(state.detail).startswith("no heartbeat for ")
    assert len(terminated_notes(crew)) == 1


def test_status_does_not_hang_on_a_lock_held_by_a_stopped_process(crew: Crew) -> None:
    """A teammate stopped while it holds the task-list lock: `swarm status` still answers (dead,
    stale heartbeat) within seconds instead of waiting on the lock forever."""
    from swarm.core.store.disk import locked

    result = crew.spawn("w1")
    assert result.pid is not None
    crew.wait_state("w1", "idle")
    holder = subprocess.Popen(  # stands in for a process stopped inside the lock
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from swarm.core.store.disk import locked\n"
         f"with locked(Path({str(paths.tasks_lock(crew.team.name))!r})):\n"
         "    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        stop_outside_locks(result.pid)
        started = time.monotonic()
        def dead_row() -> dict[str, object] | None:
            row = status_rows(crew, SWARM_HEARTBEAT_STALE="1.0")["w1"]
            return row if row["state"] == "dead" else None

        row = wait_until(dead_row, 15, interval=0.2)
        assert row is not None and str(row["detail"]).startswith("no heartbeat for ")
        assert time.monotonic() - started < 12
    finally:
        holder.kill()
        holder.wait()
        os.kill(result.pid, signal.SIGKILL)
        os.kill(result.pid, signal.SIGCONT)
    with locked(paths.tasks_lock(crew.team.name), timeout=5):
        pass  # the lock is free again once its holder is gone
    crew.exit_code("w1")


def test_a_clean_exit_recorded_after_the_observer_looked_is_not_a_death(team: Team) -> None:
    # An observer reads alice's state (idle), alice then records `exited` and goes, and the
    # observer finds her pid gone: she exited, she did not die, and the lead is told nothing.
    from swarm.ops.member.health import observe_member, record_death

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_state(team.name, "alice", AgentState(state="exited", pid=gone.pid, detail="shut down"))
    assert record_death(team, "alice", f"process {gone.pid} is gone") is False
    state = read_state(team.name, "alice")
    assert state is not None and (state.state, state.detail) == ("exited", "shut down")
    member = team.config().member("alice")
    assert member is not None
    assert observe_member(team, member).state == "exited"
    notes = [m for m in team.inbox(LEAD_NAME, checked=False).messages()
             if isinstance(m.structured(), TeammateTerminated)]
    assert notes == []


def dead(crew: Crew, name: str) -> None:
    pid = crew.state(name).pid  # type: ignore[union-attr]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert crew.exit_code(name) == -signal.SIGKILL

    def seen() -> bool:
        rows = {r["name"]: r for r in json.loads(crew.cli("status", "--json").stdout)}
        return rows[name]["state"] == "dead"

    wait_until(seen, 15, message=f"{name} seen dead")


def test_a_death_before_the_wait_is_a_note_not_a_failure(crew: Crew) -> None:
    crew.spawn("w1")
    crew.spawn("w2")
    crew.wait_state("w1", "idle")
    crew.wait_state("w2", "idle")
    dead(crew, "w1")

    waited = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert waited.returncode == 0, waited.stderr
    assert waited.stderr.strip() == (
        "swarm: note: w1 died before this wait and is left out of it (`swarm respawn w1`"
        " restarts it, `swarm team remove w1` clears it)")
    crew.cli("tasks", "add", "hi", "--description", "$ echo hi")
    done = crew.cli("wait", "--until", "tasks-done", "--timeout", "20")
    assert done.returncode == 0, done.stderr

    # Nobody alive: the wait could only time out, so it fails at once and says how to go on.
    dead(crew, "w2")
    nobody = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert nobody.returncode == 1
    assert nobody.stderr.strip().splitlines()[-1].startswith(
        "swarm: error: teammate died: w1 (process ")
    assert nobody.stderr.strip().endswith(
        " before this wait, and no teammate is alive: `swarm respawn w1` restarts one,"
        " `swarm team remove w1` clears it")
    # ...but waiting for everyone to have stopped holds.
    assert crew.cli("wait", "--until", "exited", "--timeout", "10").returncode == 0

