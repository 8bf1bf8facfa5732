"""`swarm lead --headless` end to end: the real CLI in a subprocess, the lead model through the
real anthropic SDK against the local fake Messages API (tests/support/fake_anthropic.py), teammates
running the offline `shell` model as real `swarm agent` processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from libtmux.server import Server

from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.approval_helpers import LIE, REAL, mallory_script, only_as_said
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import (
    child_named,
    command_group_recorded,
    process_gone,
    turn_over,
    wait_until,
)
from tests.support.lead_fixtures import lead

pytestmark = pytest.mark.usefixtures("lead_env")

# The lead's own mode: what it may grant the bypassPermissions teammates these tests spawn.
BYPASS = ("--permission-mode", "bypassPermissions")
FINAL = "All four tasks are done: one, two, three and four were echoed."
TASKS = [("TaskCreate", {"subject": s, "description": f"$ echo {s}"}) for s in ("one", "two", "three")]
TASKS.append(("TaskCreate", {"subject": "four", "description": "$ echo four", "blocked_by": ["1"]}))


def spawn_call(name: str, prompt: str = "Take tasks from the list.\n$ echo ready",
               **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("SpawnTeammate", {"name": name, "prompt": prompt,
                              "permission_mode": "bypassPermissions", **extra})


def shutdown_call(name: str) -> tuple[str, dict[str, Any]]:
    return ("SendMessage", {"to": name, "message": {"type": "shutdown_request",
                                                    "reason": "the work is done"}})


class TeamScript:
    """The lead model: plan four tasks and two teammates, note reports, shut the team down on
    the quiet-team wake, then give the final answer."""

    def __init__(self) -> None:
        self.stage = "plan"

    def __call__(self, body: dict[str, Any]) -> Scripted:
        text = last_user_text(body)
        if self.stage == "plan":
            self.stage = "wait"
            return reply("I'll split this into four tasks.",
                         [*TASKS, spawn_call("alice"), spawn_call("bob")])
        if self.stage == "wait" and "<team-quiet>" in text:
            self.stage = "shutdown"
            return reply(None, [shutdown_call("alice"), shutdown_call("bob")])
        if self.stage == "shutdown":
            self.stage = "done"
            return reply(FINAL)
        return reply("Noted.")




def turn_inputs(api: FakeAnthropic) -> list[str]:
    """The input that started each lead turn (a request whose last message is text, not only
    tool results)."""
    out = []
    for body in api.messages_requests():
        last = body["messages"][-1]["content"]
        if not any(b.get("type") == "tool_result" for b in last):
            out.append(last_user_text(body))
    return out


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def check_team_run(api: FakeAnthropic, home: Path) -> None:
    """What every full team run must show (the caller checks exit code and output)."""
    inputs = turn_inputs(api)
    assert inputs[0] == "Count to four with the team."
    assert sum("<team-quiet>" in text for text in inputs) == 1  # one quiet-team wake
    # No turn was started by idle notifications alone: each input carries a message from a
    # member, the quiet-team wake, or the person's prompt.
    assert all("<teammate-message" in t or "<team-quiet>" in t for t in inputs[1:]), inputs
    first = api.messages_requests()[0]
    names = [t["name"] for t in first["tools"]]
    assert names[:8] == ["SpawnTeammate", "SendMessage", "TaskCreate", "TaskList", "TaskGet",
                         "TaskUpdate", "TeamStatus", "StopTeammate"]
    assert {"Read", "Bash", "Edit"} <= set(names) and "AnswerPermission" not in names
    assert "team lead" in first["system"][0]["text"]
    planned = tool_results(api.messages_requests()[1])
    assert [r["content"] for r in planned[:4]] == [
        "created task #1: one", "created task #2: two", "created task #3: three",
        "created task #4: four"]
    assert all(r["content"].startswith("spawned ") for r in planned[4:]) and len(planned) == 6
    assert agent_processes(home) == []


def test_headless_team_runs_to_the_end_and_leaves_nothing(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path, server: Server) -> None:
    fake_api.fallback = TeamScript()
    before = server.cmd("list-panes", "-a", "-F", "#{pane_id}").stdout
    proc = lead(*BYPASS, "--team", "count", "Count to four with the team.", cwd=tmp_path, backend="tmux",
                env={"SWARM_TMUX_SOCKET": str(server.socket_name)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == FINAL, proc.stderr
    check_team_run(fake_api, swarm_home)
    assert not paths.team_dir("count").exists()
    assert server.cmd("list-panes", "-a", "-F", "#{pane_id}").stdout == before
    assert not server.has_session("swarm-count")
    log = proc.stderr
    assert "swarm: spawned alice (shell, bypassPermissions, tmux)" in log
    assert "alice: ran 1 command(s): ok" in log and "swarm: team count deleted" in log


def test_headless_json_reports_every_field(fake_api: FakeAnthropic, tmp_path: Path,
                                           swarm_home: Path) -> None:
    fake_api.fallback = TeamScript()
    proc = lead(*BYPASS, "--json", "Count to four with the team.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"team", "final_text", "tasks", "members", "lead", "cost_usd",
                         "duration_s"}
    assert data["team"].startswith("lead-") and not paths.team_dir(data["team"]).exists()
    assert data["final_text"] == FINAL
    tasks = {t["id"]: t for t in data["tasks"]}
    assert [tasks[i]["subject"] for i in "1234"] == ["one", "two", "three", "four"]
    assert all(t["status"] == "completed" and t["owner"] in ("alice", "bob") for t in tasks.values())
    assert tasks["4"]["blocked_by"] == ["1"] and tasks["1"]["blocks"] == ["4"]
    assert tasks["4"]["updated_at"] > tasks["1"]["updated_at"]  # it waited for its blocker
    assert all(t["result"].startswith("$ echo " + t["subject"]) for t in tasks.values())
    members = {m["name"]: m for m in data["members"]}
    assert set(members) == {"alice", "bob"}
    for member in members.values():
        assert member["state"] == "exited" and member["turns"] > 0
        assert member["usage"]["input_tokens"] == 0 and member["cost_usd"] == 0  # offline
    calls = len(fake_api.messages_requests())
    assert data["lead"]["turns"] == calls
    assert data["lead"]["usage"]["input_tokens"] == 12 * calls  # the fake's count per call
    assert data["lead"]["usage"]["output_tokens"] == 7 * calls
    assert data["lead"]["cost_usd"] > 0 and data["cost_usd"] == data["lead"]["cost_usd"]
    assert 0 < data["duration_s"] < 90
    check_team_run(fake_api, swarm_home)


def test_headless_report_writes_the_run_report_before_the_team_goes(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path) -> None:
    fake_api.fallback = TeamScript()
    page_path = tmp_path / "out" / "run.html"
    page_path.parent.mkdir()
    proc = lead(*BYPASS, "--team", "rep", "--report", "out/run.html", "Count to four with the team.",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"swarm: wrote the run report to {page_path}" in proc.stderr
    assert not paths.team_dir("rep").exists()  # written first, then the team was deleted
    page = page_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "swarm report: rep" in page
    external = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:|//)|url\(|@import|<script|<link""",
                          re.IGNORECASE)
    assert not external.search(page)  # self-contained: nothing fetched
    for member in ("team-lead", "alice", "bob"):
        assert f'<tr data-member="{member}">' in page
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td><td>(\w+)</td><td>(\w+)</td>", page)
    assert [(i, subject, status) for i, subject, _, status in rows] == [
        ("1", "one", "completed"), ("2", "two", "completed"), ("3", "three", "completed"),
        ("4", "four", "completed")]
    assert {owner for _, _, owner, _ in rows} <= {"alice", "bob"}


