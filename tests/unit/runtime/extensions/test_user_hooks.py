"""Hooks: settings (user + project, validation), and running them (stdin JSON, exit codes,
timeouts, a hook that hangs or cannot start). Real `bash` processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from swarm.core.records.team_config import Member
from swarm.core.store import paths
from swarm.runtime.extensions.loader import checkout_of
from swarm.runtime.extensions.user_hooks import Hook, HookRunner, load_hooks, parse_hooks

# These tests are about what project configuration does: the project is trusted.
pytestmark = pytest.mark.usefixtures("trust_projects")


def write_settings(path: Path, hooks: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def runner(tmp_path: Path, hooks: list[Hook], warnings: list[str] | None = None,
           env: dict[str, str] | None = None) -> HookRunner:
    sink = warnings if warnings is not None else []
    return HookRunner(hooks, team="crew", agent_id="bob@crew", cwd=tmp_path,
                      env={**os.environ, **(env or {})}, warn=sink.append)


def hook(event: str, command: str, matcher: str | None = None, timeout: float = 60.0) -> Hook:
    return Hook(event=event, command=command, matcher=matcher, timeout=timeout, source="test")


# -- settings ----------------------------------------------------------------------------------
def test_user_and_project_hooks_both_apply_user_first(project: Path) -> None:
    write_settings(paths.user_settings(), {"PreToolUse": [{"command": "echo user"}]})
    write_settings(project / ".swarm" / "settings.json",
                   {"PreToolUse": [{"matcher": "Bash", "command": "echo project", "timeout": 5}]})
    hooks, problems = load_hooks(project / "src" / "deep")
    assert problems == []
    assert [(h.command, h.matcher, h.timeout) for h in hooks] == [
        ("echo user", None, 60.0), ("echo project", "Bash", 5.0)]
    assert hooks[1].source == str(project / ".swarm" / "settings.json")


def test_project_settings_are_not_looked_for_above_the_git_root(project: Path) -> None:
    write_settings(project.parent / ".swarm" / "settings.json", {"SessionEnd": [{"command": "x"}]})
    assert load_hooks(project / "src") == ([], [])


def test_malformed_json_is_one_problem_naming_the_file_and_the_other_file_still_applies(
        project: Path) -> None:
    paths.user_settings().parent.mkdir(parents=True, exist_ok=True)
    paths.user_settings().write_text('{"hooks": {"PreToolUse": [')
    write_settings(project / ".swarm" / "settings.json", {"SessionEnd": [{"command": "true"}]})
    hooks, problems = load_hooks(project)
    assert [h.command for h in hooks] == ["true"]
    assert len(problems) == 1
    assert str(paths.user_settings()) in str(problems[0]) and "not valid JSON" in str(problems[0])


def test_each_bad_field_is_one_problem_and_the_valid_rest_loads(tmp_path: Path) -> None:
    data = {"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "command": "ok-1"},
            {"matcher": "([", "command": "bad-regex"},
            {"command": "bad-timeout", "timeout": -1},
            {"command": ""},
            {"command": "x", "colour": "red"},
            "not an object",
        ],
        "PreToolUs": [{"command": "typo"}],
        "SessionEnd": {"command": "not a list"},
        "TaskCompleted": [{"command": "ok-2"}],
    }}
    hooks, problems = parse_hooks(data, "/s.json")
    assert [h.command for h in hooks] == ["ok-1", "ok-2"]
    fields = [p.field for p in problems]
    assert fields == ["hooks.PreToolUse[1].matcher", "hooks.PreToolUse[2].timeout",
                      "hooks.PreToolUse[3].command", "hooks.PreToolUse[4].colour",
                      "hooks.PreToolUse[5]", "hooks.PreToolUs", "hooks.SessionEnd"]
    assert all(p.path == "/s.json" for p in problems)
    assert "unknown event" in str(problems[5]) and "PreToolUse" in str(problems[5])


def test_claude_code_nested_spelling_is_read_the_same(tmp_path: Path) -> None:
    data = {"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": "fmt", "timeout": 7}, {"type": "command", "command": "lint"}]}]}}
    hooks, problems = parse_hooks(data, "s")
    assert problems == []
    assert [(h.command, h.matcher, h.timeout) for h in hooks] == [
        ("fmt", "Edit|Write", 7.0), ("lint", "Edit|Write", 60.0)]


def test_hooks_must_be_an_object(tmp_path: Path) -> None:
    hooks, problems = parse_hooks({"hooks": ["x"]}, "s")
    assert hooks == [] and [p.field for p in problems] == ["hooks"]


def test_matcher_is_a_regex_on_the_whole_tool_name() -> None:
    assert hook("PreToolUse", "x", "Bash").matches("Bash")
    assert not hook("PreToolUse", "x", "Bash").matches("BashOutput")
    assert hook("PreToolUse", "x", "Edit|Write").matches("Write")
    assert hook("PreToolUse", "x", "mcp__calc__.*").matches("mcp__calc__add")
    assert hook("PreToolUse", "x", None).matches("Anything")
    assert hook("TaskCompleted", "x", "Bash").matches(None)  # not a tool event: no matcher


# -- running -----------------------------------------------------------------------------------
def test_the_event_json_arrives_on_stdin_in_the_agents_cwd_and_environment(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    env_out = tmp_path / "env.txt"
    run = runner(tmp_path, [hook("PostToolUse", f"cat > {out}; pwd > {env_out}; "
                                 f"echo $SWARM_AGENT_ID >> {env_out}")],
                 env={"SWARM_AGENT_ID": "bob@crew"})
    result = run.run("PostToolUse", tool_name="Bash", tool_input={"command": "ls"},
                     tool_result={"content": "a\nb", "is_error": False})
    assert not result.blocked and result.ran == 1
    assert json.loads(out.read_text()) == {
        "event": "PostToolUse", "team": "crew", "agent_id": "bob@crew", "cwd": str(tmp_path),
        "tool_name": "Bash", "tool_input": {"command": "ls"},
        "tool_result": {"content": "a\nb", "is_error": False}}
    assert env_out.read_text().split() == [str(tmp_path), "bob@crew"]


def test_exit_2_blocks_with_stderr_as_the_reason_and_stops_the_rest(tmp_path: Path) -> None:
    marker = tmp_path / "second-ran"
    run = runner(tmp_path, [hook("PreToolUse", "echo 'no rm here' >&2; exit 2"),
                            hook("PreToolUse", f"touch {marker}")])
    result = run.run("PreToolUse", tool_name="Bash", tool_input={"command": "rm x"})
    assert result.blocked and result.reason == "no rm here"
    assert not marker.exists()


def test_exit_2_without_stderr_still_gives_a_reason(tmp_path: Path) -> None:
    result = runner(tmp_path, [hook("TaskCompleted", "exit 2")]).run("TaskCompleted", task={})
    assert result.blocked and "TaskCompleted hook" in result.reason


def test_only_matching_hooks_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    run = runner(tmp_path, [hook("PreToolUse", f"touch {marker}", matcher="Write")])
    assert run.run("PreToolUse", tool_name="Bash", tool_input={}).ran == 0
    assert not marker.exists()
    assert not run.has("PostToolUse") and run.has("PreToolUse")


@pytest.mark.parametrize(("command", "expected"), [
    ("echo oops >&2; exit 1", "exited 1: oops"),
    ("no-such-command-xyz", "command not found"),
    ("kill -9 $$", "killed by signal 9"),
])
def test_other_exits_are_a_warning_and_go_on(tmp_path: Path, command: str, expected: str) -> None:
    warnings: list[str] = []
    result = runner(tmp_path, [hook("SessionEnd", command)], warnings).run("SessionEnd")
    assert not result.blocked
    assert len(warnings) == 1 and expected in warnings[0] and "going on" in warnings[0]
    assert "SessionEnd hook" in warnings[0] and "(test)" in warnings[0]


def test_a_hook_that_cannot_start_is_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    run = HookRunner([hook("SessionEnd", "true")], team="t", agent_id="a@t",
                     cwd=tmp_path / "gone", env=dict(os.environ), warn=warnings.append)
    assert not run.run("SessionEnd").blocked
    assert len(warnings) == 1 and "could not start" in warnings[0]


def test_a_hook_leaving_a_child_on_its_output_or_ignoring_stdin_does_not_block(
        tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # exits at once, but its background child keeps stdout/stderr open for 300 s; and the
    # payload (1 MB) is far larger than a pipe buffer, never read
    command = f"(sleep 300 & echo $! > {pid_file}); exit 0"
    start = time.monotonic()
    result = runner(tmp_path, [hook("PostToolUse", command)]).run(
        "PostToolUse", tool_name="Read", tool_input={}, tool_result="x" * 1_000_000)
    assert time.monotonic() - start < 10 and not result.blocked
    pid = int(pid_file.read_text())
    psutil.Process(pid).kill()


def test_an_interrupt_can_kill_the_running_hook(tmp_path: Path) -> None:
    """The agent tracks the hook process (like a Bash command) so SIGINT can end it."""
    seen: list[subprocess.Popen[bytes] | None] = []
    run = runner(tmp_path, [hook("PreToolUse", "exit 0")])
    run.on_process = seen.append
    run.run("PreToolUse", tool_name="Bash", tool_input={})
    assert len(seen) == 2 and seen[0] is not None and seen[1] is None


def test_a_worktree_teammate_finds_settings_not_committed_in_its_checkout(tmp_path: Path) -> None:
    repo, tree = tmp_path / "repo", tmp_path / "tree"
    (repo / "sub" / ".git").parent.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tree / "sub").mkdir(parents=True)
    (tree / ".git").write_text("gitdir: elsewhere")  # a worktree's .git is a file
    write_settings(repo / ".swarm" / "settings.json", {"SessionEnd": [{"command": "true"}]})
    member = Member(agent_id="a@t", name="a", cwd=str(tree / "sub"), worktree_path=str(tree),
                    worktree_repo=str(repo))
    origin = checkout_of(member)
    assert origin == repo / "sub"
    assert load_hooks(tree / "sub") == ([], [])
    hooks, problems = load_hooks(tree / "sub", origin)
    assert [h.command for h in hooks] == ["true"] and problems == []
    assert checkout_of(Member(agent_id="b@t", name="b", cwd=str(tmp_path))) is None
