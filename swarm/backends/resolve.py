"""Choose a backend (and say why), and build one by name."""

from __future__ import annotations

import importlib
import shutil
from typing import TYPE_CHECKING

from msgspec import Struct

from swarm import settings
from swarm.core.records.names import BACKENDS
from swarm.core.store.select import team_store
from swarm.errors import BadInputError, from_origin

if TYPE_CHECKING:
    from swarm.backends.base import PaneBackend

_MODULES = {"tmux": "swarm.backends.tmux:TmuxBackend",
            "iterm2": "swarm.backends.iterm2:ITerm2Backend",
            "hidden": "swarm.backends.hidden:HiddenBackend",
            "ssh": "swarm.backends.ssh:SshBackend"}
CHOICES = "auto, tmux, iterm2, hidden or ssh:[USER@]HOST[:PORT]"


class Choice(Struct, frozen=True):
    backend: str
    reason: str
    host: str | None = None  # ssh: the teammate's host, `[USER@]HOST[:PORT]`


def get_backend(name: str, team: str | None = None, socket: str | None = None,
                host: str | None = None) -> PaneBackend:
    if name not in _MODULES:
        raise BadInputError(f"unknown backend {name!r}: use {CHOICES}")
    module, _, attr = _MODULES[name].partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise BadInputError(f"backend {name!r} is not available here: {exc}") from exc
    if name == "tmux":
        return cls(team=team, socket=socket)  # type: ignore[no-any-return]
    if name == "ssh":
        return cls(team=team, host=host, socket=socket)  # type: ignore[no-any-return]
    return cls(team=team)  # type: ignore[no-any-return]


def in_iterm2() -> bool:
    return settings.in_iterm2()


def resolve(requested: str | None = None) -> Choice:
    """In this order: --backend / $SWARM_BACKEND, else inside tmux -> tmux; in iTerm2 with osascript
    -> iterm2; tmux installed -> tmux (detached session); else hidden."""
    wanted = requested or settings.backend()
    if wanted != "auto":
        source = "--backend" if requested and requested != "auto" else settings.backend_source()
        # A value from the variable or config.toml: its error says which, and where.
        with from_origin(None if requested else settings.backend_origin()):
            if wanted == "ssh" or wanted.startswith("ssh:"):
                return _ssh_choice(wanted, source)
            if wanted not in BACKENDS:
                raise BadInputError(f"unknown backend {wanted!r}: use {CHOICES}")
        return Choice(wanted, f"{source} asked for {wanted}")
    has_tmux = shutil.which("tmux") is not None
    if settings.tmux_env() and has_tmux:
        return Choice("tmux", "running inside tmux ($TMUX is set): teammates split this window")
    if in_iterm2() and shutil.which("osascript"):
        return Choice("iterm2", "running inside iTerm2 with osascript available")
    if has_tmux:
        return Choice("tmux", "tmux is installed: teammates run in a detached tmux session")
    return Choice("hidden", "tmux is not installed and not in iTerm2: teammates run hidden")


def _ssh_choice(spec: str, source: str) -> Choice:
    """`ssh:[USER@]HOST[:PORT]`: checked here, before anything is registered. A teammate on
    another host shares the team only through a network store: the file store is refused."""
    from swarm.backends.ssh import parse_target

    target = parse_target(spec)
    if not team_store().shared:
        raise BadInputError(
            f"the ssh backend needs a network store: set SWARM_STORE=redis://HOST:PORT/DB "
            f"(the file store in {settings.home()} is not shared with {target.host})")
    return Choice("ssh", f"{source} asked for a teammate on {target}", host=str(target))
