"""`--max-turns` and `--max-budget-usd` against the fake Messages API: the limit stops model
calls (none after it, even for new messages), the lead is told why, and status shows it."""

from __future__ import annotations

import json

import pytest

from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")


def spawn_cli(crew: Crew, name: str, *flags: str) -> None:
    proc = crew.cli("spawn", name, "--backend", "hidden", "--model", "sonnet",
                    "--cwd", str(crew.workdir), "--prompt", "List the tasks, again and again.",
                    *flags)
    assert proc.returncode == 0, proc.stderr


def status_row(crew: Crew, name: str) -> dict[str, object]:
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    row: dict[str, object] = {r["name"]: r for r in json.loads(proc.stdout)}[name]
    return row


def test_max_turns_stops_model_calls(crew: Crew, fake_api: FakeAnthropic) -> None:
    for _ in range(3):  # a model that would go on calling tools for as long as it is let
        fake_api.push_tool_use("TaskList", {})
    spawn_cli(crew, "w1", "--max-turns", "2")

    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.idle_reason == "max_turns"
    assert len(fake_api.messages_requests()) == 2 and fake_api.pending() == 1
    row = status_row(crew, "w1")
    assert row["state"] == "idle" and row["idle_reason"] == "max_turns" and row["turns"] == 2
    table = crew.cli("status").stdout
    assert "idle (max_turns)" in table

    # A new message is left unread (a respawn with a new limit will read it), status says why,
    # and no model call is made.
    message_id = crew.send("w1", "one more try")
    row = wait_until(lambda: (r := status_row(crew, "w1"))["detail"] == (
        "max_turns: 1 message(s) wait unread") and r, message="status to say why")
    assert row["state"] == "idle" and row["unread"] == 1 and is_alive(int(str(row["pid"])))
    assert [m.id for m in crew.team.inbox("w1").unread()] == [message_id]
    assert len(fake_api.messages_requests()) == 2 and len(crew.idle_notes("w1")) == 1


def test_budget_stops_model_calls_and_status_shows_the_cost(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    # 5000 input tokens of sonnet at $3/M: past a $0.01 budget at the stream's first event
    # (message_start: its input, 1 output token so far), where the reply is cut off.
    fake_api.push_tool_use("TaskList", {}, usage={"input_tokens": 5000})
    fake_api.push_tool_use("TaskList", {})
    spawn_cli(crew, "w1", "--max-budget-usd", "0.01")

    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.idle_reason == "budget_exhausted"
    assert len(fake_api.messages_requests()) == 1 and fake_api.pending() == 1
    row = status_row(crew, "w1")
    assert row["idle_reason"] == "budget_exhausted"
    assert row["cost_usd"] == pytest.approx(0.015015)
    assert row["tokens"] == 5001
    table = crew.cli("status").stdout
    assert "idle (budget_exhausted)" in table and "$0.0150" in table
    assert "team total: 5001 tokens, $0.0150" in table

    crew.send("w1", "keep going")
    wait_until(lambda: status_row(crew, "w1")["detail"] == (
        "budget_exhausted: 1 message(s) wait unread"), message="status to say why")
    assert len(fake_api.messages_requests()) == 1 and len(crew.idle_notes("w1")) == 1
