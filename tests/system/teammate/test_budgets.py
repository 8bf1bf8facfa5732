"""Budgets, end to end: a real `swarm agent --model sonnet` talking through the SDK to the fake
Messages API, whose streams are paced (one event at a time) so a cap can cut one off.

Prices: sonnet is $3 (input) and $15 (output) per million tokens. While a reply streams its
final output count is unknown: swarm estimates it from the streamed characters (4 a token).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.state import AgentState, Usage
from swarm.core.team.state import read_state, write_state
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until

WAIT = 30.0
LONG = "word " * 960  # 4800 characters: 400 deltas of 12
ONE_DELTA_USD = 3 * 15 / 1_000_000  # 12 characters ~ 3 output tokens


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                "SWARM_API_MAX_RETRIES", "SWARM_DEPTH", "SWARM_AGENT_ID"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def paced(fake_api: FakeAnthropic) -> FakeAnthropic:
    fake_api.stream_pause = 0.005
    return fake_api


def is_subagent(body: dict[str, Any]) -> bool:
    return "# You are a subagent" in body.get("system", [{}])[0].get("text", "")


def status_row(crew: Crew, name: str) -> dict[str, Any]:
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    return next(r for r in json.loads(proc.stdout) if r["name"] == name)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def test_budget_cap_stops_a_teammate_mid_reply(crew: Crew, paced: FakeAnthropic) -> None:
    paced.push_text(LONG, usage={"input_tokens": 2000, "output_tokens": 1200})  # $0.024 whole
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "sonnet",
                    "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir),
                    "--max-budget-usd", "0.01", "--prompt", "write a lot")
    assert proc.returncode == 0, proc.stderr
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "budget_exhausted"
    assert note.failure_reason is not None and "\n" not in note.failure_reason
    assert "--max-budget-usd" in note.failure_reason and "$0.01" in note.failure_reason
    (stream,) = paced.streams
    assert not stream.complete and stream.sent < stream.events / 2  # cut off mid-reply
    row = status_row(crew, "w1")
    assert 0.01 <= row["cost_usd"] <= 0.01 + ONE_DELTA_USD  # at most one delta over
    assert "budget" in crew.log("w1")
    # The model is told, in the conversation it resumes from.
    assert crew.inputs("w1")[-1] == [f"[swarm] {note.failure_reason}"]


def test_max_tokens_stops_a_teammate_mid_reply(crew: Crew, paced: FakeAnthropic) -> None:
    paced.push_text(LONG, usage={"input_tokens": 1000, "output_tokens": 1200})
    crew.spawn("w1", prompt="write a lot", model="sonnet", max_tokens=1500)
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "budget_exhausted"
    assert note.failure_reason is not None and "--max-tokens 1500" in note.failure_reason
    (stream,) = paced.streams
    assert not stream.complete
    row = status_row(crew, "w1")
    assert 1500 <= row["tokens"] <= 1500 + 3  # at most one delta over


def test_max_tokens_flag_is_checked(crew: Crew) -> None:
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--max-tokens", "0")
    assert proc.returncode == 2 and "--max-tokens must be at least 1" in proc.stderr
    assert crew.team.config().member("w1") is None


def test_input_alone_over_the_cap_runs_no_tool(crew: Crew, paced: FakeAnthropic) -> None:
    marker = crew.workdir / "ran"
    paced.push_tool_use("Bash", {"command": f"touch {marker}"},
                        usage={"input_tokens": 5000})  # $0.015 at message_start
    crew.spawn("w1", prompt="go", model="sonnet", max_budget_usd=0.01)
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "budget_exhausted"
    assert not marker.exists()
    assert len(paced.messages_requests()) == 1
    # A message later: no model call at all; it waits unread (for a respawn), status says why.
    crew.send("w1", "more please")
    wanted = "budget_exhausted: 1 message(s) wait unread"
    state = wait_until(lambda: (s := crew.state("w1")) and s.detail == wanted and s, WAIT)
    assert state.state == "idle" and len(paced.messages_requests()) == 1


def test_subagent_spend_counts_against_its_parent(crew: Crew, paced: FakeAnthropic) -> None:
    sub = paced.route(is_subagent)
    sub.push_text(LONG, usage={"input_tokens": 1000, "output_tokens": 1200})
    paced.push_tool_use("Agent", {"description": "write", "prompt": "write a lot",
                                  "subagent_type": "general-purpose"})
    paced.push_text("never asked for")
    crew.spawn("w1", prompt="delegate", model="sonnet", max_budget_usd=0.01)
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "budget_exhausted" and note.failure_reason
    bodies = paced.messages_requests()
    assert [is_subagent(b) for b in bodies] == [False, True]  # the parent never called again
    assert not paced.streams[-1].complete  # the subagent's reply was cut off
    row = status_row(crew, "w1")
    assert 0.01 <= row["cost_usd"] <= 0.01 + ONE_DELTA_USD
    state = read_state(crew.team.name, "w1")
    assert state is not None and state.subagents[0].status == "stopped"


def spawn_from_lead_subagent(crew: Crew, name: str, depth: int) -> Any:
    """`swarm spawn` as run by the Bash of one of the lead's subagents at `depth`."""
    crew.team.update_member("team-lead", permission_mode="bypassPermissions")
    return run_swarm("spawn", name, "--backend", "hidden", "--model", "sonnet",
                     "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir),
                     "--prompt", "delegate", cwd=crew.workdir,
                     env={"SWARM_AGENT_ID": f"team-lead@{crew.team.name}",
                          "SWARM_DEPTH": str(depth)})


