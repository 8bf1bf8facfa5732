"""Protected paths hold against links and moves.

A hard link to a protected file, a symlink to a protected directory, or a moved `.git` is a new
name for what git or swarm runs next: `cp -l .git/config cfg`, then `core.fsmonitor` written
through `cfg`, runs code at the next `git status`. So a command that links, moves or copies a
protected path as a tree (mv, ln, cp -l/-s/-a/-r, rsync, install targets) asks under allow rules
that do not name the path, and so does a write through an existing link (a symlink resolved at
check time; a file with more than one hard link may be a protected file: not known, so ask).
Real files in a real git repository; real bash shows the attacks work; the real rule check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.support import rule_helpers as rules
from tests.support.git_helpers import init_repo
from tests.support.rule_helpers import bash, decide, run
from tests.unit.core.shell.test_evaluation import EVERYTHING

ALLOW = [*EVERYTHING, *(f"Bash({p}:*)" for p in ("rsync", "install", "link", "rename", "git",
                                                 "printf", "shopt"))]
HOOK = "[core]\n\tfsmonitor = touch pwned;false\n"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository, made once: each test gets a copy (its six git commands for every case
    were most of this module's time)."""
    return init_repo(tmp_path_factory.mktemp("links") / "proj",
                     {"a.txt": "one\n", "evil.sh": "#!/bin/sh\n", "src/x.py": "x = 1\n",
                      "sub/keep": ""})


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "proj", symlinks=True))


def asks_everywhere_but_bypass(command: str, cwd: Path) -> None:
    rules.asks_everywhere_but_bypass(command, cwd, ALLOW, under_bash_rule=True)


# -- the attacks work in real bash ---------------------------------------------------------------

ATTACKS = [
    # (the command the rules see, what a later allowed command does, how git is run then)
    ("cp -l .git/config cfg", f"printf '{HOOK}' >> cfg", "git status"),
    ("ln .git/config cfg", f"printf '{HOOK}' >> cfg", "git status"),
    ("ln -s .git g && printf '" + HOOK + "' >> g/config", "true", "git status"),
    ("mv .git g", f"printf '{HOOK}' >> g/config", "git --git-dir=g --work-tree=. status"),
]


@pytest.mark.parametrize(("link", "write", "git"), ATTACKS)
def test_the_link_and_move_attacks_run_code_and_now_ask(link: str, write: str, git: str,
                                                        repo: Path) -> None:
    asks_everywhere_but_bypass(link, repo)
    run(link, repo)
    run(write, repo)
    assert not (repo / "pwned").exists()
    subprocess.run(["bash", "-c", git], cwd=repo, capture_output=True, text=True)
    assert (repo / "pwned").exists(), "the attack did not reach git: the test shows nothing"


def test_writing_through_an_existing_hard_link_asks_and_is_the_attack(repo: Path) -> None:
    os.link(repo / ".git" / "config", repo / "cfg")  # made earlier, by whatever means
    command = f"printf '{HOOK}' >> cfg"
    asks_everywhere_but_bypass(command, repo)
    run(command, repo)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True)
    assert (repo / "pwned").exists()


# -- a command that links, moves or copies a protected tree -------------------------------------

LINKS_AND_MOVES = [
    "cp -l .git/config cfg", "cp --link .git/config cfg", "cp -al .git g", "cp -a .git g",
    "cp -r .git g", "cp -R .swarm s", "cp --archive .claude c", "cp -s .git/config cfg",
    "cp --symbolic-link .git/config cfg", "cp -t sub -l .git/config", "cp -l -- .git/config cfg",
    "ln .git/config x", "ln -- .git/config x", "ln -s .git g", "ln -sfn .git g",
    "ln -s .git g && echo x > g/config", "ln -s ../.git sub/g", "ln -t sub .git/config",
    "ln --target-directory=sub .git/hooks", "ln -s .gi? g", "ln -s .g[i]t g", "mv .[g]it g",
   
    "ln -s .mcp.json m", "ln -s .swarm/settings.json s.json", "ln .mcp.json m",
    "mv .git g", "mv .swarm s", "mv ./.git/ g", "mv src/../.git g", "mv -t sub .git",
    "mv --target-directory=sub .claude", "mv .mcp.json m.json", "mv .git/config cfg",
    "mv -f -- .git g", "cd sub && mv ../.git g", "mv a.txt .gi* sub/",
    "rsync -a .git/ g/", "rsync -a --link-dest=../.git src/ g/", "rsync evil.sh .git/hooks/pre-commit",
    "rsync -a --link-dest .git src/ g/",
    "install evil.sh .git/hooks/pre-commit", "install -m 755 evil.sh .git/hooks/post-checkout",
    "install -t .git/hooks evil.sh", "install -D evil.sh .claude/settings.json",
    "install -d .git/hooks/x",
    # getopt takes an unambiguous prefix of a long option
    "link .git/config cfg", "rename .git g .git", "rename 's/git/g/' .g*",
    "command mv .git g", "sudo -u me ln -s .git g", "bash -c 'ln -s .git g'", "timeout 5 mv .git g",
    "cp --lin .git/config cfg", "cp --target=.git/hooks evil.sh", "mv --targ .git/hooks evil.sh",
    "ln --sym .git g", "cp --arch .git g", "mv --target-dir=sub .git",
]


