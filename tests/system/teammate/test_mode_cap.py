"""No member grants more than it has: modes order `plan < default < acceptEdits < auto <
bypassPermissions`; the lead's SpawnTeammate and AnswerPlan(mode), and lead-only commands run
from a member's shell, grant at most that member's own mode (an auto lead approves a plan into
auto). A person's shell (no SWARM_AGENT_ID) is not limited. A grant above the cap is refused
with an error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.permissions import mode_allows
from swarm.core.records.protocol import PlanApprovalRequest
from swarm.core.store import paths
from swarm.core.team import decisions
from swarm.core.team.team import Team
from swarm.ops.approvals import pending_plans
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.auto_support import reviewed, reviewer
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.lead_fixtures import lead


def test_the_order_of_modes() -> None:
    order = ["plan", "default", "acceptEdits", "auto", "bypassPermissions"]
    for i, cap in enumerate(order):
        for j, mode in enumerate(order):
            assert mode_allows(cap, mode) is (j <= i), (cap, mode)


def lead_results(team: str) -> list[dict[str, Any]]:
    """The tool results in a kept lead's transcript, in order."""
    path = paths.agent_transcript(team, "team-lead")
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [b for e in entries if e.get("kind") == "message"
            for b in e["message"]["content"] if isinstance(b, dict)
            and b.get("type") == "tool_result"]

def plan_answers(mode: str, answers: list[str]) -> Callable[[dict[str, Any]], Scripted]:
    """The lead's model after its spawn: approve the planner's plan into `mode`, note the first
    tool result it gets in `answers`, and answer a refusal by approving into the planner's own
    mode (so the run finishes)."""

    def answer(body: dict[str, Any]) -> Scripted:
        results = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
        if "<plan-approval-request" in last_user_text(body):
            return reply(None, [("AnswerPlan", {"name": "planner", "approve": True,
                                                "permission_mode": mode})])
        if results and not answers:
            answers.append(results[0]["content"])
            if results[0].get("is_error"):
                return reply(None, [("AnswerPlan", {"name": "planner", "approve": True})])
        return reply("Done.")

    return answer



@pytest.mark.usefixtures("lead_env")
def test_a_lead_cannot_spawn_a_teammate_above_its_own_mode(tmp_path: Path) -> None:
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [
            {"name": "Bash", "input": {"command": "touch by-lead.txt"}},
            {"name": "SpawnTeammate", "input": {
                "name": "w", "prompt": "$ touch by-w.txt", "model": "shell",
                "permission_mode": "bypassPermissions"}}]},
        {"text": "Done."}]))
    proc = lead("--keep", "--team", "capped", "go", cwd=tmp_path, model=f"scripted:{script}")
    assert proc.returncode == 0, proc.stderr
    own, spawned = lead_results("capped")
    assert own.get("is_error") and own["content"].startswith("permission denied:")
    assert spawned.get("is_error"), spawned
    assert spawned["content"] == (
        "permission mode bypassPermissions is above the lead's own (default): a member grants at"
        " most its own mode; ask for default or lower")
    assert not (tmp_path / "by-lead.txt").exists() and not (tmp_path / "by-w.txt").exists()
    assert [m.name for m in Team.open("capped").members()] == ["team-lead"]


@pytest.mark.usefixtures("lead_env")
def test_a_bypass_lead_may_grant_bypass_and_its_shell_says_who_it_is(tmp_path: Path) -> None:
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [
            {"name": "Bash", "input": {"command": "echo $SWARM_AGENT_ID > who.txt"}},
            {"name": "SpawnTeammate", "input": {
                "name": "w", "prompt": "$ touch by-w.txt", "model": "shell",
                "permission_mode": "bypassPermissions"}}]},
        {"text": "Done."}]))
    proc = lead("--permission-mode", "bypassPermissions", "--team", "open", "go", cwd=tmp_path,
                model=f"scripted:{script}")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "by-w.txt").exists(), proc.stderr
    assert (tmp_path / "who.txt").read_text().strip() == "team-lead@open"


