"""Merging a teammate's branch (swarm/ops/merge.py): a ref git would read as an option."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.team.team import Team
from swarm.core.team.worktrees import create, finish, record_fields, record_of
from swarm.errors import BadInputError
from swarm.ops.merge import merge
from tests.support.git_helpers import branches, git, init_repo


# -- git never reads a ref as an option ---------------------------------------------------------
def test_a_ref_named_like_an_option_is_refused_or_taken_literally(
        team: Team, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    record = create(repo, "alpha", "w")
    team.add_member("w", **record_fields(record))
    (record.path / "b.txt").write_text("work\n")
    git(record.path, "add", "-A")
    git(record.path, "commit", "-q", "-m", "work")
    git(repo, "update-ref", "refs/heads/-evil", "HEAD")  # git itself cannot name a branch so
    with pytest.raises(BadInputError, match="not a valid branch name"):
        merge(team, "w", into="-evil")
    with pytest.raises(BadInputError, match="not a valid branch name"):
        merge(team, "w", into="a..b")
    assert "-evil" in branches(repo)
    # A branch read back from the team file is passed after `--`: a literal name, never `-D`.
    git(repo, "update-ref", "refs/heads/-D", "main")
    evil = record_of(team.update_member("w", worktree_branch="-D"))
    assert evil is not None
    git(record.path, "reset", "-q", "--hard", "HEAD~1")  # nothing unmerged: the branch may go
    done = finish(evil, "w")
    assert done.removed and done.branch_deleted
    assert "-D" not in branches(repo) and "-evil" in branches(repo)

