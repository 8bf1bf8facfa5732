"""`swarm respawn`: a teammate SIGKILLed in the middle of a task comes back with the same
identity and its conversation, read back from `transcript.jsonl` (a torn last line tolerated)."""

from __future__ import annotations

import copy
import json
import os
import signal
from typing import Any

import psutil
import pytest

from swarm.core.records.protocol import TeammateTerminated
from swarm.core.store import paths
from swarm.core.team.transcript import Transcript
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import child_named, wait_until


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")


def kill_mid_sleep(crew: Crew, name: str, pid: int, strays: list[psutil.Process]) -> None:
    """SIGKILL the agent while its Bash tool runs `sleep`; end the orphaned sleep too."""
    found = child_named(pid, "sleep", message=f"a sleep under {name} (log: {crew.log(name)[-600:]})")
    strays.append(found)
    os.kill(pid, signal.SIGKILL)
    assert crew.exit_code(name) == -signal.SIGKILL
    found.kill()


def dead_row(crew: Crew, name: str) -> dict[str, Any]:
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    row: dict[str, Any] = {r["name"]: r for r in json.loads(proc.stdout)}[name]
    return row


def without_cache_marks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as the conversation holds them (the model adds cache_control marks)."""
    out = copy.deepcopy(messages)
    for message in out:
        if isinstance(message["content"], list):
            for block in message["content"]:
                block.pop("cache_control", None)
    return out


def assert_valid_for_the_api(messages: list[dict[str, Any]]) -> None:
    """Roles alternate, and every tool_use is answered by a tool_result in the next message."""
    assert messages[0]["role"] == "user"
    for before, after in zip(messages, messages[1:], strict=False):
        assert before["role"] != after["role"], (before, after)
    for index, message in enumerate(messages):
        uses = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        if uses:
            answered = {b["tool_use_id"] for b in messages[index + 1]["content"]
                        if b.get("type") == "tool_result"} if index + 1 < len(messages) else set()
            assert uses <= answered, f"tool_use {uses - answered} left unanswered"


def test_respawn_after_sigkill_resumes_the_conversation_sent_to_the_model(
        crew: Crew, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch,
        strays: list[psutil.Process]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_api.push_text("Noted: the password is pelican.")
    first = crew.spawn("w1", prompt="Remember the password: pelican.", model="sonnet")
    assert first.pid is not None
    crew.wait_idle_notes("w1", 1)

    use_id = fake_api.push_tool_use("Bash", {"command": "sleep 30"}, text="Running it.")
    task = crew.team.tasks.add("long job", description="run sleep 30")
    kill_mid_sleep(crew, "w1", first.pid, strays)
    before = fake_api.messages_requests()
    assert len(before) == 2

    row = wait_until(lambda: (r := dead_row(crew, "w1"))["state"] == "dead" and r, 10)
    assert row["detail"] == f"process {first.pid} is gone"
    assert crew.team.tasks.get(task.id).status == "pending"

    # Respawned, it claims the released task again and asks the model with its whole history.
    fake_api.push_text("Picking the long job up again.")
    proc = crew.cli("respawn", "w1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("respawned w1@crew ")
    wait_until(lambda: len(fake_api.messages_requests()) == 3, 15,
               message=f"a request after respawn (log: {crew.log('w1')[-600:]})")
    after = fake_api.messages_requests()[2]["messages"]
    earlier = without_cache_marks(before[1]["messages"])
    resumed = without_cache_marks(after)
    assert resumed[: len(earlier)] == earlier  # every message from before the kill, in order
    assert "pelican" in json.dumps(resumed[0])
    assert resumed[len(earlier)]["content"][-1]["id"] == use_id  # the call it died in
    # Then the call is answered (it never finished) and the task comes with it, in one message.
    answer, *inputs = resumed[-1]["content"]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == use_id
    assert any(f'<task-assignment id="{task.id}"' in b.get("text", "") for b in inputs)
    assert_valid_for_the_api(resumed)

    # Same identity, a new process; the lead heard of the death exactly once.
    state = crew.wait_state("w1", "idle", "working")
    assert state.pid not in (None, first.pid)
    assert crew.team.member("w1").agent_id == "w1@crew"
    terminated = [m for m in crew.lead_messages() if isinstance(m.structured(), TeammateTerminated)]
    assert len(terminated) == 1


def test_shell_teammate_respawns_with_its_conversation_despite_a_torn_transcript_line(
        crew: Crew, strays: list[psutil.Process]) -> None:
    first = crew.spawn("w1", prompt="$ echo before-the-crash")
    assert first.pid is not None
    crew.wait_idle_notes("w1", 1)
    task = crew.team.tasks.add("long job", description="$ sleep 30")
    kill_mid_sleep(crew, "w1", first.pid, strays)
    wait_until(lambda: dead_row(crew, "w1")["state"] == "dead", 10)
    assert crew.team.tasks.get(task.id).owner is None

    transcript_path = paths.agent_transcript(crew.team.name, "w1")
    before = Transcript(transcript_path).conversation()
    with transcript_path.open("ab") as out:  # the crash tore the line being written
        out.write(b'{"ts": "2020-01-01T00:00:00Z", "kind": "message", "mess')
    # The lead rewrites the released task so the respawned teammate finishes quickly.
    crew.team.tasks.update(task.id, description="$ echo after-the-crash")

    proc = crew.cli("respawn", "w1")
    assert proc.returncode == 0, proc.stderr
    wait_until(lambda: crew.team.tasks.get(task.id).status == "completed", 15,
               message=f"the task done after respawn (log: {crew.log('w1')[-600:]})")
    crew.wait_state("w1", "idle")
    resumed = Transcript(transcript_path).conversation()
    assert resumed[: len(before)] == before
    texts = json.dumps(resumed)
    assert texts.index("before-the-crash") < texts.index("sleep 30") < texts.index("after-the-crash")
    assert "after-the-crash" in (crew.team.tasks.get(task.id).result or "")
    assert_valid_for_the_api(resumed)
    events = [e["event"] for e in Transcript(transcript_path).entries() if e["kind"] == "event"]
    assert events.count("started") == 2
    state = crew.state("w1")
    assert state is not None and state.pid != first.pid and state.turns > 2  # turns carried over


def test_respawn_refuses_a_live_teammate(crew: Crew) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    proc = crew.cli("respawn", "w1")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("swarm: error: w1 is idle, not dead or exited; "
                                   "`swarm kill w1` first to restart it")
