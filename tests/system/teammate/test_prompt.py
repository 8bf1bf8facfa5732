"""What a teammate's model is told, seen from the fake Messages API: where it is (cwd, platform,
git branch), the project's memory files and git status (not for `explore`), teammates who joined after it, and
what its idle notifications tell the lead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # spawned agents inherit it
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def repo(crew: Crew) -> Path:
    """A git repository (branch feature-x) with a CLAUDE.md at its root and an AGENTS.md in sub/."""
    root = crew.workdir / "repo"
    (root / "sub").mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "feature-x"], cwd=root, check=True)
    (root / "CLAUDE.md").write_text("# Conventions\nROOT-CLAUDE-MARKER: use tabs\n")
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=root, check=True)
    (root / "sub" / "AGENTS.md").write_text("SUB-AGENTS-MARKER: run make check\n")
    return root


def systems_of(fake_api: FakeAnthropic, name: str) -> list[str]:
    texts = [str(body["system"][0]["text"]) for body in fake_api.messages_requests()]
    return [t for t in texts if f"(agent id `{name}@crew`)" in t]


def test_the_prompt_says_where_it_is_and_follows_the_team(
        crew: Crew, fake_api: FakeAnthropic, repo: Path) -> None:
    paths.user_memory().write_text("USER-MEMORY-MARKER\n")
    cwd = repo / "sub"
    crew.spawn("w1", prompt="hello", model="sonnet", cwd=str(cwd))
    crew.wait_idle_notes("w1", 1)
    crew.spawn("x1", prompt="look around", model="sonnet", agent_type="explore", cwd=str(cwd))
    crew.wait_idle_notes("x1", 1)
    crew.send("w1", "anything new?")
    crew.wait_idle_notes("w1", 2)

    first, second = systems_of(fake_api, "w1")
    for needle in (f"Working directory: {cwd}", f"Platform: {sys.platform}",
                   "Git repository: yes, on branch feature-x", "ROOT-CLAUDE-MARKER: use tabs",
                   "SUB-AGENTS-MARKER: run make check", "USER-MEMORY-MARKER",
                   f"## {repo / 'CLAUDE.md'}", f"## {cwd / 'AGENTS.md'}"):
        assert needle in first, needle
    # The stable parts first: body, memory (general to specific), team, environment.
    order = ["general-purpose software engineer", "USER-MEMORY-MARKER", "ROOT-CLAUDE-MARKER",
             "SUB-AGENTS-MARKER", "# Your team", "# Environment"]
    assert [first.index(n) for n in order] == sorted(first.index(n) for n in order)
    assert "Your teammates: (none yet)" in first
    # x1 joined after w1's first call: w1's next request names it, and nothing else moved.
    assert "Your teammates:\n- `x1` (explore)" in second
    assert second.replace("Your teammates:\n- `x1` (explore)", "Your teammates: (none yet)") == first

    (explore,) = systems_of(fake_api, "x1")
    assert "read-only investigator" in explore and "- `w1` (general-purpose)" in explore
    assert f"Working directory: {cwd}" in explore
    for marker in ("ROOT-CLAUDE-MARKER", "SUB-AGENTS-MARKER", "USER-MEMORY-MARKER",
                   "# Project memory", "Git repository"):  # nor the git status (omitGitStatus)
        assert marker not in explore


def test_idle_notes_say_completed_blocked_or_failed_and_what_it_last_wrote(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    tasks = crew.team.tasks
    build = tasks.add("build it")
    fake_api.push_tool_use("TaskUpdate", {"task_id": build.id, "status": "completed",
                                          "result": "built"})
    fake_api.push_text("Built it.\n\n   All   good.  ")
    crew.spawn("w1", model="sonnet")  # no prompt: it claims the task
    (done,) = crew.wait_idle_notes("w1", 1)
    assert (done.summary, done.completed_task_id, done.completed_status) == (
        "Built it. All good.", build.id, "completed")

    # Its task waits on another member's unfinished one: it tries, is refused, and says so.
    crew.register("other")
    first = tasks.add("first", owner="other")
    later = tasks.add("later", blocked_by=[first.id], owner="w1")
    fake_api.push_tool_use("TaskUpdate", {"task_id": later.id, "status": "in_progress"})
    fake_api.push_text("Task 3 waits on task 2.")
    crew.send("w1", f"start task {later.id}")
    blocked = crew.wait_idle_notes("w1", 2)[-1]
    assert (blocked.summary, blocked.completed_task_id, blocked.completed_status) == (
        "Task 3 waits on task 2.", later.id, "blocked")
    assert blocked.idle_reason == "available"

    # No text at all: the note says what it last did instead.
    fake_api.push_tool_use("SendMessage", {"to": "team-lead", "message": "pong", "summary": "p"})
    fake_api.push_message([])
    crew.send("w1", "ping")
    quiet = crew.wait_idle_notes("w1", 3)[-1]
    assert quiet.summary == "(wrote nothing; last tool call: SendMessage to team-lead)"
    assert quiet.completed_status is None

    # The API fails while it holds a claimed task: that task failed.
    fake_api.push_error(401)
    job = tasks.add("job")
    failed = crew.wait_idle_notes("w1", 4)[-1]
    assert (failed.idle_reason, failed.completed_task_id, failed.completed_status) == (
        "failed", job.id, "failed")
    assert failed.failure_reason is not None and "401" in failed.failure_reason
