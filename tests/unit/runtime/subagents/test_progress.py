"""A running background subagent's short summary of its progress (Claude Code's agent summary),
in its record (`swarm status --json`), refreshed as it works: a short call on a small model
(haiku for an Anthropic subagent, or SWARM_SUMMARY_MODEL), its usage counted as the
subagent's; with no model for it, a line made from its recent tool calls."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.state import SubagentInfo
from swarm.core.team.team import Team
from swarm.runtime.models.base import ModelReply
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until
from tests.support.subagent_host import FnModel, Host, ask, runner_with, text, tool

SUMMARY = "[swarm:subagent-summary]"


@pytest.fixture(autouse=True)
def every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_SUBAGENT_SUMMARY_EVERY", "0")  # a summary after each step


@pytest.fixture
def host(team: Team, tmp_path: Path) -> Host:
    return Host(team, tmp_path)


def record(host: Host) -> SubagentInfo:
    (info,) = host.state["subagents"]
    assert isinstance(info, SubagentInfo)
    return info


def summary(host: Host) -> str | None:
    """Its record's summary; None before the record is first written (another thread)."""
    written = host.state.get("subagents")
    return written[0].summary if written else None


def held(gate: threading.Event, reply: ModelReply) -> Any:
    return lambda request: (gate.wait(10), reply)[1]


def test_without_a_model_it_summarises_its_recent_tool_calls(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    notes = host.cwd / "notes.txt"
    notes.write_text("x\n")
    model = FnModel(tool("Bash", command="echo one"), tool("Bash", command="echo two"),
                    tool("Read", file_path="notes.txt"), held(gate, text("done")))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(background=True))
    wanted = '3 tool calls: Bash 2, Read 1; last: Read "notes.txt"'
    wait_until(lambda: summary(host) == wanted, 10,
               message="the summary")
    assert record(host).status == "running"
    gate.set()
    wait_until(runner.has_arrivals, 10)


def test_a_foreground_subagent_has_none(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = runner_with(host, monkeypatch, FnModel(tool("Bash", command="echo one"),
                                                    text("done")))
    assert not runner.start(ask()).is_error
    assert record(host).summary is None


def test_an_anthropic_subagent_asks_a_small_model_and_pays_for_it(
        host: Host, monkeypatch: pytest.MonkeyPatch, fake_api: FakeAnthropic) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    gate = threading.Event()
    summaries = fake_api.route(lambda body: SUMMARY in json.dumps(body.get("system")))
    summaries.push_text("Counting the lines of notes", usage={"input_tokens": 900,
                                                              "output_tokens": 7})
    model = FnModel(tool("Bash", command="wc -l notes.txt"), held(gate, text("done")))
    model.provider = "anthropic"  # type: ignore[attr-defined]  # as an Anthropic subagent's
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(background=True, description="count the notes"))
    wait_until(lambda: summary(host) == "Counting the lines of notes", 10,
               message="the summary")
    (body,) = [b for b in fake_api.messages_requests() if SUMMARY in json.dumps(b["system"])]
    assert "haiku" in body["model"] and body["max_tokens"] <= 64 and not body.get("tools")
    asked = json.dumps(body["messages"])
    assert "count the notes" in asked and "wc -l notes.txt" in asked
    # Its cost is the subagent's: in its tokens, and so in its parent's usage and budget.
    assert host.usage.input_tokens >= 900 and record(host).tokens >= 907
    gate.set()
    wait_until(runner.has_arrivals, 10)


def test_a_failed_summary_call_falls_back_to_the_tool_calls(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_SUMMARY_MODEL", "scripted:missing.json")  # cannot load
    gate = threading.Event()
    model = FnModel(tool("Bash", command="echo one"), held(gate, text("done")))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(background=True))
    wait_until(lambda: summary(host) == '1 tool call: Bash 1; last: Bash "echo one"', 10,
               message="the summary")
    gate.set()
    wait_until(runner.has_arrivals, 10)


