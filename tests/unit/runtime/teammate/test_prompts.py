"""The system prompt's parts (swarm/runtime/teammate/prompts.py) on real files and a real git repository:
project memory found from the cwd up to the repository root, capped; the environment; the order."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from swarm.core.agents.definitions import get_definition, parse_definition
from swarm.core.store import paths
from swarm.runtime.teammate import prompts
from swarm.runtime.teammate.prompts import (
    Peer,
    environment,
    memory_files,
    project_memory,
    system_prompt,
    team_addendum,
)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """outer/ (not in the repo) > repo/ (git, branch feature-x) > sub/."""
    root = tmp_path / "outer" / "repo"
    (root / "sub").mkdir(parents=True)
    git(root, "init", "-q", "-b", "feature-x")
    (root / "CLAUDE.md").write_text("ROOT-CLAUDE-MARKER\n")
    git(root, "add", "CLAUDE.md")
    git(root, "commit", "-q", "-m", "init")
    (root / "sub" / "AGENTS.md").write_text("SUB-AGENTS-MARKER\n")
    (tmp_path / "outer" / "CLAUDE.md").write_text("ABOVE-THE-REPO\n")
    return root


def test_memory_from_the_user_file_then_root_down_to_the_cwd(repo: Path) -> None:
    paths.home().mkdir(parents=True, exist_ok=True)
    paths.user_memory().write_text("USER-MEMORY\n")
    (repo / "sub" / "SWARM.md").write_text("SUB-SWARM\n")
    (repo / "sub" / "CLAUDE.md").symlink_to("AGENTS.md")  # the same file: shown once
    os.mkfifo(repo / "AGENTS.md")  # never opened (reading it would block)

    assert memory_files(repo / "sub") == [paths.user_memory(), repo / "CLAUDE.md",
                                          repo / "sub" / "SWARM.md", repo / "sub" / "AGENTS.md"]
    text = project_memory(repo / "sub")
    assert text.startswith("# Project memory\n")
    order = ["USER-MEMORY", "ROOT-CLAUDE-MARKER", "SUB-SWARM", "SUB-AGENTS-MARKER"]
    assert [text.index(m) for m in order] == sorted(text.index(m) for m in order)
    assert f"## {repo / 'CLAUDE.md'}\nROOT-CLAUDE-MARKER" in text  # under a heading with its path
    assert text.count("SUB-AGENTS-MARKER") == 1
    assert "ABOVE-THE-REPO" not in text  # never above the repository root


def test_outside_a_repository_only_the_cwd_counts(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("PARENT\n")
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "AGENTS.md").write_text("HERE\n")
    text = project_memory(tmp_path / "here")
    assert "HERE" in text and "PARENT" not in text
    assert "PARENT" in project_memory(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "CLAUDE.md").write_text("  \n")
    assert project_memory(tmp_path / "empty") == ""  # a blank file is no memory


def test_large_memory_files_are_capped_and_the_prompt_says_so(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompts, "MEMORY_FILE_CAP", 100)
    monkeypatch.setattr(prompts, "MEMORY_TOTAL_CAP", 150)
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE-MARKER " + "r" * 500)
    (repo / "sub" / "AGENTS.md").write_text("SUB-AGENTS-MARKER " + "s" * 500)
    (repo / "sub" / "SWARM.md").write_text("SUB-SWARM " + "w" * 40)
    text = project_memory(repo / "sub")
    # The files nearest the cwd are served first: AGENTS.md (100 of its characters), SWARM.md
    # whole (50), and nothing is left for the root's CLAUDE.md, which is only named.
    assert "SUB-AGENTS-MARKER" in text and "s" * 82 in text and "s" * 83 not in text
    assert f"[truncated: this file has 518 bytes; only the first 100 characters are shown. " \
           f"Read {repo / 'sub' / 'AGENTS.md'} for the rest]" in text
    assert "w" * 40 in text
    assert "ROOT-CLAUDE-MARKER" not in text
    assert f"[not included: the other memory files fill the budget; Read {repo / 'CLAUDE.md'}]" \
        in text


def test_environment_names_the_cwd_platform_date_branch_and_status(repo: Path) -> None:
    (repo / "new.txt").write_text("x")
    text = environment(repo / "sub", date(2030, 1, 2))
    lines = text.splitlines()
    assert lines[:3] == ["# Environment", f"Working directory: {repo / 'sub'}",
                         f"Platform: {sys.platform}"]
    assert "Today's date: 2030-01-02" in lines
    assert "Git repository: yes, on branch feature-x" in lines
    assert "Git status when you started (a snapshot; it does not update):" in lines
    assert lines[-2:] == ["?? ../new.txt", "?? ./"]  # paths relative to the cwd


def test_environment_outside_git_and_a_long_status(tmp_path: Path, repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert environment(tmp_path).splitlines()[-1] == "Git repository: no"
    monkeypatch.setattr(prompts, "GIT_STATUS_LINES", 2)
    for n in range(5):
        (repo / f"f{n}").write_text("x")
    assert environment(repo).splitlines()[-3:] == ["?? f0", "?? f1", "... and 4 more"]
    git(repo, "checkout", "-q", "--detach")
    assert "Git repository: yes, on branch (detached HEAD)" in environment(repo)


def test_the_parts_come_in_cache_order() -> None:
    team = team_addendum("w1", "crew", "team-lead@crew", [Peer("bob", "explore")], "plan")
    text = system_prompt("BODY", "# Project memory\nMEM", team, "# Environment\nENV")
    assert [text.index(p) for p in ("BODY", "MEM", "# Your team", "ENV")] == sorted(
        text.index(p) for p in ("BODY", "MEM", "# Your team", "ENV"))
    assert "- `bob` (explore)" in team and "plan mode" in team
    assert system_prompt(None, "", team, "ENV").startswith(prompts.DEFAULT_BODY + "\n\n# Your")


def test_omit_project_memory_in_definitions() -> None:
    assert get_definition("explore").omit_project_memory
    assert get_definition("plan").omit_project_memory
    assert not get_definition("general-purpose").omit_project_memory
    seed = parse_definition("---\nname: quiet\nomitProjectMemory: true\n---\nbody", "q.md",
                            "project", "q")
    assert not isinstance(seed, list) and seed.omit_project_memory
    bad = parse_definition("---\nomit_project_memory: sometimes\n---\nbody", "b.md", "project", "b")
    assert isinstance(bad, list) and bad[0].field == "omit_project_memory"
