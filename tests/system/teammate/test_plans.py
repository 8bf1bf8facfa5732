"""Plan approval with real `swarm agent` processes: `--plan-mode-required`, `swarm plans ...`.

A `scripted:` teammate replays exact tool calls; the rejection test uses the fake Anthropic API
so the assertion is on what the model was actually sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import PermissionRequest, PlanApprovalRequest
from swarm.ops.approvals import pending_plans
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until


def plans(crew: Crew) -> list[dict[str, Any]]:
    proc = crew.cli("plans", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def wait_plan(crew: Crew, name: str, text: str) -> dict[str, Any]:
    def found() -> list[dict[str, Any]]:  # polled through the API: a CLI call per poll is slow
        return [p.as_dict() for p in pending_plans(crew.team)
                if p.message.sender == name and p.request.plan == text]

    return wait_until(found, 20, message=f"plan {text!r} from {name} "
                      f"(log: {crew.log(name)[-600:]})")[0]


def tool_results(crew: Crew, name: str, tool: str) -> list[dict[str, Any]]:
    blocks = [b for e in crew.transcript(name) if e.get("kind") == "message"
              for b in e["message"]["content"] if isinstance(b, dict)]
    uses = {b["id"]: b["name"] for b in blocks if b.get("type") == "tool_use"}
    return [b for b in blocks if b.get("type") == "tool_result"
            and uses.get(b["tool_use_id"]) == tool]


def script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "Write", "input": {"file_path": path, "content": content}}


def test_plan_mode_refuses_writes_until_the_plan_is_approved(crew: Crew, tmp_path: Path) -> None:
    out = crew.workdir / "out.txt"
    model = script(tmp_path / "plan.json", [
        {"text": "exploring", "tool_uses": [write("out.txt", "too early"),
                                            {"name": "Bash", "input": {"command": "touch b"}},
                                            {"name": "Read", "input": {"file_path": "seed.txt"}},
                                            {"name": "ExitPlanMode",
                                             "input": {"plan": "1. write out.txt"}}]},
        {"text": "working", "tool_uses": [write("out.txt", "planned"),
                                          write("../outside.txt", "not without asking")]},
        {"text": "done"},
    ])
    (crew.workdir / "seed.txt").write_text("seed")
    crew.spawn("p1", prompt="plan it", model=model, plan_mode_required=True, permission_mode=None)
    assert crew.team.member("p1").permission_mode == "acceptEdits"  # its working mode

    listed = wait_plan(crew, "p1", "1. write out.txt")
    assert crew.wait_state("p1", "awaiting_plan").detail == "plan submitted"
    # Before approval the Write and the Bash did nothing (the results of this model turn reach
    # the transcript once its last call, ExitPlanMode, is answered: checked below).
    assert not out.exists() and not (crew.workdir / "b").exists()
    human = crew.cli("plans", "list")
    assert "== p1" in human.stdout and "1. write out.txt" in human.stdout
    assert listed["request_id"][:8] in human.stdout

    proc = crew.cli("plans", "approve", "p1")
    assert proc.returncode == 0 and proc.stdout.strip() == "approved the plan of p1", proc.stderr
    # The Write replaces the file in one rename, so once it is there it is whole; the test
    # still waits for the content itself, not a stand-in for it.
    wait_until(lambda: out.exists() and out.read_text() == "planned", 10,
               message="out.txt written after the plan was approved")
    refused = tool_results(crew, "p1", "Write")[:1] + tool_results(crew, "p1", "Bash")
    assert [r["content"].split(":")[0] for r in refused] == ["permission denied"] * 2
    assert all("not allowed in plan mode" in r["content"] for r in refused)
    assert "seed" in tool_results(crew, "p1", "Read")[0]["content"]
    assert not (crew.workdir / "b").exists()
    approved = tool_results(crew, "p1", "ExitPlanMode")[0]["content"]
    assert approved.startswith("Your plan was approved. You are now in acceptEdits mode")
    # Approval gives its working mode (acceptEdits), not more: outside the cwd it still asks.
    requests = wait_until(lambda: [s for m in crew.lead_messages()
                                   if isinstance(s := m.structured(), PermissionRequest)], 10)
    assert requests[0].input["file_path"] == "../outside.txt"
    assert plans(crew) == []
    # Nothing left to approve: exit 2.
    again = crew.cli("plans", "approve", "p1")
    assert again.returncode == 2 and "no plan waiting" in error_lines(again)[0]


def test_rejected_plan_feedback_reaches_the_model(crew: Crew, fake_api: FakeAnthropic,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the spawned agent inherits it
    fake_api.push_tool_use("ExitPlanMode", {"plan": "plan v1: rewrite everything"})
    fake_api.push_tool_use("ExitPlanMode", {"plan": "plan v2: one small file"})
    fake_api.push_tool_use("Write", {"file_path": "small.txt", "content": "small"})
    fake_api.push_text("all done")
    crew.spawn("p2", prompt="plan the change", model="sonnet", plan_mode_required=True,
               permission_mode=None)

    wait_plan(crew, "p2", "plan v1: rewrite everything")
    # Refusals that lose nothing: no feedback, nobody by that name, a teammate with no plan.
    for args in (["reject", "p2", "--feedback", " "], ["reject", "p2"],
                 ["approve", "nobody"], ["reject", "team-lead", "-f", "x"]):
        proc = crew.cli("plans", *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
    assert [p["plan"] for p in plans(crew)] == ["plan v1: rewrite everything"]

    proc = crew.cli("plans", "reject", "p2", "--feedback", "too big: touch one file only")
    assert proc.returncode == 0 and proc.stdout.strip() == "rejected the plan of p2", proc.stderr
    wait_plan(crew, "p2", "plan v2: one small file")
    assert len(plans(crew)) == 1  # v1 was answered; only v2 waits
    assert crew.state("p2").state == "awaiting_plan"  # type: ignore[union-attr]
    assert not (crew.workdir / "small.txt").exists()

    # The model was sent the feedback as the ExitPlanMode result, and planned again.
    sent = fake_api.messages_requests()
    results = [b for b in sent[1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1
    assert "Your plan was rejected. Feedback from the lead: too big: touch one file only" in \
        json.dumps(results[0]["content"])
    # In plan mode the model is offered ExitPlanMode; Write is refused, not hidden.
    assert "ExitPlanMode" in {t["name"] for t in sent[1]["tools"]}

    assert crew.cli("plans", "approve", "p2").returncode == 0
    crew.wait_idle_notes("p2", 1, timeout=20)
    assert (crew.workdir / "small.txt").read_text() == "small"
    # After approval the tool set no longer offers ExitPlanMode.
    assert "ExitPlanMode" not in {t["name"] for t in fake_api.messages_requests()[-1]["tools"]}
    asked = [m for m in crew.lead_messages() if isinstance(m.structured(), PlanApprovalRequest)]
    assert len(asked) == 2


def test_plan_mode_required_with_bypass_is_refused_at_spawn(crew: Crew) -> None:
    proc = crew.cli("spawn", "p3", "--backend", "hidden", "--model", "shell",
                    "--plan-mode-required", "--permission-mode", "bypassPermissions")
    assert proc.returncode == 2
    assert error_lines(proc) == ["swarm: error: bypassPermissions is never granted to a "
                                 "plan-mode-required agent"]
    assert crew.team.config().member("p3") is None
    assert crew.state("p3") is None
