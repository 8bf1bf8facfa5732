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


IDLE = "import time; time.sleep(60)"


def test_a_recorded_pid_now_anothers_is_never_signalled() -> None:
    """A member with no state record (it died before writing one, or the store lost it) has
    only the team file's pid, which by now may be any process's: `swarm team delete --force`
    and `swarm kill` leave that process alone; a process running the member's own
    `swarm agent --agent-id` is the member and is stopped."""
    from swarm.ops.member.control import delete_team, kill

    other = subprocess.Popen([sys.executable, "-c", IDLE])
    agent = subprocess.Popen([sys.executable, "-c", IDLE, "agent", "--agent-id", "w2@alpha"])
    try:
        team = Team.create("alpha")
        team.add_member("w1", pid=other.pid)
        team.add_member("w2", pid=agent.pid)
        assert [m.name for m in team.live_members()] == ["w2"]
        kill(team, "w1")
        assert other.poll() is None
        assert delete_team("alpha", force=True).stopped == ["w2"]
        assert agent.wait(10) is not None
        assert other.poll() is None
    finally:
        for proc in (other, agent):
            proc.kill()
            proc.wait()
