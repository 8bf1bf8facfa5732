"""The read-only built-ins, explore and plan, as Claude Code has its Explore and Plan: their
prompt leaves out the project memory files and the git status (a stale snapshot a searcher
does not need, paid on every call). One-shot: tests/unit/runtime/subagents/test_one_shot.py."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from swarm.core.agents.definitions import get_definition, parse_definition
from swarm.core.team.team import Team
from swarm.runtime.teammate.prompts import TeammatePrompt, environment
from tests.support.subagent_host import FnModel, Host, ask, make_repo, runner_with, text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with an uncommitted file the git status names."""
    root = make_repo(tmp_path / "repo")
    (root / "DIRTY-MARKER.txt").write_text("x\n")
    return root


@pytest.fixture
def host(team: Team, repo: Path) -> Host:
    parent = Host(team, repo)
    parent.environment = environment(repo)  # as a teammate's: with its git status
    return parent


def test_explore_and_plan_omit_the_git_status(team: Team, repo: Path) -> None:
    assert get_definition("explore").omit_git_status and get_definition("plan").omit_git_status
    assert not get_definition("general-purpose").omit_git_status
    assert not get_definition("code-reviewer").omit_git_status
    full = environment(repo, date(2030, 1, 2))
    bare = environment(repo, date(2030, 1, 2), git=False)
    assert "DIRTY-MARKER.txt" in full and "Git repository: yes, on branch main" in full
    assert bare == full.split("\nGit repository")[0]  # cwd, platform, date; no git at all
    # A teammate of the type: neither CLAUDE.md nor the status in its prompt.
    (repo / "CLAUDE.md").write_text("PROJECT-MEMORY-MARKER\n")
    for kind, kept in (("explore", False), ("general-purpose", True)):
        prompt = TeammatePrompt(team, "alice", get_definition(kind), repo).build("default")
        assert ("DIRTY-MARKER.txt" in prompt) is kept and ("PROJECT-MEMORY-MARKER" in prompt) is kept
        assert f"Working directory: {repo}" in prompt


def test_a_definition_file_may_omit_it_too() -> None:
    seed = parse_definition("---\nomitGitStatus: true\n---\nb", "s.md", "user", "s")
    assert not isinstance(seed, list) and seed.omit_git_status and not seed.warnings
    bad = parse_definition("---\nomit_git_status: often\n---\nb", "s.md", "user", "s")
    assert isinstance(bad, list) and bad[0].field == "omit_git_status"


@pytest.mark.parametrize(("kind", "kept"), [("explore", False), ("plan", False),
                                            ("general-purpose", True)])
def test_a_typed_subagents_prompt(host: Host, monkeypatch: pytest.MonkeyPatch, kind: str,
                                  kept: bool) -> None:
    model = FnModel(text("found it"))
    runner = runner_with(host, monkeypatch, model)
    assert not runner.start(ask(kind)).is_error
    system = model.requests[0].system
    assert ("DIRTY-MARKER.txt" in system) is kept and ("Git repository" in system) is kept
    assert f"Working directory: {host.cwd}" in system
