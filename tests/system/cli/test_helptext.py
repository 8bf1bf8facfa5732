"""The CLI as a newcomer meets it: help pages with examples, `-V`, "did you mean", shell
completion of team, member and task names, and tables that fit the terminal.

The tests of tests/unit/cli/test_helptext.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.unit.cli.test_helptext import (
    SWARM_EXE,
    busy,  # noqa: F401 - the fixtures
    complete,
    exe,
)


def test_tab_completes_teams_members_and_task_ids(busy: Team) -> None:
    assert complete("swarm sta") == ["status"]
    assert complete("swarm status --team ") == ["alpha", "beta"]
    assert complete("swarm status --team b") == ["beta"]
    assert complete("swarm team show ") == ["alpha", "beta"]
    assert complete("swarm send --team alpha ") == ["team-lead", "alice", "bob", "'*'"]
    assert complete("swarm send a", env={"SWARM_TEAM": "alpha"}) == ["alice"]
    assert complete("swarm kill --team alpha b") == ["bob"]
    assert complete("swarm tasks claim 1 --team alpha --as ") == ["team-lead", "alice", "bob"]
    assert complete("swarm tasks show --team alpha ") == ["1", "2"]
    assert complete("swarm tasks add x --team alpha --blocked-by ") == ["1", "2"]



def test_completion_with_broken_or_missing_files_offers_nothing_and_says_nothing(
        busy: Team) -> None:
    paths.team_config("alpha").write_text("{torn")
    assert complete("swarm send --team alpha ") == []
    assert complete("swarm tasks show --team nosuch ") == []
    assert complete("swarm send ") == []  # no team named anywhere
    assert complete("swarm status --team ", env={"SWARM_HOME": "/dev/null/x"}) == []
    assert complete("swarm shutdown --timeout abc --team ") == ["alpha", "beta"]



@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_each_shells_script(shell: str) -> None:
    proc = exe("completion", shell)
    assert proc.returncode == 0, proc.stderr
    assert "_SWARM_COMPLETE" in proc.stdout and f"{shell}_complete" in proc.stdout



def test_the_bash_script_completes_member_names_in_a_real_bash(busy: Team) -> None:
    script = exe("completion", "bash").stdout
    probe = (f"{script}\nCOMP_WORDS=(swarm send --team alpha ''); COMP_CWORD=4\n"
             "_swarm_completion swarm\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {**os.environ, "PATH": f"{SWARM_EXE.parent}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60,
                          env=env, cwd=Path(__file__).parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["team-lead", "alice", "bob", "'*'"]  # never globbed
