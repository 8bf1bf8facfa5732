"""Can git's configuration run code right now? For the safe tier (core.shell.readonly): `git
status`, `diff`, `log`, `show`, `blame`, `grep` run programs the configuration names
(`core.fsmonitor`, hooks, diff drivers and textconv, clean/process filters, `gpg.program` with
`log.showSignature`, ...), and a member may set any of them with one write to a file in its
worktree (`include.path`). So a git command is safe only while the code-running entries are
those the team started with (a snapshot the spawner took, under $SWARM_HOME where members do
not write), and none of their programs or hooks lies inside a place a member writes.

The effective configuration (`git config --list --show-origin -z`) costs ~1 ms: it is read again
only when one of the files it came from, the hooks or the candidate config files changed
(stat). Any failure to read it means not safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from swarm import settings
from swarm.core.store import paths

# Keys whose value runs code, or makes git run a program (matched case-folded; `*` one part).
CODE_KEYS = ("core.fsmonitor", "core.hookspath", "core.pager", "pager.*", "diff.external",
             "diff.*.command", "diff.*.textconv", "filter.*.clean", "filter.*.smudge",
             "filter.*.process", "gpg.program", "gpg.*.program", "log.showsignature",
             "core.sshcommand", "core.editor", "sequence.editor", "interactive.difffilter",
             "credential.helper", "include.path", "includeif.*.path", "core.askpass")
_CODE_RE = re.compile("|".join("(?:" + re.escape(k).replace(r"\*", r"[^.]+") + ")"
                               for k in CODE_KEYS) + r"\Z")
_NOT_PROGRAMS = frozenset({"log.showsignature", "include.path"})  # a flag, a file: no program
READ_TIMEOUT = 5.0
Entry = tuple[str, str, str]  # (key, value, origin)


# What a safe git command runs with: git's code-running settings off (a filter can only be
# turned off by its name: not here, a limit in docs/design/trust.md).
SAFE_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_CONFIG_COUNT": "5",
                "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "false",
                "GIT_CONFIG_KEY_1": "core.hooksPath", "GIT_CONFIG_VALUE_1": "/dev/null",
                "GIT_CONFIG_KEY_2": "diff.external", "GIT_CONFIG_VALUE_2": "",
                "GIT_CONFIG_KEY_3": "log.showSignature", "GIT_CONFIG_VALUE_3": "false",
                "GIT_CONFIG_KEY_4": "core.pager", "GIT_CONFIG_VALUE_4": "cat"}


def _git_dir(cwd: Path) -> Path | None:
    """The `.git` dir (or the worktree's git dir) above `cwd`; None outside a repository."""
    here = cwd.resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = dot.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                return (folder / text[7:].strip()).resolve()
    return None


def _common_dir(git_dir: Path) -> Path:
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / common.read_text().strip()).resolve()
    return git_dir


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size, found.st_ino)


