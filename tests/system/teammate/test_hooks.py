"""Hooks in real `swarm agent` processes (offline `shell` and `scripted:` models): PreToolUse
blocks a call, PostToolUse sees the result, TaskCompleted keeps a task in progress, TeammateIdle
hands work back, TaskCreated refuses a task, SessionEnd runs at exit; bad settings are a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.support.git_helpers import init_repo
from tests.support.helpers import wait_until


def settings(hooks: dict[str, Any], path: Path | None = None) -> Path:
    target = path or paths.user_settings()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"hooks": hooks}))
    return target


def tool_results(crew: Crew, name: str) -> list[dict[str, Any]]:
    return [b for e in crew.transcript(name) if e["kind"] == "message"
            for b in e["message"]["content"] if b.get("type") == "tool_result"]


def reports(crew: Crew, name: str) -> list[str]:
    return [m.text for m in crew.lead_messages() if m.sender == name and m.structured() is None]


@pytest.mark.usefixtures("trust_projects")  # the hook is the project's
def test_a_pre_tool_use_hook_blocks_a_shell_teammates_rm_with_its_message(crew: Crew) -> None:
    victim = crew.workdir / "victim.txt"
    victim.write_text("keep me")
    # project settings (the teammate's cwd is a git repository): found from its cwd
    (crew.workdir / ".git").mkdir()
    settings({"PreToolUse": [{"matcher": "Bash", "command": (
        "grep -q '\"command\": \"rm ' && { echo 'rm is not allowed here: use git rm' >&2;"
        " exit 2; }; exit 0")}]}, crew.workdir / ".swarm" / "settings.json")
    crew.spawn("bob", prompt="$ rm victim.txt\n$ echo still-running")
    crew.wait_idle_notes("bob", 1)
    assert victim.read_text() == "keep me"
    rm_result, echo_result = tool_results(crew, "bob")[:2]
    assert rm_result["is_error"] is True
    assert rm_result["content"] == ("permission denied: blocked by a PreToolUse hook: "
                                    "rm is not allowed here: use git rm")
    assert echo_result["content"].strip() == "still-running" and not echo_result.get("is_error")
    [report] = reports(crew, "bob")
    assert "rm is not allowed here: use git rm" in report


def test_a_post_tool_use_hook_gets_the_tools_json_and_session_end_runs_at_exit(
        crew: Crew, tmp_path: Path) -> None:
    seen, ended = tmp_path / "post.json", tmp_path / "end.json"
    settings({"PostToolUse": [{"matcher": "Bash", "command": f"cat > {seen}"}],
              "SessionEnd": [{"command": f"cat > {ended}"}]})
    crew.spawn("bob", prompt="$ echo hello-hooks")
    crew.wait_idle_notes("bob", 1)
    payload = json.loads(seen.read_text())
    assert payload == {
        "event": "PostToolUse", "team": crew.team.name, "agent_id": f"bob@{crew.team.name}",
        "cwd": str(crew.workdir), "tool_name": "Bash",
        "tool_input": {"command": "echo hello-hooks"},
        "tool_result": {"content": "hello-hooks\n", "is_error": False}}
    assert not ended.exists()
    assert crew.cli("shutdown", "bob", "--timeout", "20").returncode == 0
    assert crew.exit_code("bob") == 0
    end = json.loads(ended.read_text())
    assert (end["event"], end["agent_id"], end["reason"]) == (
        "SessionEnd", f"bob@{crew.team.name}", "shut down")


def test_a_task_completed_hook_keeps_the_task_in_progress_once_then_lets_it_complete(
        crew: Crew, tmp_path: Path) -> None:
    marker, statuses = tmp_path / "tests-pass", tmp_path / "statuses"
    # Fails until the marker exists (it creates it on the first refusal); records the task's
    # status on disk each time it runs (the hook runs with the teammate's environment).
    settings({"TaskCompleted": [{"command": (
        f"{SWARM} tasks show 1 --json | grep -o '\"status\": \"[a-z_]*\"' >> {statuses}; "
        f"test -f {marker} && exit 0; touch {marker}; "
        "echo 'the tests fail: fix them first' >&2; exit 2")}]})
    task = crew.team.tasks.add("build", description="$ echo building")
    crew.spawn("bob")
    wait_until(lambda: crew.team.tasks.get(task.id).status == "completed", 30,
               message=f"task completed (log: {crew.log('bob')[-800:]})")
    notes = crew.wait_idle_notes("bob", 1)
    assert statuses.read_text().split("\n")[:2] == ['"status": "in_progress"'] * 2
    assert crew.team.tasks.get(task.id).owner == "bob"
    updates = [r for r in tool_results(crew, "bob") if "task #1" in r["content"]]
    assert updates[0]["is_error"] is True
    assert "NOT completed" in updates[0]["content"]
    assert "the tests fail: fix them first" in updates[0]["content"]
    assert updates[1]["content"].startswith("task #1 is completed")
    fed_back = [texts for texts in crew.inputs("bob") if "hook-feedback" in texts[0]]
    assert len(fed_back) == 1 and 'event="TaskCompleted"' in fed_back[0][0]
    assert '<task-assignment id="1"' in fed_back[0][1]
    assert [(n.completed_task_id, n.completed_status) for n in notes] == [("1", "completed")]


def test_a_teammate_idle_hook_hands_work_back_instead_of_going_idle(
        crew: Crew, tmp_path: Path) -> None:
    marker = tmp_path / "linted"
    settings({"TeammateIdle": [{"command": (
        f"test -f {marker} && exit 0; touch {marker}; "
        "printf 'Not done yet, also run:\\n$ echo second-round\\n' >&2; exit 2")}]})
    crew.spawn("bob", prompt="$ echo first-round")
    notes = crew.wait_idle_notes("bob", 1)
    assert len(notes) == 1
    sent = reports(crew, "bob")
    assert len(sent) == 2 and "first-round" in sent[0] and "second-round" in sent[1]


def test_a_task_created_hook_refuses_a_task(crew: Crew, tmp_path: Path) -> None:
    settings({"TaskCreated": [{"command": (
        "grep -q '\"subject\": \"vague' && { echo 'say what done means' >&2; exit 2; }; exit 0")}]})
    script = crew.workdir / "script.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "TaskCreate", "input": {"subject": "vague stuff"}},
                       {"name": "TaskCreate", "input": {"subject": "ship v2: tests green"}}]},
        {"text": "done"}]))
    crew.spawn("planner", prompt="plan", model="scripted:script.json")
    crew.wait_idle_notes("planner", 1)
    refused, created = tool_results(crew, "planner")
    assert refused["is_error"] is True
    assert refused["content"] == ("task not created: a TaskCreated hook refused it: "
                                  "say what done means")
    assert created["content"] == "created task #1: ship v2: tests green"
    assert [t.subject for t in crew.team.tasks.list()] == ["ship v2: tests green"]


@pytest.mark.usefixtures("trust_projects")  # the hooks are the project's
def test_bad_settings_are_one_warning_each_and_the_agent_runs_on(crew: Crew) -> None:
    paths.user_settings().parent.mkdir(parents=True, exist_ok=True)
    paths.user_settings().write_text('{"hooks": {"PreToolUse": [}')
    (crew.workdir / ".git").mkdir()
    settings({"PostToolUs": [{"command": "true"}],
              "SessionEnd": [{"command": "no-such-hook-command-xyz"}]},
             crew.workdir / ".swarm" / "settings.json")
    crew.spawn("bob", prompt="$ echo alive")
    crew.wait_idle_notes("bob", 1)
    assert "alive" in reports(crew, "bob")[0]
    log = crew.log("bob")
    assert log.count(f"warning: {paths.user_settings()}: not valid JSON") == 1
    assert log.count("field 'hooks.PostToolUs': unknown event") == 1
    assert crew.cli("shutdown", "bob", "--timeout", "20").returncode == 0
    assert crew.exit_code("bob") == 0
    assert "SessionEnd hook `no-such-hook-command-xyz`" in crew.log("bob")
    assert "command not found" in crew.log("bob")


@pytest.mark.usefixtures("trust_projects")  # the hooks are the project's
def test_a_teammate_in_a_worktree_gets_the_projects_uncommitted_hooks(
        crew: Crew, tmp_path: Path) -> None:
    repo = init_repo(crew.workdir / "repo", {"a.txt": "one\n"})
    settings({"PreToolUse": [{"matcher": "Bash", "command": "echo 'not in a worktree' >&2; exit 2"}]},
             repo / ".swarm" / "settings.json")  # not committed: absent from the worktree
    crew.spawn("bob", prompt="$ echo hi", cwd=str(repo), worktree=True)
    crew.wait_idle_notes("bob", 1)
    [blocked] = tool_results(crew, "bob")[:1]
    assert blocked["content"] == "permission denied: blocked by a PreToolUse hook: not in a worktree"


def test_a_definitions_own_hooks_run_for_its_agents_only(crew: Crew, tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "watched.md").write_text(
        "---\nhooks:\n  PostToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n"
        f"          command: cat >> {seen}; echo >> {seen}\n---\nYou run commands.\n")
    crew.spawn("plain", prompt="$ echo from-plain")
    crew.spawn("watched", prompt="$ echo from-watched", agent_type="watched")
    crew.wait_idle_notes("plain", 1)
    crew.wait_idle_notes("watched", 1)
    events = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [(e["agent_id"], e["tool_input"]["command"]) for e in events] == [
        (f"watched@{crew.team.name}", "echo from-watched")]
