"""`swarm diff NAME`: a teammate's changes, from real shell teammates in real git repositories.

With a worktree: the worktree against the commit it branched from (its commits, its uncommitted
changes and its new files), the teammate's index and the lead's checkout untouched. Without
one: the files it wrote with Write/Edit (the team's writes record), as a git diff where git
knows them, else listed. File content is data: escaped on a terminal, coloured only there.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.overlaps import record_write
from swarm.core.team.worktrees import create, record_fields
from swarm.errors import OperationFailedError
from swarm.ops.diff import member_diff
from tests.support.agent_fixtures import Crew, error_lines, spawn_shell
from tests.support.cli_runner import SWARM
from tests.support.git_helpers import git, init_repo, snapshot

WORK = ("```sh\necho two >> a.txt\ngit commit -qam 'a: two'\necho committed > b.txt\n"
        "git add b.txt\ngit commit -qm 'add b'\necho three >> a.txt\necho fresh > new.txt\n```")


spawn = spawn_shell


def one_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    (line,) = error_lines(proc)
    assert line.startswith("swarm: error: ") and proc.stdout == ""
    return line


def test_a_worktree_shows_its_commits_changes_and_new_files_against_its_base(crew: Crew) -> None:
    repo = init_repo(crew.workdir, {"a.txt": "one\n"}).resolve()
    base = git(repo, "rev-parse", "HEAD").strip()
    spawn(crew, "w", WORK, "--worktree")
    tree = paths.worktrees_dir("crew") / "w"
    assert (tree / "new.txt").exists()
    lead_before, tree_before = snapshot(repo), snapshot(tree)

    shown = crew.cli("diff", "w")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.splitlines()[0] == (f"w: worktree {tree} (branch swarm/crew/w) against its base "
                                   f"{base[:10]}: 3 files, +4 -0")
    for line in ("diff --git a/a.txt b/a.txt", " one", "+two", "+three",
                 "diff --git a/b.txt b/b.txt", "+committed", "diff --git a/new.txt b/new.txt",
                 "+fresh"):
        assert line in out.splitlines(), line
    assert "\x1b" not in out  # no colour into a pipe

    stat = crew.cli("diff", "w", "--stat")
    assert stat.returncode == 0, stat.stderr
    assert stat.stdout.splitlines()[1:] == [" a.txt    modified  +2 -0",
                                            " b.txt    added     +1 -0",
                                            " new.txt  new       +1 -0",
                                            "3 files changed, +4 -0"]
    data = json.loads(crew.cli("diff", "w", "--json").stdout)
    assert (data["member"], data["source"], data["base"], data["branch"]) == (
        "w", "worktree", base, "swarm/crew/w")
    assert [(f["path"], f["status"], f["added"], f["deleted"]) for f in data["files"]] == [
        ("a.txt", "modified", 2, 0), ("b.txt", "added", 1, 0), ("new.txt", "new", 1, 0)]
    assert "+fresh" in data["diff"] and data["added"] == 4 and data["deleted"] == 0
    # Looking changed nothing: not the teammate's index or files, not the lead's checkout.
    assert snapshot(tree) == tree_before and snapshot(repo) == lead_before


def test_without_a_worktree_the_files_it_wrote_show_as_a_diff_or_a_list(
        crew: Crew, tmp_path: Path) -> None:
    repo = init_repo(crew.workdir, {"a.txt": "one\n", "same.txt": "same\n"}).resolve()
    outside = tmp_path / "elsewhere" / "x.txt"
    outside.parent.mkdir()
    prompt = (f"```write a.txt\none\nand more\n```\n```write notes/new.md\n# new\n```\n"
              f"```write same.txt\nsame\n```\n```write {outside}\nnot in git\n```\n"
              "$ echo by-bash > bash.txt")
    spawn(crew, "s", prompt)
    assert (repo / "bash.txt").exists()

    data = json.loads(crew.cli("diff", "s", "--json").stdout)
    assert data["source"] == "writes" and data["branch"] == ""
    assert [(f["path"], f["status"], f["added"], f["deleted"]) for f in data["files"]] == [
        (str(outside), "not in git", None, None),  # sorted by path: .../elsewhere/x.txt first
        (str(repo / "a.txt"), "modified", 1, 0), (str(repo / "notes" / "new.md"), "new", 1, 0),
        (str(repo / "same.txt"), "unchanged", 0, 0)]
    assert "+and more" in data["diff"] and "+# new" in data["diff"]
    assert "bash.txt" not in data["diff"]  # Bash is not traced: said, not guessed
    assert "Bash" in data["note"]

    shown = crew.cli("diff", "s")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "s: the files it wrote with Write and Edit: 4 files (1 outside git), +2 -0"
    assert "diff --git a/a.txt b/a.txt" in lines and "+and more" in lines
    assert f"not in git: {outside}" in lines and f"unchanged: {repo / 'same.txt'}" in lines
    stat = crew.cli("diff", "s", "--stat").stdout.splitlines()
    assert stat[-1] == "4 files changed, +2 -0"
    assert any(line.startswith(f" {outside} ") and line.endswith("  not in git") for line in stat)


def test_unknown_members_and_nothing_to_show_are_one_line(crew: Crew) -> None:
    init_repo(crew.workdir)
    spawn(crew, "quiet", "$ echo hi")
    spawn(crew, "clean", "$ echo hi", "--worktree")
    assert "'zed' is not a member of team 'crew'" in one_error(crew.cli("diff", "zed"), 2)
    line = one_error(crew.cli("diff", "quiet"), 1)
    assert line == ("swarm: error: quiet has nothing to show: no worktree, and no file written "
                    "with its Write or Edit tools (commands run through Bash are not recorded)")
    line = one_error(crew.cli("diff", "clean", "--json"), 1)
    assert line.startswith("swarm: error: clean has nothing to show: its worktree ")
    assert " has no changes against its base " in line


def test_a_kept_branch_without_its_directory_still_shows(crew: Crew) -> None:
    """The worktree directory was deleted by hand: its branch still holds the commits."""
    repo = init_repo(crew.workdir, {"a.txt": "one\n"}).resolve()
    record = create(repo, "crew", "gone")
    crew.register("gone", **record_fields(record))
    (record.path / "a.txt").write_text("one\ntwo\n")
    git(record.path, "commit", "-qam", "two")
    git(repo, "worktree", "remove", "--force", str(record.path))
    found = member_diff(crew.team, "gone")
    assert found.source == "branch" and [(f.path, f.status) for f in found.files] == [
        ("a.txt", "modified")]
    assert "+two" in found.diff


def test_a_member_on_another_host_is_one_line(crew: Crew) -> None:
    crew.register("far", host="build@hostb")
    with pytest.raises(OperationFailedError, match="^far runs on build@hostb: its files are there"):
        member_diff(crew.team, "far")


def test_a_file_written_in_a_repository_without_commits_is_new(crew: Crew) -> None:
    repo = init_repo(crew.workdir, commit=False).resolve()
    crew.register("n")
    record_write(crew.team, "n", repo / "a.txt")
    found = member_diff(crew.team, "n")
    assert [(f.status, f.added) for f in found.files] == [("new", 1)]
    (repo / "a.txt").unlink()
    assert [f.status for f in member_diff(crew.team, "n").files] == ["gone"]


def test_file_content_is_escaped_and_coloured_only_on_a_terminal(crew: Crew) -> None:
    repo = init_repo(crew.workdir, {"a.txt": "one\n"}).resolve()
    crew.register("e")
    (repo / "a.txt").write_text("one\nevil \x1b]52;c;aGk=\x07 \x1b[2J\n")
    record_write(crew.team, "e", repo / "a.txt")

    piped = crew.cli("diff", "e")
    assert piped.returncode == 0 and "\x1b" not in piped.stdout and "\x07" not in piped.stdout
    assert "+evil \\x1b]52;c;aGk=\\x07 \\x1b[2J" in piped.stdout.splitlines()
    assert "+evil \x1b]52;c;aGk=\x07" in json.loads(crew.cli("diff", "e", "--json").stdout)["diff"]

    main, secondary = pty.openpty()
    proc = subprocess.run([SWARM, "diff", "e"], stdout=secondary, stderr=subprocess.PIPE,
                          cwd=crew.workdir, env={**os.environ, "TERM": "xterm"}, timeout=30)
    os.close(secondary)
    raw = b""
    try:
        while chunk := os.read(main, 65536):
            raw += chunk
    except OSError:  # the terminal's far end is closed: everything was read
        pass
    os.close(main)
    text = raw.decode()
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[32m+evil \\x1b]52;c;aGk=\\x07 \\x1b[2J\x1b[0m" in text  # green, data escaped
    assert "\x1b]52" not in text and "\x07" not in text and "\x1b[2J" not in text


def test_tab_completes_the_member_to_diff(crew: Crew) -> None:
    crew.register("bob")
    proc = subprocess.run([SWARM], capture_output=True, text=True, timeout=30, env={
        **os.environ, "COMP_WORDS": "swarm diff b", "COMP_CWORD": "2",
        "_SWARM_COMPLETE": "bash_complete"})
    assert proc.returncode == 0 and proc.stderr == "", proc
    assert [line.partition(",")[2] for line in proc.stdout.splitlines()] == ["bob"]