def test_timeout_exits_124_and_cleans_up(fake_api: FakeAnthropic, tmp_path: Path,
                                         swarm_home: Path) -> None:
    fake_api.push_message([{"type": "tool_use", "id": "toolu_1", "name": "SpawnTeammate",
                            "input": {"name": "slow", "prompt": "$ sleep 60",
                                      "permission_mode": "bypassPermissions"}}],
                          stop_reason="tool_use")
    fake_api.push_text("Waiting for slow.")
    proc = lead(*BYPASS, "--timeout", "3", "--team", "late", "Run the slow job.", cwd=tmp_path,
                env={"SWARM_SHUTDOWN_GRACE": "1"})
    assert proc.returncode == 124, proc.stderr
    assert proc.stderr.splitlines()[-1] == "swarm: error: timed out after 3s"
    assert proc.stdout.strip() == "Waiting for slow."
    assert not paths.team_dir("late").exists()
    assert agent_processes(swarm_home) == []


def test_a_message_during_a_lead_turn_reaches_its_next_model_call(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.push(lambda body: reply(None, [spawn_call("alice", "$ echo hello-from-alice")]))

    def after_spawn(body: dict[str, Any]) -> Scripted:
        # Still inside the lead's turn: hold this reply until alice's report has landed.
        box = paths.inbox(body_team(body), "team-lead")
        wait_until(lambda: box.exists() and "hello-from-alice" in box.read_text(), 60,
                   message="alice's report in the lead's mailbox")
        return reply(None, [("TaskList", {})])

    fake_api.push(after_spawn)
    fake_api.push_text("Alice said hello.")
    proc = lead(*BYPASS, "--team", "mid", "Ask alice to say hello.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    bodies = fake_api.messages_requests()
    third = bodies[2]["messages"][-1]["content"]  # the model call after TaskList ran
    assert [b["type"] for b in third] == ["tool_result", "text"]
    assert third[0]["content"] == "(no tasks)"
    assert third[1]["text"].startswith('<teammate-message from="alice"')
    assert "hello-from-alice" in third[1]["text"]
    # Delivered once: no later turn repeats it.
    assert sum("hello-from-alice" in t for t in turn_inputs(fake_api)) == 0


def body_team(body: dict[str, Any]) -> str:
    system = body["system"][0]["text"]
    return system.split("Team: `", 1)[1].split("`", 1)[0]


def test_teammates_of_a_killed_lead_leave_on_their_own(
        fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "2")
    fake_api.push(lambda body: reply(None, [
        ("TaskCreate", {"subject": "long a", "description": "$ sleep 60"}),
        ("TaskCreate", {"subject": "long b", "description": "$ sleep 60"}),
        spawn_call("alice", "Take a task."), spawn_call("bob", "Take a task.")]))
    fake_api.push_text("Waiting.")
    argv = [SWARM, "lead", "--headless", "--model", "sonnet", "--teammate-model", "shell", *BYPASS,
            "--backend", "hidden", "--team", "orph", "Run two long tasks."]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: paths.team_dir("orph").exists() and len(Team("orph").tasks.list()) == 2
                   and all(t.status == "in_progress" for t in Team("orph").tasks.list()), 30,
                   message="both long tasks in progress")
        team = Team("orph")
        config = team.config()
        assert config.lead_pid == proc.pid and config.lead_started_at is not None
        rows = json.loads(subprocess.run([SWARM, "status", "--team", "orph", "--json"],
                                         capture_output=True, text=True, timeout=30).stdout)
        assert [r["name"] for r in rows] == ["team-lead", "alice", "bob"]  # the lead's row first
        assert rows[0]["pid"] == proc.pid and rows[0]["state"] in ("idle", "working")
        pids = {n: read_state("orph", n).pid for n in ("alice", "bob")}  # type: ignore[union-attr]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # On their own (the orphan rule: lead_gone below), however busy the machine.
        wait_until(lambda: not any(is_alive(p) for p in pids.values()), 60,
                   message="teammates leave after SWARM_ORPHAN_GRACE")
    finally:
        if proc.poll() is None:
            proc.kill()
    for task in team.tasks.list():
        assert task.status == "pending" and task.owner is None
    rows = json.loads(subprocess.run([SWARM, "status", "--team", "orph", "--json"],
                                     capture_output=True, text=True, timeout=30).stdout)
    assert rows[0]["name"] == "team-lead" and rows[0]["state"] == "dead"
    for name in ("alice", "bob"):
        state = read_state("orph", name)
        assert state is not None and state.state == "exited"
        assert state.detail is not None and state.detail.startswith("lead_gone")


def test_resume_adopts_running_teammates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A scripted lead (no SDK import): on a loaded machine the resumed lead must start well
    # within SWARM_ORPHAN_GRACE for the adoption to be what is tested.
    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "8")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "SpawnTeammate", "input": {
            "name": "alice", "prompt": "$ sleep 60", "permission_mode": "bypassPermissions"}}]},
        {"text": "Waiting for alice."},
        {"text": "Resumed; alice is still on it."}]))
    argv = [SWARM, "lead", "--headless", "--model", f"scripted:{script}", "--teammate-model",
            "shell", *BYPASS, "--backend", "hidden", "--team", "adopt"]
    first = subprocess.Popen([*argv, "Run it."], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: (s := read_state("adopt", "alice")) is not None and s.state == "working",
                   30, message="alice at work")
        alice = read_state("adopt", "alice").pid  # type: ignore[union-attr]
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    killed = time.monotonic()
    # The new lead runs well past SWARM_ORPHAN_GRACE after the old one died.
    proc = subprocess.run([*argv, "--resume", "--keep", "--timeout", "10", "How is it going?"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SWARM_SHUTDOWN_GRACE": "1"})
    assert time.monotonic() - killed > 8 + 1
    assert proc.returncode == 124, proc.stderr  # alice's sleep outlasts the timeout
    assert proc.stdout.strip() == "Resumed; alice is still on it."
    state = read_state("adopt", "alice")  # she stayed under the new lead; its end stopped her
    assert state is not None and state.state == "exited"
    assert state.detail == "killed by shutdown --force"
    assert not is_alive(alice)
    conversation = Transcript(paths.agent_transcript("adopt", "team-lead")).conversation()
    assert conversation[0]["content"][-1]["text"] == "Run it."
    resumed = conversation[-2]["content"]
    assert "alice: working" in resumed[0]["text"] and resumed[-1]["text"] == "How is it going?"


def test_resume_continues_from_the_transcript(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.push_text("The answer is 42.")
    proc = lead("--team", "talk", "--keep", "What is the answer?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The answer is 42."
    assert "kept: continue with `swarm lead --resume --team talk`" in proc.stderr
    assert Team.open("talk").config().lead_pid is None  # nobody leads it now
    fake_api.push_text("Twice 42 is 84.")
    proc = lead("--resume", "--team", "talk", "And twice that?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Twice 42 is 84."
    first_of_second = fake_api.messages_requests()[1]["messages"]
    assert first_of_second[0]["content"][-1]["text"] == "What is the answer?"
    assert first_of_second[1]["content"][0]["text"] == "The answer is 42."
    assert first_of_second[2]["content"][-1]["text"] == "And twice that?"
    assert not paths.team_dir("talk").exists()  # no --keep the second time


def test_approvals_lead_answers_a_permission_request(fake_api: FakeAnthropic,
                                                     tmp_path: Path) -> None:
    fake_api.push(lambda body: reply(None, [spawn_call(
        "alice", "$ touch made-by-alice.txt", permission_mode="default")]))
    fake_api.push_text("Waiting.")

    def answer(body: dict[str, Any]) -> Scripted:
        text = last_user_text(body)
        if '<permission-request request_id="' in text:
            rid = text.split('request_id="', 1)[1].split('"', 1)[0]
            return reply(None, [("AnswerPermission", {"request_id": rid, "approve": True})])
        return reply("Alice made the file.")

    fake_api.fallback = answer
    proc = lead("--approvals", "lead", "--team", "ask", "Have alice make the file.",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "made-by-alice.txt").exists(), proc.stderr
    first = fake_api.messages_requests()[0]
    assert {"AnswerPermission", "AnswerPlan"} <= {t["name"] for t in first["tools"]}
    answered = [r for b in fake_api.messages_requests() for r in tool_results(b)
                if r["content"].startswith("approved alice's request")]
    assert len(answered) == 1 and "touch made-by-alice.txt" in answered[0]["content"]
    assert "swarm: alice asks: Bash: touch made-by-alice.txt" in proc.stderr


def test_bad_spawns_are_tool_errors_the_lead_can_read(fake_api: FakeAnthropic,
                                                      tmp_path: Path) -> None:
    fake_api.push(lambda body: reply(None, [
        spawn_call("a1", agent_type="no-such-type"),
        spawn_call("a2", model="gpt-4"),
        spawn_call("alice", "$ echo hi"),
        spawn_call("alice"),
        spawn_call("bob"),
        spawn_call("team-lead"),
    ]))
    fake_api.fallback = lambda body: reply("Noted.")
    proc = lead(*BYPASS, "--max-teammates", "1", "--team", "bad", "Spawn some.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(fake_api.messages_requests()[1])
    errors = [(r.get("is_error", False), r["content"]) for r in results]
    assert errors[0][0] and errors[0][1].startswith("unknown agent type 'no-such-type' (available:")
    assert errors[1][0] and errors[1][1].startswith("unknown model 'gpt-4': use sonnet, opus, haiku")
    assert not errors[2][0] and errors[2][1].startswith("spawned alice (model shell")
    assert errors[3][0] and errors[3][1].startswith("'alice' is already taken (")
    assert errors[4][0] and "--max-teammates 1" in errors[4][1]
    assert errors[5][0] and "'team-lead' is already taken (you)" in errors[5][1]


def test_a_spawn_that_cannot_start_is_a_tool_error(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.push(lambda body: reply(None, [spawn_call("alice")]))
    fake_api.push_text("tmux is missing here.")
    bindir = Path(SWARM).parent
    proc = lead(*BYPASS, "--team", "notmux", "Spawn one.", cwd=tmp_path, backend="tmux",
                env={"PATH": f"{bindir}:/nonexistent"})
    assert proc.returncode == 0, proc.stderr
    (result,) = tool_results(fake_api.messages_requests()[1])
    assert result.get("is_error") and "tmux" in result["content"]
    assert proc.stdout.strip() == "tmux is missing here."


def test_no_model_no_key_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    proc = subprocess.run([SWARM, "lead", "--headless", "hello"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "swarm: error: the lead needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
        " (the lead runs sonnet), pass --model PROVIDER:MODEL (openai:..., ollama:...), or"
        " --model scripted:FILE to replay a scripted lead offline"]
    assert Team.list() == []  # nothing was created


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "shell", "x"], "the offline shell model cannot lead"),
    (["--resume", "x"], "--resume needs --team T"),
    (["--resume", "--team", "nope", "x"], "no team named 'nope'"),
    (["--max-teammates", "0", "x"], "--max-teammates must be at least 1"),
    (["--teammate-model", "gpt-4", "x"], "--teammate-model: unknown model 'gpt-4'"),
    (["--model", "sonnet"], "--headless needs a PROMPT"),
    (["--report", "nodir/run.html", "x"], "--report "),
    (["--report", ".", "x"], "is a directory"),
])
def test_bad_lead_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    proc = subprocess.run([SWARM, "lead", "--headless", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("swarm: error: ") and message in line
    assert Team.list() == []


def test_scripted_lead_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "TaskCreate", "input": {"subject": "s", "description": "$ echo s"}},
                       {"name": "SpawnTeammate", "input": {
                           "name": "w", "prompt": "Take the task.", "model": "shell",
                           "permission_mode": "bypassPermissions"}}]},
        {"text": "Started."}]))
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}", *BYPASS,
                           "--backend", "hidden", "--json", "go"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [t["status"] for t in data["tasks"]] == ["completed"]
    assert data["members"][0]["name"] == "w" and data["lead"]["turns"] >= 2


