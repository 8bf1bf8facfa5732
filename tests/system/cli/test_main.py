"""The foundation commands: `swarm team ...`, `swarm send`, `swarm inbox`, `swarm tasks ...`.

The tests of tests/unit/cli/test_main.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import psutil

from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from tests.support.helpers import wait_until
from tests.unit.cli.test_main import (
    SWARM_EXE,
    assert_one_error,
    run_exe,
    sleeper,  # noqa: F401 - the fixtures
)


def test_bad_names_via_the_real_executable() -> None:
    for name in ("../x", "a b", "a@b", "a" * 100, "a\x07b"):
        result = run_exe("team", "create", name)
        assert_one_error(result, 2, "invalid team name")
        assert result.out == ""
    assert not paths.teams_dir().exists() or list(paths.teams_dir().iterdir()) == []



def test_team_create_names_the_team_for_the_shell(tmp_path: Path) -> None:
    """`export SWARM_TEAM=$(swarm team create alpha)` exports the team really created, also on
    a name clash (alpha-xxxx); the notes go to the terminal (stderr), not into the variable."""
    script = ("set -e\n"
              "export SWARM_TEAM=$(swarm team create alpha)\n"
              "first=$SWARM_TEAM\n"
              "export SWARM_TEAM=$(swarm team create alpha)\n"
              "printf '%s %s\\n' \"$first\" \"$SWARM_TEAM\"\n"
              "swarm team show --json\n")
    env = {**os.environ, "PATH": f"{SWARM_EXE.parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    names, shown = proc.stdout.split("\n", 1)
    first, second = names.split(" ")
    assert first == "alpha" and second.startswith("alpha-") and len(second) == len("alpha-") + 4
    assert json.loads(shown)["name"] == second  # `team show` found the exported team
    assert sorted(t.name for t in Team.list()) == sorted([first, second])
    assert "created team alpha;" in proc.stderr
    assert f"created team {second} ('alpha' was taken)" in proc.stderr



def test_team_delete_refuses_live_member_then_force_kills(
    team: Team, sleeper: subprocess.Popen[bytes]
) -> None:
    started = psutil.Process(sleeper.pid).create_time()
    write_state("alpha", "alice", AgentState(state="working", pid=sleeper.pid, started_at=started))
    refused = run_exe("team", "delete", "alpha")
    assert_one_error(refused, 1, "alice", "--force")
    assert paths.team_config("alpha").exists() and sleeper.poll() is None
    forced = run_exe("team", "delete", "alpha", "--force", "--json")
    assert forced.code == 0, forced
    assert forced.json() == {"deleted": "alpha", "stopped": ["alice"],
                             "worktrees": []}
    wait_until(lambda: sleeper.poll() is not None, timeout=10, message="member to be killed")
    assert not paths.team_dir("alpha").exists()



def test_tasks_exit_codes_via_the_executable(team: Team) -> None:
    team.tasks.add("contested")
    team.tasks.claim("1", "alice")
    refused = run_exe("tasks", "claim", "1", "--as", "bob", "--team", "alpha")
    assert_one_error(refused, 1, "already owned by alice")
    assert_one_error(run_exe("tasks", "show", "7", "--team", "alpha"), 2)
    ok = run_exe("tasks", "list", "--team", "alpha", "--json")
    assert ok.code == 0 and json.loads(ok.out)[0]["owner"] == "alice"
