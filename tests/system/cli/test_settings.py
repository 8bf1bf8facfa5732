"""Settings the swarm executable reads at start (swarm/settings.py): a bad SWARM_HOME is one line."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_runner import run_swarm
from tests.support.helpers import one_line


def test_swarm_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "passwd"
    home.write_text("root:x:0:0::/root:/bin/sh\n")
    proc = run_swarm("team", "list", env={"SWARM_HOME": str(home)})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert one_line(proc.stderr) == f"swarm: error: SWARM_HOME {home} is not a directory"