@pytest.mark.parametrize("command", LINKS_AND_MOVES)
def test_linking_or_moving_a_protected_path_asks_under_allow_rules(command: str,
                                                                   repo: Path) -> None:
    asks_everywhere_but_bypass(command, repo)


def test_absolute_and_swarm_home_sources_ask(repo: Path) -> None:
    home = paths.home()
    (home / "teams" / "t").mkdir(parents=True)
    for command in [f"ln -s {repo}/.git g", f"cp -rs {repo}/.git g", f"ln -s {home}/teams t",
                    f"mv {home}/teams/t t", f"cp -l {home}/teams/t/config.json c"]:
        decision = bash(command, repo, "acceptEdits", allow=ALLOW)
        assert decision.behavior == "ask", (command, decision.reason)


def test_unknown_sources_of_links_and_moves_ask(repo: Path) -> None:
    """An expansion may be `.git` or `-l`; so may a glob once a file is named like an option."""
    (repo / "-l").touch()
    for command in ['ln -s "$D" g', "ln -s $(printf .git) g", 'mv "$X" g', "cp -al $D g",
                    "ln -s .{git,x} g", "cd $D && ln -s config g", 'cp "$F" .git/config c',
                    "cp * sub/", "shopt -s dotglob; mv * sub/"]:
        decision = bash(command, repo, "acceptEdits", allow=ALLOW)
        assert decision.behavior == "ask", (command, decision.reason)
    (repo / "-l").unlink()
    assert bash("cp * sub/", repo, allow=ALLOW).behavior == "allow"


def test_a_move_takes_its_source_away_so_one_outside_the_cwd_asks(repo: Path) -> None:
    for command in ["mv ../x.txt .", "mv /tmp/x src/", "mv -t src ../x.txt"]:
        assert bash(command, repo, allow=ALLOW).behavior == "ask", command
    assert bash("mv src/x.py .", repo, allow=ALLOW).behavior == "allow"


def test_moving_or_relinking_a_hard_linked_file_is_no_protected_write(repo: Path) -> None:
    """Writes through any of its names ask; moving one name, or adding one, changes no file."""
    os.link(repo / ".git" / "config", repo / "cfg")
    assert bash("mv cfg old.cfg", repo, allow=ALLOW).behavior == "allow"
    assert bash("echo x > cfg", repo, allow=ALLOW).behavior == "ask"


def test_an_unknown_word_hides_no_later_protected_source(repo: Path) -> None:
    """Under a bare `Bash` rule unknown words are allowed, as unknown writes are; a protected
    source after one (or after a cd to somewhere unknown) still asks."""
    for command in ['mv "$X" y; mv .git g', f"cd $D && mv {repo}/.git g",
                    'ln -s "$X" y && ln -s .git g']:
        assert bash(command, repo, allow=["Bash"]).behavior == "ask", command


@pytest.mark.parametrize("command", [
    "echo x > .gi?/config", "cp evil.sh .g*/hooks/pre-commit", "echo x | tee .[g]it/config",
    "echo x > .clau*/settings.json", "echo x > g?/config", "shopt -s dotglob; echo x > *t/config",
])
def test_a_glob_that_reaches_a_protected_path_asks_even_under_a_bare_bash_rule(
        command: str, repo: Path) -> None:
    os.symlink(".git", repo / "gg")
    asks_everywhere_but_bypass(command, repo)


def test_a_rule_naming_the_linked_path_exactly_allows_it(repo: Path) -> None:
    command = "ln .git/config x"
    assert bash(command, repo, allow=[f"Bash({command})"]).behavior == "allow"
    assert bash("mv .git g", repo, allow=["Bash(mv .git g)"]).behavior == "allow"
    assert bash("mv .git h", repo, allow=["Bash(mv .git g)", "Bash(mv:*)"]).behavior == "ask"


