"""Worktrees end to end: real `swarm agent` shell teammates in real git repositories, driven
through the real CLI (`spawn --worktree`, `worktrees`, `merge`, `shutdown`, `kill`,
`respawn`, `team delete`)."""

from __future__ import annotations

import json

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.team.worktrees import create, record_fields
from tests.support.agent_fixtures import HIDDEN_SHELL as HIDDEN
from tests.support.agent_fixtures import Crew, error_lines, spawn_shell
from tests.support.cli_runner import run_swarm
from tests.support.git_helpers import (
    branches,
    commit_all,
    git,
    init_repo,
    prunable,
    snapshot,
    worktree_paths,
)

COMMIT_FEATURE = ("```sh\necho feature > feature.txt\ngit add feature.txt\n"
                  "git commit -q -m 'add feature'\n```")


spawn = spawn_shell


def lead_reports(crew: Crew, name: str) -> list[str]:
    return [m.text for m in crew.lead_messages() if m.sender == name and m.structured() is None]


def test_team_delete_keeps_uncommitted_work_and_the_name_works_again(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    tree = spawn(crew, "w", "$ echo precious > notes.txt", "--worktree")
    assert tree == paths.worktrees_dir("crew") / "w"
    assert (tree / "notes.txt").read_text() == "precious\n"
    assert not (repo / "notes.txt").exists()  # it worked apart from the lead's checkout
    listing = json.loads(crew.cli("worktrees", "--json").stdout)
    assert [(v["member"], v["branch"], v["ahead"], v["dirty"]) for v in listing] == [
        ("w", "swarm/crew/w", 0, ["notes.txt"])]
    assert listing[0]["base"] == git(repo, "rev-parse", "HEAD").strip()

    deleted = crew.cli("team", "delete", "crew", "--force")
    assert deleted.returncode == 0, deleted.stderr
    kept = paths.kept_worktrees_dir() / "crew-w"
    assert deleted.stdout.splitlines() == [
        "deleted team crew (stopped w)",
        f"w: kept worktree {kept} (branch swarm/crew/w; 1 uncommitted file(s))"]
    assert (kept / "notes.txt").read_text() == "precious\n"
    assert worktree_paths(repo) == [str(repo), str(kept)] and prunable(repo) == []
    assert git(kept, "symbolic-ref", "--short", "HEAD").strip() == "swarm/crew/w"

    # The same team and member name again: the old branch is left alone, a new one is made.
    assert Team.create("crew").name == "crew"
    again = spawn(crew, "w", "$ echo clean", "--worktree")
    branch = crew.team.member("w").worktree_branch or ""
    assert again == tree and branch.startswith("swarm/crew/w-")
    # A clean worktree leaves no directory, branch or `git worktree list` entry behind.
    done = crew.cli("shutdown", "w", "--timeout", "15")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["w: exited (shut down)", "w: removed its worktree"]
    assert not again.exists()
    assert branches(repo) == ["main", "swarm/crew/w"]  # only the kept one's
    assert worktree_paths(repo) == [str(repo), str(kept)] and prunable(repo) == []
    assert crew.cli("worktrees").stdout.strip() == "(no worktrees: spawn with --worktree)"


@pytest.mark.usefixtures("trust_projects")  # the definition is the project's
def test_isolation_worktree_in_a_definition_creates_one(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    agents = crew.workdir / ".swarm" / "agents"  # not committed: the worktree does not have it
    agents.mkdir(parents=True)
    (agents / "apart.md").write_text("---\nname: apart\ndescription: works apart\n"
                                     "isolation: worktree\n---\nYou work in your own checkout.\n")
    tree = spawn(crew, "iso", "$ pwd", "--agent-type", "apart")
    member = crew.team.member("iso")
    assert tree == paths.worktrees_dir("crew") / "iso" and member.agent_type == "apart"
    assert member.worktree_branch == "swarm/crew/iso" and member.worktree_repo == str(repo)
    assert lead_reports(crew, "iso") == [f"$ pwd\n{tree}"]
    assert str(tree) in worktree_paths(repo)


def test_merge_lands_a_teammates_commit_and_the_merged_worktree_goes(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    tree = spawn(crew, "w", COMMIT_FEATURE, "--worktree")
    (view,) = json.loads(crew.cli("worktrees", "--json").stdout)
    assert (view["ahead"], view["dirty"]) == (1, [])
    assert "w" in crew.cli("worktrees").stdout and "swarm/crew/w" in crew.cli("worktrees").stdout

    merged = crew.cli("merge", "w")
    assert merged.returncode == 0, merged.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    assert merged.stdout.strip() == (f"merged w (swarm/crew/w, 1 commit(s)) into main at {repo}: "
                                     f"now {head[:10]}")
    assert (repo / "feature.txt").read_text() == "feature\n"
    assert "add feature" in git(repo, "log", "--format=%s", "main")
    assert snapshot(repo)[1] == ""
    again = crew.cli("merge", "w")
    assert again.stdout.strip() == "nothing to merge: main already has every commit of swarm/crew/w"

    # Its commit is in the lead's branch now: at exit nothing would be lost, so it goes.
    done = crew.cli("shutdown", "w", "--timeout", "15")
    assert done.stdout.splitlines()[-1] == "w: removed its worktree"
    assert not tree.exists() and branches(repo) == ["main"]


def test_a_conflicting_merge_leaves_the_checkout_exactly_as_it_was(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    git(repo, "branch", "release")  # not checked out anywhere
    spawn(crew, "w", "```sh\necho theirs > a.txt\ngit commit -q -am theirs\n```", "--worktree")
    (repo / "a.txt").write_text("ours\n")
    commit_all(repo, "ours")
    (repo / "scratch.txt").write_text("untracked, and stays\n")
    before = snapshot(repo)

    for extra in ((), ("--squash",)):
        proc = crew.cli("merge", "w", *extra)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout.splitlines() == ["conflicting files:", "  a.txt"]
        assert error_lines(proc) == [
            f"swarm: error: merging swarm/crew/w into main conflicts in 1 file(s); the merge "
            f"was aborted and {repo} is as it was"]
        assert snapshot(repo) == before
        assert not (repo / ".git" / "MERGE_HEAD").exists()
    as_json = crew.cli("merge", "w", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["conflicts"] == ["a.txt"] and snapshot(repo) == before

    # A dirty checkout is refused before anything runs.
    (repo / "a.txt").write_text("half-done edit\n")
    dirty = snapshot(repo)
    refused = crew.cli("merge", "w")
    assert refused.returncode == 2 and refused.stdout == ""
    assert error_lines(refused) == [
        f"swarm: error: the checkout {repo} has uncommitted changes (a.txt); commit or stash "
        "them first: a merge must be able to undo itself"]
    assert snapshot(repo) == dirty

    # --into a branch that is not checked out: merged there, the checkout is not touched.
    into = crew.cli("merge", "w", "--into", "release", "--squash")
    assert into.returncode == 0, into.stderr
    assert git(repo, "show", "release:a.txt") == "theirs\n"
    assert git(repo, "log", "-1", "--format=%s", "release").strip() == \
        "w: work from swarm/crew/w (squashed)"
    assert snapshot(repo) == dirty and worktree_paths(repo)[0] == str(repo)
    assert len(worktree_paths(repo)) == 2 and prunable(repo) == []  # no scratch worktree left

    missing = crew.cli("merge", "w", "--into", "nope")
    assert missing.returncode == 2 and "no branch 'nope'" in error_lines(missing)[0]


def test_kill_keeps_work_respawn_makes_a_fresh_worktree(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    tree = spawn(crew, "w", "$ echo hi", "--worktree")
    assert crew.cli("shutdown", "w").stdout.splitlines()[-1] == "w: removed its worktree"
    assert crew.team.member("w").worktree_path is None

    respawned = crew.cli("respawn", "w")
    assert respawned.returncode == 0, respawned.stderr
    member = crew.team.member("w")
    assert member.worktree_path == str(tree) and member.cwd == str(tree) and tree.is_dir()
    crew.wait_state("w", "idle")
    crew.send("w", "$ echo draft > draft.txt")
    crew.wait_idle_notes("w", 2)
    killed = crew.cli("kill", "w")
    assert killed.stdout.splitlines() == [
        "killed w", f"w: kept worktree {tree} (branch swarm/crew/w; 1 uncommitted file(s))"]
    (view,) = json.loads(crew.cli("worktrees", "--json").stdout)
    assert view["path"] == str(tree) and view["dirty"] == ["draft.txt"]
    assert str(tree) in worktree_paths(repo)


@pytest.mark.parametrize(("setup", "expected"), [
    ("plain", "is not inside a git repository"),
    ("empty", "has no commit yet"),
    ("bare", "is a bare git repository"),
    ("clash", "cannot create branch swarm/crew/w"),
])
def test_spawn_worktree_bad_input_is_exit_2_and_registers_nothing(crew: Crew, setup: str,
                                                                   expected: str) -> None:
    where = crew.workdir
    if setup == "empty":
        init_repo(where, commit=False)
    elif setup == "bare":
        git(where, "init", "-q", "--bare")
    elif setup == "clash":
        init_repo(where)
        git(where, "branch", "swarm/crew")
    proc = crew.cli("spawn", "w", *HIDDEN, "--worktree", "--prompt", "$ echo hi")
    assert proc.returncode == 2, proc.stderr
    (line,) = error_lines(proc)
    assert line.startswith("swarm: error: --worktree: ") and expected in line, line
    assert [m.name for m in crew.team.members()] == ["team-lead"]
    assert not (paths.worktrees_dir("crew") / "w").exists()
    assert not paths.inbox("crew", "w").exists()


def test_merge_needs_a_worktree_member(crew: Crew) -> None:
    crew.register("plain")
    proc = crew.cli("merge", "plain")
    assert proc.returncode == 2
    assert error_lines(proc) == ["swarm: error: plain has no worktree branch to merge (spawn with "
                                 "--worktree); see `swarm worktrees`"]
    assert crew.cli("merge", "ghost").returncode == 2
    # A teammate's shell cannot merge into the lead's checkout.
    from_teammate = run_swarm("merge", "plain", env={"SWARM_AGENT_ID": "plain@crew"},
                              cwd=crew.workdir)
    assert from_teammate.returncode == 2 and "is for the team lead" in from_teammate.stderr


def test_team_delete_discard_worktrees_throws_uncommitted_work_away(crew: Crew) -> None:
    repo = init_repo(crew.workdir).resolve()
    tree = create(repo, "crew", "w")
    crew.register("w", **record_fields(tree))
    (tree.path / "scratch.txt").write_text("throw me away\n")
    proc = crew.cli("team", "delete", "crew", "--discard-worktrees", "--json")
    assert proc.returncode == 0, proc.stderr
    (done,) = json.loads(proc.stdout)["worktrees"]
    assert (done["member"], done["removed"], done["branch_deleted"], done["dirty"]) == (
        "w", True, True, ["scratch.txt"])
    assert not tree.path.exists() and not paths.kept_worktrees_dir().exists()
    assert branches(repo) == ["main"] and worktree_paths(repo) == [str(repo)]
    Team.create("crew")  # for the fixture's teardown
