"""auto's reviewer with real teammates: no verdict (a crash, a hang, garbage) asks a person and
never allows or denies by itself; 3 denials in a row or 20 in all switch a member to asking a
person until auto is set again; a `model:` reviewer through swarm's models, whose spend is the
member's usage and counts in its budget; a teammate spawned by an auto lead is auto, with its
lead's reviewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import NotAllowedError
from swarm.ops.member.spawner import SpawnRequest, spawn
from tests.support.agent_fixtures import Crew
from tests.support.auto_support import checkout, records, requests, reviewed, reviewer, wait_request
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until


@pytest.mark.parametrize("kind", ["crash", "hang", "garbage", "maybe"])
def test_no_verdict_asks_a_person(crew: Crew, tmp_path: Path, kind: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_REVIEW_TIMEOUT", "1")
    work = checkout(crew)
    prog, log = reviewer(tmp_path, kind)
    crew.spawn("w1", prompt="$ touch made.txt", permission_mode="auto",
               reviewer=f"command:{prog}")
    request = wait_request(crew, "w1")
    assert request.person_only and request.tier == "reviewer"
    assert len(reviewed(log)) == 1 and not (work / "made.txt").exists()  # neither allowed...
    proc = crew.cli("permissions", "deny", request.request_id, "--reason", "not now")
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes("w1", 1)
    (record,) = wait_until(lambda: records(crew, "w1")[:1], 10)
    assert (record["tier"], record["who"], record["behavior"]) == ("reviewer", "person", "deny")
    assert record["review"]["verdict"] == "none"
    error = {"crash": "exited with 3", "hang": "no answer within 1s",
             "garbage": "not one JSON object", "maybe": "decision is 'maybe'"}[kind]
    assert error in record["review"]["error"]
    assert not (work / "made.txt").exists()  # ...nor silently denied: the person denied it


def test_three_denials_in_a_row_switch_to_asking_until_auto_is_set_again(
        crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, log = reviewer(tmp_path, "deny")
    crew.spawn("w1", prompt="\n".join(f"$ touch a{i}.txt" for i in range(1, 5)),
               permission_mode="auto", reviewer=f"command:{prog}")
    request = wait_request(crew, "w1")
    assert request.input == {"command": "touch a4.txt"} and request.person_only
    assert request.tier == "reviewer"
    assert len(reviewed(log)) == 3
    assert crew.cli("permissions", "deny", request.request_id, "-r", "no").returncode == 0
    crew.wait_idle_notes("w1", 1)
    assert [r["who"] for r in records(crew, "w1")[:4]] == ["reviewer"] * 3 + ["person"]
    assert "the reviewer denied 3 calls in a row" in records(crew, "w1")[3]["asked"]["why"]
    assert paused_in_status(crew, "w1") == "the reviewer denied 3 calls in a row"
    proc = crew.cli("mode", "w1", "auto")  # a person sets auto again: the reviewer decides
    assert proc.returncode == 0, proc.stderr
    crew.send("w1", "$ touch a5.txt")
    crew.wait_idle_notes("w1", 2)
    assert len(reviewed(log)) == 4 and len(requests(crew, "w1")) == 1
    assert paused_in_status(crew, "w1") is None  # a4 was the person's; a5 the reviewer's


def paused_in_status(crew: Crew, name: str) -> str | None:
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    members = data["members"] if isinstance(data, dict) else data
    (row,) = [m for m in members if m["name"] == name]
    return row["auto_paused"]  # type: ignore[no-any-return]


def test_twenty_denials_in_all_switch_to_asking(crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, log = reviewer(tmp_path, "rule")  # denies RISKY, allows the rest: never 3 in a row
    lines = [line for i in range(20) for line in (f"$ touch RISKY{i}", f"$ touch ok{i}")]
    crew.spawn("w1", prompt="\n".join(lines), permission_mode="auto",
               reviewer=f"command:{prog}")
    request = wait_request(crew, "w1")  # the call after the 20th denial
    assert request.input == {"command": "touch ok19"} and request.person_only
    assert len(reviewed(log)) == 39
    assert crew.cli("permissions", "approve", request.request_id).returncode == 0
    crew.wait_idle_notes("w1", 1, timeout=30)
    outcomes = [(r["who"], r["behavior"]) for r in records(crew, "w1")[:40]]
    assert outcomes == [("reviewer", "deny"), ("reviewer", "allow")] * 19 + [
        ("reviewer", "deny"), ("person", "allow")]


def test_a_model_reviewer_and_its_cache(crew: Crew, tmp_path: Path) -> None:
    work = checkout(crew)
    script = tmp_path / "verdict.json"
    script.write_text(json.dumps([{"text": 'Looks fine. {"decision": "allow", "risk": "low",'
                                   ' "reason": "in its worktree"}'}]))
    crew.spawn("w1", prompt="$ touch m.txt", permission_mode="auto",
               reviewer=f"model:scripted:{script}")
    crew.wait_idle_notes("w1", 1)
    assert (work / "m.txt").exists()
    first = records(crew, "w1")[0]
    assert (first["tier"], first["who"], first["behavior"]) == ("reviewer", "reviewer", "allow")
    assert first["review"]["reason"] == "in its worktree" and not first["review"]["cached"]
    crew.send("w1", "$ touch m.txt")  # the same call again: the verdict is cached
    crew.wait_idle_notes("w1", 2)
    again = [r for r in records(crew, "w1") if r["call"] == "Bash: touch m.txt"]
    assert [r["review"]["cached"] for r in again] == [False, True]


def test_a_teammate_spawned_by_an_auto_member_is_auto_with_its_reviewer(
        crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, _ = reviewer(tmp_path, "allow")
    other, _ = reviewer(tmp_path, "deny")
    crew.register("boss", permission_mode="auto", reviewer=f"command:{prog}",
                  ask_rules=["Bash(git push:*)"])
    from swarm.core.records.permissions import ModeCap

    cap = ModeCap("boss", "auto")
    with pytest.raises(NotAllowedError, match="cannot choose a reviewer"):
        spawn(crew.team, SpawnRequest("w2", model="shell", backend="hidden", cap=cap,
                                      inherit_mode="auto", cwd=str(crew.workdir),
                                      reviewer=f"command:{other}"))
    crew.spawn("w1", permission_mode=None, inherit_mode="auto", cap=cap)
    member = crew.team.member("w1")
    assert (member.permission_mode, member.reviewer, member.ask_rules) == (
        "auto", f"command:{prog}", ["Bash(git push:*)"])
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    members = status["members"] if isinstance(status, dict) else status
    assert any(m.get("name") == "w1" and m.get("mode") == "auto" for m in members), status


def test_the_lead_reviewer_is_the_leads_model_given_only_the_request(crew: Crew,
                                                                     tmp_path: Path) -> None:
    work = checkout(crew)
    script = tmp_path / "lead-verdict.json"
    script.write_text(json.dumps([{"text": '{"decision": "deny", "risk": "high",'
                                   ' "reason": "not in its task"}'}]))
    crew.team.update_member("team-lead", model=f"scripted:{script}")
    crew.spawn("w1", prompt="$ touch l.txt", permission_mode="auto", reviewer="lead")
    crew.wait_idle_notes("w1", 1)
    (record,) = records(crew, "w1")[:1]
    assert (record["tier"], record["who"], record["behavior"]) == ("reviewer", "reviewer", "deny")
    assert record["review"]["spec"] == "lead" and record["review"]["reason"] == "not in its task"
    assert not (work / "l.txt").exists()


def is_review(body: dict[str, Any]) -> bool:
    return "SWARM-REVIEWER" in json.dumps(body.get("system", ""))


VERDICT = '{"decision": "allow", "risk": "low", "reason": "its task"}'


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")


@pytest.mark.usefixtures("api_key")
def test_the_reviewers_spend_is_the_members_usage(crew: Crew, fake_api: FakeAnthropic) -> None:
    """A shell teammate spends nothing itself: what status counts is its reviewer's call."""
    work = checkout(crew)
    review = fake_api.route(is_review)
    review.push_text(VERDICT, usage={"input_tokens": 1000, "output_tokens": 100})
    crew.spawn("w1", prompt="$ touch r.txt", permission_mode="auto", reviewer="model:sonnet")
    crew.wait_idle_notes("w1", 1)
    assert (work / "r.txt").exists()
    (record,) = [r for r in records(crew, "w1") if r["call"] == "Bash: touch r.txt"]
    assert record["review"]["tokens"] == {"input": 1000, "output": 100}
    cost = 1000 * 3 / 1_000_000 + 100 * 15 / 1_000_000  # sonnet's prices
    assert record["review"]["cost_usd"] == pytest.approx(cost)
    proc = crew.cli("status", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = [r for r in json.loads(proc.stdout) if r["name"] == "w1"]
    assert row["tokens"] == 1100 and row["cost_usd"] == pytest.approx(cost)
    crew.send("w1", "$ touch r.txt")  # the same call again: the cached verdict costs nothing
    crew.wait_idle_notes("w1", 2)
    again = [r for r in records(crew, "w1") if r["call"] == "Bash: touch r.txt"]
    assert [r["review"]["cached"] for r in again] == [False, True]
    (row,) = [r for r in json.loads(crew.cli("status", "--json").stdout) if r["name"] == "w1"]
    assert row["tokens"] == 1100


@pytest.mark.usefixtures("api_key")
def test_a_review_that_crosses_the_budget_stops_the_member(crew: Crew,
                                                          fake_api: FakeAnthropic) -> None:
    checkout(crew)
    review = fake_api.route(is_review)
    review.push_text(VERDICT, usage={"input_tokens": 5000})  # $0.015 of the $0.01
    fake_api.push_tool_use("Bash", {"command": "touch b.txt"},
                           usage={"input_tokens": 10, "output_tokens": 10})
    fake_api.push_text("never asked for")
    crew.spawn("w1", prompt="go", model="sonnet", permission_mode="auto",
               reviewer="model:sonnet", max_budget_usd=0.01)
    (note,) = crew.wait_idle_notes("w1", 1)
    assert note.idle_reason == "budget_exhausted"
    assert note.failure_reason is not None and "--max-budget-usd $0.01" in note.failure_reason
    bodies = fake_api.messages_requests()
    assert [is_review(b) for b in bodies] == [False, True]  # the member's model never again
    assert (crew.workdir / "b.txt").exists()  # the reviewed call itself ran