def test_the_budget_stops_the_lead(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.push_tool_use("TaskList", {})
    fake_api.push_text("never asked")
    proc = lead("--max-budget-usd", "0.0000001", "--json", "Go.", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "swarm: error: the session's budget (--max-budget-usd) is spent")
    assert len(fake_api.messages_requests()) == 1  # stopped before the next model call
    assert json.loads(proc.stdout)["lead"]["cost_usd"] > 0.0000001


def test_coordinator_has_only_team_tools(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    """Team tools and typed subagents (delegation too, see DESIGN); no fork: a fork would have
    only the coordinator's team tools."""
    fake_api.push_tool_use("Agent", {"description": "read it", "prompt": "Read the code."})
    fake_api.push_text("I delegate everything.")
    proc = lead("--coordinator", "--team", "coord", "Read the code.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, second = fake_api.messages_requests()
    assert [t["name"] for t in first["tools"]] == [
        "SpawnTeammate", "SendMessage", "TaskCreate", "TaskList", "TaskGet", "TaskUpdate",
        "TeamStatus", "StopTeammate", "SetMode", "TeamDelete", "Agent", "AgentStatus", "AgentStop"]
    assert "You are a coordinator" in first["system"][0]["text"]
    (refused,) = tool_results(second)
    assert refused.get("is_error") and "a coordinator cannot fork" in refused["content"]


def test_a_message_to_an_exited_teammate_wakes_it(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    class Script:
        stage = "spawn"

        def __call__(self, body: dict[str, Any]) -> Scripted:
            text = last_user_text(body)
            if self.stage == "spawn":
                self.stage = "wait"
                return reply(None, [spawn_call("alice", "$ echo first-run")])
            if self.stage == "wait" and "first-run" in text:
                self.stage = "stop"
                return reply(None, [shutdown_call("alice")])
            if self.stage == "stop":
                self.stage = "again"
                wait_until(lambda: (s := read_state(body_team(body), "alice")) is not None
                           and s.state == "exited", 60, message="alice exited")
                return reply(None, [("SendMessage", {"to": "alice", "message": "$ echo second-run",
                                                     "summary": "one more"})])
            return reply("Noted.")

    fake_api.fallback = Script()
    proc = lead(*BYPASS, "--team", "rewake", "Run two things with alice.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    woke = [r["content"] for b in fake_api.messages_requests() for r in tool_results(b)
            if r["content"].startswith("delivered to alice (unread)")]
    assert len(woke) == 1 and "alice had exited (shut down): woke it (pid " in woke[0], (
        proc.stderr, turn_inputs(fake_api))
    assert any("second-run" in t for t in turn_inputs(fake_api))  # she ran it and reported


def test_a_headless_lead_whose_teammate_failed_a_task_exits_1(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "TaskCreate", "input": {"subject": "s", "description": "$ false"}},
                       {"name": "SpawnTeammate", "input": {
                           "name": "w", "prompt": "Take the task.", "model": "shell",
                           "permission_mode": "bypassPermissions"}}]},
        {"text": "Started."}, {"text": "It failed."}, {"text": "Still failed."}]))
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}",
                           "--backend", "hidden", "--permission-mode", "bypassPermissions",
                           "--json", "go"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [t["status"] for t in data["tasks"]] == ["failed"]
    assert "failed tasks: #1" in proc.stderr


