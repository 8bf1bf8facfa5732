"""What an approval may do: a permission request's tool must be a tool the
requester has; the rule `--always` (the terminal's `a`, the lead model's `always`) adds is built
from the real input, never broader than the call, and never a bare tool or `Tool(*)` unless the
person typed it (`--rule`).

The forger is "mallory", a member that writes its own `permission_request` into the lead's
mailbox (a request may come from the member it names): a tool name that is itself a rule
(`Bash(*)`), a blank command, an unknown tool, a wildcard path. Each is answered through the real
`swarm permissions approve` (in-process `main`: exit code and the one error line) and the lead
model's AnswerPermission tool.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import (
    Message,
    PermissionRequest,
    PermissionResponse,
    dump_structured,
)
from swarm.core.shell import rules
from swarm.core.team.team import Team
from swarm.errors import SwarmError, ToolError
from swarm.lead.interactive import TerminalUI
from swarm.lead.lead_tools import AnswerPermission
from swarm.ops.approvals import pending_permissions
from swarm.runtime.tools.base import ToolContext
from swarm.runtime.tools.registry import all_tools
from tests.support.helpers import run_cli, wait_until

CaptureFixture = pytest.CaptureFixture[str]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def forge_team(work: Path) -> Team:
    """Team `forge`: mallory (general-purpose), reader (explore: Read, Glob, Grep) and calcer
    (general-purpose with the MCP server `calc`), all working in `work`."""
    team = Team.create("forge")
    team.add_member("mallory", cwd=str(work))
    team.add_member("reader", cwd=str(work), agent_type="explore")
    team.add_member("calcer", cwd=str(work), mcp_servers=["calc"])
    return team


def forge(team: Team, tool_name: str, args: dict[str, Any], sender: str = "mallory",
          agent_id: str | None = None) -> str:
    """Write a request into the lead's mailbox as a file writer could (Team.send refuses one that
    names another member at the source)."""
    request = PermissionRequest(agent_id=agent_id or f"{sender}@{team.name}", tool_name=tool_name,
                                description="harmless", input=args)
    team.inbox(LEAD_NAME, checked=False).deliver([Message(sender=sender,
                                                   text=dump_structured(request))])
    return request.request_id


def answers(team: Team, name: str = "mallory") -> list[PermissionResponse]:
    return [s for m in team.inbox(name, checked=False).messages()
            if isinstance(s := m.structured(), PermissionResponse)]


def refused(capsys: CaptureFixture, team: Team, rid: str, *extra: str,
            expect: str = "") -> str:
    """`approve` exits 2 with one error line; no rule, no answer, the request still pending."""
    code, out, err = run_cli(capsys, "permissions", "approve", rid[:8], "--team", team.name,
                             *extra)
    assert code == 2, (code, out, err)
    assert err.startswith("swarm: error: ") and err.count("\n") == 1, err
    assert expect in err, err
    assert "adding team rule" not in out, out
    assert team.config().allowed_rules == []
    assert answers(team) == []
    assert rid in [p.request.request_id for p in pending_permissions(team)]
    return err


def approved(capsys: CaptureFixture, team: Team, rid: str, *extra: str) -> str:
    code, out, err = run_cli(capsys, "permissions", "approve", rid[:8], "--team", team.name,
                             *extra)
    assert code == 0, (code, out, err)
    return out


# -- a tool name that is a rule, a wildcard, not a tool ------------------------------------------

@pytest.mark.parametrize("tool_name", [
    "Bash(*)", "Bash(rm:*)", "Edit(**)", "Bash *", "Bash ", "Write*", "mcp__calc__*", "mcp__calc",
    "Frobnicate", "bash", "", "Read(/etc/**)"])
def test_a_tool_name_that_is_no_tool_is_refused_once_and_always(
        capsys: CaptureFixture, forge_team: Team, tool_name: str) -> None:
    rid = forge(forge_team, tool_name, {"command": "ls"})
    refused(capsys, forge_team, rid, "--always", expect="tool")
    refused(capsys, forge_team, rid, expect="tool")
    # Denying it still works: the person clears it.
    code, _, err = run_cli(capsys, "permissions", "deny", rid[:8], "--team", forge_team.name,
                           "-r", "no")
    assert code == 0, err


def test_a_tool_the_requesters_definition_lacks_is_refused(
        capsys: CaptureFixture, forge_team: Team) -> None:
    for tool, args in (("Bash", {"command": "ls"}),
                       ("Write", {"file_path": "a.txt", "content": "x"})):
        rid = forge(forge_team, tool, args, sender="reader")  # explore: Read, Glob, Grep
        refused(capsys, forge_team, rid, "--always", expect=f"reader has no tool {tool!r}")
        refused(capsys, forge_team, rid, expect=f"reader has no tool {tool!r}")


def test_an_mcp_tool_of_a_server_the_requester_lacks_is_refused(
        capsys: CaptureFixture, forge_team: Team) -> None:
    rid = forge(forge_team, "mcp__calc__add", {"a": 1}, sender="mallory")  # mallory has no servers
    refused(capsys, forge_team, rid, expect="mallory has no tool 'mcp__calc__add'")
    rid = forge(forge_team, "mcp__other__add", {"a": 1}, sender="calcer")
    refused(capsys, forge_team, rid, expect="calcer has no tool 'mcp__other__add'")


def test_an_mcp_tool_is_approved_once_but_always_needs_a_typed_rule(
        capsys: CaptureFixture, forge_team: Team) -> None:
    rid = forge(forge_team, "mcp__calc__add", {"a": 1}, sender="calcer")
    # The only rule for it is the whole tool: not unless the person types it.
    err = refused(capsys, forge_team, rid, "--always", expect="--rule")
    assert "mcp__calc__add" in err
    out = approved(capsys, forge_team, rid, "--rule", "mcp__calc__add")
    assert out.splitlines()[0] == "adding team rule: mcp__calc__add"
    assert forge_team.config().allowed_rules == ["mcp__calc__add"]
    rid = forge(forge_team, "mcp__calc__mul", {"a": 1}, sender="calcer")
    approved(capsys, forge_team, rid)  # once: no rule
    assert forge_team.config().allowed_rules == ["mcp__calc__add"]


def test_a_typed_rule_must_be_a_rule_for_that_tool(capsys: CaptureFixture, forge_team: Team) -> None:
    rid = forge(forge_team, "Bash", {"command": "make test"})
    refused(capsys, forge_team, rid, "--rule", "Edit(**)", expect="does not cover Bash")
    refused(capsys, forge_team, rid, "--rule", "Bash(", expect="invalid rule")
    out = approved(capsys, forge_team, rid, "--rule", "Bash(make:*)")  # typed: as wide as typed
    assert "adding team rule: Bash(make:*)" in out
    assert forge_team.config().allowed_rules == ["Bash(make:*)"]


def test_a_request_naming_another_member_or_team_is_no_request(
        capsys: CaptureFixture, forge_team: Team) -> None:
    other = forge(forge_team, "Bash", {"command": "ls"}, sender="mallory",
                  agent_id=f"reader@{forge_team.name}")
    elsewhere = forge(forge_team, "Bash", {"command": "ls"}, sender="mallory",
                      agent_id="mallory@someteam")
    assert pending_permissions(forge_team) == []
    for rid in (other, elsewhere):
        code, _, err = run_cli(capsys, "permissions", "approve", rid[:8], "--team", forge_team.name,
                               "--always")
        assert code == 2 and "no pending permission request" in err, err
    assert forge_team.config().allowed_rules == []


# -- Bash: the exact command, never a blank or a wildcard -----------------------------------------

@pytest.mark.parametrize("args", [
    {"command": ""}, {"command": "   "}, {"command": "\n"}, {}, {"command": 123},
    {"command": "*"}, {"command": " * "}, {"command": "git:*"}, {"command": "rm -rf x :*"},
    {"command": ["rm", "x"]}])
def test_always_makes_no_rule_broader_than_a_bash_call(
        capsys: CaptureFixture, forge_team: Team, args: dict[str, Any]) -> None:
    rid = forge(forge_team, "Bash", args)
    refused(capsys, forge_team, rid, "--always", expect="so `always` adds none")


def test_always_adds_the_exact_command(capsys: CaptureFixture, forge_team: Team) -> None:
    rid = forge(forge_team, "Bash", {"command": "  cd src && make (all)  "})
    out = approved(capsys, forge_team, rid, "--always")
    assert out.splitlines()[0] == "adding team rule: Bash(cd src && make (all))"
    assert forge_team.config().allowed_rules == ["Bash(cd src && make (all))"]


def test_an_input_edited_by_the_person_makes_the_rule(capsys: CaptureFixture, forge_team: Team) -> None:
    rid = forge(forge_team, "Bash", {"command": "*"})
    out = approved(capsys, forge_team, rid, "--always", "--input", json.dumps({"command": "make"}))
    assert out.splitlines()[0] == "adding team rule: Bash(make)"
    assert forge_team.config().allowed_rules == ["Bash(make)"]
    (answer,) = answers(forge_team)
    assert answer.approve and answer.updated_input == {"command": "make"}


# -- Write/Edit: the one file, never a pattern ------------------------------------------------------

@pytest.mark.parametrize("args", [
    {"file_path": "", "content": "x"}, {"file_path": "  ", "content": "x"}, {"content": "x"},
    {"file_path": 7, "content": "x"}])
def test_always_makes_no_rule_for_a_write_without_a_path(
        capsys: CaptureFixture, forge_team: Team, args: dict[str, Any]) -> None:
    rid = forge(forge_team, "Write", args)
    refused(capsys, forge_team, rid, "--always", expect="so `always` adds none")


@pytest.mark.parametrize(("tool", "raw"), [
    ("Write", "**"), ("Edit", "src/*.py"), ("Write", "app/[id].tsx"), ("Edit", "a?b"),
    ("Write", "notes.txt"), ("Edit", "../outside/x.txt")])
def test_a_path_rule_names_only_the_file_called(
        capsys: CaptureFixture, forge_team: Team, work: Path, tool: str, raw: str) -> None:
    args = {"file_path": raw, "content": "x", "old_string": "a", "new_string": "b"}
    rid = forge(forge_team, tool, args)
    approved(capsys, forge_team, rid, "--always")
    (rule,) = forge_team.config().allowed_rules
    assert rule.startswith(f"{tool}(/"), rule  # absolute: the requester's file, not a pattern
    assert rules.rule_matches(rule, tool, {"file_path": raw}, work)
    for other in ("other.txt", "src/a.py", "app/x.tsx", "axb", "deep/down/notes.txt"):
        if other != raw:
            assert not rules.rule_matches(rule, tool, {"file_path": other}, work), (rule, other)
    assert not rules.rule_matches(rule, tool, {"file_path": raw}, work / "elsewhere")


# -- the lead model's AnswerPermission -------------------------------------------------------------

class Host:
    def __init__(self) -> None:
        self.notices: list[str] = []

    def notice(self, text: str) -> None:
        self.notices.append(text)


def answer_as_lead(team: Team, work: Path, **args: Any) -> str:
    tool = AnswerPermission()
    ctx = ToolContext(team=team, name=LEAD_NAME, cwd=work, host=Host())  # type: ignore[arg-type]
    return tool.run(tool.parse(args), ctx).content


@pytest.mark.parametrize(("tool_name", "args"), [
    ("Bash(*)", {"command": "ls"}), ("Bash", {"command": ""}), ("Bash", {"command": "*"}),
    ("Edit(**)", {"file_path": "x"}), ("Write", {"file_path": ""})])
def test_the_lead_models_always_makes_no_broad_rule(
        forge_team: Team, work: Path, tool_name: str, args: dict[str, Any]) -> None:
    rid = forge(forge_team, tool_name, args)
    with pytest.raises((ToolError, SwarmError)):
        answer_as_lead(forge_team, work, request_id=rid, approve=True, always=True)
    assert forge_team.config().allowed_rules == []
    assert answers(forge_team) == []


def test_the_lead_models_always_adds_the_exact_rule(forge_team: Team, work: Path) -> None:
    rid = forge(forge_team, "Bash", {"command": "make test"})
    text = answer_as_lead(forge_team, work, request_id=rid, approve=True, always=True)
    assert "Bash(make test)" in text
    assert forge_team.config().allowed_rules == ["Bash(make test)"]


# -- the interactive lead's `a`: a teammate's request, and the lead's own call -------------------

def fake_lead(team: Team, work: Path) -> Any:
    return SimpleNamespace(team=team, cwd=work, in_turn=False, interrupted=lambda: False,
                           policy=SimpleNamespace(member=SimpleNamespace(allow_rules=[])))


def test_the_terminals_a_refused_for_a_forged_request_keeps_it_answerable(
        forge_team: Team, work: Path) -> None:
    ui = TerminalUI()
    ui.lead = fake_lead(forge_team, work)
    rid = forge(forge_team, "Bash(*)", {"command": "ls"})
    (pending,) = pending_permissions(forge_team)
    ui.out = lambda line: None  # type: ignore[method-assign]
    ui.request(pending)
    assert ui.answer("a")
    assert forge_team.config().allowed_rules == []
    assert answers(forge_team) == []
    # Still the first question: the person can say n.
    assert ui.questions and ui.questions[0].pending is not None
    assert ui.answer("n forged")
    (answer,) = answers(forge_team)
    assert not answer.approve and answer.request_id == rid


@pytest.mark.parametrize(("tool", "args", "rule"), [
    ("Bash", {"command": "  "}, None), ("Bash", {"command": "*"}, None),
    ("Write", {"file_path": "", "content": "x"}, None),
    ("Write", {"file_path": "**", "content": "x"}, "Write({work}/[*][*])"),
    ("Bash", {"command": "make"}, "Bash(make)")])
def test_the_terminals_a_for_the_leads_own_call_adds_only_an_exact_rule(
        forge_team: Team, work: Path, tool: str, args: dict[str, Any], rule: str | None) -> None:
    ui = TerminalUI()
    lead = ui.lead = fake_lead(forge_team, work)
    lines: list[str] = []
    ui.out = lines.append  # type: ignore[method-assign,assignment]
    result: list[Decision | None] = []
    asking = threading.Thread(target=lambda: result.append(
        ui.ask(all_tools()[tool], args, Decision("ask", "needs approval"))))
    asking.start()
    wait_until(lambda: ui.questions, 5)
    assert ui.answer("a")
    asking.join(5)
    (decision,) = result
    assert decision is not None and decision.behavior == "allow"
    want = [] if rule is None else [rule.format(work=work)]
    assert lead.policy.member.allow_rules == want
    assert not any("Bash)" in line or line.endswith(": Bash") or line.endswith(": Write")
                   for line in lines), lines


def test_the_lead_reads_a_request_naming_another_team_as_plain_text(forge_team: Team) -> None:
    from swarm.lead.wake_policy import Watch
    from tests.support.wake_helpers import Recorder

    reporter = Recorder()
    watch = Watch(forge_team, "human", reporter)
    forge(forge_team, "Bash", {"command": "ls"}, agent_id="mallory@someteam")
    forge(forge_team, "Bash", {"command": "make"})
    watch.collect()
    assert [p.request.input for p in reporter.requests] == [{"command": "make"}]
    assert [p.request.input for p in watch.open_requests()] == [{"command": "make"}]
    assert any(line.startswith("mallory: ") for line in reporter.lines), reporter.lines


def test_a_tool_a_user_definition_disallows_is_refused(
        capsys: CaptureFixture, forge_team: Team, work: Path) -> None:
    from swarm.core.store import paths

    paths.user_agents_dir().mkdir(parents=True, exist_ok=True)
    (paths.user_agents_dir() / "nobash.md").write_text(
        "---\nname: nobash\ndescription: no shell\ndisallowed_tools: [Bash]\n---\nWork.\n")
    forge_team.add_member("careful", cwd=str(work), agent_type="nobash")
    rid = forge(forge_team, "Bash", {"command": "ls"}, sender="careful")
    refused(capsys, forge_team, rid, "--always", expect="careful has no tool 'Bash'")
    rid = forge(forge_team, "Write", {"file_path": "a.txt", "content": "x"}, sender="careful")
    approved(capsys, forge_team, rid, "--always")  # it has Write
    assert forge_team.config().allowed_rules == [f"Write({work}/a.txt)"]


def test_a_plan_sent_right_after_a_rejection_stays_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the plans waiting when the answer is given are superseded by it: the teammate's next
    plan, sent as soon as the rejection reaches it, stays in the queue (a busy machine's race)."""
    from swarm.core.records.protocol import PlanApprovalRequest, PlanApprovalResponse
    from swarm.ops.approvals import answer_plan, pending_plans

    team = Team.create("plans")
    team.add_member("p1")
    team.send(LEAD_NAME, PlanApprovalRequest(plan="plan v1"), sender="p1")
    send = team.send

    def send_then_replan(to: str, message: Any, **kw: Any) -> Any:
        sent = send(to, message, **kw)
        if isinstance(message, PlanApprovalResponse):  # p1 answers at once
            send(LEAD_NAME, PlanApprovalRequest(plan="plan v2"), sender="p1")
        return sent

    monkeypatch.setattr(team, "send", send_then_replan)
    answer_plan(team, "p1", approve=False, feedback="smaller")
    assert [p.request.plan for p in pending_plans(team)] == ["plan v2"]
