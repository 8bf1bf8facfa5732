"""Real `swarm agent` processes running the offline `shell` model (hidden backend)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import psutil

from swarm.core.records.protocol import ShutdownRequest, TeammateTerminated
from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until


def reports_from(crew: Crew, name: str) -> list[str]:
    """Plain-text messages `name` sent to the lead (its command reports)."""
    return [m.text for m in crew.lead_messages() if m.sender == name and m.structured() is None]


def test_shell_teammate_answers_claims_a_task_and_idles_once_per_turn(crew: Crew) -> None:
    crew.spawn("w1", prompt="please run:\n$ echo hello-from-w1")

    # Turn 1: the prompt. The lead gets the command output, then one idle notification.
    first = crew.wait_idle_notes("w1", 1)
    assert first[0].idle_reason == "available" and first[0].completed_task_id is None
    assert reports_from(crew, "w1") == ["$ echo hello-from-w1\nhello-from-w1"]

    # Turn 2: a task added while it is idle is claimed and completed by itself.
    task = crew.team.tasks.add("count", description="$ echo task-output")
    notes = crew.wait_idle_notes("w1", 2)
    done = crew.team.tasks.get(task.id)
    assert done.status == "completed" and done.owner == "w1"
    assert done.result is not None and "task-output" in done.result
    assert notes[1].completed_task_id == task.id and notes[1].completed_status == "completed"
    assert crew.state("w1").current_task is None  # type: ignore[union-attr]

    # Turn 3, a message with nothing to run, is a barrier: had any turn notified twice, the
    # duplicate would be in the lead's mailbox before this turn's notification.
    crew.send("w1", "thanks, nothing to run", summary="thanks")
    notes = crew.wait_idle_notes("w1", 3)
    assert len(notes) == 3
    assert len(reports_from(crew, "w1")) == 3
    assert "No shell commands found" in reports_from(crew, "w1")[2]
    # Every message it was sent is read, and it is in the conversation.
    assert crew.team.inbox("w1", checked=False).unread() == []
    assert len(crew.inputs("w1")) == 3


def test_shell_teammate_approves_shutdown_exits_0_and_releases_its_tasks(crew: Crew) -> None:
    crew.register("peer")
    result = crew.spawn("w1")
    crew.wait_state("w1", "idle")
    # A task it owns but has not finished, and cannot take up by itself (it is blocked).
    blocker = crew.team.tasks.add("first", owner="peer")
    task = crew.team.tasks.add("unfinished", description="$ echo never", owner="w1",
                               blocked_by=[blocker.id])

    proc = crew.cli("shutdown", "w1", "--timeout", "10")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "w1: exited (shut down)"

    assert crew.exit_code("w1") == 0
    state = crew.state("w1")
    assert state is not None and state.state == "exited" and state.detail == "shut down"
    assert not is_alive(result.pid)
    released = crew.team.tasks.get(task.id)
    assert released.status == "pending" and released.owner is None
    # Its answer reached the lead as a shutdown_response approving the request.
    answers = [m.structured() for m in crew.lead_messages() if m.sender == "w1"]
    assert any(getattr(a, "type", "") == "shutdown_response" and a.approve  # type: ignore[union-attr]
               for a in answers)
    events = [e.get("event") for e in crew.transcript("w1") if e["kind"] == "event"]
    assert events[0] == "started" and events[-1] == "exited"


def test_shutdown_request_comes_first_and_unhandled_messages_stay_unread(crew: Crew) -> None:
    crew.register("peer")
    crew.register("w1")
    peer_id = crew.send("w1", "$ echo from-peer", sender="peer", summary="peer work")
    lead_id = crew.send("w1", "$ echo from-lead", summary="lead work")
    crew.team.send("w1", ShutdownRequest(reason="done for today"))
    crew.launch("w1")

    assert crew.exit_code("w1") == 0
    inputs = crew.inputs("w1")
    assert len(inputs) == 1 and len(inputs[0]) == 1
    assert '"type":"shutdown_request"' in inputs[0][0]
    # The lead and peer messages never reached the conversation, so they are still unread.
    unread = {m.id for m in crew.team.inbox("w1", checked=False).unread()}
    assert unread == {peer_id, lead_id}
    assert reports_from(crew, "w1") == []


def test_ci_run_of_six_tasks_over_two_teammates(crew: Crew) -> None:
    final, proc = crew.six_jobs_over_two_teammates()
    assert all(t.status == "completed" for t in final)
    assert all(f"job-{t.id}" in (t.result or "") for t in final)
    assert {t.owner for t in final} == {"w1", "w2"}
    assert "w1" in proc.stdout and "w2" in proc.stdout  # the status table


def test_wait_times_out_with_124(crew: Crew) -> None:
    crew.team.tasks.add("nobody will do this")
    proc = crew.cli("wait", "--until", "tasks-done", "--timeout", "0.3")
    assert proc.returncode == 124
    assert error_lines(proc) == ["swarm: error: timed out after 0.3s waiting for tasks-done"]


def test_wait_exits_1_when_a_teammate_dies(crew: Crew) -> None:
    result = crew.spawn("w1")
    crew.wait_state("w1", "idle")
    task = crew.team.tasks.add("long", description="$ sleep 20")
    wait_until(lambda: crew.team.tasks.get(task.id).status == "in_progress", 10)
    waiter = subprocess.Popen([SWARM, "wait", "--until", "tasks-done", "--timeout", "20"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=os.environ.copy())
    try:
        assert result.pid is not None
        agent = psutil.Process(result.pid)
        wait_until(lambda: agent.children(recursive=True), 5)  # its `sleep 20` runs
        children = agent.children(recursive=True)
        os.kill(result.pid, signal.SIGKILL)
        for child in children:  # the command runs in its own session: end it too
            child.kill()
        _, err = waiter.communicate(timeout=15)
    finally:
        if waiter.poll() is None:
            waiter.kill()
    assert waiter.returncode == 1
    # (a `swarm: WARNING:` line from the observer that recorded the death may come first)
    # Either during the wait, or (a slow start under load) before its first look with nobody
    # else alive: both fail at once naming the death.
    assert err.splitlines()[-1].startswith("swarm: error: teammate died: w1 ("), err
    assert crew.exit_code("w1") == -signal.SIGKILL
    # The death was acted on once: the task is released and the lead told.
    released = crew.team.tasks.get(task.id)
    assert released.status == "pending" and released.owner is None
    assert crew.state("w1").state == "dead"  # type: ignore[union-attr]
    terminated = [m for m in crew.lead_messages()
                  if isinstance(m.structured(), TeammateTerminated)]
    assert len(terminated) == 1


def test_status_json_shows_the_idle_teammate(crew: Crew) -> None:
    result = crew.spawn("w1", prompt="$ echo hi")
    crew.wait_idle_notes("w1", 1)
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["name"] == "w1" and row["state"] == "idle"
    assert row["pid"] == result.pid and row["backend"] == "hidden"
    assert row["pane_id"] == "hidden:w1"
    assert row["turns"] >= 2 and row["unread"] == 0 and row["model"] == "shell"


def test_a_task_whose_command_fails_is_failed_and_wait_tasks_done_exits_1(crew: Crew) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    bad = crew.team.tasks.add("break", description="$ false")
    after = crew.team.tasks.add("after it", description="$ echo never", blocked_by=[bad.id])

    proc = crew.cli("wait", "--until", "tasks-done", "--timeout", "20")
    assert proc.returncode == 1, proc.stderr
    assert error_lines(proc) == [
        "swarm: error: task failed: #1 (break); see `swarm tasks show 1`"]
    failed = crew.team.tasks.get(bad.id)
    assert failed.status == "failed" and failed.owner == "w1"
    assert "[exit code 1]" in (failed.result or "")
    note = crew.wait_idle_notes("w1", 1)[0]
    assert note.completed_task_id == bad.id and note.completed_status == "failed"
    # What it blocks stays blocked: nobody claims it behind a failed task.
    assert crew.team.tasks.get(after.id).status == "pending"
    assert crew.team.tasks.unfinished_blockers(crew.team.tasks.get(after.id)) == [bad.id]
    shown = crew.cli("tasks", "show", bad.id)
    assert "status: failed" in shown.stdout, shown.stdout
