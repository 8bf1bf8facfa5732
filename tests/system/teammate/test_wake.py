"""Picking up where it stopped: `swarm send --wake` restarts an exited (or, said so, a dead)
teammate with its transcript; without --wake the sender is told how. And `swarm plans approve
--mode` chooses the mode it works in, which `status` and `team show` report."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import PermissionRequest, PlanApprovalRequest
from swarm.ops.member.restart import wake
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # spawned agents inherit it
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))


def user_texts(message: dict[str, Any]) -> list[str]:
    assert message["role"] == "user"
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


def status_row(crew: Crew, name: str) -> dict[str, Any]:
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    return {r["name"]: r for r in json.loads(proc.stdout)}[name]  # type: ignore[no-any-return]


@pytest.mark.usefixtures("api_key")
def test_send_wake_resumes_a_shut_down_teammate_with_its_conversation(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.push_text("Noted: the password is pelican.")
    first = crew.spawn("w1", prompt="Remember the password: pelican.", model="sonnet")
    crew.wait_idle_notes("w1", 1)
    fake_api.push_tool_use("SendMessage", {"to": "team-lead", "message": {
        "type": "shutdown_response", "approve": True}})
    assert crew.cli("shutdown", "w1", "--timeout", "15").returncode == 0
    assert crew.exit_code("w1") == 0

    # Without --wake: delivered, and the sender learns how to wake it (exit 0); nothing starts.
    proc = crew.cli("send", "w1", "What was the password?", "--summary", "question")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "sent to w1 (1 message(s))",
        "w1 has exited (shut down): the message waits in its mailbox; wake it with "
        "`swarm send w1 ... --wake` or `swarm respawn w1`"]
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]
    asked = len(fake_api.messages_requests())

    fake_api.push_text("It was pelican.")
    proc = crew.cli("send", "w1", "Answer now, please.", "--wake", "--json")
    assert proc.returncode == 0, proc.stderr
    (woken,) = json.loads(proc.stdout)["stopped"]
    assert woken["was"] == "exited" and woken["woken"] and woken["pid"] not in (None, first.pid)
    notes = crew.wait_idle_notes("w1", 2)
    assert notes[-1].summary == "It was pelican."

    # The new process asked the model with the whole earlier conversation, then both messages.
    (request,) = fake_api.messages_requests()[asked:]
    messages = request["messages"]
    assert "Remember the password: pelican." in user_texts(messages[0])[0]
    assert messages[1]["content"][0]["text"] == "Noted: the password is pelican."
    note, question, nudge = user_texts(messages[-1])[-3:]
    assert note.startswith("<system-note>Your process was restarted after it exited (shut down)")
    assert question.endswith(">What was the password?</teammate-message>")
    assert nudge.endswith(">Answer now, please.</teammate-message>")
    assert crew.state("w1").pid == woken["pid"]  # type: ignore[union-attr]

    # A live recipient: --wake does nothing more than send.
    proc = crew.cli("send", "w1", "thanks", "--wake")
    assert proc.stdout.splitlines() == ["sent to w1 (1 message(s))"]
    crew.wait_idle_notes("w1", 3)


def test_a_dead_teammate_is_woken_only_with_wake_and_it_says_so(crew: Crew) -> None:
    first = crew.spawn("w2", prompt="$ echo before")
    crew.wait_idle_notes("w2", 1)
    assert first.pid is not None
    os.kill(first.pid, signal.SIGKILL)
    assert crew.exit_code("w2") == -signal.SIGKILL

    proc = crew.cli("send", "w2", "$ echo waiting")  # the death is noticed here
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == (
        f"w2 is dead (process {first.pid} is gone): the message waits in its mailbox; wake it "
        "with `swarm send w2 ... --wake` or `swarm respawn w2`")
    assert crew.state("w2").state == "dead"  # type: ignore[union-attr]
    # The lead's SendMessage wakes exited teammates only: a crash is the lead's to judge.
    assert wake(crew.team, "w2").woken is False

    # From a teammate's shell --wake is refused before anything is sent.
    proc = run_swarm("send", "w2", "$ echo sneaky", "--wake", cwd=crew.workdir,
                     env={"SWARM_AGENT_ID": f"w1@{crew.team.name}"})
    assert proc.returncode == 2 and "`swarm send --wake` is for the team lead" in error_lines(proc)[0]

    proc = crew.cli("send", "w2", "$ echo after", "--wake")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith(
        f"w2 was dead (process {first.pid} is gone): woke it (pid ")
    reports = wait_until(lambda: [m.text for m in crew.lead_messages()
                                  if m.sender == "w2" and "after" in m.text], 15,
                         message=f"w2's report (log: {crew.log('w2')[-600:]})")
    assert "waiting" in reports[0]  # both messages were handled, in one turn
    assert "sneaky" not in json.dumps(crew.inputs("w2"))


@pytest.mark.usefixtures("api_key")
def test_plans_approve_mode_default_leaves_it_asking_for_bash(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.push_tool_use("ExitPlanMode", {"plan": "plan v1"})
    fake_api.push_tool_use("ExitPlanMode", {"plan": "plan v2"})
    fake_api.push_tool_use("Bash", {"command": "touch made-by-bash"})
    crew.spawn("p1", prompt="plan it", model="sonnet", plan_mode_required=True,
               permission_mode=None)

    def plan(text: str) -> None:
        wait_until(lambda: [m for m in crew.lead_messages() if not m.read
                            and isinstance(s := m.structured(), PlanApprovalRequest)
                            and s.plan == text], 15, message=f"plan {text!r}")

    plan("plan v1")
    assert status_row(crew, "p1")["mode"] == "plan"
    assert crew.cli("plans", "reject", "p1", "--feedback", "smaller").returncode == 0
    plan("plan v2")
    # Rejected, it is still planning: status and team show say so.
    assert status_row(crew, "p1")["mode"] == "plan"
    shown = crew.cli("team", "show", "--json")
    assert {m["name"]: m["mode"] for m in json.loads(shown.stdout)["members"]}["p1"] == "plan"
    for bad in ("bypassPermissions", "plan", "yolo"):
        proc = crew.cli("plans", "approve", "p1", "--mode", bad)
        assert proc.returncode == 2 and "--mode must be one of default, acceptEdits" in proc.stderr

    proc = crew.cli("plans", "approve", "p1", "--mode", "default")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "approved the plan of p1 (it works in default mode)"
    requests = wait_until(lambda: [s for m in crew.lead_messages()
                                   if isinstance(s := m.structured(), PermissionRequest)], 15,
                          message=f"a permission request (log: {crew.log('p1')[-600:]})")
    assert requests[0].tool_name == "Bash" and requests[0].input == {"command": "touch made-by-bash"}
    assert status_row(crew, "p1")["mode"] == "default"
    assert "default" in crew.cli("team", "show").stdout.splitlines()[-1]
    assert not (crew.workdir / "made-by-bash").exists()
    assert crew.cli("permissions", "deny", requests[0].request_id, "--reason", "no").returncode == 0
    crew.wait_idle_notes("p1", 1)