@pytest.mark.parametrize("command", [
    "cp a.txt b.txt", "cp -r src dst", "cp -a src dst", "cp -l a.txt b.txt", "ln -s a.txt b",
    "ln a.txt b", "ln -sfn src s", "mv a.txt b.txt", "mv src/x.py src/y.py", "mv *.txt sub/",
    "cp -r src/* sub/", "cp .git/config cfg.bak", "rsync -a src/ dst/", "install -m 755 evil.sh bin/e",
    "ln -s src/.gitignore g", "mv a.txt .gitignore", "echo x > a.txt", "cp evil.sh a.txt",
    "link a.txt b.txt", "rename a b a.txt",
])
def test_ordinary_copies_links_and_moves_stay_allowed(command: str, repo: Path) -> None:
    decision = bash(command, repo, "default", allow=ALLOW)
    assert decision.behavior == "allow", (command, decision.reason)


# -- writes through links that exist at check time ----------------------------------------------

def _hard_links(repo: Path) -> dict[str, Path]:
    home = paths.home()
    (home / "teams" / "t").mkdir(parents=True)
    (home / "teams" / "t" / "config.json").write_text("{}")
    (repo / ".mcp.json").write_text("{}")
    links = {"cfg": repo / ".git" / "config", "sub/hook": repo / ".git" / "HEAD",
             "m.json": repo / ".mcp.json", "team.json": home / "teams" / "t" / "config.json"}
    for name, target in links.items():
        os.link(target, repo / name)
    return links


@pytest.mark.parametrize("command", [
    "echo x >> cfg", "echo x > sub/hook", "echo x | tee -a m.json", "cp evil.sh cfg",
    "cat a.txt > team.json", "cd sub && echo x > hook", "mv evil.sh m.json",
])
def test_bash_writes_through_an_existing_hard_link_ask(command: str, repo: Path) -> None:
    _hard_links(repo)
    asks_everywhere_but_bypass(command, repo)


def test_write_and_edit_through_an_existing_hard_link_ask(repo: Path) -> None:
    links = _hard_links(repo)
    for name in links:
        for tool, args in [("Write", {"file_path": name, "content": "x"}),
                           ("Edit", {"file_path": name, "old_string": "a", "new_string": "b"})]:
            for mode, allow in [("acceptEdits", []), ("default", ["Edit"]),
                                ("acceptEdits", ["Write", "Edit(**)"])]:
                decision = decide(tool, args, mode, repo, allow=allow)
                assert decision.behavior == "ask", (tool, name, mode, decision.reason)
            assert decide(tool, args, "bypassPermissions", repo).behavior == "allow"
    named = decide("Write", {"file_path": "cfg", "content": "x"}, "default", repo,
                   allow=["Edit(cfg)"])
    assert named.behavior == "allow", named.reason
    (repo / "single.txt").write_text("x")
    assert decide("Write", {"file_path": "single.txt", "content": "y"}, "acceptEdits",
                  repo).behavior == "allow"


def test_writes_through_an_existing_symlink_resolve_to_the_protected_path(repo: Path) -> None:
    """A symlink made in one command and written in the next: resolved at check time."""
    home = paths.home()
    home.mkdir(parents=True, exist_ok=True)
    os.symlink(".git", repo / "g")
    os.symlink(".git/config", repo / "cfg")
    os.symlink("../.git/hooks", repo / "sub" / "h")
    os.symlink(str(home), repo / "home")
    os.symlink("g", repo / "gg")  # a chain
    for command in ["echo x > g/config", "echo x >> cfg", "cd sub && echo x > h/pre-commit",
                    "echo x > home/teams.json", "cp evil.sh gg/hooks/pre-commit",
                    "echo x | tee gg/config", "cd g && echo x > config"]:
        asks_everywhere_but_bypass(command, repo)
    for path in ["g/config", "cfg", "sub/h/pre-commit", "home/x.json", "gg/config"]:
        decision = decide("Write", {"file_path": path, "content": "x"}, "acceptEdits", repo,
                          allow=["Write"])
        assert decision.behavior == "ask", (path, decision.reason)


# -- a moved or copied git directory stays one ---------------------------------------------------

@pytest.mark.parametrize("made", ["mv .git g", "cp -a .git g", "git clone -q --bare . g"])
def test_a_git_directory_under_another_name_is_protected(made: str, repo: Path) -> None:
    """Made earlier (by a person, or an approved command): git reads its config and hooks as
    those of a repository (`git --git-dir=g`, `cd g && git ..`), whatever it is called."""
    run(made, repo)
    for command in [f"printf '{HOOK}' >> g/config", "cp evil.sh g/hooks/pre-commit",
                    "cd g && echo x > config", "echo x > g/info/../config"]:
        asks_everywhere_but_bypass(command, repo)
    decision = decide("Write", {"file_path": "g/hooks/post-checkout", "content": "x"},
                      "acceptEdits", repo, allow=["Write"])
    assert decision.behavior == "ask", decision.reason
    assert bash("echo x > src/HEAD", repo, allow=ALLOW).behavior == "allow"
