"""Calls that never run, in every mode, whatever a rule, the lead, the reviewer or `--always`
says: writes into what makes git or swarm run code (`.git/config`, `.git/hooks/`, `.git/info/
attributes`, $SWARM_HOME but the worktrees, a checkout's `.swarm/`), a download piped into a
shell, a force-push to the default branch, `rm -r` of the repository or the home directory,
and reading credential stores (ssh keys, cloud and package-registry logins, each kind's login
files, the lead's key). `forbidden()` gives ("deny", why), ("ask", why) when it cannot be known
(an `rm -r` of a word from an expansion: a person decides, never the reviewer), or None.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from swarm import settings
from swarm.core import kinds
from swarm.core.records.names import KEY_FILE
from swarm.core.shell import parse as shellparse
from swarm.core.shell.parse import SimpleCommand
from swarm.core.shell.protected import absolute
from swarm.core.shell.words import OTHER_SHELLS, SHELLS
from swarm.core.shell.writes import HARMLESS_WRITES, command_writes
from swarm.core.store import paths

# Under $HOME: files and folders that hold credentials (`*.pub` and known_hosts in ~/.ssh are
# public).
CREDENTIALS = (".ssh", ".aws/credentials", ".aws/sso/cache", ".config/gcloud", ".azure",
               ".kube/config", ".docker/config.json", ".netrc", ".git-credentials",
               ".config/gh/hosts.yml", ".npmrc", ".pypirc", ".gnupg", ".password-store",
               "Library/Keychains")
_PUBLIC = (".pub", "known_hosts")
FETCHERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
INTERPRETERS = frozenset({"python", "python2", "python3", "pypy", "node", "deno", "bun", "ruby",
                          "perl", "php", "lua"})
# In a git dir: what makes git run code.
_GIT_CODE = ("config", "config.worktree", "hooks", "info/attributes")
DEFAULT_BRANCHES = ("main", "master")
# Under $SWARM_HOME: agents' memory (core.agents.memory), not configuration; a write there is
# a protected path as before (its own memory file, acceptEdits).
MEMORY = (("agent-memory",),)
_FORCE = frozenset({"-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror",
                    "--delete", "-d"})


def credential_paths() -> tuple[str, ...]:
    """The credential stores of this HOME (and the agent CLIs' homes where variables move them)."""
    moved = tuple(settings.raw(u.variable or "") for u in kinds.user_config_dirs())
    return _credential_paths(os.path.expanduser("~"), moved)


@lru_cache(maxsize=8)
def _credential_paths(home_dir: str, moved: tuple[str, ...]) -> tuple[str, ...]:
    home = os.path.realpath(home_dir)
    found = [os.path.join(home, c) for c in CREDENTIALS]
    for user_home, base in zip(kinds.user_config_dirs(), moved, strict=True):
        where = base or os.path.join(home, user_home.default)
        found += [os.path.join(os.path.realpath(where), f) for f in user_home.login_files]
    return tuple(found)


def _is_credential(text: str, cwd: Path) -> str | None:
    if not text or text.startswith("-"):
        return None
    value = text.split("=", 1)[-1]
    # A plain name is a credential only from inside a credential store (never a cwd).
    if "/" not in value and not value.startswith("~") and value != KEY_FILE and not any(
            str(cwd).startswith(s) for s in credential_paths()):
        return None
    real = os.path.realpath(absolute(value, cwd))
    if os.path.basename(real) == KEY_FILE:
        return real
    if real.startswith("/proc/") and real.rsplit("/", 1)[-1] in ("environ", "mem"):
        return real
    for secret in credential_paths():
        if (real == secret or real.startswith(secret + os.sep)) and not real.endswith(_PUBLIC):
            return real
    return None


def _swarm_config(rest: tuple[str, ...]) -> bool:
    """Is `rest` (from `.swarm` on) configuration swarm runs code from (its kind's project
    configuration: settings, agents, skills), or a folder holding it?"""
    relative = "/".join(rest)
    for config in kinds.of_member(None).project_config:
        path = config.path.rstrip("/")
        if config.runs_code and path.startswith(".swarm") and (
                relative == path or relative.startswith(path + "/")
                or path.startswith(relative + "/")):
            return True
    return False


def _code_write(text: str, cwd: Path) -> str | None:
    """A write that changes what git or swarm runs: where, else None."""
    real = os.path.realpath(absolute(text, cwd))
    parts = Path(real).parts
    for i, part in enumerate(parts):
        if part == ".git":
            rest = "/".join(parts[i + 1:])
            if any(rest == c or rest.startswith(c + "/") for c in _GIT_CODE) or (
                    rest.startswith(("modules/", "worktrees/")) and rest.endswith("config")):
                return real
        if part == ".swarm" and _swarm_config(parts[i:]):
            return real
    home = os.path.realpath(paths.home())
    if real == home or real.startswith(home + os.sep):
        rel = Path(real).relative_to(home).parts
        in_tree = (rel[:1] == ("teams",) and len(rel) >= 4 and rel[2] == "worktrees") or (
            rel[:1] == ("kept-worktrees",) and len(rel) >= 2) or rel[:1] in MEMORY
        if not in_tree:
            return real
    return None


def forbidden(tool_name: str, args: dict[str, Any], cwd: Path,
              repo: Path | None = None) -> tuple[str, str] | None:
    """("deny" | "ask", why) for a built-in forbidden call, else None. `repo`: the checkout's
    root (its removal is forbidden too)."""
    if tool_name in ("Read", "Grep", "Glob", "LS", "NotebookRead"):
        raw = args.get("file_path") or args.get("path") or args.get("notebook_path") or ""
        pattern = str(args.get("pattern", "")) if tool_name == "Glob" else ""
        for text in (str(raw), os.path.join(str(raw) or ".", pattern) if pattern else ""):
            secret = _is_credential(text, cwd) if text else None
            if secret:
                return "deny", f"it reads a credential store ({secret})"
        return None
    if tool_name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        raw = str(args.get("file_path") or args.get("notebook_path") or "")
        where = _code_write(raw, cwd) if raw else None
        return ("deny", f"it writes {where}, which decides what git or swarm runs") if where \
            else None
    if tool_name != "Bash":
        return None
    return _bash(str(args.get("command", "")), cwd, repo)


def _bash(command: str, cwd: Path, repo: Path | None) -> tuple[str, str] | None:
    commands = shellparse.parse(command)
    for one in commands:
        for word in command_writes(one, [cwd]):
            if word.literal and word.text not in HARMLESS_WRITES:
                where = _code_write(word.text, cwd)
                if where:
                    return "deny", f"it writes {where}, which decides what git or swarm runs"
        for layer in one.layers:
            for word in layer:
                secret = _is_credential(word.text, cwd) if word.literal else None
                if secret:
                    return "deny", f"it reads a credential store ({secret})"
    programs = {c.program for c in commands}
    if programs & FETCHERS and any(_reads_code(c) for c in commands):
        return "deny", "it pipes a download into a shell or an interpreter"
    for one in commands:
        found = _force_push(one) or _removes_home(one, cwd, repo)
        if found:
            return found
    return None


def _reads_code(command: SimpleCommand) -> bool:
    if command.opaque:
        return True
    argv = [w.text for w in command.argv]
    program = command.program or ""
    return (program in SHELLS | OTHER_SHELLS | INTERPRETERS) and (
        len(argv) == 1 or argv[1] in ("-", "-s", "/dev/stdin"))


def _force_push(command: SimpleCommand) -> tuple[str, str] | None:
    argv = [w.text for w in command.argv]
    if command.program != "git" or "push" not in argv:
        return None
    rest = argv[argv.index("push") + 1:]
    force = any(a in _FORCE or a.startswith("--force") for a in rest)
    refs = [a for a in rest if not a.startswith("-")][1:]
    force = force or any(r.startswith(("+", ":")) for r in refs)
    if not force:
        return None
    targets = [r.lstrip("+:").rsplit(":", 1)[-1].removeprefix("refs/heads/") for r in refs]
    if not targets or any(t in DEFAULT_BRANCHES or not t for t in targets):
        return "deny", "a force-push to the default branch (or one that may be it)"
    return None


def _removes_home(command: SimpleCommand, cwd: Path, repo: Path | None) -> tuple[str, str] | None:
    argv = command.argv
    if command.program not in ("rm", "shred") or not any(
            w.text in ("-r", "-R", "--recursive") or (w.text.startswith("-") and not
            w.text.startswith("--") and set(w.text[1:]) & {"r", "R"}) for w in argv[1:]):
        return None
    home = os.path.realpath(os.path.expanduser("~"))
    keep = {"/", home, os.path.realpath(paths.home())}
    if repo is not None:
        keep |= {os.path.realpath(repo), os.path.realpath(repo / ".git")}
    for word in argv[1:]:
        if word.text.startswith("-"):
            continue
        if not word.literal:
            return "ask", f"rm -r of {word.text}, which may be the repository or home"
        real = os.path.realpath(absolute(word.text, cwd))
        if any(k == real or k.startswith(real.rstrip("/") + "/") for k in keep):
            return "deny", f"it deletes {real}, the repository, the home directory or above"
    return None
