"""Real `swarm agent` processes on other providers: an `openai:` teammate works through function
calls against the fake Chat Completions server, a mixed team (Anthropic + OpenAI) finishes a
task list, `ollama:` reaches `$OLLAMA_HOST/v1`, an interrupt cancels a streaming call, and the
lead's SpawnTeammate refuses a model it cannot run before registering anything."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.team import Team
from swarm.core.text.view import plain
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import wait_until
from tests.support.lead_fixtures import lead

TASK_RE = re.compile(r'<task-assignment id="(\d+)"')


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # spawned agents inherit it
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))


def openai_input(body: dict[str, Any]) -> tuple[str, str]:
    """(role, text) of a Chat Completions request's last message."""
    last = body["messages"][-1]
    return last["role"], str(last.get("content") or "")


def test_an_openai_teammate_works_through_function_calls(crew: Crew,
                                                         fake_openai: FakeOpenAI) -> None:
    fake_openai.push_error(429)  # retried by the SDK, invisible to the agent
    send_id = fake_openai.push_tool_use("SendMessage", {
        "to": "team-lead", "message": "report: the checkout has 1 file", "summary": "report"},
        text="Telling the lead.")
    bash_id = fake_openai.push_tool_use("Bash", {"command": "ls | wc -l"})
    fake_openai.push_text("All done.", usage={"input_tokens": 300, "output_tokens": 40,
                                              "cache_read_input_tokens": 1000})
    (crew.workdir / "one.txt").write_text("x")

    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "openai:gpt-5-mini",
                    "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir),
                    "--prompt", "Report, then count the files.", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"] == "openai:gpt-5-mini"
    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.summary == "All done." and note.idle_reason == "available"

    bodies = fake_openai.completions_requests()
    assert len(bodies) == 4 and bodies[1] == bodies[0]  # the 429 and its retry
    assert all(r.api_key == "sk-test" for r in fake_openai.requests)
    first = bodies[0]
    assert first["model"] == "gpt-5-mini" and first["stream"] is True
    assert first["messages"][0]["role"] == "system" and "w1@crew" in first["messages"][0]["content"]
    assert "SendMessage" in [t["function"]["name"] for t in first["tools"]]
    # Each function call's result goes back as a `tool` message answering its id.
    assert bodies[2]["messages"][-1] == {"role": "tool", "tool_call_id": send_id,
                                         "content": "sent to team-lead (1 recipient(s))"}
    ran = bodies[3]["messages"][-1]
    assert ran["role"] == "tool" and ran["tool_call_id"] == bash_id and "1" in ran["content"]
    assert bodies[3]["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "Bash", "arguments": '{"command": "ls | wc -l"}'}

    texts = [m.text for m in crew.lead_messages() if m.sender == "w1" and m.structured() is None]
    assert texts == ["report: the checkout has 1 file"]
    assert "says: Telling the lead." in plain(crew.log("w1"))  # streamed into its pane

    status = crew.cli("status", "--json")
    (row,) = json.loads(status.stdout)
    assert row["model"] == "openai:gpt-5-mini" and row["turns"] == 3
    assert row["tokens"] == 12 + 7 + 12 + 7 + 300 + 1000 + 40
    assert row["cost_usd"] > 0 and row["cost_known"] is True
    shown = crew.cli("status")
    assert re.search(r"^w1 .* 3 +1378 +\$0\.00\d\d ", shown.stdout, re.MULTILINE), shown.stdout


def test_a_mixed_team_finishes_a_task_list(crew: Crew, fake_api: FakeAnthropic,
                                           fake_openai: FakeOpenAI) -> None:
    def anthropic_worker(body: dict[str, Any]) -> Scripted:
        found = TASK_RE.search(last_user_text(body))
        if not found:
            return reply("Nothing to do.")
        return reply(None, [("TaskUpdate", {"task_id": found.group(1), "status": "completed",
                                            "result": "done on anthropic"})])

    def openai_worker(body: dict[str, Any]) -> Scripted:
        role, text = openai_input(body)
        found = TASK_RE.search(text) if role == "user" else None
        if not found:
            return reply("Nothing to do.")
        return reply(None, [("TaskUpdate", {"task_id": found.group(1), "status": "completed",
                                            "result": "done on openai"})])

    fake_api.fallback = anthropic_worker
    fake_openai.fallback = openai_worker
    tasks = crew.team.tasks
    crew.register("claude", model="sonnet")
    crew.register("gpt", model="openai:gpt-5-mini")
    first = tasks.add("write the parser", owner="claude")
    second = tasks.add("write the tests", owner="gpt")
    crew.launch("claude")
    crew.launch("gpt")
    waited = crew.cli("wait", "--until", "tasks-done", "--timeout", "60", timeout=90)
    assert waited.returncode == 0, waited.stderr
    done = {t.id: (t.status, t.owner, t.result) for t in tasks.list()}
    assert done == {first.id: ("completed", "claude", "done on anthropic"),
                    second.id: ("completed", "gpt", "done on openai")}
    assert fake_api.messages_requests() and fake_openai.completions_requests()
    rows = {r["name"]: r for r in json.loads(crew.cli("status", "--json").stdout)}
    assert rows["claude"]["model"] == "sonnet" and rows["gpt"]["model"] == "openai:gpt-5-mini"
    assert rows["claude"]["tokens"] > 0 and rows["gpt"]["tokens"] > 0


def test_an_ollama_teammate_reaches_ollama_host(crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI() as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.base_url)
        ollama.push_tool_use("Bash", {"command": "echo from-qwen"})
        ollama.push_text("Ran it.")
        crew.spawn("w1", prompt="Run echo.", model="ollama:qwen3-coder")
        (note,) = crew.wait_idle_notes("w1", 1)
        assert note.summary == "Ran it."
        assert [r.path for r in ollama.requests] == ["/v1/chat/completions"] * 2
        assert ollama.requests[0].body["model"] == "qwen3-coder"
        assert "from-qwen" in ollama.requests[1].body["messages"][-1]["content"]
    status = json.loads(crew.cli("status", "--json").stdout)[0]
    assert status["cost_usd"] == 0 and status["cost_known"] is True  # local: $0


def test_an_unpriced_model_costs_n_a_in_status(crew: Crew, fake_openai: FakeOpenAI) -> None:
    fake_openai.push_text("ok")
    crew.spawn("w1", prompt="hi", model="openai:deepseek-chat")
    crew.wait_idle_notes("w1", 1)
    row = json.loads(crew.cli("status", "--json").stdout)[0]
    assert row["tokens"] == 19 and row["cost_known"] is False
    shown = crew.cli("status").stdout
    assert re.search(r"^w1 .* 19 +n/a ", shown, re.MULTILINE) and "19 tokens, n/a" in shown


def test_interrupt_cancels_an_openai_call_mid_stream(crew: Crew, fake_openai: FakeOpenAI) -> None:
    fake_openai.push_stall("Let me think about this very carefully")
    crew.spawn("w1", prompt="think hard", model="openai:gpt-5-mini")
    wait_until(lambda: "Let me think about this" in plain(crew.log("w1")), 15,
               message="the streamed text in the pane")
    assert crew.state("w1").state == "working"  # type: ignore[union-attr]
    proc = crew.cli("interrupt", "w1")
    assert proc.returncode == 0 and "interrupted w1" in proc.stdout, proc.stderr
    (note,) = crew.wait_idle_notes("w1", 1, timeout=10)
    assert note.idle_reason == "interrupted"
    # The server saw the client hang up mid-stream: the call was cancelled, not left running.
    wait_until(lambda: fake_openai.disconnects == 1, 10, message="the stream's disconnect")
    assert len(fake_openai.completions_requests()) == 1  # and not retried
    assert crew.procs["w1"].poll() is None  # the turn ended, not the process


@pytest.mark.usefixtures("lead_env")
def test_spawn_teammate_refuses_a_model_without_credentials(
        fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    fake_api.push(lambda body: reply(None, [("SpawnTeammate", {
        "name": "gpt", "prompt": "hi", "model": "openai:gpt-5-mini"})]))
    fake_api.fallback = lambda body: reply("Understood.")
    proc = lead("--team", "mix", "--keep", "Spawn a worker on openai.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (result,) = [b for b in fake_api.messages_requests()[1]["messages"][-1]["content"]
                 if b.get("type") == "tool_result"]
    assert result.get("is_error") and result["content"] == (
        "model openai:gpt-5-mini cannot run here: openai needs credentials: set OPENAI_API_KEY"
        " (`swarm doctor` lists the providers)")
    assert "gpt" not in [m.name for m in Team.open("mix").members()]


@pytest.mark.usefixtures("lead_env")
def test_an_openai_lead_with_anthropic_teammates(fake_api: FakeAnthropic, fake_openai: FakeOpenAI,
                                                 tmp_path: Path) -> None:
    """`swarm lead --model openai:... --teammate-model sonnet`: the lead's loop, tools and
    wake-ups on Chat Completions; the teammate it spawns on the Messages API."""
    def lead_model(body: dict[str, Any]) -> Scripted:
        said = json.dumps(body["messages"])
        if "report from w1" in said:
            return reply("w1 reported: all good.")
        if not any(m["role"] == "tool" for m in body["messages"]):
            return reply(None, [("SpawnTeammate", {"name": "w1", "prompt": "Check and report."})])
        return reply("Waiting for w1.")

    def teammate(body: dict[str, Any]) -> Scripted:
        text = last_user_text(body)
        if "shutdown_request" in text:
            rid = re.search(r'request_id\\?":\s*\\?"([^"\\]+)', text)
            return reply(None, [("SendMessage", {"to": "team-lead", "message": {
                "type": "shutdown_response", "request_id": rid.group(1) if rid else "",
                "approve": True}})])
        if "initial prompt" in text:
            return reply(None, [("SendMessage", {"to": "team-lead", "message": "report from w1:"
                                                 " all good", "summary": "report"})])
        return reply("Reported.")

    fake_openai.fallback = lead_model
    fake_api.fallback = teammate
    proc = lead("--model", "openai:gpt-5", "--teammate-model", "sonnet", "--team", "mixed",
                "Have a teammate check things.", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-lead"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "w1 reported: all good."
    assert all(b["model"] == "gpt-5" for b in fake_openai.completions_requests())
    assert "SpawnTeammate" in [t["function"]["name"]
                               for t in fake_openai.completions_requests()[0]["tools"]]
    assert fake_api.messages_requests()  # the teammate ran on the Messages API
    assert "team mixed: lead openai:gpt-5," in proc.stderr
    assert "spawned w1 (sonnet, " in proc.stderr