def test_the_leads_mode_rules_and_model_pass_to_its_teammates(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("SWARM_MODEL", "shell")  # a scripted lead's teammates: $SWARM_MODEL
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "Bash", "input": {"command": "touch lead-was-here"}},
                       {"name": "SpawnTeammate", "input": {
                           "name": "w", "prompt": "Touch it.\n$ touch by-w"}}]},
        {"text": "Started."}, {"text": "Done."}]))
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}",
                           "--backend", "hidden", "--permission-mode", "acceptEdits",
                           "--allow", "Bash(touch:*)", "--deny", "Bash(rm:*)",
                           "--team", "inherits", "--keep", "go"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "lead-was-here").exists()  # its own Bash, allowed by its rule
    assert (tmp_path / "by-w").exists()  # the teammate's, allowed by the rule it inherited
    member = Team.open("inherits").member("w")
    assert member.permission_mode == "acceptEdits" and member.model == "shell"
    assert member.allow_rules == ["Bash(touch:*)"] and member.deny_rules == ["Bash(rm:*)"]
    state = read_state("inherits", "w")
    assert state is not None and state.mode == "acceptEdits"
    Team.delete("inherits", force=True)


def test_a_headless_lead_in_default_mode_cannot_run_its_own_bash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "Bash", "input": {"command": "touch nope"}}]},
        {"text": "Could not."}]))
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}",
                           "--backend", "hidden", "go"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "nope").exists()


