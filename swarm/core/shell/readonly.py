"""The safe tier of `auto` for Bash: a command swarm's parser proves read-only runs with no model
call and nobody asked. Every simple command must be readable (not opaque, no variables set, no
wrapper), made of literal words, write nothing but /dev/null, name only files inside the
working directory, run a program from outside the places a member writes, and be on the
read-only list with its options (`READ_ONLY`, `_GIT_READ`); git only while its configuration
cannot run code (core.shell.git_state). Commands that run the project's code (test runners,
build tools, interpreters) are never safe: a member that edited conftest.py and runs pytest
runs code it wrote, so the reviewer decides (`RUNS_PROJECT_CODE` names why).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Protocol

from swarm.core.shell import parse as shellparse
from swarm.core.shell.parse import SimpleCommand
from swarm.core.shell.protected import inside
from swarm.core.shell.writes import HARMLESS_WRITES, command_writes

# Programs that only read (given the conditions above); those in NO_FILES read no file operand.
READ_ONLY = frozenset({
    "ls", "pwd", "cd", "echo", "printf", "true", "false", "test", "[", "basename", "dirname",
    "realpath", "readlink", "stat", "file", "wc", "head", "tail", "cat", "nl", "cut", "tr", "rev",
    "seq", "expr", "id", "whoami", "uname", "date", "which", "type", "du", "df", "cmp", "diff",
    "tac", "numfmt", "column", "grep", "egrep", "fgrep", "rg", "find", "sort", "uniq", "sed",
    "tree", "md5sum", "sha1sum", "sha256sum", "git"})
NO_FILES = frozenset({"pwd", "echo", "printf", "true", "false", "seq", "expr", "id", "whoami",
                      "uname", "date", "which", "type"})
BUILTINS = frozenset({"cd", "pwd", "echo", "printf", "true", "false", "test", "[", "type"})
# Options that make a read-only program run or write something.
_BAD_OPTIONS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
             "-fls"),
    "rg": ("--pre", "--pre-glob", "--hostname-bin", "-z", "--search-zip"),
    "sort": ("-o", "--output", "--compress-program", "-T", "--temporary-directory"),
    "grep": ("-f", "--file"), "egrep": ("-f", "--file"), "fgrep": ("-f", "--file"),
    "diff": ("--to-file", "--from-file"),
}
# Why a program is never in the safe tier: it runs the project's code.
RUNS_PROJECT_CODE = {
    **dict.fromkeys(("pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec",
                     "phpunit", "ctest"), "a test runner runs the project's code"),
    **dict.fromkeys(("make", "cmake", "ninja", "meson", "cargo", "go", "gradle", "gradlew", "mvn",
                     "ant", "bazel", "just", "task", "rake", "scons", "tsc"),
                    "a build tool runs the project's code"),
    **dict.fromkeys(("npm", "yarn", "pnpm", "bun", "pip", "pip3", "uv", "poetry", "bundle",
                     "composer", "pre-commit"), "a package tool runs the project's scripts"),
    **dict.fromkeys(("python", "python3", "python2", "node", "deno", "ruby", "perl", "php",
                     "bash", "sh", "zsh"), "an interpreter runs code"),
    **dict.fromkeys(("eslint", "prettier", "mypy", "pylint", "ruff"),
                    "a linter loads the project's configuration, which can be code"),
}
# git: subcommands that only read (with the options below), and global options allowed.
_GIT_READ = frozenset({"status", "diff", "log", "show", "blame", "grep", "ls-files", "ls-tree",
                       "rev-parse", "rev-list", "merge-base", "describe", "shortlog", "show-ref",
                       "for-each-ref", "cat-file", "branch", "tag", "remote", "reflog", "stash",
                       "worktree", "config"})
_GIT_GLOBAL = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"})
_GIT_BAD = ("--output", "--ext-diff", "--textconv", "--filters", "--exec", "-O",
            "--open-files-in-pager", "--show-signature", "--no-index", "--edit-description")
_GIT_LISTS = {  # subcommands that change things unless only these options are given
    "branch": frozenset({"--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes",
                         "-v", "-vv", "--verbose"}),
    "tag": frozenset({"-l", "--list"}), "remote": frozenset({"-v", "--verbose"}),
    "reflog": frozenset({"show"}), "stash": frozenset({"list"}), "worktree": frozenset({"list"}),
    "config": frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin",
                         "--show-scope"}),
}


class GitChecks(Protocol):
    def why_unsafe(self) -> str | None: ...


def why_not_safe(command: str, cwd: Path, writable: tuple[Path, ...],
                 git: GitChecks | None) -> str | None:
    """None when every simple command of `command` is proven read-only here; else why not."""
    commands = shellparse.parse(command)
    if not commands:
        return "it runs nothing"
    for one in commands:
        why = _why_not(one, cwd, writable, git)
        if why is not None:
            return why
    return None


def _why_not(command: SimpleCommand, cwd: Path, writable: tuple[Path, ...],
             git: GitChecks | None) -> str | None:
    if command.opaque:
        return f"it cannot be read: {command.opaque}"
    if command.sets_variables or command.runs_string or len(command.layers) != 1:
        return "it sets variables or runs a command through another"
    words = command.argv
    if not words or not all(w.literal for w in words):
        return "a word of it comes from an expansion"
    program = words[0].text
    name = os.path.basename(program)
    if name in RUNS_PROJECT_CODE:
        return f"{name}: {RUNS_PROJECT_CODE[name]}"
    if name not in READ_ONLY or "/" in program:
        return f"{program} is not on the read-only list"
    for word in command_writes(command, [cwd]):
        if not (word.literal and word.text in HARMLESS_WRITES):
            return f"it writes {word.text}"
    if name not in BUILTINS:
        found = shutil.which(name)
        if found is None:
            return f"{name} is not installed"
        real = Path(os.path.realpath(found))
        if any(real.is_relative_to(w) for w in writable):
            return f"{name} runs {real}, a file a member can write"
    args = [w.text for w in words[1:]]
    bad = next((a for a in args for o in _BAD_OPTIONS.get(name, ())
                if a == o or a.startswith(o + "=") or (len(o) == 2 and a.startswith(o))), None)
    if bad is not None:
        return f"{name} {bad} runs or writes something"
    if name == "sed" and not _sed_prints(args):
        return "sed only with -n and line-number p scripts"
    if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return "uniq with two operands writes the second"
    if name == "git":
        why = _git(args, git)
        if why is not None:
            return why
        args = []  # git's operands are revisions and pathspecs inside the repository
    if command.stdin is not None and not _inside_cwd(command.stdin.text, cwd):
        return f"it reads {command.stdin.text}, outside the working directory"
    if name not in NO_FILES:
        outside = next((a for a in args if not a.startswith("-") and not _inside_cwd(a, cwd)),
                       None)
        if outside is not None:
            return f"it names {outside}, outside the working directory"
    return None


def _inside_cwd(text: str, cwd: Path) -> bool:
    path = Path(os.path.expanduser(text))
    return inside(path if path.is_absolute() else cwd / path, cwd)


def _sed_prints(args: list[str]) -> bool:
    if "-n" not in args or any(a.startswith("-") and a != "-n" for a in args):
        return False
    scripts = [a for a in args if a != "-n"][:1]
    return bool(scripts) and all(c.isdigit() or c in ",p$" for c in scripts[0])


def _git(args: list[str], git: GitChecks | None) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in _GIT_GLOBAL:
            return f"git {args[i]} changes what git reads or runs"
        i += 1
    if i == len(args) or args[i] not in _GIT_READ:
        return f"git {args[i] if i < len(args) else ''} is not a read-only git command".replace(
            "  ", " ")
    sub, rest = args[i], args[i + 1:]
    bad = next((a for a in rest for o in _GIT_BAD if a == o or a.startswith(o + "=")), None)
    if bad is not None:
        return f"git {sub} {bad} runs or writes something"
    allowed = _GIT_LISTS.get(sub)
    if allowed is not None:
        flags = [a for a in rest if a.startswith("-") or sub in ("reflog", "stash", "worktree")]
        plain = [a for a in rest if not a.startswith("-")]
        if any(f not in allowed and not f.startswith("--format=") for f in flags) or (
                plain and sub not in ("config", "reflog", "stash", "worktree", "branch", "tag")):
            return f"git {sub} with these options changes something"
        if sub in ("stash", "worktree") and not rest:
            return f"git {sub} alone changes something"
        if sub in ("branch", "tag") and plain and not set(flags) & {"-l", "--list"}:
            return f"git {sub} NAME creates one"
        if sub == "config" and not set(flags) & allowed:
            return "git config without --get or --list changes the configuration"
    if git is not None:
        why = git.why_unsafe()
        if why is not None:
            return why
    return None
