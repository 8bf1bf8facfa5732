"""An argument that is not UTF-8, given by a real process to the `swarm` executable, is bad
input: exit 2 with one `swarm: error:` line naming it, and nothing written (in-process:
tests/unit/cli/test_utf8_arguments.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarm.core.team.team import Team


@pytest.mark.parametrize("argv", [
    [b"tasks", b"add", b"\xff", b"--team", b"alpha"],
    [b"send", b"alice", b"caf\xe9", b"--team", b"alpha"],
    [b"team", b"create", b"t\xff"],
])
def test_a_real_process_given_bytes_exits_2(team: Team, argv: list[bytes]) -> None:
    swarm = shutil.which("swarm", path=str(Path(sys.executable).parent)) or "swarm"
    result = subprocess.run([os.fsencode(swarm), *argv], capture_output=True, timeout=60)
    assert result.returncode == 2, result
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swarm: error: "), lines
    assert "not UTF-8" in lines[0], lines
    assert team.tasks.list() == []
    assert Team("alpha").inbox("alice", checked=False).messages() == []
