"""The worktree helper (swarm/core/team/worktrees.py) on real git repositories: create, inspect,
finish (clean -> gone with its branch; work -> kept), leave a deleted team, bad input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.team.worktrees import (
    WorktreeRecord,
    create,
    finish,
    inspect,
    leave_team,
    record_fields,
)
from swarm.errors import BadInputError
from tests.support.git_helpers import (
    branches,
    commit_all,
    git,
    init_repo,
    prunable,
    snapshot,
    worktree_paths,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"a.txt": "one\n", "src/app.py": "print(1)\n"})


def test_create_branches_from_head_at_the_team_path(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    tree = create(repo / "src", "alpha", "w")  # from a subdirectory: it works in the same one
    assert tree.path == paths.worktrees_dir("alpha") / "w"
    assert tree.branch == "swarm/alpha/w" and tree.base == head
    assert tree.repo == repo.resolve() and tree.cwd == tree.path / "src"
    assert (tree.path / "src" / "app.py").read_text() == "print(1)\n"
    assert git(tree.path, "symbolic-ref", "--short", "HEAD").strip() == "swarm/alpha/w"
    assert str(tree.path) in worktree_paths(repo)
    status = inspect(tree)
    assert (status.exists, status.ahead, status.dirty, status.has_work) == (True, 0, [], False)


def test_a_branch_left_by_an_earlier_team_gets_a_fresh_suffix(repo: Path) -> None:
    git(repo, "branch", "swarm/alpha/w")  # left behind by an earlier team named alpha
    tree = create(repo, "alpha", "w")
    assert tree.branch.startswith("swarm/alpha/w-") and len(tree.branch) == len("swarm/alpha/w-") + 4
    assert "swarm/alpha/w" in branches(repo)  # the old one is untouched


def test_clean_worktree_is_removed_with_its_branch_and_entry(repo: Path) -> None:
    tree = create(repo, "alpha", "w")
    done = finish(tree, "w")
    assert done.removed and done.branch_deleted and not done.dirty
    assert not tree.path.exists()
    assert branches(repo) == ["main"]
    assert worktree_paths(repo) == [str(repo.resolve())] and prunable(repo) == []


def test_uncommitted_work_is_kept_and_moved_when_asked(repo: Path, tmp_path: Path) -> None:
    tree = create(repo, "alpha", "w")
    (tree.path / "notes.txt").write_text("unsaved\n")
    (tree.path / "a.txt").write_text("changed\n")
    kept = finish(tree, "w")
    assert not kept.removed and kept.path == str(tree.path)
    assert sorted(kept.dirty) == ["a.txt", "notes.txt"]
    moved = finish(tree, "w", keep_at=tmp_path / "kept" / "alpha-w")
    assert moved.path == str(tmp_path / "kept" / "alpha-w") and not tree.path.exists()
    assert (Path(moved.path) / "notes.txt").read_text() == "unsaved\n"
    assert worktree_paths(repo) == [str(repo.resolve()), moved.path] and prunable(repo) == []
    assert "swarm/alpha/w" in branches(repo)
    assert "kept worktree" in moved.describe() and "swarm/alpha/w" in moved.describe()


def test_commits_keep_a_worktree_until_merged(repo: Path) -> None:
    tree = create(repo, "alpha", "w")
    (tree.path / "feature.txt").write_text("f\n")
    commit_all(tree.path, "feature")
    status = inspect(tree)
    assert (status.ahead, status.unmerged, status.dirty) == (1, 1, [])
    assert not finish(tree, "w").removed
    git(repo, "merge", "-q", "--no-edit", tree.branch)  # the lead merged it: nothing to lose now
    done = finish(tree, "w")
    assert done.removed and done.branch_deleted and branches(repo) == ["main"]


def test_discard_removes_uncommitted_work_but_keeps_unmerged_commits(repo: Path) -> None:
    tree = create(repo, "alpha", "w")
    (tree.path / "scratch.txt").write_text("x\n")
    assert finish(tree, "w", discard=True).removed and branches(repo) == ["main"]

    again = create(repo, "alpha", "v")
    (again.path / "work.txt").write_text("w\n")
    commit_all(again.path, "work")
    done = finish(again, "v", discard=True)
    assert done.removed and not again.path.exists() and not done.branch_deleted
    assert "swarm/alpha/v" in branches(repo) and "not merged" in done.describe()


def test_a_worktree_deleted_by_hand_leaves_no_stale_entry(repo: Path) -> None:
    tree = create(repo, "alpha", "w")
    shutil.rmtree(tree.path)
    done = finish(tree, "w")
    assert done.removed and prunable(repo) == [] and branches(repo) == ["main"]
    # and the same path and name work again
    assert create(repo, "alpha", "w").path == tree.path


def test_leave_team_moves_work_out_and_removes_the_rest(repo: Path) -> None:
    team = Team.create("alpha")
    for name in ("busy", "idle"):
        team.add_member(name, **record_fields(create(repo, "alpha", name)))
    (paths.worktrees_dir("alpha") / "busy" / "draft.md").write_text("draft\n")
    done = {d.member: d for d in leave_team(team)}
    assert done["idle"].removed and done["idle"].branch_deleted
    kept = done["busy"]
    assert kept.path == str(paths.kept_worktrees_dir() / "alpha-busy")
    assert (Path(kept.path) / "draft.md").read_text() == "draft\n"
    assert team.member("busy").worktree_path == kept.path  # recorded where it is now
    assert team.member("idle").worktree_path is None
    assert leave_team(team) == []  # nothing left inside the team directory
    Team.delete("alpha")
    assert (Path(kept.path) / "draft.md").exists()
    assert sorted(worktree_paths(repo)) == sorted([str(repo.resolve()), kept.path])
    assert prunable(repo) == [] and branches(repo) == ["main", "swarm/alpha/busy"]


def test_team_delete_from_python_never_deletes_work(repo: Path) -> None:
    team = Team.create("alpha")
    team.add_member("w", **record_fields(create(repo, "alpha", "w")))
    (paths.worktrees_dir("alpha") / "w" / "unsaved.txt").write_text("keep me\n")
    Team.delete("alpha")
    assert (paths.kept_worktrees_dir() / "alpha-w" / "unsaved.txt").read_text() == "keep me\n"


def test_a_worktree_whose_repository_is_gone_is_kept_and_the_team_still_goes(
        repo: Path) -> None:
    team = Team.create("alpha")
    team.add_member("w", **record_fields(create(repo, "alpha", "w")))
    shutil.rmtree(repo)  # the user deleted the checkout it came from
    Team.delete("alpha")
    kept = paths.kept_worktrees_dir() / "alpha-w"
    assert (kept / "a.txt").read_text() == "one\n" and not paths.team_dir("alpha").exists()


def test_bad_places_to_branch_from(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    empty = init_repo(tmp_path / "empty", commit=False)
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    cases = [(plain, "is not inside a git repository"), (empty, "has no commit yet"),
             (bare, "is a bare git repository"), (empty / ".git", "inside a .git directory")]
    for where, expected in cases:
        with pytest.raises(BadInputError, match=expected):
            create(where, "alpha", "w")
    assert not paths.worktrees_dir("alpha").exists() or not any(paths.worktrees_dir("alpha").iterdir())


def test_a_branch_name_git_cannot_create_is_bad_input(repo: Path) -> None:
    git(repo, "branch", "swarm/alpha")  # a ref named swarm/alpha blocks swarm/alpha/<anything>
    before = snapshot(repo), branches(repo)
    with pytest.raises(BadInputError, match="cannot create branch swarm/alpha/w"):
        create(repo, "alpha", "w")
    assert (snapshot(repo), branches(repo)) == before
    assert not (paths.worktrees_dir("alpha") / "w").exists()


def test_git_environment_variables_do_not_redirect_the_helper(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    other = init_repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as inside a git hook
    tree = create(repo, "alpha", "w")
    monkeypatch.delenv("GIT_DIR")
    assert str(tree.path) in worktree_paths(repo) and str(tree.path) not in worktree_paths(other)


def test_record_round_trip(repo: Path) -> None:
    tree = create(repo, "alpha", "w")
    team = Team.create("alpha")
    member = team.add_member("w", **record_fields(tree))
    assert (member.worktree_path, member.worktree_branch, member.worktree_base,
            member.worktree_repo, member.cwd) == (str(tree.path), tree.branch, tree.base,
                                                  str(tree.repo), str(tree.cwd))
    assert isinstance(tree, WorktreeRecord) and os.path.isdir(member.cwd or "")
