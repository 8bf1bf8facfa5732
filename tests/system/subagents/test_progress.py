"""A running background subagent's short summary of its progress (Claude Code's agent summary),
in its record (`swarm status --json`), refreshed as it works: a short call on a small model
(haiku for an Anthropic subagent, or SWARM_SUMMARY_MODEL), its usage counted as the
subagent's; with no model for it, a line made from its recent tool calls.

The tests of tests/unit/runtime/subagents/test_progress.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from swarm.core.team.state import read_state
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.helpers import wait_until
from tests.unit.runtime.subagents.test_progress import (
    SUMMARY,
    every_step,  # noqa: F401 - the fixtures
)


def test_status_json_shows_a_running_subagents_summary(
        crew: Crew, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    (crew.workdir / "notes.txt").write_text("alpha\n")
    gate = threading.Event()
    fake_api.route(lambda body: SUMMARY in json.dumps(body.get("system"))).push_text(
        "Reading the notes")
    sub = fake_api.route(lambda body: "# You are a subagent" in body["system"][0]["text"])
    sub.push_tool_use("Read", {"file_path": "notes.txt"})
    sub.push(lambda body: (gate.wait(30), Scripted(200, {
        "content": [{"type": "text", "text": "alpha"}], "stop_reason": "end_turn"}))[1])
    fake_api.push_tool_use("Agent", {"description": "read notes", "prompt": "Read notes.txt.",
                                     "subagent_type": "general-purpose",
                                     "run_in_background": True})
    fake_api.push_text("Started it.")
    fake_api.push_text("Got it.")
    try:
        crew.spawn("w1", prompt="go", model="sonnet")

        def shown() -> list[dict[str, Any]]:
            (row,) = json.loads(crew.cli("status", "--json").stdout)
            return [s for s in row["subagents"] if s.get("summary") == "Reading the notes"]

        (running,) = wait_until(shown, 30, message="the summary in status --json")
        assert running["status"] == "running" and running["agent_id"] == "w1.sub-1"
        assert "Reading the notes" in crew.cli("status", "--wide").stdout  # its NOW column
    finally:
        gate.set()
    crew.wait_idle_notes("w1", 2, timeout=30)
    state = read_state(crew.team.name, "w1")
    assert state is not None and state.subagents[0].summary == "Reading the notes"
