"""Workspace trust: a project's own configuration runs nothing until the user trusts it.

Project configuration is what a checkout carries that can run commands or raise rights for any
kind of teammate, found from the cwd up to the git root (the nearest of each): the places each
kind's entry in the registry of teammate kinds names (core.kinds: `.swarm/settings.json`,
`.claude/settings.json`, `.mcp.json`, `.swarm/agents/*.md`, `.claude/agents/*.md`, the skills,
`.codex/config.toml`, `.gemini/settings.json`, ...), and the scripts of the checkout their hook
and server commands run (`./scripts/hook.sh`, `bash .swarm/hooks/x.sh`: core.trust.scripts says
which). User configuration (`$SWARM_HOME/...`, `~/.claude/...`, each kind's own folder) is
never project configuration. The files are read once: the digest and the loaders use the same
bytes, so what was trusted is what runs.

`$SWARM_HOME/trust.json` lists trusted project roots, each with the digest of the files it was
trusted with (relative path + content): a new, changed, renamed or removed file is a different
digest, so a pulled commit that adds a hook is untrusted until trusted again. A run is trusted
by a matching record, `--trust-project`, `SWARM_TRUST_PROJECT=1`, or a grant its spawner wrote in
the member entry for this very digest. A trust file that does not parse trusts nothing and says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from msgspec import Struct

from swarm import settings
from swarm.core.kinds import ConfigPath, Format, project_config_paths, user_config_dirs
from swarm.core.records import base as records
from swarm.core.records.base import Record, field
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir, locked, quarantine, utcnow_iso, write_model
from swarm.core.text.terminal import visible_line
from swarm.core.trust.scripts import named_scripts, parsed

STORE_VERSION = 1


def places() -> tuple[ConfigPath, ...]:
    """Where project configuration that can run code or raise rights lives: every teammate
    kind's, from the registry (core.kinds). Instructions (CLAUDE.md, ...) are text the model
    reads: they are protected paths, but trusting covers what runs."""
    return tuple(p for p in project_config_paths() if p.runs_code)


class ConfigFile(Struct, frozen=True):
    kind: str  # the ConfigPath key it was found as (`settings`, `codex_config`), or `script`
    path: Path  # absolute
    relative: str  # to the project root it was found in, e.g. `.swarm/agents/x.md`
    data: bytes | None  # None: it could not be read (the loaders report it; it still counts)
    format: Format = "text"  # how it reads (core.kinds): json, toml, markdown, text, dotenv

    def text(self) -> str:
        """Its text; OSError or UnicodeDecodeError when it has none (the loaders' problem)."""
        if self.data is None:
            raise OSError(f"cannot read {self.path}")
        return self.data.decode("utf-8")


class ProjectConfig(Struct, frozen=True):
    root: Path | None  # the project trust is recorded for (the git root); None: no project
    files: tuple[ConfigFile, ...] = ()

    def of(self, kind: str) -> list[ConfigFile]:
        return [f for f in self.files if f.kind == kind]

    def first(self, kind: str) -> ConfigFile | None:
        found = self.of(kind)
        return found[0] if found else None

    def names(self) -> list[str]:
        return sorted(f.relative for f in self.files)

    def digest(self) -> str:
        entries = sorted([f.relative, hashlib.sha256(f.data).hexdigest() if f.data is not None
                          else None] for f in self.files)
        return hashlib.sha256(json.dumps(entries).encode()).hexdigest()

    def without_files(self) -> ProjectConfig:
        return ProjectConfig(self.root)


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except OSError:
        return path


def _user_places() -> set[Path]:
    """The user's own copies, which a walk through $HOME (a dotfiles repository) would meet."""
    home = Path.home()
    found = {paths.user_settings(), paths.user_mcp_config(), paths.user_agents_dir(),
             paths.user_skills_dir(), paths.claude_user_skills_dir()}
    for user in user_config_dirs():  # each kind's own folder: `~/.codex/config.toml`, ...
        moved = settings.raw(user.variable) if user.variable else None
        for place in places():
            first, _, rest = place.path.partition("/")
            if first == user.default and rest:
                found.update({home / place.path, *([Path(moved) / rest] if moved else [])})
    return {_resolved(p) for p in found}


def _walk(start: Path) -> tuple[Path, dict[str, tuple[Path, Path]]]:
    """The nearest of each kind from `start` upward, never above the git root (the directory
    holding `.git`, a directory or, in a worktree, a file). Outside a repository the walk stops
    below $HOME. Returns the project root and {kind: (path, the root it is relative to)}."""
    start = _resolved(start)
    home, users = _resolved(Path.home()), _user_places()
    found: dict[str, Path] = {}
    top, git_root = start, None
    for directory in (start, *start.parents):
        is_repo = (directory / ".git").exists()
        if directory == home and not is_repo:
            break
        for place in places():
            candidate = directory / place.path
            if place.key in found or _resolved(candidate) in users:
                continue
            if candidate.is_dir() if place.pattern else candidate.is_file():
                found[place.key] = candidate
                top = directory
        if is_repo:
            git_root = directory
            break
    root = git_root or top
    return root, {kind: (path, root) for kind, path in found.items()}


def project_root(cwd: str | Path) -> Path:
    return _walk(Path(cwd))[0]


def find_project_config(cwd: str | Path, origin: str | Path | None = None) -> ProjectConfig:
    """The project configuration an agent in `cwd` would use. `origin`: for a worktree, the
    same directory in the checkout it was made from, where files that are not committed still
    are; a kind missing from the worktree is taken from there, and trust is the origin's."""
    root, found = _walk(Path(cwd))
    if origin is not None:
        root, from_origin = _walk(Path(origin))
        found = {**from_origin, **found}
    files: list[ConfigFile] = []
    scripts: list[ConfigFile] = []
    for place in places():
        if place.key not in found:
            continue
        path, base = found[place.key]
        targets = _definition_files(path, place.pattern) if place.pattern else [path]
        for target in targets:
            file = ConfigFile(place.key, target, _relative(target, base), _read(target),
                              place.format)
            files.append(file)
            # The directory holding the configuration first (a worktree's own), then the root.
            holder = path.parents[len(Path(place.path).parts) - 1]
            scripts.extend(_scripts(file, [holder, *([base] if base != holder else [])]))
    seen = {f.path for f in files}
    for script in scripts:
        if script.path not in seen:
            seen.add(script.path)
            files.append(script)
    return ProjectConfig(root, tuple(files))


def _scripts(file: ConfigFile, bases: list[Path]) -> list[ConfigFile]:
    if file.data is None or file.format in ("text", "dotenv"):  # text runs nothing
        return []
    value = parsed(file.format, file.data, file.relative)
    return [ConfigFile("script", path, _relative(path, bases[-1]), _read(path))
            for path in named_scripts(value, bases)]


def _definition_files(directory: Path, pattern: str) -> list[Path]:
    try:
        return sorted(p for p in directory.glob(pattern) if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(directory).parts))
    except OSError:
        return []


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# -- the record ------------------------------------------------------------------------------------
class TrustEntry(Record, kw_only=True):
    digest: str
    trusted_at: str = field(default_factory=utcnow_iso)
    files: list[str] = []


