"""The real SDK path end to end: a spawned `swarm agent --model sonnet` talks through the official
`anthropic` SDK to the local fake Messages API (tests/support/fake_anthropic.py) via ANTHROPIC_BASE_URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.runtime.models.anthropic_model import ALIASES
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.fake_anthropic import FakeAnthropic

TOOL_NAMES = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "SendMessage", "TaskCreate",
              "TaskList", "TaskGet", "TaskUpdate", "Agent", "AgentStatus", "AgentStop"]


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The spawned agent inherits every ANTHROPIC_* and SWARM_* variable.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))  # no user-level Anthropic profile can leak in
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                "SWARM_API_MAX_RETRIES"):
        monkeypatch.delenv(var, raising=False)


def user_blocks(body: dict[str, object], index: int) -> list[dict[str, object]]:
    message = body["messages"][index]  # type: ignore[index]
    assert message["role"] == "user"
    return message["content"]  # type: ignore[no-any-return]


def test_sonnet_teammate_through_the_sdk(crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.push_error(529)  # overloaded: retried by the model, invisible to the agent
    send_id = fake_api.push_tool_use("SendMessage", {
        "to": "team-lead", "message": "hello lead, starting", "summary": "starting"},
        text="I'll tell the lead.")
    bash_id = fake_api.push_tool_use("Bash", {"command": "echo from-bash"})
    fake_api.push_text("All done.", usage={"input_tokens": 100, "output_tokens": 50})

    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "sonnet",
                    "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir),
                    "--prompt", "Say hello, then run echo.", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"] == "sonnet"
    crew.wait_idle_notes("w1", 1)

    bodies = fake_api.messages_requests()
    assert len(bodies) == 4  # 529, its retry, after SendMessage, after Bash
    assert all(r.api_key == "test-key" for r in fake_api.requests)
    first = bodies[0]
    assert bodies[1] == first  # the retry sent the same request again
    assert first["model"] == ALIASES["sonnet"]
    assert [t["name"] for t in first["tools"]] == TOOL_NAMES
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    system = first["system"][0]
    assert "w1@crew" in system["text"] and "team-lead" in system["text"]
    assert system["cache_control"] == {"type": "ephemeral"}
    (opening,) = user_blocks(first, 0)
    assert str(opening["text"]).startswith('<teammate-message from="team-lead" ')
    assert 'summary="initial prompt"' in str(opening["text"])
    assert str(opening["text"]).endswith(">Say hello, then run echo.</teammate-message>")

    # Each tool result goes back in the next request, answering its tool_use id.
    sent = user_blocks(bodies[2], -1)
    assert [(b["type"], b["tool_use_id"]) for b in sent] == [("tool_result", send_id)]
    assert sent[0]["content"] == "sent to team-lead (1 recipient(s))" and not sent[0].get("is_error")
    ran = user_blocks(bodies[3], -1)
    assert [(b["type"], b["tool_use_id"]) for b in ran] == [("tool_result", bash_id)]
    assert "from-bash" in str(ran[0]["content"])
    assert bodies[3]["messages"][1]["content"][1]["id"] == send_id  # history kept in order

    # The lead got the message, then the idle notification with the final text.
    texts = [m.text for m in crew.lead_messages() if m.sender == "w1" and m.structured() is None]
    assert texts == ["hello lead, starting"]
    (note,) = crew.idle_notes("w1")
    assert note.summary == "All done." and note.idle_reason == "available"

    status = crew.cli("status", "--json")
    (row,) = json.loads(status.stdout)
    assert row["turns"] == 3
    assert row["tokens"] == 12 + 7 + 12 + 7 + 100 + 50
    assert row["cost_usd"] > 0

    # Shutdown through the SDK too: the model approves with a structured SendMessage.
    fake_api.push_tool_use("SendMessage", {"to": "team-lead", "message": {
        "type": "shutdown_response", "approve": True}})
    proc = crew.cli("shutdown", "w1", "--timeout", "15")
    assert proc.returncode == 0, proc.stderr
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]
    last = fake_api.messages_requests()[-1]
    assert '"type":"shutdown_request"' in user_blocks(last, -1)[0]["text"]  # type: ignore[operator]


def test_api_errors_fail_the_turn_not_the_agent(crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.push_error(401)  # not retryable: the turn fails, the agent stays up and says why
    crew.spawn("w1", prompt="hello", model="sonnet")
    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.idle_reason == "failed"
    assert note.failure_reason is not None and "401" in note.failure_reason
    assert len(fake_api.messages_requests()) == 1
    assert crew.procs["w1"].poll() is None
    # A failed teammate makes `swarm wait` exit 1.
    proc = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert proc.returncode == 1
    assert error_lines(proc)[0].startswith("swarm: error: teammate failed: w1 (")


def test_a_sonnet_teammate_shows_its_text_as_it_streams(crew: Crew, fake_api: FakeAnthropic) -> None:
    """The agent asks for a streamed reply; what the model says reaches its output (a hidden
    teammate's output is agent.log) once, whole, line by line."""
    from swarm.core.text.view import plain

    fake_api.push_text("Streaming works here,\nand this is line two of the answer.")
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "sonnet",
                    "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir),
                    "--prompt", "Say something.")
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes("w1", 1)
    assert fake_api.messages_requests()[0]["stream"] is True
    lines = plain(crew.log("w1")).splitlines()
    [says] = [i for i, line in enumerate(lines) if "says: Streaming works here," in line]
    assert lines[says + 1].strip() == "and this is line two of the answer."
    assert plain(crew.log("w1")).count("Streaming works") == 1
