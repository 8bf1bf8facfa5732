"""`auto` backend resolution (in its order, with reasons) and building a backend by name."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from swarm.backends.base import PaneBackend
from swarm.backends.hidden import HiddenBackend
from swarm.backends.iterm2 import ITerm2Backend
from swarm.backends.resolve import Choice, get_backend, resolve
from swarm.backends.tmux import TmuxBackend
from swarm.errors import BadInputError


@pytest.fixture(autouse=True)
def outside_terminals(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TERM_PROGRAM", "ITERM_SESSION_ID", "TMUX", "TMUX_PANE", "SWARM_BACKEND"):
        monkeypatch.delenv(var, raising=False)


def path_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """PATH = one directory holding python plus the named tools (osascript is a stub)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python").symlink_to(sys.executable)
    for tool in tools:
        if tool == "osascript":
            stub = bin_dir / "osascript"
            stub.write_text("#!/bin/sh\nexit 0\n")
            stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
        else:
            real = shutil.which(tool)
            assert real, f"{tool} must be installed for this test"
            (bin_dir / tool).symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_auto_is_hidden_without_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path_with(tmp_path, monkeypatch)
    assert shutil.which("tmux") is None
    assert resolve() == Choice(
        "hidden", "tmux is not installed and not in iTerm2: teammates run hidden")
    assert resolve("auto").backend == "hidden"


def test_auto_is_tmux_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path_with(tmp_path, monkeypatch, "tmux")
    assert resolve() == Choice(
        "tmux", "tmux is installed: teammates run in a detached tmux session")
    monkeypatch.setenv("TMUX", "/tmp/tmux-1/default,1,0")
    assert resolve() == Choice(
        "tmux", "running inside tmux ($TMUX is set): teammates split this window")


def test_auto_in_iterm2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path_with(tmp_path, monkeypatch, "tmux", "osascript")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    assert resolve() == Choice("iterm2", "running inside iTerm2 with osascript available")
    monkeypatch.delenv("TERM_PROGRAM")
    monkeypatch.setenv("ITERM_SESSION_ID", "w0t0p0:UUID")
    assert resolve().backend == "iterm2"
    monkeypatch.setenv("TMUX", "/tmp/tmux-1/default,1,0")  # tmux inside iTerm2: tmux first
    assert resolve().backend == "tmux"


def test_iterm2_without_osascript_falls_back(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path_with(tmp_path, monkeypatch, "tmux")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    assert resolve().backend == "tmux"


def test_env_and_explicit_request_override(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path_with(tmp_path, monkeypatch, "tmux")
    monkeypatch.setenv("SWARM_BACKEND", "hidden")
    assert resolve() == Choice("hidden", "$SWARM_BACKEND asked for hidden")
    assert resolve("iterm2") == Choice("iterm2", "--backend asked for iterm2")
    monkeypatch.setenv("SWARM_BACKEND", "screen")
    with pytest.raises(BadInputError, match="unknown backend 'screen'"):
        resolve()
    with pytest.raises(BadInputError, match="unknown backend 'zellij'"):
        resolve("zellij")


def test_get_backend_builds_each_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    tmux = get_backend("tmux", team="alpha", socket="private")
    assert isinstance(tmux, TmuxBackend) and (tmux.team, tmux.socket) == ("alpha", "private")
    assert tmux.server.socket_name == "private"
    iterm = get_backend("iterm2", team="alpha")
    assert isinstance(iterm, ITerm2Backend) and iterm.team == "alpha"
    assert isinstance(get_backend("hidden", team="alpha"), HiddenBackend)
    for backend in (tmux, iterm):
        assert isinstance(backend, PaneBackend)
    with pytest.raises(BadInputError, match="unknown backend 'bogus'"):
        get_backend("bogus")


def test_tmux_backend_defaults_to_the_server_it_runs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TmuxBackend(team="alpha").socket is None  # tmux's default server
    monkeypatch.setenv("TMUX", f"/tmp/tmux-{os.geteuid()}/work,123,0")
    inside = TmuxBackend(team="alpha")
    assert inside.socket == os.path.realpath(f"/tmp/tmux-{os.geteuid()}/work")
    assert inside.server.socket_path == inside.socket
