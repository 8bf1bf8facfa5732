"""Compaction with a real teammate and the fake Messages API: past SWARM_COMPACT_THRESHOLD the
conversation sent to the model becomes a model-written summary plus the current turn; the
transcript keeps every message and records the compaction."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.team.transcript import Transcript
from swarm.runtime.models.base import SUMMARY_MARKER
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic, Scripted

SUMMARY = "Summary: the lead sent two turns of birdsong; each time I listed the tasks."
# The system prompt is ~2.5k characters, and each turn below adds ~1k: at ~4 characters a token
# the conversation passes 1000 tokens at the start of the third turn, not before.
THRESHOLD = "1000"


def is_summary_request(body: dict[str, Any]) -> bool:
    return any(b["text"].startswith(SUMMARY_MARKER) for b in body.get("system") or [])


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def scripted_model(fake: FakeAnthropic) -> None:
    """A model that answers each new input with one TaskList call, then a short text; and
    writes SUMMARY when asked to compact."""
    ids = itertools.count(1)

    def respond(body: dict[str, Any]) -> Scripted:
        if is_summary_request(body):
            return Scripted(200, {"content": [{"type": "text", "text": SUMMARY}]})
        last = body["messages"][-1]["content"]
        if any(b.get("type") == "tool_result" for b in last):
            return Scripted(200, {"content": [{"type": "text", "text": "Listed the tasks."}]})
        return Scripted(200, {"content": [{"type": "tool_use", "id": f"toolu_c{next(ids)}",
                                           "name": "TaskList", "input": {}}],
                              "stop_reason": "tool_use"})

    for _ in range(20):
        fake.push(respond)


def test_compaction_replaces_old_turns_with_a_summary_and_the_transcript_keeps_all(
        crew: Crew, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_COMPACT_THRESHOLD", THRESHOLD)
    scripted_model(fake_api)
    crew.spawn("w1", model="sonnet")
    crew.wait_state("w1", "idle")
    for turn in range(1, 4):
        crew.send("w1", f"Turn {turn}: " + "birdsong " * 60)
        crew.wait_idle_notes("w1", turn)

    requests = fake_api.messages_requests()
    summaries = [i for i, body in enumerate(requests) if is_summary_request(body)]
    # Two full turns (two requests each) went out uncompacted; the third began with a summary.
    assert summaries == [4], [len(b["messages"]) for b in requests]
    before, summary_request, after = requests[3], requests[4], requests[5]

    # The summary request: no tools, the older turns as its material, not the current one.
    assert "tools" not in summary_request
    assert "Turn 1" in texts(summary_request) and "Turn 2" in texts(summary_request)
    assert "Turn 3" not in texts(summary_request)

    # The request after it: the summary plus the current turn, smaller than the one before.
    assert SUMMARY in after["messages"][0]["content"][0]["text"]
    assert "Turn 3" in texts(after) and "Turn 1" not in texts(after)
    assert len(after["messages"]) < len(before["messages"])
    assert len(texts(after)) < len(texts(before))
    assert len(requests[6]["messages"]) == len(after["messages"]) + 2  # the turn goes on

    # The transcript: every message, the compaction recorded between turns 2 and 3.
    entries = Transcript(paths.agent_transcript(crew.team.name, "w1")).entries()
    kinds = [e["kind"] for e in entries]
    assert kinds.count("compaction") == 1
    (compaction,) = [e for e in entries if e["kind"] == "compaction"]
    assert compaction["summary"] == SUMMARY
    assert "Turn 3" in json.dumps(compaction["kept"])
    messages = [e["message"] for e in entries if e["kind"] == "message"]
    assert [m["role"] for m in messages].count("assistant") == len(requests) - 1
    for turn in (1, 2, 3):
        assert sum(f"Turn {turn}:" in json.dumps(m) for m in messages) == 1
    position = kinds.index("compaction")
    assert "Turn 2" in json.dumps(entries[:position]) and "Turn 3" in json.dumps(entries[:position])
    # Resuming starts from the summary, not from turn 1.
    resumed = Transcript(paths.agent_transcript(crew.team.name, "w1")).conversation()
    assert SUMMARY in resumed[0]["content"][0]["text"] and "Turn 1" not in json.dumps(resumed)
    # The summary call is paid for but is not a turn.
    state = crew.state("w1")
    assert state is not None and state.turns == len(requests) - 1
    assert state.usage.input_tokens == 12 * len(requests)
