"""`worktree.symlinkDirectories`: a member's new worktree gets symlinks to large directories of
the source checkout (node_modules, .venv) from the user's and a trusted project's settings."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm.core.team.team import Team
from tests.support.cli_runner import run_swarm
from tests.support.git_helpers import init_repo, worktree_paths

SPAWN = ("--backend", "hidden", "--model", "shell", "--prompt", "$ echo hi", "--worktree")


@pytest.fixture
def repo(tmp_path: Path, swarm_home: Path) -> Iterator[Path]:
    root = init_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": "node_modules/\n.venv/\n"})
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / "x").mkdir()  # what `../x` would reach
    settings = root / ".swarm" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(
        {"worktree": {"symlinkDirectories": ["node_modules", "../x", "/etc", "missing"]}}))
    assert run_swarm("team", "create", "crew", cwd=root).returncode == 0
    yield root
    if Team("crew").exists():  # no teammate outlives the test
        run_swarm("team", "delete", "crew", "--force", cwd=root)


def tree_of(name: str) -> Path:
    member = Team("crew").config().member(name)
    assert member is not None and member.worktree_path
    return Path(member.worktree_path)


def test_a_trusted_projects_directories_are_symlinked_and_bad_names_warned(
        repo: Path, swarm_home: Path) -> None:
    (swarm_home / "settings.json").write_text(
        json.dumps({"worktree": {"symlinkDirectories": [".venv"]}}))
    proc = run_swarm("spawn", "w", *SPAWN, "--trust-project", "--team", "crew", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    tree = tree_of("w")
    link = tree / "node_modules"
    assert link.is_symlink() and link.resolve() == (repo / "node_modules").resolve()
    assert (link / "left-pad" / "index.js").read_text() == "module.exports = 1\n"
    assert (tree / ".venv").is_symlink()  # from the user's settings
    assert not (tree / "missing").exists() and not (tree.parent / "x").is_symlink()
    warnings = [line for line in proc.stderr.splitlines() if "symlinkDirectories" in line]
    assert len(warnings) == 2, proc.stderr
    assert any("'../x'" in w for w in warnings) and any("'/etc'" in w for w in warnings)
    # The links are swarm's, not the teammate's work: the worktree is clean and goes on delete,
    # and the source's directories stay.
    assert run_swarm("team", "delete", "crew", "--force", cwd=repo).returncode == 0
    assert str(tree) not in worktree_paths(repo) and not tree.exists()
    assert (repo / "node_modules" / "left-pad" / "index.js").exists()


def test_an_untrusted_projects_setting_is_not_used(repo: Path, swarm_home: Path) -> None:
    proc = run_swarm("spawn", "w", *SPAWN, "--team", "crew", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    tree = tree_of("w")
    assert not os.path.lexists(tree / "node_modules")
    assert "symlinkDirectories" not in proc.stderr
    assert "project configuration ignored" in proc.stderr