class TrustStore(Record, kw_only=True):
    version: int = STORE_VERSION
    projects: dict[str, TrustEntry] = {}


def read_store() -> tuple[TrustStore, str | None]:
    """The record, and a warning when it cannot be used (then nothing is trusted by it)."""
    path = paths.trust_file()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return TrustStore(), None
    except OSError as exc:
        return TrustStore(), f"{path} cannot be read ({exc.strerror}): every project is untrusted"
    try:
        store = records.decode(data, TrustStore)
    except records.DecodeError as exc:
        why = str(exc)
        return TrustStore(), (f"{path} is not a valid trust file ({why}): every project is"
                              " untrusted until you run `swarm trust` again")
    if store.version != STORE_VERSION:
        return TrustStore(), (f"{path} has version {store.version}, this swarm reads"
                              f" {STORE_VERSION}: every project is untrusted")
    return store, None


def _update(change: Callable[[TrustStore], object]) -> None:
    """Change the record under its lock; one that does not parse is moved aside first."""
    path = paths.trust_file()
    ensure_dir(path.parent)
    with locked(path):
        store, problem = read_store()
        if problem is not None and path.exists():
            with contextlib.suppress(FileNotFoundError):
                quarantine(path, "not a trust file this swarm can read")
        change(store)
        write_model(path, store)


