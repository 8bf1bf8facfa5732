"""Effort and thinking end to end: real `swarm agent` teammates through the real SDK to the fake
Messages API (tests/support/fake_anthropic.py). The effort reaches every request; the model's thinking
blocks go back in the next request whole; a fork's first request carries its parent's thinking
configuration over the byte-identical prefix; a model without thinking gets one warning; a run
with thinking blocks replays; `swarm status` and the transcript show the thinking."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import wait_until
from tests.support.lead_fixtures import lead

WAIT = 30.0
THINKING = {"type": "thinking", "thinking": "A listing first.\nThen report.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl"}
SPENT = {"output_tokens": 50, "output_tokens_details": {"thinking_tokens": 30}}


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                "SWARM_API_MAX_RETRIES"):
        monkeypatch.delenv(var, raising=False)


def push_thinking_then_bash(api: FakeAnthropic, command: str = "echo listed") -> None:
    api.push_message([THINKING, REDACTED, {"type": "text", "text": "Listing."},
                      {"type": "tool_use", "id": "toolu_think1", "name": "Bash",
                       "input": {"command": command}}], stop_reason="tool_use", usage=SPENT)
    api.push_text("Listed.")


def is_fork(body: dict[str, Any]) -> bool:
    return "<fork-rule>" in json.dumps(body["messages"])


def thinking_config(body: dict[str, Any]) -> tuple[Any, Any, Any]:
    return body.get("thinking"), body.get("output_config"), body.get("max_tokens")


def test_a_teammates_thinking_goes_back_whole_and_is_counted(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    push_thinking_then_bash(fake_api)
    crew.spawn("w1", prompt="list", model="sonnet", effort="low")
    crew.wait_idle_notes("w1", 1, timeout=WAIT)

    first, second = fake_api.messages_requests()
    assert thinking_config(first)[:2] == ({"type": "adaptive"}, {"effort": "low"})
    assert thinking_config(second) == thinking_config(first)  # every request of the turn
    reply = second["messages"][1]
    assert reply["role"] == "assistant" and reply["content"][:2] == [THINKING, REDACTED]

    # Kept in the transcript whole (a resume sends them again), shown there folded.
    kept = [e["message"]["content"] for e in crew.transcript("w1")
            if e.get("kind") == "message" and e["message"]["role"] == "assistant"]
    assert kept[0][:2] == [THINKING, REDACTED]
    shown = crew.cli("transcript", "w1")
    assert shown.returncode == 0, shown.stderr
    assert "[thinking, 29 chars] A listing first. Then report." in shown.stdout
    assert "[thinking, redacted]" in shown.stdout
    assert THINKING["signature"] not in shown.stdout and REDACTED["data"] not in shown.stdout

    state = read_state(crew.team.name, "w1")
    assert state is not None and state.usage.thinking_tokens == 30
    status = crew.cli("status", "--json")
    (row,) = [r for r in json.loads(status.stdout) if r["name"] == "w1"]
    assert (row["thinking_tokens"], row["effort"]) == (30, "low")
    assert "(30 thinking)" in crew.cli("status", "--wide").stdout


def test_a_fork_starts_with_its_parents_thinking_configuration_and_prefix(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fork = fake_api.route(is_fork)
    fork.push_text("fork report")
    fake_api.push_message([THINKING, REDACTED, {"type": "tool_use", "id": "toolu_first",
                                                "name": "Bash", "input": {"command": "true"}}],
                          stop_reason="tool_use")
    fake_api.push_message([THINKING, {"type": "text", "text": "Forking."},
                           {"type": "tool_use", "id": "toolu_fork1", "name": "Agent",
                            "input": {"description": "side job", "prompt": "Do it."}}],
                          stop_reason="tool_use")
    fake_api.push_text("Done.")
    crew.spawn("w1", prompt="go", model="sonnet", effort="high")

    def parents() -> list[dict[str, Any]]:
        return [b for b in fake_api.messages_requests() if not is_fork(b)]

    forks = wait_until(lambda: [b for b in fake_api.messages_requests() if is_fork(b)], WAIT)
    wait_until(lambda: len(parents()) >= 3, WAIT)
    last, first = parents()[1], forks[0]
    assert thinking_config(first) == thinking_config(last)
    assert thinking_config(first)[:2] == ({"type": "adaptive"}, {"effort": "high"})
    for key in ("model", "system", "tools"):
        assert json.dumps(first[key]) == json.dumps(last[key]), key
    prefix = len(last["messages"])
    assert json.dumps(first["messages"][:prefix]) == json.dumps(last["messages"])
    assert first["messages"][1]["content"][:2] == [THINKING, REDACTED]  # in the prefix
    # Then the parent's reply, its thinking block first with its signature.
    assert first["messages"][prefix]["content"][0] == THINKING


def test_a_model_without_thinking_gets_one_warning(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "claude-3-5-haiku-20241022",
                    "--effort", "HIGH", "--permission-mode", "bypassPermissions", "--cwd",
                    str(crew.workdir), "--prompt", "hi")
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if "effort" in ln]
    assert warnings == ["swarm: warning: effort high: model anthropic:claude-3-5-haiku-20241022"
                        " has no thinking or reasoning setting swarm knows; it runs without one"]
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    (body,) = fake_api.messages_requests()
    assert "thinking" not in body and "output_config" not in body

    bad = crew.cli("spawn", "w2", "--backend", "hidden", "--model", "sonnet", "--effort", "huge")
    assert bad.returncode == 2 and "huge" in bad.stderr


def test_a_definitions_effort_and_the_config_default(
        crew: Crew, fake_api: FakeAnthropic, swarm_home: Path) -> None:
    agents = swarm_home / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "planner.md").write_text("---\nname: planner\ndescription: plans\neffort: max\n"
                                       "---\nYou plan.\n")
    (swarm_home / "config.toml").write_text('effort = "medium"\n')
    planner = crew.spawn("p1", prompt="plan", model="opus", agent_type="planner")
    assert planner.effort == "max" and not planner.warnings  # no "does nothing" note now
    crew.spawn("w1", prompt="work", model="sonnet")
    crew.wait_idle_notes("p1", 1, timeout=WAIT)
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    efforts = sorted(b["output_config"]["effort"] for b in fake_api.messages_requests())
    assert efforts == ["max", "medium"]


def test_a_run_with_thinking_blocks_replays_and_matches(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path) -> None:
    push_thinking_then_bash(fake_api)
    directory = tmp_path / "rec"
    try:
        record_and_replay(fake_api, tmp_path, directory)
    finally:  # bob stays idle after its turn: it would outlive the test
        subprocess.run([SWARM, "team", "delete", "solo", "--force"], capture_output=True,
                       cwd=tmp_path, timeout=60)


def record_and_replay(fake_api: FakeAnthropic, tmp_path: Path, directory: Path) -> None:
    for args in (["team", "create", "solo"],
                 ["spawn", "bob", "--team", "solo", "--model", "sonnet", "--effort", "high",
                  "--backend", "hidden", "--permission-mode", "bypassPermissions", "--record",
                  str(directory), "--prompt", "list"],
                 ["wait", "--team", "solo", "--until", "idle", "--timeout", "30"]):
        proc = subprocess.run([SWARM, *args], capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    calls = [json.loads(x) for x in (directory / "bob.jsonl").read_text().splitlines()]
    assert len(calls) == 2 and calls[0]["request"]["effort"] == "high"
    assert calls[1]["request"]["messages"][1]["content"][:2] == [THINKING, REDACTED]

    before = len(fake_api.requests)
    again = subprocess.run([SWARM, "replay", str(directory), "--team", "solo2", "--json"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120,
                           env={**os.environ, "ANTHROPIC_API_KEY": ""})
    assert again.returncode == 0, again.stdout + again.stderr
    (member,) = json.loads(again.stdout)["members"]
    assert member["matched"] == member["recorded"] == 2
    assert len(fake_api.requests) == before  # a replay calls no provider


def spawning_lead(body: dict[str, Any]) -> Scripted:
    """A lead that spawns one shell teammate with effort low, and ends once it is quiet."""
    messages = body.get("messages") or []
    if len(messages) == 1:
        return reply("One teammate.", [("SpawnTeammate", {
            "name": "w", "prompt": "$ echo hi", "effort": "low",
            "permission_mode": "bypassPermissions"})])
    if "<team-quiet>" in last_user_text(body):
        return reply(None, [("SendMessage", {"to": "w", "message": {
            "type": "shutdown_request", "reason": "done"}})])
    if "sent shutdown_request to w" in json.dumps(messages[-1]):
        return reply("All done.")
    return reply("Noted.")


@pytest.mark.usefixtures("lead_env")
def test_the_lead_thinks_at_its_effort_and_spawns_at_its_own(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.fallback = spawning_lead
    proc = lead("--effort", "high", "--permission-mode", "bypassPermissions", "--team", "ld",
                "--keep", "Echo hi.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    bodies = fake_api.messages_requests()
    assert {json.dumps(thinking_config(b)[:2]) for b in bodies} == {
        json.dumps([{"type": "adaptive"}, {"effort": "high"}])}
    # The teammate (on the offline shell model) got its own effort, and the one warning,
    # which the lead's model read in the tool's result.
    member = Team.open("ld").config().member("w")
    assert member is not None and member.effort == "low"
    result = json.dumps(bodies[1]["messages"][-1])
    assert "warning: effort low: model shell does not think" in result
    assert proc.stderr.count("effort low: model shell does not think") <= 1


def test_a_respawned_teammate_sends_its_thinking_again_at_its_effort(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.push_message([THINKING, REDACTED, {"type": "text", "text": "Noted."}])
    crew.spawn("w1", prompt="remember", model="sonnet", effort="low")
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    killed = crew.cli("kill", "w1")
    assert killed.returncode == 0, killed.stderr
    crew.wait_state("w1", "dead", "exited")
    proc = crew.cli("respawn", "w1")
    assert proc.returncode == 0, proc.stderr
    crew.send("w1", "and now?")
    later = wait_until(lambda: fake_api.messages_requests()[1:], WAIT,
                       message=f"a request after respawn (log: {crew.log('w1')[-600:]})")
    assert later[0]["output_config"] == {"effort": "low"}  # its member entry kept it
    assert later[0]["messages"][1]["content"][:2] == [THINKING, REDACTED]