class GitState:
    """The code-running configuration of one repository, read again only when a file changed."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.git_dir = _git_dir(cwd)
        self._key: object = None
        self._entries: frozenset[Entry] | None = None
        self._origins: tuple[Path, ...] = ()
        self.last_hooks: dict[str, str] = {}

    def _candidates(self) -> list[Path]:
        home = Path(os.path.expanduser("~"))
        xdg = Path(settings.raw("XDG_CONFIG_HOME") or home / ".config")  # as git reads it
        found = [home / ".gitconfig", xdg / "git" / "config", Path("/etc/gitconfig")]
        if self.git_dir is not None:
            common = _common_dir(self.git_dir)
            found += [common / "config", self.git_dir / "config.worktree", common / "hooks"]
            found += [common / "modules"]
        return found

    def _stamp(self) -> object:
        """What changes when the configuration or the hooks may have: the config files (and
        those it included), the hooks folder (a hook added, removed or renamed) and each hook."""
        files = [*self._candidates(), *self._origins]
        hooks = self.hooks_dir()
        live = tuple(sorted(n for n in os.listdir(hooks) if not n.endswith(".sample"))) \
            if hooks is not None and hooks.is_dir() else ()
        return (tuple(_stat(f) for f in files), live,
                tuple(_stat(hooks / n) for n in live) if hooks is not None else ())

    def entries(self) -> frozenset[Entry] | None:
        """The code-running entries with their origin; None when git could not say."""
        stamp = self._stamp()
        if stamp == self._key and self._entries is not None:
            return self._entries
        try:
            out = subprocess.run(["git", "config", "--list", "--show-origin", "-z"],
                                 cwd=self.cwd, capture_output=True, timeout=READ_TIMEOUT,
                                 env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode != 0:
            return None
        fields = out.stdout.decode(errors="replace").split("\0")
        entries: set[Entry] = set()
        origins: set[Path] = set()
        for origin, pair in zip(fields[0::2], fields[1::2], strict=False):
            key, _, value = pair.partition("\n")
            if origin.startswith("file:"):
                origins.add((self.cwd / origin[5:]).resolve())
            if _CODE_RE.match(key.casefold()):
                entries.add((key.casefold(), value, origin))
        self._origins = tuple(sorted(origins))
        self.last_hooks = self._read_hooks()
        self._key, self._entries = self._stamp(), frozenset(entries)
        return self._entries

    def hooks_dir(self) -> Path | None:
        if self.git_dir is None:
            return None
        return _common_dir(self.git_dir) / "hooks"

    def hooks(self) -> dict[str, str]:
        """Executable hooks (name -> sha256) in the repository's hooks folder, as of the last
        `entries()`."""
        if self.entries() is None:
            return self._read_hooks()
        return self.last_hooks

    def _read_hooks(self) -> dict[str, str]:
        folder = self.hooks_dir()
        found: dict[str, str] = {}
        if folder is None or not folder.is_dir():
            return found
        for name in sorted(os.listdir(folder)):
            path = folder / name
            if path.is_file() and os.access(path, os.X_OK) and not name.endswith(".sample"):
                found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found

    def snapshot(self) -> dict[str, object] | None:
        entries = self.entries()
        if entries is None:
            return None
        return {"entries": sorted(list(e) for e in entries), "hooks": self.hooks()}


def _snapshot_path(team: str, git_dir: Path) -> Path:
    digest = hashlib.sha256(str(_common_dir(git_dir)).encode()).hexdigest()[:16]
    return paths.team_dir(team) / "git-snapshots" / f"{digest}.json"


def take_snapshot(team: str, cwd: Path) -> None:
    """Record the repository's code-running configuration as the team starts with it (once per
    repository: a later spawn never blesses what a member changed meanwhile)."""
    state = GitState(cwd)
    if state.git_dir is None:
        return
    target = _snapshot_path(team, state.git_dir)
    if target.exists():
        return
    snap = state.snapshot()
    if snap is None:
        return
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(snap))
    os.replace(tmp, target)


class GitCheck:
    """`why_unsafe()`: why git may run code here now, or None. One per agent and cwd."""

    def __init__(self, team: str, cwd: Path, writable: tuple[Path, ...]) -> None:
        self.team = team
        self.state = GitState(cwd)
        self.writable = tuple(p.resolve() for p in writable)
        self._snapshot: dict[str, object] | None = None
        self._loaded = False

    def _snap(self) -> dict[str, object]:
        if not self._loaded and self.state.git_dir is not None:
            with contextlib.suppress(OSError, ValueError):
                self._snapshot = json.loads(
                    _snapshot_path(self.team, self.state.git_dir).read_text())
            self._loaded = True
        return self._snapshot or {"entries": [], "hooks": {}}

    def why_unsafe(self) -> str | None:
        if self.state.git_dir is None:
            return None  # not a repository: git reads the user's configuration only
        entries = self.state.entries()
        if entries is None:
            return "git's configuration could not be read"
        snap = self._snap()
        listed = snap.get("entries")
        known = {tuple(e) for e in listed} if isinstance(listed, list) else set()
        new = sorted(e for e in entries if e not in known)
        if new:
            return f"git's configuration changed since the team started: {new[0][0]}"
        if self.state.last_hooks != snap.get("hooks", {}):
            return "git's hooks changed since the team started"
        for key, value, _ in entries:
            if key in _NOT_PROGRAMS or key.endswith(".path"):
                continue
            program = self._program(value)
            if program is not None and any(program.is_relative_to(w) for w in self.writable):
                return f"git runs {program} ({key}), a file a member can write"
        return None

    def _program(self, value: str) -> Path | None:
        first = value.strip().split()[0] if value.strip() else ""
        if not first or first in ("true", "false") or first.startswith("!"):
            first = first.lstrip("!")
        if not first:
            return None
        if "/" in first:
            return (self.state.cwd / os.path.expanduser(first)).resolve()
        found = shutil.which(first)
        return Path(found).resolve() if found else None
