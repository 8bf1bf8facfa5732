"""A disk that stops taking writes: the teammate's heartbeat keeps trying instead of
dying, and resumes when writes work again; nobody declares it dead for it.

SWARM_HOME sits on a small tmpfs of its own here, filled to the last byte (ENOSPC) and freed
again. Mounting needs root, which CI has.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def swarm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Overrides the suite plugin's (tests/support/pytest_plugin.py): the same private SWARM_HOME, on its own tmpfs."""
    mount = tmp_path / "disk"
    mount.mkdir()
    _mount("-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mount))
    home = mount / "swarm-home"
    monkeypatch.setenv("SWARM_HOME", str(home))
    for var in ("SWARM_TEAM", "SWARM_AGENT_ID", "SWARM_MODEL", "ANTHROPIC_API_KEY", "TMUX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def test_the_heartbeat_survives_a_full_disk(crew: Crew, swarm_home: Path) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    filler = swarm_home.parent / "filler"
    with open(filler, "wb") as handle, contextlib.suppress(OSError):  # to the last byte
        while True:
            handle.write(b"\0" * 65536)
            handle.flush()
    try:
        # Nothing on the disk can change now: once the recorded heartbeat is three intervals
        # old, at least two beats have failed.
        before = crew.state("w1").heartbeat  # type: ignore[union-attr]
        wait_until(lambda: time.time() - before > 0.6, 10, message="failed heartbeats")
        assert crew.procs["w1"].poll() is None
    finally:
        filler.unlink()
    wait_until(lambda: crew.state("w1").heartbeat > before, 10,  # type: ignore[union-attr]
               message="the heartbeat to resume")
    assert crew.cli("status").returncode == 0
    assert crew.state("w1").state == "idle"  # type: ignore[union-attr]
    assert crew.procs["w1"].poll() is None
