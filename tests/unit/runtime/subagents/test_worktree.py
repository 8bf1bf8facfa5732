"""Subagents with `isolation: worktree`, as Claude Code has them: their worktree gets the
`worktree.symlinkDirectories` links a teammate's gets, and a fork in one is told that the paths
it inherited from its parent's conversation point at the parent's checkout (translate them to
its worktree, and re-read a file before editing it)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.team.worktree_view import team_worktrees
from tests.support.git_helpers import init_repo, worktree_paths
from tests.support.helpers import wait_until
from tests.support.subagent_host import FnModel, Host, ask, forkable, runner_with, text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": "node_modules/\n"})
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    settings = paths.user_settings()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"worktree": {"symlinkDirectories": ["node_modules",
                                                                        "../x"]}}))
    return root


@pytest.fixture
def host(team: Team, repo: Path) -> Host:
    return Host(team, repo)


def test_a_subagents_worktree_gets_the_links_and_is_still_clean(
        host: Host, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []

    def look(request: object) -> object:
        tree = Path(next(p for p in worktree_paths(repo) if p.endswith("alice.sub-1")))
        link = tree / "node_modules"
        seen.append(link)
        assert link.is_symlink() and os.readlink(link) == str(repo / "node_modules")
        assert (link / "left-pad" / "index.js").read_text() == "module.exports = 1\n"
        return text("looked")

    runner = runner_with(host, monkeypatch, FnModel(look))  # type: ignore[arg-type]
    result = runner.start(ask(isolation="worktree"))
    assert not result.is_error, result.content
    assert seen  # it ran inside its worktree, links there
    # Only swarm's link in it: nothing to lose, so it was removed (the linked folder stays).
    assert not any(p.endswith("alice.sub-1") for p in worktree_paths(repo))
    assert (repo / "node_modules" / "left-pad" / "index.js").is_file()
    assert "worktree" not in json.loads(result.content.rsplit("\n\n", 1)[1])
    assert any("symlinkDirectories entry '../x'" in line for line in host.lines)


def test_a_kept_worktree_keeps_its_work_not_the_links(
        host: Host, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def work(request: object) -> object:
        tree = next(Path(p) for p in worktree_paths(repo) if p.endswith("alice.sub-1"))
        (tree / "new.txt").write_text("work\n")
        return text("wrote new.txt")

    runner = runner_with(host, monkeypatch, FnModel(work))  # type: ignore[arg-type]
    runner.start(ask(isolation="worktree"))
    (view,) = [v for v in team_worktrees(host.team) if v.member == "alice.sub-1"]
    assert view.dirty == ["new.txt"]  # the link is swarm's, not the subagent's work


def test_a_fork_in_a_worktree_is_told_its_inherited_paths_are_its_parents(
        host: Host, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    model = FnModel(lambda r: (gate.wait(10), text("done"))[1])
    runner = runner_with(host, monkeypatch, model)
    forkable(host)
    runner.start(ask(None, isolation="worktree"))
    wait_until(lambda: model.requests, 10)
    tree = next(p for p in worktree_paths(repo) if p.endswith("alice.sub-1"))
    directive = model.requests[0].messages[-1]["content"][-1]["text"]
    assert directive.endswith(
        f"(You work in your own git worktree: {tree}, branch swarm/{host.team.name}/alice.sub-1."
        f" The conversation above is your parent's, which works in {repo}: a path in it points"
        f" at the parent's checkout; use the same path under {tree} instead. Re-read a file"
        " before you edit it: the parent may have changed it since, and your copy started from"
        " the last commit. Change files in your worktree only.)")
    gate.set()
    wait_until(runner.has_arrivals, 10)


def test_a_typed_subagent_in_a_worktree_is_told_only_where_it_works(
        host: Host, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It inherits no conversation: no notice about inherited paths."""
    model = FnModel(text("done"))
    runner = runner_with(host, monkeypatch, model)
    runner.start(ask(isolation="worktree"))
    directive = model.requests[0].messages[-1]["content"][-1]["text"]
    assert "your own git worktree" in directive and "conversation above" not in directive