@pytest.mark.usefixtures("lead_env")
@pytest.mark.parametrize("teammates", [1, 0])
def test_a_killed_leads_bash_command_is_ended(
    fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teammates: int,
) -> None:
    """SIGKILL leaves the lead no say: its teammates end its command as they leave (orphans),
    and without teammates the first `swarm status` that sees the lead dead does."""
    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "2")
    spawns = [("SpawnTeammate", {"name": "alice", "prompt": "$ echo ready",
                                 "permission_mode": "bypassPermissions"})] * teammates
    fake_api.push(lambda body: reply(None, [*spawns, ("Bash", {"command": "sleep 300; true"})]))
    fake_api.push_text("Done.")
    argv = [SWARM, "lead", "--headless", "--model", "sonnet", "--teammate-model", "shell",
            "--permission-mode", "bypassPermissions", "--backend", "hidden", "--team", "kl",
            "Run a long command."]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        sleeper = child_named(proc.pid, "sleep", 60, message="the lead's Bash command")
        if teammates:
            wait_until(lambda: turn_over("kl", "alice"), 30, message="alice's turn over")
        command_group_recorded("kl", LEAD_NAME, sleeper)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        if not teammates:
            status = run_swarm("status", "--team", "kl", "--json")
            assert status.returncode == 0, status.stderr
        wait_until(lambda: process_gone(sleeper), 60,  # `sleep 300`: ended, not finished
                   message="the killed lead's command ends")
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        for stray in agent_processes(paths.home()):
            stop_tree(stray.pid)