def record(config: ProjectConfig) -> TrustEntry:
    """Trust `config` (the files as they were read for the summary the user saw)."""
    if config.root is None:
        raise ValueError("no project to trust")
    entry = TrustEntry(digest=config.digest(), files=config.names())
    _update(lambda store: store.projects.__setitem__(str(config.root), entry))
    return entry


def revoke(root: Path) -> bool:
    """Forget the trust of `root`; False when it was not trusted."""
    removed: list[TrustEntry | None] = []
    _update(lambda store: removed.append(store.projects.pop(str(root), None)))
    return removed[0] is not None


class TrustedProject(Record, kw_only=True):
    """One record as `swarm trust --list` shows it, with how it stands now."""

    root: str
    digest: str
    trusted_at: str
    files: list[str]
    state: Literal["trusted", "changed", "missing"]


def trusted_projects() -> tuple[list[TrustedProject], str | None]:
    store, warning = read_store()
    rows = []
    for root, entry in sorted(store.projects.items()):
        if not Path(root).is_dir():
            state: Literal["trusted", "changed", "missing"] = "missing"
        else:
            state = "trusted" if find_project_config(root).digest() == entry.digest else "changed"
        rows.append(TrustedProject(root=root, digest=entry.digest, trusted_at=entry.trusted_at,
                                   files=entry.files, state=state))
    return rows, warning


# -- the decision ----------------------------------------------------------------------------------
RUN_REASONS = ("--trust-project", "SWARM_TRUST_PROJECT=1", "granted for this run")


class TrustDecision(Struct, frozen=True):
    config: ProjectConfig
    trusted: bool
    reason: str
    warning: str | None = None  # the trust file could not be used

    @property
    def project(self) -> ProjectConfig:
        """What to load: the project's files when trusted, none otherwise."""
        return self.config if self.trusted else self.config.without_files()

    @property
    def for_run(self) -> bool:
        """Trusted for this run only (not recorded): a teammate it spawns needs the grant."""
        return self.trusted and self.reason in RUN_REASONS

    @property
    def state(self) -> str:
        if not self.config.files:
            return "none"
        return "trusted" if self.trusted else "untrusted"

    def notice(self) -> str | None:
        """The one line that says what was ignored, or None when nothing was."""
        if self.trusted or not self.config.files:
            return None
        root = visible_line(str(self.config.root))
        return (f"project configuration ignored ({self.reason}): "
                f"{', '.join(visible_line(n) for n in self.config.names())} in {root}; review it and"
                f" trust it with `swarm trust {root}` (or --trust-project for one run)")


def decide(cwd: str | Path, origin: str | Path | None = None, *, flag: bool = False,
           granted: str | None = None) -> TrustDecision:
    """Is the project configuration of `cwd` trusted for this run? `flag`: --trust-project;
    `granted`: the digest the spawner trusted for this run (from the member entry)."""
    config = find_project_config(cwd, origin)
    if not config.files:
        return TrustDecision(config, True, "no project configuration")
    if flag:
        return TrustDecision(config, True, "--trust-project")
    if settings.trust_project():
        return TrustDecision(config, True, "SWARM_TRUST_PROJECT=1")
    digest = config.digest()
    if granted is not None and granted == digest:
        return TrustDecision(config, True, "granted for this run")
    store, warning = read_store()
    entry = store.projects.get(str(config.root))
    if entry is not None and entry.digest == digest:
        return TrustDecision(config, True, "trusted", warning)
    reason = "changed since you trusted it" if entry is not None else "not trusted"
    return TrustDecision(config, False, reason, warning)
