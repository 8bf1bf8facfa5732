"""The team file and team lifecycle (`Team`, core.team.team).

The tests of tests/unit/core/team/test_team.py that start processes."""

from __future__ import annotations

import subprocess
import sys

from swarm.core.team.team import Team


def test_concurrent_member_adds_are_all_kept() -> None:
    """Read-modify-write under the team file lock: no add is lost to a race."""
    team = Team.create("alpha")
    code = "import sys\nfrom swarm.core.team.team import Team\nt = Team.open('alpha')\n" \
           "for i in range(8):\n    t.add_member(f'{sys.argv[1]}{i}')\n"
    procs = [subprocess.Popen([sys.executable, "-c", code, p])
             for p in ("a", "b", "c", "d")]
    for proc in procs:
        assert proc.wait(60) == 0
    names = sorted(m.name for m in team.members())
    assert names == sorted(["team-lead"] + [f"{p}{i}" for p in "abcd" for i in range(8)])