@pytest.mark.usefixtures("lead_env")
def test_the_headless_asks_line_shows_the_real_input(tmp_path: Path) -> None:
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "SpawnTeammate", "input": {
            "name": "mallory", "prompt": "go",
            "model": mallory_script(tmp_path / "mallory.json", "liar")}}]},
        {"text": "Spawned."}]))
    proc = lead("--team", "liar", "go", cwd=tmp_path, env={"SWARM_PERMISSION_TIMEOUT": "2"},
                model=f"scripted:{script}")
    assert proc.returncode == 0, proc.stderr
    asks = [line for line in proc.stderr.splitlines() if " asks: " in line]
    assert len(asks) == 1, proc.stderr
    only_as_said(asks[0])
    assert asks[0].split(" asks: ", 1)[1].startswith(f"Bash: {REAL}")
    settled = [line for line in proc.stderr.splitlines() if "mallory's request (" in line]
    assert settled and all(f"Bash: {REAL}" in line for line in settled), proc.stderr


@pytest.mark.usefixtures("lead_env")
def test_the_lead_model_is_shown_the_real_input(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    model = mallory_script(tmp_path / "mallory.json", "liar")
    fake_api.push(lambda body: reply(None, [("SpawnTeammate", {
        "name": "mallory", "prompt": "go", "model": model})]))
    fake_api.push_text("Waiting.")
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> Scripted:
        text = last_user_text(body)
        if '<permission-request request_id="' in text:
            seen.append(text)
            rid = text.split('request_id="', 1)[1].split('"', 1)[0]
            return reply(None, [("AnswerPermission", {"request_id": rid, "approve": False,
                                                      "feedback": "no"})])
        return reply("Done.")

    fake_api.fallback = answer
    proc = lead("--approvals", "lead", "--team", "liar", "go", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (text,) = seen
    block = text.split("<permission-request", 1)[1].split("</permission-request>", 1)[0]
    assert f"Bash: {REAL}" in block.splitlines()[1], block  # the first line under the tag
    assert "ls -la" not in block.replace(f'the requester\'s own description: "{LIE}"', "")
    asks = [line for line in proc.stderr.splitlines() if "mallory asks: " in line]
    assert len(asks) == 1 and f"asks: Bash: {REAL}" in asks[0], proc.stderr

