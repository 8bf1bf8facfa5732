"""Workspace trust covers the scripts a project's configuration runs: a hook or
MCP server command that names a file of the checkout (`./scripts/hook.sh`, `bash
.swarm/hooks/x.sh`, `python3 tools/server.py`, `$CLAUDE_PROJECT_DIR/.claude/hooks/y.sh`) puts that
file's content in the digest, so editing it after `swarm trust` makes the project untrusted
again. Files outside the project (`/bin/sh`, `../elsewhere.sh`) are not the project's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swarm.core.trust.workspace import decide, find_project_config, record
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import run_swarm
from tests.support.git_helpers import init_repo


def _write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(0o755)
    return path


def _spawn(cwd: Path, name: str) -> subprocess.CompletedProcess[str]:
    proc = run_swarm("spawn", name, "--model", "shell", "--backend", "hidden",
                     "--permission-mode", "bypassPermissions", "--prompt", "$ echo hello",
                     cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_editing_a_trusted_hook_script_untrusts_the_project(tmp_path: Path, crew: Crew) -> None:
    marker = tmp_path / "hook-ran"
    script = f"#!/bin/sh\ncat > /dev/null\necho \"v1 $SWARM_AGENT_ID\" >> {marker}\n"
    repo = init_repo(tmp_path / "repo", {
        ".swarm/settings.json": json.dumps(
            {"hooks": {"PreToolUse": [{"command": "./scripts/hook.sh"}]}}),
        "scripts/hook.sh": script})
    (repo / "scripts/hook.sh").chmod(0o755)

    trusted = run_swarm("trust", "--yes", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    assert "scripts/hook.sh" in trusted.stdout  # shown as part of what is trusted
    assert error_lines(_spawn(repo, "w1")) == []
    crew.wait_idle_notes("w1", 1, timeout=60)
    assert f"v1 w1@{crew.team.name}" in marker.read_text()

    # The script changes, the settings file does not: untrusted again.
    _write(repo / "scripts/hook.sh", script.replace("v1", "v2"), executable=True)
    listed = json.loads(run_swarm("trust", "--list", "--json").stdout)
    assert [(r["root"], r["state"]) for r in listed] == [(str(repo), "changed")]
    proc = _spawn(repo, "w2")
    (line,) = [x for x in error_lines(proc) if "trust.json" not in x]
    assert "project configuration ignored (changed since you trusted it)" in line
    assert "scripts/hook.sh" in line
    crew.wait_idle_notes("w2", 1, timeout=60)
    assert "v2" not in marker.read_text()  # the edited script did not run

    # Trusted again, the new content runs.
    assert run_swarm("trust", "--yes", cwd=repo).returncode == 0
    assert error_lines(_spawn(repo, "w3")) == []
    crew.wait_idle_notes("w3", 1, timeout=60)
    assert f"v2 w3@{crew.team.name}" in marker.read_text()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.mark.parametrize("config, script", [
    (".swarm/settings.json", ".swarm/hooks/x.sh"),
    (".claude/settings.json", ".claude/hooks/y.sh"),
    (".mcp.json", "tools/server.py"),
    (".swarm/agents/helper.md", "tools/lint.sh"),
])
def test_each_kind_of_command_puts_its_script_in_the_digest(
        repo: Path, config: str, script: str) -> None:
    texts = {
        ".swarm/settings.json": json.dumps({"hooks": {"PostToolUse": [
            {"matcher": "Write", "command": f"bash {script} --quiet"}]}}),
        ".claude/settings.json": json.dumps({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": f"\"$CLAUDE_PROJECT_DIR\"/{script}"}]}]}}),
        ".mcp.json": json.dumps({"mcpServers": {"tools": {"command": "python3",
                                                          "args": ["-u", script]}}}),
        ".swarm/agents/helper.md": ("---\nname: helper\nhooks:\n  PreToolUse:\n"
                                    f"    - command: \"sh {script}\"\n---\nHelp.\n"),
    }
    _write(repo / config, texts[config])
    _write(repo / script, "echo one\n")
    found = find_project_config(repo)
    assert sorted(f.relative for f in found.files) == sorted([config, script])
    record(found)
    assert decide(repo).trusted
    _write(repo / script, "echo two\n")
    decision = decide(repo)
    assert not decision.trusted and decision.reason == "changed since you trusted it"
    assert script in (decision.notice() or "")
    os.unlink(repo / script)  # a script removed is a change too
    assert not decide(repo).trusted


def test_commands_outside_the_project_and_plain_words_add_nothing(repo: Path,
                                                                  tmp_path: Path) -> None:
    _write(tmp_path / "elsewhere.sh", "echo outside\n")
    _write(repo / "echo", "a file named like a word\n")
    _write(repo / ".swarm/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"command": "/bin/sh -c 'echo hi'"},
        {"command": f"sh ../elsewhere.sh; sh {tmp_path}/elsewhere.sh"},
        {"command": "echo scripts/missing.sh"}]}}))
    found = find_project_config(repo)
    assert [f.relative for f in found.files] == [".swarm/settings.json"]
    record(found)
    _write(tmp_path / "elsewhere.sh", "echo changed outside\n")
    assert decide(repo).trusted  # not the project's: its change does not matter here


def test_a_symlinked_script_is_digested_through_its_link(repo: Path, tmp_path: Path) -> None:
    target = _write(tmp_path / "real.sh", "echo one\n")
    (repo / "scripts").mkdir()
    (repo / "scripts/hook.sh").symlink_to(target)
    _write(repo / ".swarm/settings.json",
           json.dumps({"hooks": {"Stop": [{"command": "scripts/hook.sh"}]}}))
    found = find_project_config(repo)
    assert "scripts/hook.sh" in [f.relative for f in found.files]
    record(found)
    target.write_text("echo two\n")  # what the project's path runs changed
    assert not decide(repo).trusted
