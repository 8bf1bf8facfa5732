"""Workspace trust (docs/design/trust.md): a cloned repository's hooks, MCP servers and agent
definitions run only once the project is trusted, and trust is bound to a digest of those files.

The end-to-end tests drive a real git clone through `swarm spawn` (real `swarm agent` processes
on the hidden backend, `shell` model) and `swarm lead --headless` (a `scripted:` lead): the
project's hook appends its JSON payload to a marker file, its MCP server's command touches a
marker before it execs a real stdio server, and its `general-purpose` definition asks for
bypassPermissions and that server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.trust.workspace import decide, find_project_config, read_store, record
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.git_helpers import commit_all, git, init_repo
from tests.support.mcp_fixtures import write_server

DEFINITION = ("---\npermission_mode: bypassPermissions\nmcp_servers: [probe]\n---\n"
              "The project's own general-purpose agent.\n")
NAMES = (".mcp.json", ".swarm/agents/general-purpose.md", ".swarm/settings.json")


class Project:
    """An origin repository with project configuration, and a clone of it (the teammates' cwd)."""

    def __init__(self, base: Path, clone: Path) -> None:
        self.base = base
        self.hook_log = base / "hook-ran.jsonl"  # each PreToolUse payload, one per line
        self.server_ran = base / "server-ran"
        server = write_server(base)
        self.files = {
            ".swarm/settings.json": self.hooks(self.hook_log),
            ".mcp.json": json.dumps({"mcpServers": {"probe": {"command": "sh", "args": [
                "-c", f"touch {self.server_ran}; exec {sys.executable} {server}"]}}}),
            ".swarm/agents/general-purpose.md": DEFINITION,
            "README.md": "a project\n",
        }
        self.origin = init_repo(base / "origin", self.files)
        self.clone = clone
        subprocess.run(["git", "clone", "-q", str(self.origin), str(clone)], check=True)

    @staticmethod
    def hooks(log: Path) -> str:
        return json.dumps({"hooks": {"PreToolUse": [{"command": f"cat >> {log}; echo >> {log}"}]}})

    def hook_agents(self, log: Path | None = None) -> list[str]:
        """The agent ids whose PreToolUse hook ran (from the payloads the hook wrote), sorted.
        Read as a stream of JSON objects, not lines: two agents' hooks may append at once, and
        each payload is one append but its newline another (`cat >> log; echo >> log`)."""
        try:
            text = (log or self.hook_log).read_text()
        except FileNotFoundError:
            return []
        decoder, agents = json.JSONDecoder(), set()
        text = text.strip()
        at = 0
        while at < len(text):
            payload, at = decoder.raw_decode(text, at)
            agents.add(payload["agent_id"])
            while at < len(text) and text[at].isspace():
                at += 1
        return sorted(agents)

    def pull_a_changed_hook(self, log: Path) -> None:
        (self.origin / ".swarm" / "settings.json").write_text(self.hooks(log))
        commit_all(self.origin, "change the hook")
        git(self.clone, "pull", "-q")


def spawn(project: Project, name: str, *extra: str,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = run_swarm("spawn", name, "--model", "shell", "--backend", "hidden",
                     "--prompt", "$ echo hello", *extra, cwd=project.clone, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


def mode(crew: Crew, name: str) -> str:
    return crew.team.member(name).permission_mode


def assert_ignored_line(proc: subprocess.CompletedProcess[str], project: Project) -> None:
    (line,) = [line for line in error_lines(proc) if "trust.json" not in line]
    assert line.startswith("swarm: warning: ")
    assert all(name in line for name in NAMES), line
    assert "swarm trust" in line and str(project.clone) in line


# -- the lead ------------------------------------------------------------------------------------
def run_lead(project: Project, team: str, turns: list[dict[str, Any]], *extra: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = project.base / f"{team}.json"
    script.write_text(json.dumps(turns))
    argv = [SWARM, "lead", "--headless", "--model", f"scripted:{script}", "--teammate-model",
            "shell", "--backend", "hidden", "--team", team, "--keep", *extra, "go"]
    return subprocess.run(argv, capture_output=True, text=True, cwd=project.clone, timeout=120,
                          env={**os.environ, **(env or {})})


def lead_turns(prompt: str) -> list[dict[str, Any]]:
    return [{"tool_uses": [{"name": "TaskList", "input": {}},
                           {"name": "SpawnTeammate", "input": {"name": "w", "prompt": prompt}}]},
            {"text": "Started."}]


# -- the parts, without processes ----------------------------------------------------------------
def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def test_the_digest_changes_with_a_new_a_changed_and_a_removed_file(repo: Path) -> None:
    assert find_project_config(repo).files == ()
    write(repo / ".mcp.json", '{"mcpServers": {}}')
    first = find_project_config(repo / "src")
    assert (first.root, [f.relative for f in first.files]) == (repo, [".mcp.json"])
    digests = {first.digest()}
    for step in (lambda: write(repo / ".claude/agents/x.md", "hi"),       # new (counted too)
                 lambda: write(repo / ".claude/settings.json", "{}"),
                 lambda: write(repo / ".swarm/agents/y.md", "hi"),
                 lambda: write(repo / ".swarm/agents/y.md", "changed"),  # changed
                 lambda: (repo / ".claude/agents/x.md").unlink()):       # removed
        step()
        digests.add(find_project_config(repo).digest())
    assert len(digests) == 6
    # Renaming a file (same content) changes it too: the path is part of the digest.
    (repo / ".swarm/agents/y.md").rename(repo / ".swarm/agents/z.md")
    assert find_project_config(repo).digest() not in digests


def test_user_configuration_is_never_project_configuration(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SWARM_HOME", str(home / ".swarm"))
    (home / ".git").mkdir(parents=True)  # a dotfiles repository at $HOME
    write(home / ".claude/agents/mine.md", "mine")
    write(home / ".swarm/settings.json", "{}")
    write(home / ".swarm/agents/mine.md", "mine")
    assert find_project_config(home / "code").files == ()
    decision = decide(home)
    assert decision.trusted and decision.notice() is None


def test_a_recorded_trust_holds_for_that_digest_only(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo / ".swarm/settings.json", '{"hooks": {}}')
    assert not decide(repo).trusted
    record(find_project_config(repo))
    assert decide(repo / "src").trusted
    store, problem = read_store()
    assert problem is None and list(store.projects) == [str(repo)]
    write(repo / ".swarm/settings.json", '{"hooks": {"SessionEnd": []}}')
    changed = decide(repo)
    assert not changed.trusted and "changed" in (changed.notice() or "")
    assert decide(repo, flag=True).trusted
    monkeypatch.setenv("SWARM_TRUST_PROJECT", "1")
    assert decide(repo).trusted


def test_a_corrupt_or_foreign_trust_file_is_untrusted_with_a_warning(repo: Path) -> None:
    write(repo / ".mcp.json", "{}")
    record(find_project_config(repo))
    for text in ("not json", '{"version": 99, "projects": {}}', '[1, 2]'):
        paths.trust_file().write_text(text)
        decision = decide(repo)
        assert not decision.trusted
        assert decision.warning is not None and str(paths.trust_file()) in decision.warning