@pytest.mark.usefixtures("lead_env")
def test_answer_plan_grants_at_most_the_leads_mode(fake_api: FakeAnthropic,
                                                   tmp_path: Path) -> None:
    planner = tmp_path / "planner.json"
    planner.write_text(json.dumps([
        {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. do it"}}]},
        {"text": "done"}]))
    fake_api.push(lambda body: reply(None, [("SpawnTeammate", {
        "name": "planner", "prompt": "plan it", "model": f"scripted:{planner}",
        "plan_mode_required": True})]))
    fake_api.push_text("Waiting.")
    answers: list[str] = []
    fake_api.fallback = plan_answers("acceptEdits", answers)
    proc = lead("--approvals", "lead", "--keep", "--team", "plans", "go", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert answers == ["permission mode acceptEdits is above the lead's own (default): a member"
                       " grants at most its own mode; ask for default or lower"]
    team = Team.open("plans")
    # Spawned by a default lead, its working mode is default (not the usual acceptEdits) ...
    assert team.member("planner").permission_mode == "default"
    # ... and the plan was approved into it.
    assert "approved the plan of planner" in proc.stderr


@pytest.mark.usefixtures("lead_env")
def test_an_auto_lead_approves_a_plan_into_auto(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    """A planner spawned in default, approved into auto: its next call goes to the reviewer."""
    prog, log = reviewer(tmp_path, "allow")
    planner = tmp_path / "planner.json"
    planner.write_text(json.dumps([
        {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. touch it"}}]},
        {"tool_uses": [{"name": "Bash", "input": {"command": "touch approved.txt"}}]},
        {"text": "done"}]))
    fake_api.push(lambda body: reply(None, [("SpawnTeammate", {
        "name": "planner", "prompt": "plan it", "model": f"scripted:{planner}",
        "plan_mode_required": True, "permission_mode": "default"})]))
    fake_api.push_text("Waiting.")
    answers: list[str] = []
    fake_api.fallback = plan_answers("auto", answers)
    proc = lead("--permission-mode", "auto", "--reviewer", f"command:{prog}", "--approvals",
                "lead", "--keep", "--team", "autoplan", "go", cwd=tmp_path,
                env={"SWARM_PERMISSION_TIMEOUT": "3"})
    assert proc.returncode == 0, proc.stderr
    assert answers == ["approved the plan of planner"]
    assert Team.open("autoplan").member("planner").permission_mode == "default"
    (touch,) = [r for r in decisions.calls("autoplan", "planner")
                if r["call"] == "Bash: touch approved.txt"]
    assert (touch["tier"], touch["who"], touch["behavior"]) == ("reviewer", "reviewer", "allow")
    assert (tmp_path / "approved.txt").exists()
    assert [r["pending"]["call"] for r in reviewed(log)] == ["Bash: touch approved.txt"]


def test_lead_only_commands_from_a_members_shell_grant_at_most_its_mode(crew: Crew) -> None:
    crew.register("planner", plan_mode_required=True, permission_mode="acceptEdits")
    crew.team.send("team-lead", PlanApprovalRequest(plan="1. go"), sender="planner")
    as_lead = {"SWARM_AGENT_ID": f"team-lead@{crew.team.name}"}  # the lead's own Bash

    spawned = run_swarm("spawn", "evil", "--backend", "hidden", "--model", "shell",
                        "--permission-mode", "bypassPermissions", env=as_lead, cwd=crew.workdir)
    assert spawned.returncode == 2, spawned.stderr
    assert error_lines(spawned) == [
        "swarm: error: permission mode bypassPermissions is above team-lead's own (default): a"
        " member grants at most its own mode; ask for default or lower"]
    assert crew.team.config().member("evil") is None

    approved = run_swarm("plans", "approve", "planner", "--mode", "acceptEdits", env=as_lead,
                         cwd=crew.workdir)
    assert approved.returncode == 2, approved.stderr
    assert "acceptEdits is above team-lead's own (default)" in approved.stderr
    (plan,) = pending_plans(crew.team)  # nothing was answered
    by_hand = json.dumps({"type": "plan_approval_response", "request_id": plan.request.request_id,
                          "approve": True, "permission_mode": "acceptEdits"})
    sent = run_swarm("send", "planner", by_hand, env=as_lead, cwd=crew.workdir)
    assert sent.returncode == 2 and "acceptEdits is above team-lead's own" in sent.stderr
    assert crew.team.inbox("planner").messages() == []

    # A person's shell is not limited.
    person = crew.cli("plans", "approve", "planner", "--mode", "acceptEdits")
    assert person.returncode == 0, person.stderr
    assert pending_plans(crew.team) == []