def test_depth_four_is_refused_at_cap_three(crew: Crew, fake_api: FakeAnthropic,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_SUBAGENT_DEPTH", "3")
    call = fake_api.push_tool_use("Agent", {"description": "look", "prompt": "look around",
                                            "subagent_type": "explore"})
    fake_api.push_text("I will do it myself.")
    # person -> lead (1) -> lead's subagent (2) -> its `swarm spawn`: w1 at depth 3.
    proc = spawn_from_lead_subagent(crew, "w1", 2)
    assert proc.returncode == 0, proc.stderr
    assert crew.team.member("w1").depth == 3
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    bodies = fake_api.messages_requests()
    assert not any(is_subagent(b) for b in bodies)
    (result,) = tool_results(bodies[1])
    assert result["tool_use_id"] == call and result.get("is_error")
    assert "depth 4" in result["content"] and "SWARM_MAX_SUBAGENT_DEPTH=3" in result["content"]
    assert "\n" not in result["content"].removeprefix("Error: ")
    assert "depth 4" in crew.log("w1")  # the user sees the line in the pane too


def test_a_teammate_past_the_depth_cap_is_not_spawned(crew: Crew,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_SUBAGENT_DEPTH", "3")
    proc = spawn_from_lead_subagent(crew, "w1", 3)
    assert proc.returncode == 2
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "depth 4" in line and "SWARM_MAX_SUBAGENT_DEPTH=3" in line
    assert crew.team.config().member("w1") is None
    # From a person's shell a teammate is at depth 1; the lead's SpawnTeammate gives 2.
    assert crew.cli("spawn", "w2", "--backend", "hidden").returncode == 0
    assert crew.team.member("w2").depth == 1


def test_depth_within_the_cap_starts_the_subagent(crew: Crew, fake_api: FakeAnthropic,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_SUBAGENT_DEPTH", "4")
    sub = fake_api.route(is_subagent)
    sub.push_text("looked")
    fake_api.push_tool_use("Agent", {"description": "look", "prompt": "look around",
                                     "subagent_type": "explore"})
    fake_api.push_text("Thanks.")
    assert spawn_from_lead_subagent(crew, "w1", 2).returncode == 0
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    state = read_state(crew.team.name, "w1")
    assert state is not None and [s.depth for s in state.subagents] == [4]


def test_subagents_per_parent_are_capped(crew: Crew, fake_api: FakeAnthropic,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_SUBAGENTS_TOTAL", "1")
    sub = fake_api.route(is_subagent)
    sub.push_text("first report")
    sub.push_text("second report")
    args = {"description": "look", "prompt": "look around", "subagent_type": "explore"}
    fake_api.push_tool_use("Agent", args)
    second = fake_api.push_tool_use("Agent", args)
    fake_api.push_text("Done.")
    crew.spawn("w1", prompt="go", model="sonnet")
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    parent = [b for b in fake_api.messages_requests() if not is_subagent(b)]
    assert len(parent) == 3
    (first,) = tool_results(parent[1])
    assert "first report" in first["content"] and not first.get("is_error")
    (refused,) = tool_results(parent[2])
    assert refused["tool_use_id"] == second and refused.get("is_error")
    assert "SWARM_MAX_SUBAGENTS_TOTAL=1" in refused["content"]
    assert sub.pending() == 1  # the second subagent never started


def test_an_openai_stream_is_cut_off_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chat Completions give usage only at the end: the request's size and the streamed text
    stand for it meanwhile; a stream the cap stops is hung up on."""
    from swarm.runtime.models.base import ModelRequest
    from swarm.runtime.models.openai_model import OpenAIModel
    from tests.support.fake_openai import FakeOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    seen: list[Usage] = []

    def cap(so_far: Usage) -> str | None:
        seen.append(so_far)
        return "budget_exhausted: test cap" if so_far.output_tokens >= 5 else None

    with FakeOpenAI() as api:
        api.push_stall("twenty characters!! " * 3)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{api.base_url}/v1")
        model = OpenAIModel("gpt-4o", max_retries=0)
        reply = model.complete(ModelRequest("sys", [{"role": "user", "content": [
            {"type": "text", "text": "hi"}]}], [], on_text=lambda text: None, on_usage=cap))
        assert reply.stopped == "budget_exhausted: test cap"
        assert reply.stop_reason == "budget_exhausted" and not reply.tool_uses()
        assert reply.usage.output_tokens >= 5 and reply.usage.input_tokens > 0
        assert reply.usage.cost_usd > 0 and seen[0].input_tokens == reply.usage.input_tokens
        wait_until(lambda: api.disconnects == 1, 10, message="the stream's disconnect")


def test_the_team_budget_stops_a_teammate_mid_reply(crew: Crew, paced: FakeAnthropic) -> None:
    """The lead's --max-budget-usd is the team's: the members' spend summed. The lead has
    spent $0.008 of $0.01 here: a teammate with no cap of its own stops at the $0.002 left."""
    crew.team.update_member("team-lead", max_budget_usd=0.01)
    write_state(crew.team.name, "team-lead", AgentState(state="idle", usage=Usage(
        input_tokens=1000, cost_usd=0.008)))
    paced.push_text(LONG, usage={"input_tokens": 100, "output_tokens": 1200})
    crew.spawn("w1", prompt="write a lot", model="sonnet")
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "budget_exhausted" and note.failure_reason is not None
    assert "the team spent" in note.failure_reason and "$0.01" in note.failure_reason
    assert not paced.streams[0].complete
    rows = json.loads(crew.cli("status", "--json").stdout)
    team_cost = sum(r["cost_usd"] for r in rows)
    assert 0.01 <= team_cost <= 0.01 + ONE_DELTA_USD


def test_a_leads_teammates_are_at_depth_two_with_the_caps_it_gave(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real scripted lead: SpawnTeammate passes max_budget_usd and max_tokens; its teammate
    and one its own Bash spawns are at depth 2; its --max-budget-usd is the team's, recorded."""
    import subprocess

    from swarm.core.team.team import Team
    from tests.support.cli_runner import SWARM

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("SWARM_MODEL", "shell")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "SpawnTeammate", "input": {
            "name": "w", "prompt": "$ echo hi", "max_budget_usd": 0.5, "max_tokens": 9000}},
            {"name": "Bash", "input": {"command": f"{SWARM} spawn v --backend hidden"}}]},
        {"text": "Started."}, {"text": "Done."}]))
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}",
                           "--backend", "hidden", "--permission-mode", "bypassPermissions",
                           "--max-budget-usd", "2", "--team", "deep", "--keep", "go"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    team = Team.open("deep")
    w, v, lead = team.member("w"), team.member("v"), team.member("team-lead")
    assert (w.depth, w.max_budget_usd, w.max_tokens) == (2, 0.5, 9000)
    assert v.depth == 2 and lead.depth == 1 and lead.max_budget_usd == 2
    Team.delete("deep", force=True)


def test_the_team_budget_stops_the_lead_mid_reply(paced: FakeAnthropic, tmp_path: Path) -> None:
    from tests.support.lead_fixtures import lead

    paced.push_text(LONG, usage={"input_tokens": 2000, "output_tokens": 1200})
    proc = lead("--max-budget-usd", "0.01", "--json", "Go.", cwd=tmp_path)
    assert proc.returncode == 1
    (stopped,) = [x for x in proc.stderr.splitlines() if "the lead stopped" in x]
    assert "budget_exhausted: the team spent $0.01" in stopped and "$0.01;" in stopped
    assert not paced.streams[0].complete
    cost = json.loads(proc.stdout)["cost_usd"]
    assert 0.01 <= cost <= 0.01 + ONE_DELTA_USD
